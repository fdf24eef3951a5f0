package difftest

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestRedisReplicaOfHotKVUnderWrites: redis-server 8.6.3 replicates HotKV
// while clients write. HotKV encodes the replica's snapshot in the
// background (slowed here by rdb-key-save-delay so the writes overlap it)
// and holds the stream from the snapshot's moment until the payload is
// sent; the replica must end with HotKV's dataset (DEBUG DIGEST).
func TestRedisReplicaOfHotKVUnderWrites(t *testing.T) {
	sock := startRedis(t)
	srv := hotkvtest.Start(t)
	ctx := context.Background()
	hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer hk.Close()
	rd := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rd.Close()
	const n = 20000
	if err := hk.Do(ctx, "DEBUG", "POPULATE", n, "key", 32).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		k := strconv.Itoa(i)
		hk.RPush(ctx, "list:"+k, "a", k)
		hk.HSet(ctx, "hash:"+k, "f", k)
		hk.ZAdd(ctx, "zset:"+k, redis.Z{Score: float64(i), Member: k})
	}
	if err := hk.ConfigSet(ctx, "rdb-key-save-delay", "20").Err(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent [3]int
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer c.Close()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := strconv.Itoa(r.IntN(n))
				switch r.IntN(5) {
				case 0:
					c.Set(ctx, "key:"+k, r.Int(), 0)
				case 1:
					c.Del(ctx, "key:"+k)
				case 2:
					c.LPush(ctx, "list:"+strconv.Itoa(r.IntN(600)), r.Int())
				case 3:
					c.HIncrBy(ctx, "hash:"+strconv.Itoa(r.IntN(600)), "n", 1)
				case 4:
					c.Incr(ctx, "counter:"+strconv.Itoa(r.IntN(50)))
				}
				sent[w]++
			}
		}()
	}
	host, port, _ := net.SplitHostPort(srv.Addr)
	if err := rd.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(rd.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not sync: %s", rd.Info(ctx, "replication").Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // writes after the sync, on the stream
	close(stop)
	wg.Wait()
	want := hk.Do(ctx, "DEBUG", "DIGEST").Val()
	var got any
	for time.Now().Before(deadline) {
		if got = rd.Do(ctx, "DEBUG", "DIGEST").Val(); got == want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != want {
		t.Fatalf("replica digest %v, HotKV %v", got, want)
	}
	// the sync used the RDB channel (both sides default to it): Redis held
	// HotKV's stream on the main channel while the snapshot came
	if peak := infoField(rd.Info(ctx, "replication").Val(), "replica_full_sync_buffer_peak"); peak == "0" || peak == "" {
		t.Errorf("the replica held no stream during the sync (replica_full_sync_buffer_peak %q): no RDB channel", peak)
	}
	t.Logf("%d writes while the replica synced and after", sent[0]+sent[1]+sent[2])
}

// TestHotKVReplicaOfRedis: HotKV replicates redis-server 8.6.3 (REPLICAOF):
// the handshake, the snapshot of a dataset of every type (the master's
// diskless sync, EOF-marked, and with repl-diskless-sync no a sized
// payload), then the stream while clients write (MULTI/EXEC, a script,
// expiries, deletions); the replica must end with the master's dataset
// (DEBUG DIGEST), report itself in ROLE and INFO replication, and refuse
// clients' writes with READONLY.
func TestHotKVReplicaOfRedis(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			addr := startRedisTCP(t)
			srv := hotkvtest.Start(t)
			ctx := context.Background()
			rd := redis.NewClient(&redis.Options{Addr: addr})
			defer rd.Close()
			hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer hk.Close()
			rd.ConfigSet(ctx, "repl-diskless-sync", diskless)
			rd.ConfigSet(ctx, "repl-diskless-sync-delay", "0")
			// the replica loads from the link with the diskless master (the
			// old dataset kept aside meanwhile: swapdb), from a file with the
			// other (repl-diskless-load)
			load := "disabled"
			if diskless == "yes" {
				load = "swapdb"
			}
			if err := hk.ConfigSet(ctx, "repl-diskless-load", load).Err(); err != nil {
				t.Fatal(err)
			}
			hk.Set(ctx, "stale", "gone after the sync", 0)
			if err := rd.Do(ctx, "DEBUG", "POPULATE", 5000, "key", 16).Err(); err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				k := strconv.Itoa(i)
				rd.RPush(ctx, "list:"+k, "a", k)
				rd.HSet(ctx, "hash:"+k, "f", k, "g", i*i)
				rd.ZAdd(ctx, "zset:"+k, redis.Z{Score: float64(i) / 3, Member: k})
				rd.SAdd(ctx, "set:"+k, k, "x", i)
				rd.XAdd(ctx, &redis.XAddArgs{Stream: "stream:" + strconv.Itoa(i%10), Values: []any{"f", k}})
				rd.PFAdd(ctx, "hll:"+strconv.Itoa(i%5), k)
				rd.Set(ctx, "ttl:"+k, k, time.Hour)
			}
			rd.HSetEXWithArgs(ctx, "hfe", &redis.HSetEXOptions{ExpirationType: redis.HSetEXExpirationEX, ExpirationVal: 3600}, "a", "1", "b", "2")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := redis.NewClient(&redis.Options{Addr: addr})
					defer c.Close()
					r := rand.New(rand.NewPCG(uint64(w), 5))
					for {
						select {
						case <-stop:
							return
						default:
						}
						k := strconv.Itoa(r.IntN(5000))
						switch r.IntN(8) {
						case 0:
							c.Set(ctx, "key:"+k, r.Int(), 0)
						case 1:
							c.Del(ctx, "key:"+k)
						case 2:
							c.LPush(ctx, "list:"+strconv.Itoa(r.IntN(250)), r.Int())
						case 3:
							c.HIncrBy(ctx, "hash:"+strconv.Itoa(r.IntN(250)), "n", 1)
						case 4:
							c.TxPipelined(ctx, func(p redis.Pipeliner) error {
								p.Incr(ctx, "counter:"+strconv.Itoa(r.IntN(20)))
								p.SAdd(ctx, "set:"+strconv.Itoa(r.IntN(250)), r.IntN(100))
								return nil
							})
						case 5:
							c.Eval(ctx, "redis.call('zincrby', KEYS[1], 1, ARGV[1]); return redis.call('spop', KEYS[2])",
								[]string{"zset:" + strconv.Itoa(r.IntN(250)), "set:" + strconv.Itoa(r.IntN(250))}, k)
						case 6:
							c.Set(ctx, "short:"+k, k, time.Duration(1+r.IntN(50))*time.Millisecond)
						case 7:
							c.XAdd(ctx, &redis.XAddArgs{Stream: "stream:" + strconv.Itoa(r.IntN(10)), MaxLen: 50, Approx: false, Values: []any{"n", k}})
						}
					}
				}()
			}
			host, port, _ := net.SplitHostPort(addr)
			if err := hk.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			if v := hk.Do(ctx, "REPLICAOF", host, port).Val(); v != "OK Already connected to specified master" {
				t.Errorf("REPLICAOF again: %v", v)
			}
			if v := hk.ConfigGet(ctx, "replicaof").Val(); v["replicaof"] != host+" "+port {
				t.Errorf("CONFIG GET replicaof: %v", v)
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(hk.Info(ctx, "replication").Val(), "master_link_status:up") {
				if time.Now().After(deadline) {
					t.Fatalf("HotKV did not sync: %s", hk.Info(ctx, "replication").Val())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // writes on the stream
			close(stop)
			wg.Wait()
			// the short TTLs expire on the master meanwhile (its DELs follow on
			// the stream): the master's digest is read again each time
			var got, want any
			for time.Now().Before(deadline) {
				want = rd.Do(ctx, "DEBUG", "DIGEST").Val()
				if got = hk.Do(ctx, "DEBUG", "DIGEST").Val(); got == want {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got != want {
				t.Fatalf("HotKV replica digest %v, master %v", got, want)
			}
			if err := hk.Set(ctx, "mine", "1", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
				t.Errorf("a client's write on the replica: %v", err)
			}
			role := hk.Do(ctx, "ROLE").Val().([]any)
			moff := rd.Do(ctx, "ROLE").Val().([]any)[1].(int64)
			if role[0] != "slave" || role[1] != host || role[3] != "connected" {
				t.Errorf("ROLE %v", role)
			}
			// the offsets meet once the master's acknowledged state settles
			for time.Now().Before(deadline) {
				if role = hk.Do(ctx, "ROLE").Val().([]any); role[4].(int64) == moff {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if role[4].(int64) != moff {
				t.Errorf("replica offset %v, master %d", role[4], moff)
			}
			if err := hk.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
				t.Fatal(err)
			}
			if err := hk.Set(ctx, "mine", "1", 0).Err(); err != nil {
				t.Errorf("a write after REPLICAOF NO ONE: %v", err)
			}
			if info := hk.Info(ctx, "replication").Val(); !strings.Contains(info, "role:master") {
				t.Errorf("after NO ONE: %s", info)
			}
			if v := hk.ConfigGet(ctx, "replicaof").Val(); v["replicaof"] != "" {
				t.Errorf("CONFIG GET replicaof after NO ONE: %v", v)
			}
		})
	}
}

// replicaof in the configuration: HotKV starts as a replica.
func TestHotKVReplicaofAtStartup(t *testing.T) {
	addr := startRedisTCP(t)
	ctx := context.Background()
	rd := redis.NewClient(&redis.Options{Addr: addr})
	defer rd.Close()
	rd.ConfigSet(ctx, "repl-diskless-sync-delay", "0")
	rd.Set(ctx, "before", "1", 0)
	host, port, _ := net.SplitHostPort(addr)
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("replicaof", host+" "+port))
	hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer hk.Close()
	rd.Set(ctx, "after", "2", 0)
	deadline := time.Now().Add(20 * time.Second)
	for hk.Get(ctx, "after").Val() != "2" || hk.Get(ctx, "before").Val() != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("not replicated: %s", hk.Info(ctx, "replication").Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// infoField reads one field of INFO's text.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// waitDigests waits until a and b hold the same dataset.
func waitDigests(t *testing.T, a, b *redis.Client) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		da, db := a.Do(ctx, "DEBUG", "DIGEST").Val(), b.Do(ctx, "DEBUG", "DIGEST").Val()
		if da == db {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("digests differ: %v and %v", da, db)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLinkUp waits for a replica's master_link_status:up.
func waitLinkUp(t *testing.T, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for infoField(c.Info(context.Background(), "replication").Val(), "master_link_status") != "up" {
		if time.Now().After(deadline) {
			t.Fatalf("no link: %s", c.Info(context.Background(), "replication").Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Partial resynchronisation both ways with redis-server 8.6.3: the master
// drops its replica's link (CLIENT KILL TYPE replica), writes meanwhile,
// and the replica comes back with PSYNC and gets +CONTINUE and only the
// bytes it missed: sync_full stays 1, sync_partial_ok becomes 1, the
// datasets are equal.
func TestPartialResyncWithRedis(t *testing.T) {
	ctx := context.Background()
	for _, hotkvMaster := range []bool{false, true} {
		name := "HotKV replica of Redis"
		if hotkvMaster {
			name = "Redis replica of HotKV"
		}
		t.Run(name, func(t *testing.T) {
			master, replica, maddr := interopPair(t, hotkvMaster)
			for i := range 1000 {
				master.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
			}
			host, port, _ := net.SplitHostPort(maddr)
			if err := replica.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			waitLinkUp(t, replica)
			// the writes go to database 9: a partial resync continues in the
			// database the stream selected last (no SELECT is sent again)
			m9 := redis.NewClient(&redis.Options{Addr: maddr, DB: 9})
			defer m9.Close()
			m9.Set(ctx, "in9", "x", 0)
			waitDigests(t, master, replica)
			for round := 1; round <= 3; round++ {
				if n := master.ClientKillByFilter(ctx, "TYPE", "replica").Val(); n != 1 {
					t.Fatalf("round %d: CLIENT KILL TYPE replica killed %d", round, n)
				}
				for i := range 200 {
					m9.Incr(ctx, "n")
					m9.HSet(ctx, "h", strconv.Itoa(i), round)
				}
				waitLinkUp(t, replica)
				waitDigests(t, master, replica)
				stats := master.Info(ctx, "stats").Val()
				if full, ok := infoField(stats, "sync_full"), infoField(stats, "sync_partial_ok"); full != "1" || ok != strconv.Itoa(round) {
					t.Fatalf("round %d: sync_full %s, sync_partial_ok %s", round, full, ok)
				}
			}
			mrep, rrep := master.Info(ctx, "replication").Val(), replica.Info(ctx, "replication").Val()
			if infoField(mrep, "master_replid") != infoField(rrep, "master_replid") {
				t.Errorf("replication ids differ:\n%s\n%s", mrep, rrep)
			}
		})
	}
}

// PSYNC2 across a promotion: a HotKV master M with a HotKV replica A and a
// redis-server 8.6.3 replica B; M goes away, A is promoted (REPLICAOF NO
// ONE) and B follows A: B continues with a partial resync (A keeps M's
// history as replid2), and the writes on A reach B. Then M comes back as a
// replica of A and continues too.
func TestPromotedReplicaContinuesHistory(t *testing.T) {
	ctx := context.Background()
	m := hotkvtest.Start(t)
	a := hotkvtest.Start(t)
	baddr := startRedisTCP(t)
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	ac := redis.NewClient(&redis.Options{Addr: a.Addr})
	defer ac.Close()
	bc := redis.NewClient(&redis.Options{Addr: baddr})
	defer bc.Close()
	for i := range 500 {
		mc.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
	}
	mh, mp, _ := net.SplitHostPort(m.Addr)
	for _, c := range []*redis.Client{ac, bc} {
		if err := c.Do(ctx, "REPLICAOF", mh, mp).Err(); err != nil {
			t.Fatal(err)
		}
		waitLinkUp(t, c)
	}
	for i := range 100 {
		mc.Incr(ctx, "n")
		mc.RPush(ctx, "l", i)
	}
	waitDigests(t, mc, ac)
	waitDigests(t, mc, bc)
	mid := infoField(mc.Info(ctx, "replication").Val(), "master_replid")
	// the failover: B is told first (it loses M), then A is promoted
	if err := ac.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	arep := ac.Info(ctx, "replication").Val()
	if infoField(arep, "master_replid2") != mid || infoField(arep, "role") != "master" {
		t.Fatalf("A after promotion:\n%s", arep)
	}
	ah, ap, _ := net.SplitHostPort(a.Addr)
	if err := bc.Do(ctx, "REPLICAOF", ah, ap).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, bc)
	ac.Set(ctx, "after", "failover", 0)
	waitDigests(t, ac, bc)
	st := ac.Info(ctx, "stats").Val()
	if infoField(st, "sync_partial_ok") != "1" || infoField(st, "sync_full") != "0" {
		t.Fatalf("B's sync with A: sync_full %s sync_partial_ok %s", infoField(st, "sync_full"), infoField(st, "sync_partial_ok"))
	}
	// the old master follows the new one, continuing too
	if err := mc.Do(ctx, "REPLICAOF", ah, ap).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, mc)
	ac.Set(ctx, "later", "1", 0)
	waitDigests(t, ac, mc)
	if st := ac.Info(ctx, "stats").Val(); infoField(st, "sync_partial_ok") != "2" || infoField(st, "sync_full") != "0" {
		t.Fatalf("M's sync with A: sync_full %s sync_partial_ok %s", infoField(st, "sync_full"), infoField(st, "sync_partial_ok"))
	}
}

// FAILOVER both ways with redis-server 8.6.3: the master holds writes back,
// waits for its replica to catch up, becomes its replica with PSYNC
// FAILOVER; the replica promotes itself and both continue the history
// (partial resync, no write lost).
func TestFailoverWithRedis(t *testing.T) {
	ctx := context.Background()
	for _, hotkvMaster := range []bool{true, false} {
		name := "HotKV master, Redis replica"
		if !hotkvMaster {
			name = "Redis master, HotKV replica"
		}
		t.Run(name, func(t *testing.T) {
			raddr := startRedisTCP(t)
			srv := hotkvtest.Start(t)
			rd := redis.NewClient(&redis.Options{Addr: raddr})
			defer rd.Close()
			hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer hk.Close()
			rd.ConfigSet(ctx, "repl-diskless-sync-delay", "0")
			master, replica, maddr, raddrOf := hk, rd, srv.Addr, raddr
			if !hotkvMaster {
				master, replica, maddr, raddrOf = rd, hk, raddr, srv.Addr
			}
			for i := range 300 {
				master.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
			}
			mh, mp, _ := net.SplitHostPort(maddr)
			if err := replica.Do(ctx, "REPLICAOF", mh, mp).Err(); err != nil {
				t.Fatal(err)
			}
			waitLinkUp(t, replica)
			waitDigests(t, master, replica)
			// the master counts the replica online once it acknowledged (a
			// diskless sync's replica after its first REPLCONF ACK)
			for deadline := time.Now().Add(10 * time.Second); len(master.Do(ctx, "ROLE").Val().([]any)[2].([]any)) != 1; {
				if time.Now().After(deadline) {
					t.Fatalf("the replica is not online: %v", master.Do(ctx, "ROLE").Val())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := master.Do(ctx, "FAILOVER", "ABORT").Err(); err == nil || err.Error() != "ERR No failover in progress." {
				t.Errorf("FAILOVER ABORT with none: %v", err)
			}
			rh, rp, _ := net.SplitHostPort(raddrOf)
			if err := master.Do(ctx, "FAILOVER", "TO", rh, "1").Err(); err == nil || err.Error() != "ERR FAILOVER target HOST and PORT is not a replica." {
				t.Errorf("FAILOVER to a stranger: %v", err)
			}
			if err := master.Do(ctx, "FAILOVER", "TO", rh, rp, "TIMEOUT", "10000").Err(); err != nil {
				t.Fatal(err, master.Do(ctx, "ROLE").Val())
			}
			deadline := time.Now().Add(20 * time.Second)
			for infoField(replica.Info(ctx, "replication").Val(), "role") != "master" ||
				infoField(master.Info(ctx, "replication").Val(), "master_link_status") != "up" ||
				infoField(master.Info(ctx, "replication").Val(), "master_failover_state") != "no-failover" {
				if time.Now().After(deadline) {
					t.Fatalf("no failover:\nold master %s\nold replica %s", master.Info(ctx, "replication").Val(), replica.Info(ctx, "replication").Val())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := replica.Set(ctx, "after", "failover", 0).Err(); err != nil {
				t.Fatal(err)
			}
			waitDigests(t, replica, master)
			if err := master.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
				t.Errorf("the old master still takes writes: %v", err)
			}
			if st := replica.Info(ctx, "stats").Val(); infoField(st, "sync_partial_ok") != "1" {
				t.Errorf("the old master's sync with the new one: sync_partial_ok %s", infoField(st, "sync_partial_ok"))
			}
		})
	}
}
