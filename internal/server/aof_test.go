package server_test

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// The append-only file over TCP (aofglue.go, internal/server/aof): what a
// server acknowledged is in the directory it leaves (copied while it runs:
// what a kill -9 leaves), and a server started on that directory has the
// same dataset (DEBUG DIGEST), TTLs as absolute deadlines.

// fillEveryType writes a dataset of every type through c, in the ways the
// propagated stream rewrites (relative TTLs, SPOP, INCRBYFLOAT, scripts,
// MULTI, SELECT, hash-field TTLs).
func fillEveryType(t *testing.T, c *hotkvtest.Conn) {
	t.Helper()
	cmds := [][]string{
		{"SET", "str", "hello"},
		{"SET", "lock:job", "tok-1", "NX", "PX", "600000"},
		{"SET", "gone", "x", "PX", "1"},
		{"INCR", "counter"},
		{"INCRBY", "counter", "41"},
		{"INCRBYFLOAT", "float", "1.5"},
		{"RPUSH", "list", "a", "b", "c", "d"},
		{"LPOP", "list"},
		{"SADD", "set", "1", "2", "3", "4", "5"},
		{"SPOP", "set"},
		{"SADD", "bigset", "a", "b", "c"},
		{"ZADD", "zset", "1", "one", "2.5", "two", "3", "three"},
		{"ZINCRBY", "zset", "10", "one"},
		{"HSET", "hash", "f1", "v1", "f2", "v2", "f3", "v3"},
		{"HPEXPIRE", "hash", "600000", "FIELDS", "1", "f1"},
		{"XADD", "stream", "*", "k", "v"},
		{"XADD", "stream", "*", "k2", "v2"},
		{"XGROUP", "CREATE", "stream", "g", "0"},
		{"PFADD", "hll", "a", "b", "c"},
		{"SETBIT", "bits", "100", "1"},
		{"EXPIRE", "str", "1000"},
		{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); return redis.call('incr', KEYS[2])", "2", "fromlua", "luacount", "v"},
		{"MULTI"}, {"SET", "tx1", "a"}, {"SET", "tx2", "b"}, {"EXEC"},
		{"SELECT", "3"}, {"SET", "in3", "x"}, {"SELECT", "0"},
		{"FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function(keys, args) return redis.call('set', keys[1], args[1]) end)"},
		{"FCALL", "f", "1", "byfcall", "y"},
		{"DEL", "bigset"},
	}
	for _, a := range cmds {
		if r := c.Do(a...); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %q", a, r)
		}
	}
	time.Sleep(5 * time.Millisecond) // "gone" expires
	c.Do("GET", "gone")              // lazy expiry: a DEL in the stream
}

// copyDir copies dir's files (one level and appendonlydir) to a new
// temporary directory: the state a crash would leave.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if os.IsNotExist(err) {
			return nil // history the AOF's cleanup unlinked meanwhile: the manifest no longer lists it
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// settleHeap gives the heap a test left behind back to the runtime when it
// ends: the servers of later tests share this process's heap, and the memory
// tests measure used_memory against limits of a few MB.
func settleHeap(t *testing.T) {
	t.Cleanup(func() {
		runtime.GC()
		debug.FreeOSMemory()
	})
}

func aofOpts(dir, fsync string, more ...hotkvtest.Option) []hotkvtest.Option {
	return append([]hotkvtest.Option{hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("appendonly", "yes"),
		hotkvtest.WithConfig("appendfsync", fsync)}, more...)
}

func TestAOFRestartHasEveryAcknowledgedWrite(t *testing.T) {
	settleHeap(t)
	for _, name := range []string{"always", "everysec", "no", "always/goroutines", "everysec/goroutines"} {
		t.Run(name, func(t *testing.T) {
			fsync, mode, _ := strings.Cut(name, "/")
			var more []hotkvtest.Option
			if mode == "goroutines" {
				more = append(more, hotkvtest.WithGoroutinePerConn())
			}
			dir := t.TempDir()
			a := hotkvtest.Start(t, aofOpts(dir, fsync, more...)...)
			c := hotkvtest.Dial(t, a.Addr)
			fillEveryType(t, c)
			digest := c.Do("DEBUG", "DIGEST")
			deadline := c.Do("PEXPIRETIME", "lock:job")
			// the server still runs: its directory is what a kill -9 leaves
			b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), fsync)...)
			d := hotkvtest.Dial(t, b.Addr)
			do(t, d, digest, "DEBUG", "DIGEST")
			do(t, d, deadline, "PEXPIRETIME", "lock:job")
			do(t, d, "$2\r\n42\r\n", "GET", "counter")
			do(t, d, "$1\r\nv\r\n", "GET", "fromlua")
			do(t, d, ":1\r\n", "EXISTS", "byfcall")
			do(t, d, "$-1\r\n", "GET", "gone")
			do(t, d, "+OK\r\n", "FCALL", "f", "1", "again", "z") // libraries are in the stream too
		})
	}
}

func TestAOFStartCreatesBaseAndIncr(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "everysec")...)
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "k", "v")
	man, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	want := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i startoffset 0\n"
	if string(man) != want {
		t.Fatalf("manifest = %q, want %q", man, want)
	}
	incr, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
	if string(incr) != "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n" {
		t.Fatalf("incr = %q", incr)
	}
	if got := infoField(t, c, "aof_enabled"); got != "1" {
		t.Fatalf("aof_enabled = %s", got)
	}
}

func TestAOFConfigSetAppendonlyLive(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, a.Addr)
	for i := 0; i < 100; i++ {
		c.Do("SET", "before:"+string(rune('a'+i%26))+strings.Repeat("x", i), "v")
	}
	c.Do("RPUSH", "q", "1", "2")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes")
	c.Do("SET", "during", "1") // goes to the temporary incr file
	waitField(t, c, "aof_rewrite_in_progress", "0")
	waitField(t, c, "aof_enabled", "1")
	c.Do("SET", "after", "2")
	c.Do("LPUSH", "q", "0")
	digest := c.Do("DEBUG", "DIGEST")
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if want := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i startoffset 0\n"; string(man) != want {
		t.Fatalf("manifest = %q, want %q", man, want)
	}
	b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), "everysec")...)
	d := hotkvtest.Dial(t, b.Addr)
	do(t, d, digest, "DEBUG", "DIGEST")
	// and off again: appends stop
	do(t, c, "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
	if got := infoField(t, c, "aof_enabled"); got != "0" {
		t.Fatalf("aof_enabled = %s", got)
	}
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	st1, _ := os.Stat(incr)
	c.Do("SET", "off", "1")
	st2, _ := os.Stat(incr)
	if st1.Size() != st2.Size() {
		t.Fatalf("the AOF grew after appendonly no: %d -> %d", st1.Size(), st2.Size())
	}
}

func TestAOFBGRewriteSwitchesManifest(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "always")...)
	c := hotkvtest.Dial(t, a.Addr)
	for i := 0; i < 50; i++ {
		c.Do("INCR", "n")
	}
	a.Srv.SetAOFRewriteDelay(300 * time.Millisecond)
	do(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
	do(t, c, "-ERR Background append only file rewriting already in progress\r\n", "BGREWRITEAOF")
	if got := infoField(t, c, "aof_rewrite_in_progress"); got != "1" {
		t.Fatalf("aof_rewrite_in_progress = %s", got)
	}
	// a crash during the rewrite: the old base and both incr files
	mid := copyDir(t, dir)
	c.Do("INCR", "n") // in the new incr file
	waitField(t, c, "aof_rewrite_in_progress", "0")
	do(t, c, "+ok\r\n", "EVAL", "return redis.status_reply(redis.call('info','persistence'):match('aof_last_bgrewrite_status:(%a+)'))", "0")
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	// the new incremental file starts at master_repl_offset: 50 INCRs, a
	// command each without replicas (Redis 8's manifest)
	if want := "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i startoffset 50\n"; string(man) != want {
		t.Fatalf("manifest = %q, want %q", man, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")); err == nil {
		t.Fatal("the history file was not deleted")
	}
	c.Do("INCR", "n")
	b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...)
	do(t, hotkvtest.Dial(t, b.Addr), "$2\r\n52\r\n", "GET", "n")
	// a client in another database across a rewrite: the new incremental
	// file selects it again
	e := hotkvtest.Dial(t, a.Addr)
	e.Do("SELECT", "9")
	e.Do("SET", "in9", "before")
	do(t, e, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
	e.Do("SET", "in9:after", "x")
	waitField(t, c, "aof_rewrite_in_progress", "0")
	e.Do("SET", "in9:later", "y")
	f := hotkvtest.Dial(t, hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...).Addr)
	f.Do("SELECT", "9")
	do(t, f, "*3\r\n$6\r\nbefore\r\n$1\r\nx\r\n$1\r\ny\r\n", "MGET", "in9", "in9:after", "in9:later")
	m := hotkvtest.Start(t, aofOpts(mid, "always")...)
	do(t, hotkvtest.Dial(t, m.Addr), "$2\r\n50\r\n", "GET", "n")
}

// A torn last command is cut off (aof-load-truncated yes, the default) and
// the rest loads; a MULTI without its EXEC is reverted.
func TestAOFTruncatedTailLoadsPrefix(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "always")...)
	c := hotkvtest.Dial(t, a.Addr)
	c.Do("SET", "a", "1")
	c.Do("SET", "b", "2")
	src := copyDir(t, dir)
	incr := filepath.Join("appendonlydir", "appendonly.aof.1.incr.aof")
	full, _ := os.ReadFile(filepath.Join(src, incr))
	tail := "*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1\r\n3\r\n"
	tx := "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nd\r\n$1\r\n4\r\n"
	for cut := 0; cut < len(tail); cut++ {
		d := copyDir(t, src)
		if err := os.WriteFile(filepath.Join(d, incr), append(append([]byte{}, full...), tail[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		b := hotkvtest.Start(t, aofOpts(d, "always")...)
		e := hotkvtest.Dial(t, b.Addr)
		do(t, e, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n", "MGET", "a", "b", "c")
		got, _ := os.ReadFile(filepath.Join(d, incr))
		if len(got) != len(full) {
			t.Fatalf("cut %d: the file was not truncated back to %d bytes (%d)", cut, len(full), len(got))
		}
	}
	d := copyDir(t, src)
	_ = os.WriteFile(filepath.Join(d, incr), append(append([]byte{}, full...), tx...), 0o644)
	b := hotkvtest.Start(t, aofOpts(d, "always")...)
	do(t, hotkvtest.Dial(t, b.Addr), ":0\r\n", "EXISTS", "d")
}

func TestWaitAOF(t *testing.T) {
	settleHeap(t)
	a := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n", "WAITAOF", "1", "0", "0")
	do(t, c, "*2\r\n:0\r\n:0\r\n", "WAITAOF", "0", "0", "0")
	do(t, c, "-ERR value is out of range, value must between 0 and 1\r\n", "WAITAOF", "2", "0", "0")
	for _, fsync := range []string{"always", "everysec"} {
		b := hotkvtest.Start(t, aofOpts(t.TempDir(), fsync)...)
		d := hotkvtest.Dial(t, b.Addr)
		d.Do("SET", "k", "v")
		start := time.Now()
		do(t, d, "*2\r\n:1\r\n:0\r\n", "WAITAOF", "1", "0", "0")
		if fsync == "everysec" && time.Since(start) > 3*time.Second {
			t.Fatalf("WAITAOF under everysec took %v", time.Since(start))
		}
	}
}

func TestDebugLoadAOF(t *testing.T) {
	settleHeap(t)
	a := hotkvtest.Start(t, aofOpts(t.TempDir(), "everysec")...)
	c := hotkvtest.Dial(t, a.Addr)
	fillEveryType(t, c)
	digest := c.Do("DEBUG", "DIGEST")
	do(t, c, "+OK\r\n", "DEBUG", "LOADAOF")
	do(t, c, digest, "DEBUG", "DIGEST")
	// the load fed nothing back into the AOF: loading twice still agrees
	do(t, c, "+OK\r\n", "DEBUG", "LOADAOF")
	do(t, c, digest, "DEBUG", "DIGEST")
}

// aof-use-rdb-preamble no: the base file is commands, and rebuilds every
// type (a stream through RESTORE), TTLs of keys and of hash fields too.
func TestAOFBaseOfCommands(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "always", hotkvtest.WithConfig("aof-use-rdb-preamble", "no"))...)
	c := hotkvtest.Dial(t, a.Addr)
	fillEveryType(t, c)
	for i := 0; i < 200; i++ { // more than one RPUSH / SADD / ZADD / HMSET of 64
		n := strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		c.Do("RPUSH", "biglist", n)
		c.Do("SADD", "bigset2", n)
		c.Do("ZADD", "bigzset", "1.5", n)
		c.Do("HSET", "bighash", n, n)
	}
	do(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
	waitField(t, c, "aof_rewrite_in_progress", "0")
	digest := c.Do("DEBUG", "DIGEST")
	base, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.2.base.aof"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(base), "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n") || !strings.Contains(string(base), "HPEXPIREAT") {
		t.Fatalf("base = %.200q", base)
	}
	b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...)
	d := hotkvtest.Dial(t, b.Addr)
	do(t, d, digest, "DEBUG", "DIGEST")
	// the loaded commands are not counted (Redis's loader bypasses call)
	if st := d.Do("INFO", "commandstats"); strings.Contains(st, "cmdstat_rpush") || strings.Contains(st, "cmdstat_set:") {
		t.Fatalf("the load counted its commands: %q", st)
	}
}

// CONFIG SET appendonly while the AOF loads at startup is honoured when the
// load ends (Redis's updateAppendonly defers to it).
func TestAOFConfigSetWhileLoading(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "everysec")...)
	c := hotkvtest.Dial(t, a.Addr)
	const n = 8000
	for i := 0; i < n; i++ {
		c.Write(hotkvtest.EncodeCommand("SET", "k"+strconv.Itoa(i), "v"))
	}
	for i := 0; i < n; i++ {
		if _, err := c.ReadReply(); err != nil {
			t.Fatal(err)
		}
	}
	// 500 µs a command (a 4 s load; CONFIG SET key-load-delay 0 ends it
	// early): the load lends the lock every 1,024 commands, and a waiting
	// command runs then, when the scheduler hands the lock over in time
	// (under the race detector it sometimes does not, and the command waits
	// for the load's end). The test needs its CONFIG SET to run while the
	// load does: a start where it did not is tried again.
	var d *hotkvtest.Conn
	for attempt := 1; ; attempt++ {
		b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), "everysec", hotkvtest.WithConfig("key-load-delay", "500"))...)
		d = hotkvtest.Dial(t, b.Addr)
		if infoField(t, d, "loading") == "1" {
			do(t, d, "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
			if infoField(t, d, "loading") == "1" {
				break // the CONFIG SET ran while the load did
			}
		}
		if attempt == 5 {
			t.Fatal("in 5 starts the load never ran the test's commands while it lasted")
		}
	}
	do(t, d, "+OK\r\n", "CONFIG", "SET", "key-load-delay", "0")
	waitField(t, d, "loading", "0")
	do(t, d, ":8000\r\n", "DBSIZE")
	if got := infoField(t, d, "aof_enabled"); got != "0" {
		t.Fatalf("aof_enabled = %s after appendonly no while loading", got)
	}
}

// The manifest's replication offsets (Redis 8): a graceful close records
// the last incremental file's end offset, a restart resumes
// master_repl_offset from it (and drops it: appends go on in that file),
// or from the start offset plus the file's size.
func TestAOFManifestOffsets(t *testing.T) {
	offset := func(c *hotkvtest.Conn) string {
		m := regexp.MustCompile(`master_repl_offset:(\d+)`).FindStringSubmatch(c.Do("INFO", "replication"))
		if m == nil {
			t.Fatal("no master_repl_offset")
		}
		return m[1]
	}
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "always")...)
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "k1", "v1")
	do(t, c, "+OK\r\n", "SET", "k2", "v2")
	if got := offset(c); got != "2" {
		t.Fatalf("master_repl_offset %s after two writes", got)
	}
	do(t, c, "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
	manPath := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
	man, _ := os.ReadFile(manPath)
	if want := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i startoffset 0 endoffset 2\n"; string(man) != want {
		t.Fatalf("manifest after appendonly no: %q, want %q", man, want)
	}
	// a restart resumes from the end offset and forgets it
	b := hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...)
	d := hotkvtest.Dial(t, b.Addr)
	waitField(t, d, "loading", "0")
	if got := offset(d); got != "2" {
		t.Fatalf("master_repl_offset %s after the restart, want the end offset 2", got)
	}
	// without an end offset: the start offset plus the file's size
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	st, err := os.Stat(incr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manPath, []byte("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i startoffset 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := hotkvtest.Start(t, aofOpts(dir, "always")...)
	f := hotkvtest.Dial(t, e.Addr)
	waitField(t, f, "loading", "0")
	if got, want := offset(f), strconv.FormatInt(100+st.Size(), 10); got != want {
		t.Fatalf("master_repl_offset %s, want start 100 + size %d", got, st.Size())
	}
}

// TestWaitAOFReplicas: WAITAOF counts the replicas that acknowledged the
// client's writes as fsynced to their own AOF (REPLCONF ACK ... FACK): one
// with appendonly yes counts once its AOF has them, one with appendonly no
// never (it sends no FACK); WAITAOF on a replica is refused; turning the AOF
// off releases a client waiting for a local fsync with Redis's error.
func TestWaitAOFReplicas(t *testing.T) {
	settleHeap(t)
	m := hotkvtest.Start(t, aofOpts(t.TempDir(), "always")...)
	mc := hotkvtest.Dial(t, m.Addr)
	r := hotkvtest.Start(t, aofOpts(t.TempDir(), "always")...)
	rc := hotkvtest.Dial(t, r.Addr)
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(rc.Do("INFO", "replication"), "master_link_status:up") ||
		infoValue(rc.Do("INFO", "persistence"), "aof_rewrite_in_progress") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("no sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	do(t, rc, "-ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.\r\n", "WAITAOF", "0", "0", "0")

	mc.Do("SET", "k", "v")
	do(t, mc, "*2\r\n:1\r\n:1\r\n", "WAITAOF", "1", "1", "5000")

	// a replica without an AOF acknowledges no fsync: the wait times out
	do(t, rc, "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
	mc.Do("SET", "k", "w")
	start := time.Now()
	do(t, mc, "*2\r\n:1\r\n:0\r\n", "WAITAOF", "1", "1", "300")
	if d := time.Since(start); d < 290*time.Millisecond {
		t.Fatalf("WAITAOF 1 1 300 answered after %v, before its timeout", d)
	}
	do(t, rc, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes") // its first rewrite, then it counts again
	do(t, mc, "*2\r\n:1\r\n:1\r\n", "WAITAOF", "1", "1", "5000")

	// appendfsync no: a local wait blocks until the AOF is turned off
	do(t, mc, "+OK\r\n", "CONFIG", "SET", "appendfsync", "no")
	mc.Do("SET", "k", "x")
	mc.Write(hotkvtest.EncodeCommand("WAITAOF", "1", "0", "0"))
	for infoValue(mc2(t, m.Addr).Do("INFO", "clients"), "blocked_clients") != "1" {
		if time.Now().After(deadline) {
			t.Fatal("WAITAOF 1 0 0 under appendfsync no did not block")
		}
		time.Sleep(5 * time.Millisecond)
	}
	do(t, mc2(t, m.Addr), "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
	if got, err := mc.ReadReply(); err != nil || got != "-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n" {
		t.Fatalf("WAITAOF after appendonly no: %q %v", got, err)
	}
}

// mc2 is another connection to addr.
func mc2(t *testing.T, addr string) *hotkvtest.Conn { return hotkvtest.Dial(t, addr) }
