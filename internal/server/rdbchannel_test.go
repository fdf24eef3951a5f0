package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// waitSameDigest waits until the replica rc holds the master mc's dataset
// (DEBUG DIGEST), failing past deadline.
func waitSameDigest(t *testing.T, mc, rc *redis.Client, deadline time.Time) {
	t.Helper()
	ctx := context.Background()
	for {
		want, got := mc.Do(ctx, "DEBUG", "DIGEST").Val(), rc.Do(ctx, "DEBUG", "DIGEST").Val()
		if want == got {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica digest %v, master %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func infoValue(info, field string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// masterAndReplica starts two servers, to be a master and its replica, and
// a client of each (closed with the test); m is the master.
func masterAndReplica(t *testing.T) (mc, rc *redis.Client, m *hotkvtest.Server) {
	t.Helper()
	m = hotkvtest.Start(t)
	r := hotkvtest.Start(t)
	mc = redis.NewClient(&redis.Options{Addr: m.Addr})
	rc = redis.NewClient(&redis.Options{Addr: r.Addr})
	t.Cleanup(func() { mc.Close(); rc.Close() })
	return mc, rc, m
}

// A HotKV replica of a HotKV master over the RDB channel (repl-rdb-channel
// yes, the default): the main channel waits (INFO state wait_bgsave), the
// RDB channel shows in CLIENT LIST with flag C, the snapshot is slowed
// (rdb-key-save-delay) while clients write, so the replica holds the stream
// (replica_full_sync_buffer_peak) and applies it after the snapshot; the
// datasets end equal, with one full sync counted. With repl-rdb-channel no
// on the replica the sync is the classic one: no RDB channel, nothing held.
//
// With replica-full-sync-buffer-limit 1 the replica stops holding the
// stream at once: the master keeps the rest, and the sync ends the same.
func TestRDBChannelSync(t *testing.T) {
	for _, tc := range []struct {
		name    string
		channel bool
		limit   string
	}{{"rdb-channel=yes", true, ""}, {"rdb-channel=no", false, ""}, {"rdb-channel=yes,limit=1", true, "1"}} {
		channel := tc.channel
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mc, rc, m := masterAndReplica(t)
			if !channel {
				if err := rc.ConfigSet(ctx, "repl-rdb-channel", "no").Err(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.limit != "" {
				if err := rc.ConfigSet(ctx, "replica-full-sync-buffer-limit", tc.limit).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2000 {
				mc.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
			}
			mc.ConfigSet(ctx, "rdb-key-save-delay", "500") // µs per key: about 1 s
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					mc.Incr(ctx, "counter")
					mc.HSet(ctx, "h", strconv.Itoa(i%100), i)
				}
			}()
			host, port, _ := net.SplitHostPort(m.Addr)
			if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			sawChannel, sawWait := false, false
			deadline := time.Now().Add(30 * time.Second)
			for infoValue(rc.Info(ctx, "replication").Val(), "master_link_status") != "up" {
				if time.Now().After(deadline) {
					t.Fatalf("no sync: %s", rc.Info(ctx, "replication").Val())
				}
				for _, line := range strings.Split(mc.ClientList(ctx).Val(), "\n") {
					if strings.Contains(line, " flags=SC ") || strings.Contains(line, " flags=C ") {
						sawChannel = true
					}
				}
				if strings.Contains(mc.Info(ctx, "replication").Val(), "state=send_bulk_and_stream") {
					sawWait = true
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			close(stop)
			wg.Wait()
			mc.ConfigSet(ctx, "rdb-key-save-delay", "0")
			waitSameDigest(t, mc, rc, deadline)
			rinfo, minfo := rc.Info(ctx, "replication").Val(), mc.Info(ctx, "stats", "replication").Val()
			peak, _ := strconv.ParseInt(infoValue(rinfo, "replica_full_sync_buffer_peak"), 10, 64)
			if full := infoValue(minfo, "sync_full"); full != "1" {
				t.Errorf("sync_full %s", full)
			}
			mem := mc.Info(ctx, "memory").Val()
			if b, tot := infoValue(mem, "mem_replication_backlog"), infoValue(mem, "mem_total_replication_buffers"); b != "1048576" || tot != b {
				t.Errorf("master's mem_replication_backlog %s, mem_total_replication_buffers %s: want the 1 MB backlog", b, tot)
			}
			if n, _ := strconv.ParseInt(infoValue(mem, "mem_clients_slaves"), 10, 64); n <= 0 {
				t.Errorf("master's mem_clients_slaves %d with a replica connected", n)
			}
			if !strings.Contains(minfo, "connected_slaves:1") || !strings.Contains(minfo, "state=online") {
				t.Errorf("master's INFO replication:\n%s", minfo)
			}
			if tc.limit != "" && peak > 64<<10 {
				t.Errorf("held %d bytes of stream past replica-full-sync-buffer-limit %s", peak, tc.limit)
			}
			if channel {
				if !sawChannel || !sawWait || peak == 0 {
					t.Errorf("RDB channel seen %v, send_bulk_and_stream seen %v, stream held %d bytes at most", sawChannel, sawWait, peak)
				}
			} else if sawChannel || peak != 0 {
				t.Errorf("repl-rdb-channel no: RDB channel seen %v, stream held %d", sawChannel, peak)
			}
		})
	}
}

// An RDB channel naming no waiting main channel is refused with Redis's
// error; the options are checked as Redis's REPLCONF does.
func TestRDBChannelReplconfErrors(t *testing.T) {
	ctx := context.Background()
	m := hotkvtest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer c.Close()
	me := c.ClientID(ctx).Val()
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"REPLCONF", "main-ch-client-id", me}, "ERR Unrecognized RDB client id: " + strconv.FormatInt(me, 10)},
		{[]any{"REPLCONF", "main-ch-client-id", 999999}, "ERR Unrecognized RDB client id: 999999"},
		{[]any{"REPLCONF", "rdb-channel", 2}, "ERR value is out of range, value must between 0 and 1"},
		{[]any{"REPLCONF", "rdb-channel", "x"}, "ERR value is not an integer or out of range"},
	} {
		if err := c.Do(ctx, tc.args...).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := c.Do(ctx, "REPLCONF", "rdb-channel", 1, "capa", "rdb-channel-repl").Err(); err != nil {
		t.Fatal(err)
	}
}

// DEBUG REPL-PAUSE before-rdb-channel stops a replica process (SIGSTOP)
// after its RDB channel's REPLCONF: the master shows its main channel
// waiting (wait_bgsave) and no RDB channel has asked for a snapshot; once
// the process is continued (SIGCONT) the sync completes.
func TestDebugReplPause(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a hotkv process")
	}
	if runtime.GOOS != "linux" {
		t.Skip("tells a stopped process by /proc")
	}
	ctx := context.Background()
	bin := hotkvtest.BuildHotKV(t)
	m := hotkvtest.Start(t)
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	mc.Set(ctx, "k", "v", 0)
	port := hotkvtest.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--save", "", "--dir", t.TempDir(), "--enable-debug-command", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGCONT); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer rc.Close()
	deadline := time.Now().Add(20 * time.Second)
	for rc.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rc.Do(ctx, "DEBUG", "REPL-PAUSE", "nowhere").Err(); err == nil || !strings.Contains(err.Error(), "unknown subcommand") {
		t.Fatalf("unknown point: %v", err)
	}
	if err := rc.Do(ctx, "DEBUG", "REPL-PAUSE", "before-rdb-channel").Err(); err != nil {
		t.Fatal(err)
	}
	host, mport, _ := net.SplitHostPort(m.Addr)
	if err := rc.Do(ctx, "REPLICAOF", host, mport).Err(); err != nil {
		t.Fatal(err)
	}
	stopped := func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if err != nil {
			return false
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(f) > 0 && f[0] == "T"
	}
	for !stopped() {
		if time.Now().After(deadline) {
			t.Fatal("the replica process did not stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	info := mc.Info(ctx, "replication").Val()
	if !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=wait_bgsave") {
		t.Fatalf("master while the replica is stopped:\n%s", info)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	for !strings.Contains(mc.Info(ctx, "replication").Val(), "state=online") ||
		infoValue(rc.Info(ctx, "replication").Val(), "master_link_status") != "up" {
		if time.Now().After(deadline) {
			t.Fatalf("no sync after SIGCONT:\n%s", mc.Info(ctx, "replication").Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rc.Get(ctx, "k").Val() != "v" {
		t.Error("the snapshot did not reach the replica")
	}
}

// fakeMaster answers a replica's handshake and every PSYNC with a full sync
// whose payload is corrupt; psyncs counts them.
func fakeMaster(t *testing.T) (addr string, psyncs *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	psyncs = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					argv, err := readCommand(br)
					if err != nil {
						return
					}
					switch strings.ToUpper(argv[0]) {
					case "PING":
						c.Write([]byte("+PONG\r\n"))
					case "PSYNC":
						psyncs.Add(1)
						mark := strings.Repeat("a", 40)
						c.Write([]byte("+FULLRESYNC " + strings.Repeat("b", 40) + " 0\r\n$EOF:" + mark + "\r\nREDIS0012\xfe\x00garbage that is no RDB" + mark))
					default:
						c.Write([]byte("+OK\r\n"))
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), psyncs
}

func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("bad line %q", line)
	}
	argv := make([]string, n)
	for i := range argv {
		if line, err = br.ReadString('\n'); err != nil {
			return nil, err
		}
		l, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		argv[i] = string(b[:l])
	}
	return argv, nil
}

// repl-diskless-load swapdb keeps the dataset aside while the master's
// snapshot loads: a payload that fails to load leaves the replica with
// its old dataset (flushdb leaves it empty).
func TestSwapdbKeepsDatasetOnFailedLoad(t *testing.T) {
	for _, mode := range []string{"swapdb", "flushdb"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			addr, psyncs := fakeMaster(t)
			r := hotkvtest.Start(t)
			rc := redis.NewClient(&redis.Options{Addr: r.Addr})
			defer rc.Close()
			for i := range 100 {
				rc.Set(ctx, "old:"+strconv.Itoa(i), i, time.Hour)
			}
			rc.Do(ctx, "SELECT", 0)
			if err := rc.ConfigSet(ctx, "repl-diskless-load", mode).Err(); err != nil {
				t.Fatal(err)
			}
			host, port, _ := net.SplitHostPort(addr)
			if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for psyncs.Load() < 2 { // the first load failed: the replica tries again
				if time.Now().After(deadline) {
					t.Fatal("the replica did not sync twice")
				}
				time.Sleep(20 * time.Millisecond)
			}
			n := rc.DBSize(ctx).Val()
			switch {
			case mode == "swapdb" && (n != 100 || rc.TTL(ctx, "old:7").Val() <= 0):
				t.Errorf("swapdb: %d keys after a failed load, want the 100 kept aside", n)
			case mode != "swapdb" && n != 0:
				t.Errorf("flushdb: %d keys after a failed load, want 0", n)
			}
		})
	}
}

// A main channel lost while its RDB channel's snapshot loads (Redis's
// rdbChannelAbort): a load from a file goes on and the replica then
// continues with PSYNC from the snapshot's offset (one full sync, one
// partial); a load from the link is aborted and the replica syncs again
// (two full syncs). Only the main channel is killed on the master: the RDB
// channel itself would go on.
func TestRDBChannelMainLostWhileLoading(t *testing.T) {
	for _, tc := range []struct {
		load          string
		full, partial string
	}{{"disabled", "1", "1"}, {"swapdb", "2", "0"}} {
		t.Run(tc.load, func(t *testing.T) {
			ctx := context.Background()
			mc, rc, m := masterAndReplica(t)
			for _, kv := range [][2]string{{"repl-diskless-load", tc.load}, {"key-load-delay", "1000"}, {"loading-process-events-interval-bytes", "1024"}} {
				if err := rc.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2000 {
				mc.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
			}
			host, port, _ := net.SplitHostPort(m.Addr)
			if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for infoValue(rc.Info(ctx, "persistence").Val(), "loading") != "1" {
				if time.Now().After(deadline) {
					t.Fatal("the replica did not start loading")
				}
				time.Sleep(5 * time.Millisecond)
			}
			killed := false
			for _, line := range strings.Split(mc.ClientList(ctx).Val(), "\n") {
				if strings.Contains(line, " flags=S ") {
					id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
					if err := mc.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
						t.Fatal(err)
					}
					killed = true
				}
			}
			if !killed {
				t.Fatalf("no main channel in CLIENT LIST:\n%s", mc.ClientList(ctx).Val())
			}
			mc.Set(ctx, "x", "1", 0)
			rc.ConfigSet(ctx, "key-load-delay", "0")
			for infoValue(rc.Info(ctx, "replication").Val(), "master_link_status") != "up" ||
				infoValue(mc.Info(ctx, "stats").Val(), "sync_full") != tc.full {
				if time.Now().After(deadline) {
					t.Fatalf("not resynced: sync_full %s", infoValue(mc.Info(ctx, "stats").Val(), "sync_full"))
				}
				time.Sleep(10 * time.Millisecond)
			}
			waitSameDigest(t, mc, rc, deadline)
			st := mc.Info(ctx, "stats").Val()
			if f, p := infoValue(st, "sync_full"), infoValue(st, "sync_partial_ok"); f != tc.full || p != tc.partial {
				t.Fatalf("sync_full %s, sync_partial_ok %s; want %s and %s", f, p, tc.full, tc.partial)
			}
		})
	}
}
