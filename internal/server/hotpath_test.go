package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/resp"
)

// nopConn is a net.Conn that discards writes; the hot-path benchmarks call
// dispatch directly, so it is never read.
type nopConn struct{ net.Conn }

func (nopConn) Write(b []byte) (int, error)     { return len(b), nil }
func (nopConn) Close() error                    { return nil }
func (nopConn) RemoteAddr() net.Addr            { return &net.TCPAddr{} }
func (nopConn) LocalAddr() net.Addr             { return &net.TCPAddr{} }
func (nopConn) SetReadDeadline(time.Time) error { return nil }

func newBenchServer(tb testing.TB) (*Server, *client) {
	tb.Helper()
	s := New(config.New(), Options{Clock: clock.NewFake(1_700_000_000_000), Seed: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	cl := s.newClient(nopConn{})
	return s, cl
}

func args(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// run dispatches argv once under the engine lock and resets the reply buffer,
// as a connection does per batch.
func run(s *Server, cl *client, argv [][]byte) {
	cl.clockUs = s.clock.NowUs()
	s.eng.Lock()
	s.dispatch(cl, argv)
	s.eng.Unlock()
	cl.w.Buf = cl.w.Buf[:0]
}

var hotCases = []struct {
	name  string
	setup [][]string
	argv  []string
}{
	{"GET", [][]string{{"SET", "key:000000000001", "0123456789abcdef0123456789abcdef"}}, []string{"GET", "key:000000000001"}},
	{"SET", [][]string{{"SET", "key:000000000001", "0123456789abcdef0123456789abcdef"}}, []string{"SET", "key:000000000001", "fedcba9876543210fedcba9876543210"}},
	{"SET_NX_PX", nil, []string{"SET", "lock:1", "tok", "NX", "PX", "30000"}},
	{"INCR", [][]string{{"SET", "counter", "1"}}, []string{"INCR", "counter"}},
	{"DELEX_miss", [][]string{{"SET", "lock:1", "tok-a81f"}}, []string{"DELEX", "lock:1", "IFEQ", "tok-other"}},
	{"EXPIRE", [][]string{{"SET", "k", "v"}}, []string{"PEXPIRE", "k", "30000"}},
	{"DEL_miss", nil, []string{"DEL", "nokey"}},
	// redis-benchmark's HSET: a field of a small (listpack) hash, and of a table
	{"HSET", [][]string{{"HSET", "myhash", "element:000000000001", "xxx", "element:2", "yyy"}}, []string{"HSET", "myhash", "element:000000000001", "xxx"}},
	{"HSET_table", [][]string{{"CONFIG", "SET", "hash-max-listpack-entries", "1"}, {"HSET", "myhash", "a", "1", "b", "2"}}, []string{"HSET", "myhash", "a", "xxx"}},
	{"HGET", [][]string{{"HSET", "myhash", "element:000000000001", "xxx"}}, []string{"HGET", "myhash", "element:000000000001"}},
	// redis-benchmark's list workloads: pushes and pops at the ends of a long list
	// (a quicklist), LRANGE_100 and LRANGE_600 on a list of 600 elements
	{"LPUSH", [][]string{{"RPUSH", "mylist", "xxx"}}, []string{"LPUSH", "mylist", "xxx"}},
	{"RPUSH", [][]string{{"RPUSH", "mylist", "xxx"}}, []string{"RPUSH", "mylist", "xxx"}},
	{"LPOP", [][]string{listOf("RPUSH", 3000)}, []string{"LPOP", "mylist"}},
	{"RPOP", [][]string{listOf("RPUSH", 3000)}, []string{"RPOP", "mylist"}},
	{"LRANGE_100", [][]string{listOf("LPUSH", 600)}, []string{"LRANGE", "mylist", "0", "99"}},
	{"LRANGE_600", [][]string{listOf("LPUSH", 600)}, []string{"LRANGE", "mylist", "0", "599"}},
}

// listOf is a push of n "xxx" elements to mylist.
func listOf(cmd string, n int) []string {
	a := []string{cmd, "mylist"}
	for range n {
		a = append(a, "xxx")
	}
	return a
}

// docs/ARCHITECTURE.md §6: zero allocations per command on the hot path.
func TestHotPathAllocs(t *testing.T) {
	for _, hc := range hotCases {
		s, cl := newBenchServer(t)
		for _, st := range hc.setup {
			run(s, cl, args(st...))
		}
		argv := args(hc.argv...)
		run(s, cl, argv) // warm the buffers
		if n := testing.AllocsPerRun(1000, func() { run(s, cl, argv) }); n != 0 {
			t.Errorf("%s: %.1f allocations per command, want 0", hc.name, n)
		}
	}
	// DELEX that deletes, then SET NX that re-creates: the lock cycle allocates only
	// the new key's entry and value
	s, cl := newBenchServer(t)
	set, del := args("SET", "lock:1", "tok-a81f", "NX", "PX", "30000"), args("DELEX", "lock:1", "IFEQ", "tok-a81f")
	run(s, cl, set)
	run(s, cl, del)
	if n := testing.AllocsPerRun(1000, func() { run(s, cl, set); run(s, cl, del) }); n > 3 {
		t.Errorf("lock acquire+release: %.1f allocations, want <= 3 (entry, key, value)", n)
	}
}

func BenchmarkHotPath(b *testing.B) {
	for _, hc := range hotCases {
		b.Run(hc.name, func(b *testing.B) {
			s, cl := newBenchServer(b)
			for _, st := range hc.setup {
				run(s, cl, args(st...))
			}
			argv := args(hc.argv...)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(s, cl, argv)
			}
		})
	}
	b.Run("DELEX_hit+SET_NX", func(b *testing.B) {
		s, cl := newBenchServer(b)
		set, del := args("SET", "lock:1", "tok-a81f", "NX", "PX", "30000"), args("DELEX", "lock:1", "IFEQ", "tok-a81f")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			run(s, cl, set)
			run(s, cl, del)
		}
	})
	// bench/lockbench -pipeline 16: 50 clients, each taking 16 locks of its
	// own keys, then releasing them by DELEX IFEQ (800 keys; b.N cycles)
	b.Run("lock_cycle_800_keys", func(b *testing.B) {
		s, cl := newBenchServer(b)
		var sets, dels [][][]byte
		for c := range 50 {
			for k := range 16 {
				key, tok := fmt.Sprintf("lock:%d:%d", c, k), fmt.Sprintf("tok-%d-%d", c, k)
				sets = append(sets, args("SET", key, tok, "NX", "PX", "30000"))
				dels = append(dels, args("DELEX", key, "IFEQ", tok))
			}
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i += 16 {
			at := (i / 16 % 50) * 16
			for k := range min(16, b.N-i) {
				run(s, cl, sets[at+k])
			}
			for k := range min(16, b.N-i) {
				run(s, cl, dels[at+k])
			}
		}
	})
	// a lock cycle among 100,000 held locks: a random one released by DELEX
	// IFEQ and taken again (b.N cycles; the view's states out of the cache)
	b.Run("lock_cycle_100k_held", func(b *testing.B) {
		s, cl := newBenchServer(b)
		const n = 100000
		sets, dels := make([][][]byte, n), make([][][]byte, n)
		for i := range n {
			key := fmt.Sprintf("lock:%012d", i)
			sets[i] = args("SET", key, "tok-a81f", "NX", "PX", "300000")
			dels[i] = args("DELEX", key, "IFEQ", "tok-a81f")
			run(s, cl, sets[i])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := (i * 7919) % n
			run(s, cl, dels[k])
			run(s, cl, sets[k])
		}
	})
	// redis-benchmark's lock_acquire: SET NX PX on 100,000 keys at random, most
	// of them held (taken and never released in the 30 s)
	b.Run("SET_NX_PX_100k_keys", func(b *testing.B) {
		s, cl := newBenchServer(b)
		cmds := make([][][]byte, 100000)
		for i := range cmds {
			cmds[i] = args("SET", fmt.Sprintf("lock:%012d", (i*7919)%100000), "tok-a81f", "NX", "PX", "30000")
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			run(s, cl, cmds[i%len(cmds)])
		}
	})
}

// The classic lock release script by EVALSHA (redsync, bsm/redislock style).
const releaseScript = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end"

func BenchmarkEvalsha(b *testing.B) {
	for _, tc := range []struct {
		name  string
		setup [][]string
		token string
	}{
		{"release_miss", [][]string{{"SET", "lock:1", "tok-a81f"}}, "tok-other"},
		{"release_hit", nil, "tok-a81f"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, cl := newBenchServer(b)
			run(s, cl, args("SCRIPT", "LOAD", releaseScript))
			for _, st := range tc.setup {
				run(s, cl, args(st...))
			}
			sha := "ae3671744a5dbb24ea37ef607b8b10ac7856d43e"
			call := args("EVALSHA", sha, "1", "lock:1", tc.token)
			set := args("SET", "lock:1", "tok-a81f")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if tc.setup == nil {
					run(s, cl, set)
				}
				run(s, cl, call)
			}
		})
	}
}

// One Redis version everywhere: INFO, HELLO and the config-file error banner.
func TestOneRedisVersion(t *testing.T) {
	if config.RedisVersion != command.Version {
		t.Fatalf("config.RedisVersion %q != command.Version %q", config.RedisVersion, command.Version)
	}
}

// countTarget is a PropagationTarget that keeps only a count and the bytes of
// the last command (what a replica's encoder would do, minus the socket).
type countTarget struct {
	n    int
	last []byte
}

func (t *countTarget) Propagate(db int, argv [][]byte) {
	t.n++
	t.last = resp.AppendCommand(t.last[:0], argv...)
}
func (t *countTarget) UnitDone() {}

// With a propagation target attached, the write path still allocates nothing
// per command once its buffers are warm (the unit's arena is reused), and a
// rewrite (SET ... PX -> PXAT) neither.
func TestHotPathAllocsPropagating(t *testing.T) {
	for _, hc := range hotCases {
		s, cl := newBenchServer(t)
		tgt := &countTarget{}
		s.eng.Lock()
		s.AddPropagationTarget(tgt, command.PropAll)
		s.eng.Unlock()
		for _, st := range hc.setup {
			run(s, cl, args(st...))
		}
		argv := args(hc.argv...)
		run(s, cl, argv)
		if n := testing.AllocsPerRun(1000, func() { run(s, cl, argv) }); n != 0 {
			t.Errorf("%s: %.1f allocations per command while propagating, want 0", hc.name, n)
		}
	}
	// a rewrite: SET ... PX as SET ... PXAT <ms>
	s, cl := newBenchServer(t)
	tgt := &countTarget{}
	s.eng.Lock()
	s.AddPropagationTarget(tgt, command.PropAll)
	s.eng.Unlock()
	argv := args("SET", "k", "v", "PX", "30000")
	run(s, cl, argv)
	if n := testing.AllocsPerRun(1000, func() { run(s, cl, argv) }); n != 0 {
		t.Errorf("SET PX: %.1f allocations per command while propagating, want 0", n)
	}
	if got := string(tgt.last); got != "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$13\r\n1700000030000\r\n" {
		t.Errorf("SET PX propagated as %q", got)
	}
}

// EVALSHA of the release script (a GET that misses the token): the allocation
// sites left are the busy state other clients may read (1), the KEYS/ARGV
// strings (one buffer and a boxed string per item: 3) and redis.call's bulk
// reply as a Lua string (2); MemStats counts 7, as the two short strings are
// tiny allocations, counted once each and again for the 16-byte blocks they
// share. Everything else (the Run, redis.call's argv, the script lookup, the
// KEYS/ARGV tables) is reused; this fails if a per-call allocation comes back
// (it was 13 before).
func TestEvalshaAllocs(t *testing.T) {
	s, cl := newBenchServer(t)
	run(s, cl, args("SCRIPT", "LOAD", releaseScript))
	run(s, cl, args("SET", "lock:1", "tok-a81f"))
	call := args("EVALSHA", "ae3671744a5dbb24ea37ef607b8b10ac7856d43e", "1", "lock:1", "tok-other")
	run(s, cl, call)
	if n := testing.AllocsPerRun(1000, func() { run(s, cl, call) }); n > 7 {
		t.Errorf("EVALSHA release (miss): %.1f allocations per call, want <= 7", n)
	}
	cl.w.Buf = cl.w.Buf[:0]
	run2 := func(argv [][]byte) string {
		cl.clockUs = s.clock.NowUs()
		s.eng.Lock()
		s.dispatch(cl, argv)
		s.eng.Unlock()
		out := string(cl.w.Buf)
		cl.w.Buf = cl.w.Buf[:0]
		return out
	}
	if got := run2(call); got != ":0\r\n" {
		t.Fatalf("release with the wrong token: %q", got)
	}
	if got := run2(args("EVALSHA", "ae3671744a5dbb24ea37ef607b8b10ac7856d43e", "1", "lock:1", "tok-a81f")); got != ":1\r\n" {
		t.Fatalf("release with the token: %q", got)
	}
}

// txbench's transaction: MULTI, ten INCRs, EXEC (a batch of 12 commands).
func multiExecBatch() [][][]byte {
	batch := [][][]byte{args("MULTI")}
	for i := 0; i < 10; i++ {
		batch = append(batch, args("INCR", "counter:"+string(rune('0'+i))))
	}
	return append(batch, args("EXEC"))
}

func runBatch(s *Server, cl *client, batch [][][]byte) {
	cl.clockUs = s.clock.NowUs()
	s.eng.Lock()
	for _, argv := range batch {
		s.dispatch(cl, argv)
	}
	s.eng.Unlock()
	cl.w.Buf = cl.w.Buf[:0]
}

func BenchmarkMultiExec(b *testing.B) {
	s, cl := newBenchServer(b)
	s.clients[cl.ID] = cl
	batch := multiExecBatch()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runBatch(s, cl, batch)
	}
}

// MULTI + 10 INCR + EXEC allocates nothing once the client's queue buffers have
// grown (it was 35 allocations: a copy of every queued argv, the queue itself);
// the replies stay the same.
func TestMultiExecAllocs(t *testing.T) {
	s, cl := newBenchServer(t)
	s.clients[cl.ID] = cl
	batch := multiExecBatch()
	runBatch(s, cl, batch)
	if n := testing.AllocsPerRun(200, func() { runBatch(s, cl, batch) }); n != 0 {
		t.Errorf("MULTI + 10 INCR + EXEC: %.1f allocations, want 0", n)
	}
	cl.clockUs = s.clock.NowUs()
	s.eng.Lock()
	for _, argv := range batch {
		s.dispatch(cl, argv)
	}
	s.eng.Unlock()
	want := "+OK\r\n" + strings.Repeat("+QUEUED\r\n", 10) + "*10\r\n" + strings.Repeat(":203\r\n", 10) // 1 + 201 + 1 runs
	if got := string(cl.w.Buf); got != want {
		t.Errorf("replies %q, want %q", got, want)
	}
	cl.w.Buf = cl.w.Buf[:0]
}

// EVAL of a cached script finds it by the SHA1 of its body without copying the
// body or building the hex string (script.VM.LoadBytes): what is left is the
// invocation's state and the KEYS and ARGV tables. Without LoadBytes: 4 more
// allocations, about 260 bytes, a call; at 70k EVALs a second they made the
// collector run ten times a second on a 3 MB heap.
func TestEvalCachedAllocs(t *testing.T) {
	s, cl := newBenchServer(t)
	run(s, cl, args("SET", "lock:1", "tok-a81f"))
	call := args("EVAL", releaseScript, "1", "lock:1", "tok-other")
	run(s, cl, call)
	if n := testing.AllocsPerRun(1000, func() { run(s, cl, call) }); n > evalCachedMaxAllocs {
		t.Errorf("EVAL of a cached script: %.1f allocations, want <= %d", n, evalCachedMaxAllocs)
	}
}

const evalCachedMaxAllocs = 7

func BenchmarkEvalCached(b *testing.B) {
	s, cl := newBenchServer(b)
	run(s, cl, args("SET", "lock:1", "tok-a81f"))
	call := args("EVAL", releaseScript, "1", "lock:1", "tok-other")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		run(s, cl, call)
	}
}

// BenchmarkHotPathReplica is BenchmarkHotPath's SET and lock cycle (SET NX
// PX, then DELEX IFEQ) with one replica attached as a SYNC attaches it: every
// write is propagated (the stream's encoding, the backlog, the replica's push
// buffer), and the replica's output is taken every 16 units, as its event
// loop writes a replica link every 200 µs under load (decision 0054).
func BenchmarkHotPathReplica(b *testing.B) {
	cases := map[string][][][]byte{
		"SET":        {args("SET", "key:000000000001", "fedcba9876543210fedcba9876543210")},
		"lock_cycle": {args("SET", "lock:1", "tok-a81f", "NX", "PX", "30000"), args("DELEX", "lock:1", "IFEQ", "tok-a81f")},
	}
	for _, name := range []string{"SET", "lock_cycle"} {
		b.Run(name, func(b *testing.B) {
			s, cl := newBenchServer(b)
			rcl := s.newClient(nopConn{})
			s.eng.Lock()
			s.becomeReplica(rcl, s.repl.Attach(rcl, false, 0, s.clock.NowMs()))
			s.eng.Unlock()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for _, argv := range cases[name] {
					run(s, cl, argv)
				}
				if i%16 == 15 {
					rcl.drainPush()
					rcl.resetReplyBuf()
				}
			}
		})
	}
}
