package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// sendSync opens a connection that asks for a full sync with cmd, without
// reading the answer.
func sendSync(t *testing.T, addr, cmd string) *replStream {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_, _ = c.Write([]byte(cmd + "\r\n"))
	return &replStream{t: t, c: c, br: bufio.NewReader(c)}
}

// silent reports whether nothing arrives on r within wait.
func (r *replStream) silent(wait time.Duration) bool {
	_ = r.c.SetReadDeadline(time.Now().Add(wait))
	_, err := r.br.Peek(1)
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestDisklessSyncDelay: with repl-diskless-sync-delay, full syncs wait
// (unanswered, INFO state=wait_bgsave) for more replicas, then start
// together: the same +FULLRESYNC offset, the snapshot of that moment (a
// write made while they waited is in it, not in their stream), the stream
// from there; repl-diskless-sync-max-replicas starts them as soon as that
// many wait.
func TestDisklessSyncDelay(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-sync-delay", "1"))
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("SET", "before", "1")
	start := time.Now()
	a := sendSync(t, srv.Addr, "PSYNC ? -1")
	b := sendSync(t, srv.Addr, "SYNC")
	if !a.silent(300*time.Millisecond) || !b.silent(10*time.Millisecond) {
		t.Fatal("a full sync started before repl-diskless-sync-delay")
	}
	info := cl.Do("INFO", "replication")
	if strings.Count(info, "state=wait_bgsave") != 2 || !strings.Contains(info, "connected_slaves:2\r\n") {
		t.Fatalf("INFO while the syncs wait:\n%s", info)
	}
	cl.Do("SET", "during", "2") // in the snapshot: the syncs start later
	a.readSnapshot("PSYNC ? -1", 5*time.Second)
	b.readSnapshot("SYNC", 5*time.Second)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("the syncs started after %v, before the 1 s delay", d)
	}
	want := map[int]map[string]string{0: {"before": "1", "during": "2"}}
	checkRDB(t, a.rdb, want)
	checkRDB(t, b.rdb, want)
	info = cl.Do("INFO", "replication")
	// the stream went on while they waited (the backlog has it): the
	// snapshot continues from the offset past the write
	off := len(hotkvtest.EncodeCommand("SELECT", "0")) + len(hotkvtest.EncodeCommand("SET", "during", "2"))
	if !strings.HasSuffix(a.fullResync, " "+strconv.Itoa(off)+"\r\n") || strings.Contains(info, "wait_bgsave") {
		t.Fatalf("+FULLRESYNC %q (the offset when the syncs started: %d); INFO after:\n%s", a.fullResync, off, info)
	}
	cl.Do("SET", "after", "3")
	a.expect("SELECT 0", "SET after 3")
	b.expect("SELECT 0", "SET after 3")

	// enough replicas waiting start at once, whatever the delay
	cl.Do("CONFIG", "SET", "repl-diskless-sync-delay", "60", "repl-diskless-sync-max-replicas", "2")
	c := sendSync(t, srv.Addr, "PSYNC ? -1")
	if !c.silent(200 * time.Millisecond) {
		t.Fatal("one replica of max-replicas 2 started its sync")
	}
	d := sendSync(t, srv.Addr, "PSYNC ? -1")
	c.readSnapshot("PSYNC ? -1", 2*time.Second)
	d.readSnapshot("PSYNC ? -1", 2*time.Second)
	if c.fullResync != d.fullResync {
		t.Fatalf("syncs started together with different offsets: %q %q", c.fullResync, d.fullResync)
	}
	checkRDB(t, c.rdb, map[int]map[string]string{0: {"before": "1", "during": "2", "after": "3"}})

	// a replica that leaves while it waits is forgotten
	cl.Do("CONFIG", "SET", "repl-diskless-sync-delay", "1", "repl-diskless-sync-max-replicas", "0")
	e := sendSync(t, srv.Addr, "PSYNC ? -1")
	e.silent(100 * time.Millisecond)
	_ = e.c.Close()
	f := sendSync(t, srv.Addr, "PSYNC ? -1")
	f.readSnapshot("PSYNC ? -1", 5*time.Second)
}

// TestDisklessSyncDelayRDBChannel: a HotKV replica over the RDB channel
// waits the delay too, both of its connections listed as replicas (Redis's
// replication.tcl "Slave enters wait_bgsave"), then syncs.
func TestDisklessSyncDelayRDBChannel(t *testing.T) {
	ctx := context.Background()
	m := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-sync-delay", "1"))
	r := hotkvtest.Start(t)
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	mc.Set(ctx, "k", "v", 0)
	host, port, _ := net.SplitHostPort(m.Addr)
	start := time.Now()
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info := mc.Info(ctx, "replication").Val()
		slaves := strings.Count(mc.Do(ctx, "CLIENT", "LIST", "TYPE", "slave").String(), "id=")
		if strings.Contains(info, "state=wait_bgsave") && slaves == 2 {
			break
		}
		if time.Since(start) > 900*time.Millisecond {
			t.Fatalf("no main and RDB channel waiting (%d replicas listed):\n%s", slaves, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitSameDigest(t, mc, rc, time.Now().Add(10*time.Second))
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("synced after %v, before the 1 s delay", d)
	}
}

// TestDisklessSyncDelayKeepsLinkAlive: a replica waiting for a delayed sync
// gets a newline a second (its repl-timeout does not fire), and its sync
// starts when the delay ends.
func TestDisklessSyncDelayKeepsLinkAlive(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-sync-delay", "3"))
	a := sendSync(t, srv.Addr, "PSYNC ? -1")
	_ = a.c.SetReadDeadline(time.Now().Add(2500 * time.Millisecond))
	line, err := a.br.ReadString('\n')
	if err != nil || line != "\n" {
		t.Fatalf("no newline while waiting: %q %v", line, err)
	}
	a.readSnapshot("PSYNC ? -1", 5*time.Second) // skips the newlines before +FULLRESYNC
}

// TestRoleChangeUnblocksClients: a master that turns replica answers its
// blocked clients -UNBLOCKED and closes them (Redis's
// disconnectAllBlockedClients, replication.tcl "BLPOP followed by role
// change"): served by the new master's stream, a BLPOP would pop on the
// replica what the master keeps.
func TestRoleChangeUnblocksClients(t *testing.T) {
	t.Run("loop", func(t *testing.T) { testRoleChangeUnblocks(t) })
	t.Run("goroutines", func(t *testing.T) { testRoleChangeUnblocks(t, hotkvtest.WithGoroutinePerConn()) })
}

func testRoleChangeUnblocks(t *testing.T, opts ...hotkvtest.Option) {
	a := hotkvtest.Start(t)
	b := hotkvtest.Start(t, opts...)
	bc := hotkvtest.Dial(t, b.Addr)
	blocked := hotkvtest.Dial(t, b.Addr)
	blocked.Write(hotkvtest.EncodeCommand("BLPOP", "foo", "0"))
	for !strings.Contains(bc.Do("INFO", "clients"), "blocked_clients:1\r\n") {
		time.Sleep(5 * time.Millisecond)
	}
	host, port, _ := net.SplitHostPort(a.Addr)
	if got := bc.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	got, err := blocked.ReadReply()
	if err != nil || got != "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n" {
		t.Fatalf("blocked client got %q %v", got, err)
	}
	t0 := time.Now()
	if _, err := blocked.ReadReply(); err == nil {
		t.Fatal("the unblocked client was not closed")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the unblocked client was closed after %v", d)
	}
	if st := bc.Do("INFO", "commandstats"); !strings.Contains(st, "cmdstat_blpop:calls=1,") || !strings.Contains(st, "failed_calls=1") {
		t.Fatalf("commandstats: %q", st)
	}
	ac := hotkvtest.Dial(t, a.Addr)
	for !strings.Contains(bc.Do("INFO", "replication"), "master_link_status:up") {
		time.Sleep(10 * time.Millisecond)
	}
	ac.Do("RPUSH", "foo", "a", "b", "c")
	for bc.Do("LLEN", "foo") != ":3\r\n" {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplicaLoadingVisible: a replica receiving a slow diskless snapshot
// is loading from the start of the transfer, and says so (INFO
// loading:1 from INFO, -LOADING for commands not allowed while loading), as
// Redis's replica; after the master drops it mid-transfer,
// with repl-diskless-load swapdb its old dataset is back. Both channel
// kinds.
func TestReplicaLoadingVisible(t *testing.T) {
	for _, channel := range []string{"yes", "no"} {
		t.Run("rdb-channel="+channel, func(t *testing.T) {
			ctx := context.Background()
			m := hotkvtest.Start(t)
			r := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-load", "swapdb"), hotkvtest.WithConfig("repl-rdb-channel", channel))
			mc := redis.NewClient(&redis.Options{Addr: m.Addr})
			defer mc.Close()
			rc := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
			defer rc.Close()
			rc.Set(ctx, "mykey", "myvalue", 0)
			mc.Do(ctx, "DEBUG", "POPULATE", "200", "master", "10")
			mc.ConfigSet(ctx, "rdb-key-save-delay", "10000") // 10 ms a key: 2 s
			host, port, _ := net.SplitHostPort(m.Addr)
			if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(rc.Info(ctx, "persistence").Val(), "loading:1\r\n") {
				if time.Now().After(deadline) {
					t.Fatal("the replica never showed loading:1 during the transfer")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := rc.Get(ctx, "mykey").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING ") {
				t.Fatalf("GET while loading: %v", err)
			}
			mc.ConfigSet(ctx, "repl-diskless-sync-delay", "5") // the next sync waits
			mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica")
			killed := time.Now()
			for strings.Contains(rc.Info(ctx, "persistence").Val(), "loading:1\r\n") {
				if time.Now().After(deadline) {
					t.Fatal("the replica kept loading after the master dropped it")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if v, err := rc.Get(ctx, "mykey").Result(); v != "myvalue" {
				t.Fatalf("after the failed load: %q %v, want the dataset kept aside", v, err)
			}
			if n := rc.DBSize(ctx).Val(); n != 1 {
				t.Fatalf("after the failed load: %d keys, want 1", n)
			}
			// a failed transfer reconnects at once (Redis's
			// cancelReplicationHandshake), not a second later
			for !strings.Contains(mc.Info(ctx, "replication").Val(), "state=wait_bgsave") {
				if time.Since(killed) > 900*time.Millisecond {
					t.Fatal("the replica did not reconnect at once after its transfer failed")
				}
				time.Sleep(10 * time.Millisecond)
			}
			mc.ConfigSet(ctx, "rdb-key-save-delay", "0")
		})
	}
}

// TestReplicaHandshakeTimeout: a replica waiting for its sync times out
// with the repl-timeout set meanwhile once the master goes silent (no
// keep-alive newlines: DEBUG SLEEP), and logs Redis's words
// (replication.tcl "Slave is able to detect timeout during handshake").
func TestReplicaHandshakeTimeout(t *testing.T) {
	m := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-sync-delay", "1000"))
	var log hotkvtest.SyncBuffer
	r := hotkvtest.Start(t, hotkvtest.WithLog(&log))
	mc, rc := hotkvtest.Dial(t, m.Addr), hotkvtest.Dial(t, r.Addr)
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	for !strings.Contains(mc.Do("INFO", "replication"), "state=wait_bgsave") {
		time.Sleep(10 * time.Millisecond)
	}
	rc.Do("CONFIG", "SET", "repl-timeout", "1")
	mc.Write(hotkvtest.EncodeCommand("DEBUG", "SLEEP", "3"))
	deadline := time.Now().Add(2500 * time.Millisecond)
	for !strings.Contains(log.String(), "Timeout connecting to the MASTER...") {
		if time.Now().After(deadline) {
			t.Fatalf("no handshake timeout logged:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSyncWaitsForSnapshotInProgress: a full sync asked for while a
// replica's snapshot is being made waits for it to end (Redis forks one
// child at a time: "Waiting for next BGSAVE for SYNC"), then starts at once.
func TestSyncWaitsForSnapshotInProgress(t *testing.T) {
	srv := hotkvtest.Start(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("DEBUG", "POPULATE", "40")
	cl.Do("CONFIG", "SET", "rdb-key-save-delay", "20000") // 20 ms a key: 0.8 s
	start := time.Now()
	a := sendSync(t, srv.Addr, "PSYNC ? -1")
	for !strings.Contains(cl.Do("INFO", "persistence"), "rdb_bgsave_in_progress:1") {
		time.Sleep(5 * time.Millisecond)
	}
	b := sendSync(t, srv.Addr, "PSYNC ? -1")
	if !b.silent(200 * time.Millisecond) {
		t.Fatal("a second snapshot started while the first was in progress")
	}
	if info := cl.Do("INFO", "replication"); !strings.Contains(info, "state=wait_bgsave") {
		t.Fatalf("the second replica is not waiting:\n%s", info)
	}
	a.readSnapshot("PSYNC ? -1", 5*time.Second)
	firstDone := time.Since(start)
	cl.Do("CONFIG", "SET", "rdb-key-save-delay", "0")
	b.readSnapshot("PSYNC ? -1", 5*time.Second)
	if firstDone < 600*time.Millisecond {
		t.Fatalf("the first snapshot took %v: not slowed", firstDone)
	}
	want := map[string]string{}
	for i := range 40 {
		want["key:"+strconv.Itoa(i)] = "value:" + strconv.Itoa(i)
	}
	checkRDB(t, b.rdb, map[int]map[string]string{0: want})
}

// TestReplicaLinkCounters: master_current_sync_attempts counts connections
// since the link was last lost, master_total_sync_attempts since REPLICAOF,
// total_disconnect_time_sec every disconnection (Redis 8's fields, as
// replication.tcl checks them).
func TestReplicaLinkCounters(t *testing.T) {
	m := hotkvtest.Start(t)
	r := hotkvtest.Start(t)
	rc := hotkvtest.Dial(t, r.Addr)
	host, port, _ := net.SplitHostPort(m.Addr)
	field := func(name string) int {
		v, _ := strconv.Atoi(infoValue(rc.Do("INFO", "replication"), name))
		return v
	}
	rc.Do("REPLICAOF", host, port)
	waitLinkUp(t, rc)
	if c, n := field("master_current_sync_attempts"), field("master_total_sync_attempts"); c != 1 || n != 1 {
		t.Fatalf("after the first sync: current %d total %d, want 1 1", c, n)
	}
	rc.Do("CLIENT", "KILL", "TYPE", "master")
	time.Sleep(50 * time.Millisecond)
	waitLinkUp(t, rc)
	if c, n := field("master_current_sync_attempts"), field("master_total_sync_attempts"); c != 1 || n != 2 {
		t.Fatalf("after a reconnection: current %d total %d, want 1 2", c, n)
	}
	rc.Do("REPLICAOF", host, "1") // nobody there: attempts pile up
	deadline := time.Now().Add(5 * time.Second)
	for field("master_current_sync_attempts") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no attempts counted against a dead master")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d, since := field("total_disconnect_time_sec"), field("master_link_down_since_seconds"); d < 1 || since < 1 {
		t.Fatalf("down %d s (since %d s), want >= 1", d, since)
	}
	rc.Do("REPLICAOF", host, port)
	waitLinkUp(t, rc)
	if c, n, d := field("master_current_sync_attempts"), field("master_total_sync_attempts"), field("total_disconnect_time_sec"); c != 1 || n != 1 || d < 1 {
		t.Fatalf("after REPLICAOF again: current %d total %d disconnected %d s, want 1 1 >=1", c, n, d)
	}
}

// TestReplicaKeepsItsReplicasOnMasterSwitch: a replica told to follow
// another master keeps its own replicas (Redis's replicationSetMaster):
// while the new master is unreachable they stay connected, and when it
// continues the same history with a partial resync they continue too,
// with no new full sync.
func TestReplicaKeepsItsReplicasOnMasterSwitch(t *testing.T) {
	a, b, c := hotkvtest.Start(t), hotkvtest.Start(t), hotkvtest.Start(t)
	ac, bc, cc := hotkvtest.Dial(t, a.Addr), hotkvtest.Dial(t, b.Addr), hotkvtest.Dial(t, c.Addr)
	ah, ap, _ := net.SplitHostPort(a.Addr)
	bh, bp, _ := net.SplitHostPort(b.Addr)
	bc.Do("REPLICAOF", ah, ap)
	waitLinkUp(t, bc)
	cc.Do("REPLICAOF", bh, bp)
	waitLinkUp(t, cc)
	ac.Do("SET", "a", "1")
	bc.Do("REPLICAOF", ah, "1") // nobody there
	time.Sleep(1500 * time.Millisecond)
	if info := bc.Do("INFO", "replication"); !strings.Contains(info, "connected_slaves:1\r\n") {
		t.Fatalf("the replica dropped its replica on a master switch:\n%s", info)
	}
	if !strings.Contains(cc.Do("INFO", "replication"), "master_link_status:up") {
		t.Fatal("the sub-replica lost its link")
	}
	partial := infoValue(ac.Do("INFO", "stats"), "sync_partial_ok")
	bc.Do("REPLICAOF", ah, ap)
	waitLinkUp(t, bc)
	ac.Do("SET", "b", "2")
	deadline := time.Now().Add(5 * time.Second)
	for cc.Do("GET", "b") != "$1\r\n2\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("the sub-replica did not get the write after the partial resync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := infoValue(ac.Do("INFO", "stats"), "sync_partial_ok"); got == partial {
		t.Fatalf("the replica did not continue with a partial resync (sync_partial_ok %s)", got)
	}
	if st := bc.Do("INFO", "stats"); infoValue(st, "sync_full") != "1" || infoValue(st, "sync_partial_ok") != "0" {
		t.Fatalf("the sub-replica synced again: %q %q", infoValue(st, "sync_full"), infoValue(st, "sync_partial_ok"))
	}
}

// TestPSYNCWrongOffset: PSYNC's offset must be an integer (Redis's
// syncCommand), nothing starts otherwise.
func TestPSYNCWrongOffset(t *testing.T) {
	srv := hotkvtest.Start(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	if got := cl.Do("PSYNC", "replicationid", "offset_str"); got != "-ERR value is not an integer or out of range\r\n" {
		t.Fatalf("PSYNC with a wrong offset: %q", got)
	}
	if got := cl.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after it: %q", got)
	}
}

// TestReplicaLazyFlush: with replica-lazy-flush the dataset a full sync
// replaces is freed lazily (lazyfreed_objects counts its keys, as Redis's
// emptyData with EMPTYDB_ASYNC); without it, not.
func TestReplicaLazyFlush(t *testing.T) {
	for _, lazy := range []string{"yes", "no"} {
		m := hotkvtest.Start(t)
		r := hotkvtest.Start(t, hotkvtest.WithConfig("replica-lazy-flush", lazy))
		rc := hotkvtest.Dial(t, r.Addr)
		rc.Do("DEBUG", "POPULATE", "1000")
		host, port, _ := net.SplitHostPort(m.Addr)
		rc.Do("REPLICAOF", host, port)
		waitLinkUp(t, rc)
		got, _ := strconv.Atoi(infoValue(rc.Do("INFO", "memory"), "lazyfreed_objects"))
		if (lazy == "yes") != (got >= 1000) {
			t.Fatalf("replica-lazy-flush %s: lazyfreed_objects %d", lazy, got)
		}
	}
}

// TestAppendonlyWhileReplicaLoads: a replica's load honours key-load-delay
// and lends the engine lock (loading-process-events-interval-bytes), so
// CONFIG SET appendonly is answered while it loads, and the AOF is on once
// it has loaded (replication.tcl "Allow appendonly config change while
// loading rdb on slave").
func TestAppendonlyWhileReplicaLoads(t *testing.T) {
	m := hotkvtest.Start(t)
	mc := hotkvtest.Dial(t, m.Addr)
	mc.Do("DEBUG", "POPULATE", "3000", "master", "10")
	r := hotkvtest.Start(t, hotkvtest.WithConfig("loading-process-events-interval-bytes", "1024"))
	rc := hotkvtest.Dial(t, r.Addr)
	rc.Do("CONFIG", "SET", "key-load-delay", "300") // 0.9 s
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	deadline := time.Now().Add(5 * time.Second)
	for infoValue(rc.Do("INFO", "persistence"), "loading") != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the replica never showed loading:1")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := rc.Do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly yes while loading: %q", got)
	}
	if infoValue(rc.Do("INFO", "persistence"), "loading") != "1" {
		t.Fatal("the load ended too soon to tell")
	}
	rc.Do("CONFIG", "SET", "key-load-delay", "0")
	for !strings.Contains(rc.Do("INFO", "replication"), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatal("no sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for infoValue(rc.Do("INFO", "persistence"), "aof_enabled") != "1" || infoValue(rc.Do("INFO", "persistence"), "aof_rewrite_in_progress") != "0" {
		if time.Now().After(deadline) {
			t.Fatalf("AOF not on after the load:\n%s", rc.Do("INFO", "persistence"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := rc.Do("DBSIZE"); n != ":3000\r\n" {
		t.Fatalf("DBSIZE %q", n)
	}
}

// TestReplicaAOFAfterFullSync: a replica with the AOF on stops it for a
// full sync and starts it again from the loaded dataset (a rewrite, Redis's
// restartAOFAfterSYNC): its AOF then loads the master's dataset, not the
// one the sync replaced.
func TestReplicaAOFAfterFullSync(t *testing.T) {
	m := hotkvtest.Start(t)
	mc := hotkvtest.Dial(t, m.Addr)
	mc.Do("DEBUG", "POPULATE", "300", "master")
	r := hotkvtest.Start(t, hotkvtest.WithConfig("appendonly", "yes"))
	rc := hotkvtest.Dial(t, r.Addr)
	rc.Do("DEBUG", "POPULATE", "500", "old")
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(rc.Do("INFO", "replication"), "master_link_status:up") ||
		infoValue(rc.Do("INFO", "persistence"), "aof_rewrite_in_progress") != "0" ||
		infoValue(rc.Do("INFO", "persistence"), "aof_enabled") != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("no sync, or no AOF after it:\n%s", rc.Do("INFO", "persistence"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	mc.Do("SET", "after", "1")
	for rc.Do("GET", "after") != "$1\r\n1\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("the stream did not arrive")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := rc.Do("DEBUG", "LOADAOF"); got != "+OK\r\n" {
		t.Fatalf("DEBUG LOADAOF: %q", got)
	}
	if n, want := rc.Do("DBSIZE"), ":301\r\n"; n != want {
		t.Fatalf("the AOF loads %q keys, want the master's %q", n, want)
	}
	if rc.Do("DEBUG", "DIGEST") != mc.Do("DEBUG", "DIGEST") {
		t.Fatal("the AOF's dataset differs from the master's")
	}
}

// TestReplicaCommandsGetNoReply: a replica's own command that would reply
// (PING, XINFO HELP) or reach the keyspace (GET: refused) drops the replica
// with Redis's log lines, and nothing of the reply enters its stream
// (replication.tcl "replica do not write the reply to the replication
// link"). REPLCONF ACK replies nothing and keeps it.
func TestReplicaCommandsGetNoReply(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		logs []string
	}{
		{[]string{"PING"}, []string{"Replica generated a reply to command 'ping', disconnecting it: id="}},
		{[]string{"XINFO", "HELP"}, []string{"Replica generated a reply to command 'xinfo|help', disconnecting it: "}},
		{[]string{"GET", "foo"}, []string{"== CRITICAL == This master is sending an error to its replica: 'ERR Replica can't interact with the keyspace' after processing the command 'get'",
			"Replica generated a reply to command 'get', disconnecting it: "}},
	} {
		var log hotkvtest.SyncBuffer
		srv := hotkvtest.Start(t, hotkvtest.WithLog(&log))
		r := attachStream(t, srv.Addr, "PSYNC ? -1")
		_, _ = r.c.Write(hotkvtest.EncodeCommand("REPLCONF", "ACK", "0"))
		_, _ = r.c.Write(hotkvtest.EncodeCommand(tc.cmd...))
		_ = r.c.SetReadDeadline(time.Now().Add(2 * time.Second))
		rest, err := io.ReadAll(r.br)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%v: the replica was not dropped", tc.cmd)
		}
		if len(rest) != 0 {
			t.Fatalf("%v: the replica got %q", tc.cmd, rest)
		}
		for _, want := range tc.logs {
			if !strings.Contains(log.String(), want) {
				t.Fatalf("%v: log lacks %q:\n%s", tc.cmd, want, log.String())
			}
		}
		if cl := hotkvtest.Dial(t, srv.Addr); cl.Do("PING") != "+PONG\r\n" {
			t.Fatal("the server stopped answering")
		}
	}
}

// TestOutputLimitLogLine: a client closed for its output buffer is logged in
// Redis's words (replication-rdbchannel.tcl waits for them).
func TestOutputLimitLogLine(t *testing.T) {
	var log hotkvtest.SyncBuffer
	srv := hotkvtest.Start(t, hotkvtest.WithLog(&log), hotkvtest.WithConfig("client-output-buffer-limit", "pubsub 1kb 0 0"))
	sub := hotkvtest.Dial(t, srv.Addr)
	sub.Do("SUBSCRIBE", "ch")
	pub := hotkvtest.Dial(t, srv.Addr)
	pub.Do("PUBLISH", "ch", strings.Repeat("x", 4096))
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(log.String(), " scheduled to be closed ASAP for overcoming of output buffer limits.") {
		if time.Now().After(deadline) {
			t.Fatalf("no output-limit line:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "Client id=") {
		t.Fatalf("the line does not name the client:\n%s", log.String())
	}
}

// waitLinkUp waits until the replica conn answers master_link_status:up.
func waitLinkUp(t *testing.T, conn *hotkvtest.Conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(conn.Do("INFO", "replication"), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatal("the link did not come up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitClientLinkUp is waitLinkUp through a go-redis client: the replica's
// link up within 20 s, else the test fails with what (and INFO replication).
func waitClientLinkUp(t *testing.T, rc *redis.Client, what string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, rc.Info(ctx, "replication").Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplicaAsyncLoading: with repl-diskless-load swapdb, a full sync of
// the history the replica already follows keeps the old dataset served
// while the payload arrives (INFO async_loading:1, loading:0; REPLICAOF,
// no-async-loading, gets -LOADING), and a transfer that fails leaves it as
// it was (replication.tcl "Diskless load swapdb (async_loading)").
func TestReplicaAsyncLoading(t *testing.T) {
	m := hotkvtest.Start(t)
	r := hotkvtest.Start(t, hotkvtest.WithConfig("repl-diskless-load", "swapdb"), hotkvtest.WithConfig("replica-read-only", "no"))
	mc, rc := hotkvtest.Dial(t, m.Addr), hotkvtest.Dial(t, r.Addr)
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	waitLinkUp(t, rc)
	mc.Do("DEBUG", "POPULATE", "200", "master", "10")
	rc.Do("SET", "mykey", "myvalue")
	lib := "#!lua name=test\nredis.register_function('test', function() return 'hello1' end)"
	if got := rc.Do("FUNCTION", "LOAD", lib); got != "$4\r\ntest\r\n" {
		t.Fatalf("FUNCTION LOAD on the replica: %q", got)
	}
	mc.Do("CONFIG", "SET", "rdb-key-save-delay", "20000") // 4 s
	// a full sync of the same history: the backlog no longer holds the
	// replica's offset
	mc.Do("MULTI")
	mc.Do("CLIENT", "KILL", "TYPE", "replica")
	mc.Do("CONFIG", "SET", "repl-backlog-size", "16384")
	for i := range 10 {
		mc.Do("SET", "big"+strconv.Itoa(i), strings.Repeat("A", 16384))
	}
	mc.Do("EXEC")
	deadline := time.Now().Add(10 * time.Second)
	for infoValue(rc.Do("INFO", "persistence"), "async_loading") != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("no async loading:\n%s", rc.Do("INFO", "persistence"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if l := infoValue(rc.Do("INFO", "persistence"), "loading"); l != "0" {
		t.Fatalf("loading:%s during async loading", l)
	}
	if v := rc.Do("GET", "mykey"); v != "$7\r\nmyvalue\r\n" {
		t.Fatalf("the old dataset is not served: %q", v)
	}
	if got := rc.Do("REPLICAOF", "NO", "ONE"); !strings.HasPrefix(got, "-LOADING") {
		t.Fatalf("REPLICAOF during async loading: %q", got)
	}
	mc.Do("CONFIG", "SET", "repl-diskless-sync-delay", "5") // the next sync waits
	mc.Do("CLIENT", "KILL", "TYPE", "replica")
	for infoValue(rc.Do("INFO", "persistence"), "async_loading") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("still async loading after the master dropped the replica")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := rc.Do("GET", "mykey"); v != "$7\r\nmyvalue\r\n" {
		t.Fatalf("the old dataset is gone after the failed transfer: %q", v)
	}
	if got := rc.Do("FCALL", "test", "0"); got != "$6\r\nhello1\r\n" {
		t.Fatalf("the old functions are gone after the failed transfer: %q", got)
	}
	// the next sync succeeds: the new dataset replaces the old
	mc.Do("CONFIG", "SET", "rdb-key-save-delay", "0", "repl-diskless-sync-delay", "0")
	waitLinkUp(t, rc)
	if v := rc.Do("GET", "mykey"); v != "$-1\r\n" {
		t.Fatalf("the old dataset survived the swap: %q", v)
	}
	if rc.Do("DBSIZE") != mc.Do("DBSIZE") {
		t.Fatalf("DBSIZE %q, master %q", rc.Do("DBSIZE"), mc.Do("DBSIZE"))
	}
}
