package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb"
)

// replStream is a connection attached as Redis's test suite attaches to the
// replication stream (tests/util.tcl attach_to_replication_stream): "SYNC\r\n",
// then "$<len>\r\n" and the RDB payload, then RESP commands.
type replStream struct {
	t          *testing.T
	c          net.Conn
	br         *bufio.Reader
	rdb        []byte
	fullResync string // the +FULLRESYNC line, for PSYNC
}

func attachStream(t *testing.T, addr string, cmd string) *replStream {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := &replStream{t: t, c: c, br: bufio.NewReader(c)}
	_, _ = c.Write([]byte(cmd + "\r\n"))
	r.readSnapshot(cmd, 5*time.Second)
	return r
}

// readSnapshot reads the answer to a SYNC or PSYNC (cmd) sent on r: the
// +FULLRESYNC line (kept in r.fullResync), then the payload.
func (r *replStream) readSnapshot(cmd string, wait time.Duration) {
	t := r.t
	t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(wait))
	line, err := r.br.ReadString('\n')
	for err == nil && line == "\n" { // a waiting replica's keep-alive
		line, err = r.br.ReadString('\n')
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(line, "+FULLRESYNC ") {
		if !regexp.MustCompile(`^\+FULLRESYNC [0-9a-f]{40} \d+\r\n$`).MatchString(line) {
			t.Fatalf("PSYNC reply %q", line)
		}
		r.fullResync = line
		if line, err = r.br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if line[0] != '$' {
		t.Fatalf("%s: got %q, want $<count>", cmd, line)
	}
	if mark, ok := strings.CutPrefix(strings.TrimSpace(line), "$EOF:"); ok {
		// an EOF-marked payload: up to its 40-byte mark
		if len(mark) != 40 {
			t.Fatalf("%s: EOF mark %q", cmd, mark)
		}
		var got []byte
		for !bytes.HasSuffix(got, []byte(mark)) {
			b, err := r.br.ReadByte()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b)
		}
		r.rdb = got[:len(got)-len(mark)]
		return
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	r.rdb = make([]byte, n)
	if _, err := io.ReadFull(r.br, r.rdb); err != nil {
		t.Fatal(err)
	}
}

// next reads one propagated command, joined by spaces; "" when nothing comes
// within wait.
func (r *replStream) next(wait time.Duration) string {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(wait))
	line, err := r.br.ReadString('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return ""
		}
		r.t.Fatal(err)
	}
	if line[0] != '*' {
		r.t.Fatalf("stream: got %q, want a RESP array", line)
	}
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, n)
	for i := range args {
		h, err := r.br.ReadString('\n')
		if err != nil || h[0] != '$' {
			r.t.Fatalf("stream: bulk header %q %v", h, err)
		}
		l, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r.br, b); err != nil {
			r.t.Fatal(err)
		}
		args[i] = string(b[:l])
	}
	return strings.Join(args, " ")
}

// expect reads len(want) commands and compares them; then nothing more may
// come (a short wait).
func (r *replStream) expect(want ...string) {
	r.t.Helper()
	var got []string
	for range want {
		c := r.next(3 * time.Second)
		if c == "" {
			break
		}
		got = append(got, c)
	}
	if extra := r.next(150 * time.Millisecond); extra != "" {
		got = append(got, extra)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		r.t.Fatalf("replication stream:\n got: %q\nwant: %q", got, want)
	}
}

const now0 = 1_700_000_000_000 // the fake clock's start (Unix ms)

func at(ms int64) string { return strconv.FormatInt(now0+ms, 10) }

// TestPropagationRewrites checks every rewrite rule (Redis 8.4's call(),
// alsoPropagate and the per-command rewrites) on a stream attached by SYNC.
func TestPropagationRewrites(t *testing.T) {
	type tc struct {
		name  string
		setup [][]string // before SYNC
		cmds  [][]string
		want  []string
	}
	s := func(a ...string) []string { return a }
	cases := []tc{
		// SET: relative and EXAT deadlines as PXAT, the other options dropped
		{"set-ex", nil, [][]string{s("SET", "k", "v", "EX", "10")}, s("SELECT 0", "SET k v PXAT "+at(10000))},
		{"set-px-nx-get", nil, [][]string{s("SET", "k", "v", "PX", "5000", "NX", "GET")}, s("SELECT 0", "SET k v PXAT "+at(5000))},
		{"set-exat", nil, [][]string{s("SET", "k", "v", "EXAT", "1700000100")}, s("SELECT 0", "SET k v PXAT "+at(100000))},
		{"set-pxat-as-is", nil, [][]string{s("set", "k", "v", "pxat", at(7))}, s("SELECT 0", "set k v pxat "+at(7))},
		{"set-get-stripped", s2(s("SET", "k", "old")), [][]string{s("SET", "k", "v", "GET", "KEEPTTL", "get")}, s("SELECT 0", "SET k v KEEPTTL")},
		{"set-nx-refused", s2(s("SET", "k", "old")), [][]string{s("SET", "k", "v", "NX")}, nil},
		{"setex", nil, [][]string{s("SETEX", "k", "10", "v"), s("PSETEX", "k", "1500", "v")},
			s("SELECT 0", "SET k v PXAT "+at(10000), "SET k v PXAT "+at(1500))},
		{"msetex", nil, [][]string{s("MSETEX", "2", "a", "1", "b", "2", "EX", "10")},
			s("SELECT 0", "MSETEX 2 a 1 b 2 PXAT "+at(10000))},
		// EXPIRE family: PEXPIREAT (options kept); a deadline in the past: DEL
		{"expire", s2(s("SET", "k", "v")), [][]string{s("EXPIRE", "k", "10"), s("PEXPIRE", "k", "20000", "GT"),
			s("EXPIREAT", "k", "1700000100"), s("PEXPIREAT", "k", at(200000)), s("EXPIRE", "nokey", "10")},
			s("SELECT 0", "PEXPIREAT k "+at(10000), "PEXPIREAT k "+at(20000)+" GT", "PEXPIREAT k "+at(100000), "PEXPIREAT k "+at(200000))},
		{"expire-past", s2(s("SET", "k", "v")), [][]string{s("EXPIRE", "k", "-1")}, s("SELECT 0", "DEL k")},
		{"expire-past-lazyfree", s2(s("SET", "k", "v"), s("CONFIG", "SET", "lazyfree-lazy-expire", "yes")),
			[][]string{s("PEXPIREAT", "k", "1")}, s("SELECT 0", "UNLINK k")},
		// GETEX, GETDEL
		{"getex", s2(s("SET", "k", "v")), [][]string{s("GETEX", "k", "EX", "10"), s("GETEX", "k"), s("GETEX", "k", "PERSIST"),
			s("GETEX", "k", "PERSIST"), s("GETEX", "k", "EXAT", "1")},
			s("SELECT 0", "PEXPIREAT k "+at(10000), "PERSIST k", "DEL k")},
		{"getdel", s2(s("SET", "k", "v")), [][]string{s("GETDEL", "k"), s("GETDEL", "k")}, s("SELECT 0", "DEL k")},
		{"delex", s2(s("SET", "k", "v")), [][]string{s("DELEX", "k", "IFEQ", "x"), s("DELEX", "k", "IFEQ", "v")}, s("SELECT 0", "DEL k")},
		{"delifeq", s2(s("SET", "k", "v")), [][]string{s("DELIFEQ", "k", "x"), s("DELIFEQ", "k", "v")}, s("SELECT 0", "DEL k")},
		// float increments as their result
		{"incrbyfloat", s2(s("SET", "k", "1")), [][]string{s("INCRBYFLOAT", "k", "0.5")}, s("SELECT 0", "SET k 1.5 KEEPTTL")},
		{"hincrbyfloat", s2(s("HSET", "h", "f", "1")), [][]string{s("HINCRBYFLOAT", "h", "f", "2.5")}, s("SELECT 0", "HSETEX h KEEPTTL FIELDS 1 f 3.5")},
		// SPOP as SREM, or DEL of the whole set
		{"spop", s2(s("SADD", "s", "a")), [][]string{s("SPOP", "s")}, s("SELECT 0", "SREM s a")},
		{"spop-all", s2(s("SADD", "s", "a", "b")), [][]string{s("SPOP", "s", "5")}, s("SELECT 0", "DEL s")},
		{"spop-all-lazyfree", s2(s("SADD", "s", "a", "b"), s("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")),
			[][]string{s("SPOP", "s", "2")}, s("SELECT 0", "UNLINK s")},
		// blocking pops served at once: their non-blocking forms
		{"bpop", s2(s("RPUSH", "l", "a", "b", "c", "d", "e"), s("RPUSH", "l2", "q")), [][]string{s("BLPOP", "l", "0"), s("BRPOP", "l", "0"),
			s("BRPOPLPUSH", "l", "l2", "0"), s("BLMOVE", "l2", "l", "LEFT", "RIGHT", "0"), s("LMPOP", "1", "l", "LEFT", "COUNT", "5"),
			s("BLMPOP", "0", "1", "l2", "RIGHT")},
			s("SELECT 0", "LPOP l", "RPOP l", "RPOPLPUSH l l2", "LMOVE l2 l LEFT RIGHT", "LPOP l 3", "RPOP l2 1")},
		{"zpop", s2(s("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"), s("ZADD", "z2", "1", "x")), [][]string{s("ZPOPMIN", "z"),
			s("BZPOPMAX", "z", "0"), s("ZMPOP", "1", "z", "MIN", "COUNT", "5"), s("BZMPOP", "0", "1", "z2", "MAX")},
			s("SELECT 0", "ZPOPMIN z", "ZPOPMAX z", "ZPOPMIN z 2", "ZPOPMAX z2 1")},
		// execution units: several commands in MULTI/EXEC, SELECT inside it
		{"multi", nil, [][]string{s("MULTI"), s("SET", "a", "1"), s("GET", "a"), s("INCR", "a"), s("EXEC")},
			s("MULTI", "SELECT 0", "SET a 1", "INCR a", "EXEC")},
		{"multi-one-write", nil, [][]string{s("MULTI"), s("SET", "a", "1"), s("GET", "a"), s("EXEC")}, s("SELECT 0", "SET a 1")},
		{"multi-read-only", nil, [][]string{s("MULTI"), s("GET", "a"), s("EXEC"), s("SET", "x", "1")}, s("SELECT 0", "SET x 1")},
		{"multi-select", nil, [][]string{s("MULTI"), s("SET", "a", "1"), s("SELECT", "1"), s("SET", "b", "2"), s("EXEC")},
			s("MULTI", "SELECT 0", "SET a 1", "SELECT 1", "SET b 2", "EXEC")},
		{"eval", nil, [][]string{s("EVAL", "redis.call('set','x','1'); redis.call('expire','x','10')", "0"),
			s("EVAL", "return redis.call('get','x')", "0"), s("EVAL", "redis.call('incr','y')", "0")},
			s("MULTI", "SELECT 0", "set x 1", "PEXPIREAT x "+at(10000), "EXEC", "incr y")},
		{"eval-spop-count", s2(s("SADD", "s", "a", "b", "c")), [][]string{s("EVAL", "return redis.call('spop', KEYS[1], 3)", "1", "s")},
			s("SELECT 0", "DEL s")},
		{"select", nil, [][]string{s("SET", "a", "1"), s("SELECT", "3"), s("SET", "b", "1"), s("SET", "c", "1"), s("MOVE", "b", "0"),
			s("MOVE", "nokey", "0"), s("COPY", "c", "d", "DB", "5"), s("SWAPDB", "0", "3")},
			s("SELECT 0", "SET a 1", "SELECT 3", "SET b 1", "SET c 1", "MOVE b 0", "COPY c d DB 5", "SWAPDB 0 3")},
		// GETSET as SET (Redis's getsetCommand), SET ... GET without GET
		{"getset", nil, [][]string{s("GETSET", "g", "1"), s("SET", "g", "2", "GET")},
			s("SELECT 0", "SET g 1", "SET g 2")},
		{"publish-flush", nil, [][]string{s("PUBLISH", "ch", "hi"), s("FLUSHALL"), s("FLUSHDB")},
			s("SELECT 0", "PUBLISH ch hi", "FLUSHALL", "FLUSHDB")},
		{"function", nil, [][]string{s("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)"),
			s("FCALL", "f", "0"), s("FUNCTION", "DELETE", "lib"), s("SCRIPT", "LOAD", "return 1"), s("SCRIPT", "FLUSH")},
			s("SELECT 0", "FUNCTION LOAD #!lua name=lib\nredis.register_function('f', function() return 1 end)", "FUNCTION DELETE lib")},
		// hash field expiry
		{"hexpire", s2(s("HSET", "h", "a", "1", "b", "2", "c", "3")), [][]string{s("HEXPIRE", "h", "10", "FIELDS", "2", "a", "nofield"),
			s("HPEXPIRE", "h", "1", "NX", "FIELDS", "1", "a"), s("HPEXPIREAT", "h", "1", "FIELDS", "2", "b", "c")},
			s("SELECT 0", "HPEXPIREAT h "+at(10000)+" FIELDS 1 a", "MULTI", "HDEL h b", "HDEL h c", "EXEC")},
		{"hgetex", s2(s("HSET", "h", "a", "1", "b", "2")), [][]string{s("HGETEX", "h", "PX", "100", "FIELDS", "2", "a", "b"),
			s("HGETEX", "h", "PERSIST", "FIELDS", "1", "a"), s("HGETEX", "h", "FIELDS", "1", "a"), s("HGETEX", "h", "EXAT", "1", "FIELDS", "1", "a")},
			s("SELECT 0", "HPEXPIREAT h "+at(100)+" FIELDS 2 a b", "HPERSIST h FIELDS 1 a", "HDEL h a")},
		{"hsetex-hgetdel", nil, [][]string{s("HSETEX", "h", "FNX", "EX", "10", "FIELDS", "2", "a", "1", "b", "2"),
			s("HGETDEL", "h", "FIELDS", "2", "a", "zz")},
			s("SELECT 0", "HSETEX h FNX PXAT "+at(10000)+" FIELDS 2 a 1 b 2", "HDEL h a")},
		// streams: XADD with the ID it made, approximate trims made exact
		// (LIMIT dropped), IDMP as XADD then XIDMPRECORD, duplicates not at all
		{"xadd-id", nil, [][]string{s("XADD", "x", "*", "f", "v"), s("XADD", "x", at(0)+"-*", "g", "w"), s("XADD", "x", at(5)+"-7", "h", "u")},
			s("SELECT 0", "XADD x "+at(0)+"-0 f v", "XADD x "+at(0)+"-1 g w", "XADD x "+at(5)+"-7 h u")},
		{"xadd-trim-approx", s2(s("CONFIG", "SET", "stream-node-max-entries", "2"), s("XADD", "y", "1-1", "a", "1"), s("XADD", "y", "1-2", "a", "2"),
			s("XADD", "y", "1-3", "a", "3"), s("XADD", "y", "1-4", "a", "4"), s("XADD", "y", "1-5", "a", "5")),
			[][]string{s("XADD", "y", "MAXLEN", "~", "2", "LIMIT", "10", "*", "f", "v"), s("XADD", "y", "1-9", "a", "9"), s("XADD", "y", "2-0", "a", "9"),
				s("XTRIM", "y", "MINID", "~", "2-0", "LIMIT", "5"), s("XTRIM", "y", "MAXLEN", "~", "0")},
			s("SELECT 0", "XADD y MAXLEN = 2 "+at(0)+"-0 f v", "XTRIM y MAXLEN = 0")},
		{"xtrim-approx", s2(s("CONFIG", "SET", "stream-node-max-entries", "2"), s("XADD", "y", "1-1", "a", "1"), s("XADD", "y", "1-2", "a", "2"),
			s("XADD", "y", "1-3", "a", "3"), s("XADD", "y", "1-4", "a", "4"), s("XADD", "y", "1-5", "a", "5")),
			[][]string{s("XTRIM", "y", "MINID", "~", "1-4", "LIMIT", "100"), s("XTRIM", "y", "MAXLEN", "=", "2"), s("XTRIM", "y", "MAXLEN", "~", "0")},
			s("SELECT 0", "XTRIM y MINID = 1-3", "XTRIM y MAXLEN = 2", "XTRIM y MAXLEN = 0")},
		{"xadd-idmp", nil, [][]string{s("XADD", "z", "IDMP", "p", "i", "*", "f", "v"), s("XADD", "z", "IDMP", "p", "i", "*", "f", "v"),
			s("XADD", "z", "NOMKSTREAM", "IDMP", "p", "j", "MAXLEN", "~", "5", "*", "g", "w"),
			s("XCFGSET", "z", "IDMP-MAXSIZE", "100"), s("XCFGSET", "z", "IDMP-MAXSIZE", "5"),
			s("XIDMPRECORD", "z", "q", "k", at(0)+"-0"), s("XIDMPRECORD", "z", "q", "k", at(0)+"-0"), s("XIDMPRECORD", "z", "q", "k", at(0)+"-1"),
			s("XADD", "z", "IDMP", "p", "k", "MAXLEN", "0", "ACKED", "*", "h", "u")},
			s("MULTI", "SELECT 0", "XADD z "+at(0)+"-0 f v", "XIDMPRECORD z p i "+at(0)+"-0", "EXEC",
				"MULTI", "XADD z NOMKSTREAM "+at(0)+"-1 g w", "XIDMPRECORD z p j "+at(0)+"-1", "EXEC",
				"XCFGSET z IDMP-MAXSIZE 5", "XIDMPRECORD z q k "+at(0)+"-0",
				"MULTI", "XADD z "+at(0)+"-2 h u", "XIDMPRECORD z p k "+at(0)+"-2", "XTRIM z MAXLEN = 0 ACKED", "EXEC")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := startStreamServer(t)
			cl := hotkvtest.Dial(t, srv.Addr)
			for _, a := range c.setup {
				cl.Do(a...)
			}
			r := attachStream(t, srv.Addr, "SYNC")
			for _, a := range c.cmds {
				cl.Do(a...)
			}
			r.expect(c.want...)
		})
	}
}

func s2(a ...[]string) [][]string { return a }

// TestPropagationRestore: RESTORE with a relative TTL goes out with the
// absolute deadline and ABSTTL (restoreCommand's rewrite); with no TTL or
// ABSTTL as received; an already expired REPLACE that deleted the old key
// as DEL of it; one that deleted nothing not at all.
func TestPropagationRestore(t *testing.T) {
	srv := startStreamServer(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("SET", "src", "v")
	dump := cl.Do("DUMP", "src")
	payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
	r := attachStream(t, srv.Addr, "SYNC")
	for _, a := range [][]string{
		{"RESTORE", "a", "10000", payload},
		{"RESTORE", "b", "0", payload},
		{"RESTORE", "c", at(5000), payload, "ABSTTL"},
		{"RESTORE", "a", "1", payload, "REPLACE", "ABSTTL"}, // expired: a deleted
		{"RESTORE", "d", "1", payload, "ABSTTL"},            // expired: nothing happens
	} {
		if got := cl.Do(a...); got != "+OK\r\n" {
			t.Fatalf("%v: %q", a[:3], got)
		}
	}
	r.expect("SELECT 0", "RESTORE a "+at(10000)+" "+payload+" ABSTTL", "RESTORE b 0 "+payload,
		"RESTORE c "+at(5000)+" "+payload+" ABSTTL", "DEL a")
}

// startStreamServer starts a server with a fake clock whose SYNC payload is a
// stub (these tests are about the stream; the real snapshot is tested by
// TestReplicaConnection and TestReplconf).
func startStreamServer(t *testing.T) *hotkvtest.Server {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(now0))
	srv.Srv.SetSnapshot(func(w io.Writer) error {
		_, err := w.Write([]byte("REDIS0012-stub"))
		return err
	})
	return srv
}

// TestPropagationSPOPBatch: SPOP with a count goes out as SREMs of the members
// it popped (one SREM up to 1024 members, Redis 7.2+).
func TestPropagationSPOPBatch(t *testing.T) {
	srv := startStreamServer(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	args := []string{"SADD", "s"}
	for i := range 3000 {
		args = append(args, "m"+strconv.Itoa(i))
	}
	cl.Do(args...)
	r := attachStream(t, srv.Addr, "SYNC")
	cl.Do("SPOP", "s", "2")
	cl.Do("SPOP", "s", "1500") // two batches: MULTI, SREM (1024), SREM (476), EXEC
	if got := r.next(time.Second); got != "SELECT 0" {
		t.Fatalf("got %q", got)
	}
	first := strings.Fields(r.next(time.Second))
	if len(first) != 4 || first[0] != "SREM" || first[1] != "s" {
		t.Fatalf("SPOP 2: %q", first)
	}
	seq := []string{r.next(time.Second)}
	var members []string
	for {
		c := r.next(time.Second)
		if c == "EXEC" || c == "" {
			seq = append(seq, c)
			break
		}
		f := strings.Fields(c)
		seq = append(seq, f[0]+" "+strconv.Itoa(len(f)-2))
		members = append(members, f[2:]...)
	}
	if strings.Join(seq, ",") != "MULTI,SREM 1024,SREM 476,EXEC" {
		t.Fatalf("SPOP 1500 propagated as %v", seq)
	}
	if n := cl.Do("SCARD", "s"); n != ":1498\r\n" {
		t.Fatalf("SCARD %q", n)
	}
	for _, m := range append(first[2:], members...) {
		if cl.Do("SISMEMBER", "s", m) != ":0\r\n" {
			t.Fatalf("%s propagated as removed but still a member", m)
		}
	}
}

// TestPropagationExpiry: lazy expiry adds DEL to the unit (a read command
// propagates only the DEL; a write is wrapped with it), SCAN and RANDOMKEY's
// DELs are not wrapped, lazyexpire-nested-arbitrary-keys no keeps them out of
// MULTI and scripts, and the active expiry cycle sends DEL per key.
func TestPropagationExpiry(t *testing.T) {
	setup := func(t *testing.T) (*hotkvtest.Server, *hotkvtest.Conn, *replStream) {
		srv := startStreamServer(t)
		cl := hotkvtest.Dial(t, srv.Addr)
		cl.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
		cl.Do("SET", "foo1", "bar", "PX", "10")
		cl.Do("SET", "foo2", "bar", "PX", "10")
		cl.Do("HSET", "h", "a", "1", "b", "2")
		cl.Do("HPEXPIRE", "h", "10", "FIELDS", "1", "a")
		r := attachStream(t, srv.Addr, "SYNC")
		srv.Clock.Advance(20 * time.Millisecond)
		return srv, cl, r
	}
	t.Run("read", func(t *testing.T) {
		_, cl, r := setup(t)
		cl.Do("GET", "foo1")
		cl.Do("HGET", "h", "a")
		cl.Do("SET", "x", "1")
		r.expect("SELECT 0", "DEL foo1", "HDEL h a", "SET x 1")
	})
	t.Run("write", func(t *testing.T) {
		_, cl, r := setup(t)
		cl.Do("SET", "foo1", "new")
		r.expect("MULTI", "SELECT 0", "DEL foo1", "SET foo1 new", "EXEC")
	})
	t.Run("lazyfree", func(t *testing.T) {
		_, cl, r := setup(t)
		cl.Do("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
		cl.Do("EXISTS", "foo1")
		r.expect("SELECT 0", "UNLINK foo1")
	})
	for _, cmd := range []string{"SCAN", "RANDOMKEY"} {
		t.Run(cmd, func(t *testing.T) {
			_, cl, r := setup(t)
			cl.Do("DEL", "h")
			if cmd == "SCAN" {
				cl.Do("SCAN", "0")
			} else {
				cl.Do("RANDOMKEY")
			}
			var got []string
			for range 4 {
				got = append(got, r.next(time.Second))
			}
			sort.Strings(got[2:])
			if strings.Join(got, ",") != "SELECT 0,DEL h,DEL foo1,DEL foo2" {
				t.Fatalf("%s: %q", cmd, got)
			}
			r.expect()
		})
	}
	for _, opt := range []string{"yes", "no"} {
		for _, mode := range []string{"multi", "lua"} {
			t.Run("nested-"+opt+"-"+mode, func(t *testing.T) {
				_, cl, r := setup(t)
				cl.Do("CONFIG", "SET", "lazyexpire-nested-arbitrary-keys", opt)
				cl.Do("DEL", "foo2", "h")
				if mode == "multi" {
					cl.Do("MULTI")
					cl.Do("SCAN", "0")
					cl.Do("EXEC")
				} else {
					cl.Do("EVAL", "return redis.call('SCAN', 0)", "0")
				}
				cl.Do("SET", "x", "1")
				// the DEL expires foo2 on the way: a unit of two commands
				pre := []string{"MULTI", "SELECT 0", "DEL foo2", "DEL foo2 h", "EXEC"}
				if opt == "no" {
					r.expect(append(pre, "SET x 1")...)
				} else {
					r.expect(append(pre, "DEL foo1", "SET x 1")...)
				}
			})
		}
	}
	t.Run("active", func(t *testing.T) {
		_, cl, r := setup(t)
		cl.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
		var got []string
		for range 4 {
			got = append(got, r.next(3*time.Second))
		}
		sort.Strings(got)
		if strings.Join(got, ",") != "DEL foo1,DEL foo2,HDEL h a,SELECT 0" {
			t.Fatalf("active expiry: %q", got)
		}
		r.expect()
	})
}

// TestPropagationBlockedServed: a blocked BLPOP served by another client's push
// is its own unit, propagated as LPOP after the push.
func TestPropagationBlockedServed(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(now0))
	a := hotkvtest.Dial(t, srv.Addr)
	b := hotkvtest.Dial(t, srv.Addr)
	r := attachStream(t, srv.Addr, "SYNC")
	a.Write(hotkvtest.EncodeCommand("BLMOVE", "q", "dst", "RIGHT", "LEFT", "0"))
	time.Sleep(50 * time.Millisecond)
	b.Do("MULTI")
	b.Do("LPUSH", "q", "x")
	b.Do("SET", "k", "v")
	b.Do("EXEC")
	if rep, err := a.ReadReply(); err != nil || rep != "$1\r\nx\r\n" {
		t.Fatalf("BLMOVE: %q %v", rep, err)
	}
	r.expect("MULTI", "SELECT 0", "LPUSH q x", "SET k v", "EXEC", "LMOVE q dst RIGHT LEFT")
}

// TestReplicaConnection: the snapshot, PSYNC, INFO replication, ROLE, CLIENT
// LIST, REPLCONF, WAIT, PING and the end of a replica.
func TestReplicaConnection(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(now0))
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("SET", "plain", "v")
	cl.Do("SET", "ttl", "w", "PXAT", at(5000))
	cl.Do("SELECT", "2")
	cl.Do("SET", "other", strings.Repeat("x", 100))
	cl.Do("SELECT", "0")
	if got := cl.Do("INFO", "replication"); !strings.Contains(got, "connected_slaves:0\r\n") || !strings.Contains(got, "master_repl_offset:0\r\n") {
		t.Fatalf("INFO before: %q", got)
	}
	if got := cl.Do("WAIT", "1", "0"); got != ":0\r\n" {
		t.Fatalf("WAIT without replicas: %q", got)
	}
	r := attachStream(t, srv.Addr, "SYNC")
	checkRDB(t, r.rdb, map[int]map[string]string{0: {"plain": "v", "ttl": "w@" + at(5000)}, 2: {"other": strings.Repeat("x", 100)}})

	cl.Do("SET", "a", "1")
	r.expect("SELECT 0", "SET a 1")
	off := int64(len("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"))
	info := cl.Do("INFO", "replication")
	for _, want := range []string{"connected_slaves:1\r\n", "slave0:ip=127.0.0.1,port=0,state=online,offset=0,lag=0\r\n",
		fmt.Sprintf("master_repl_offset:%d\r\n", off)} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO replication lacks %q:\n%s", want, info)
		}
	}
	if got := cl.Do("ROLE"); got != fmt.Sprintf("*3\r\n$6\r\nmaster\r\n:%d\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$1\r\n0\r\n$1\r\n0\r\n", off) {
		t.Fatalf("ROLE %q", got)
	}
	if got := cl.Do("CLIENT", "LIST", "TYPE", "replica"); !strings.Contains(got, " flags=S ") || strings.Count(got, "id=") != 1 {
		t.Fatalf("CLIENT LIST TYPE replica: %q", got)
	}
	if got := cl.Do("CLIENT", "LIST", "TYPE", "normal"); strings.Contains(got, "flags=S") {
		t.Fatalf("CLIENT LIST TYPE normal lists the replica: %q", got)
	}

	// WAIT: too few acknowledgements block until the timeout, then an ACK
	// from the replica releases a waiting client
	start := time.Now()
	if got := cl.Do("WAIT", "1", "100"); got != ":0\r\n" || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("WAIT 1 100: %q after %v", got, time.Since(start))
	}
	cl.Write(hotkvtest.EncodeCommand("WAIT", "1", "0"))
	time.Sleep(50 * time.Millisecond)
	_, _ = r.c.Write(hotkvtest.EncodeCommand("REPLCONF", "ACK", strconv.FormatInt(off, 10)))
	if got, err := cl.ReadReply(); err != nil || got != ":1\r\n" {
		t.Fatalf("WAIT after ACK: %q %v", got, err)
	}
	if got := cl.Do("WAIT", "1", "0"); got != ":1\r\n" {
		t.Fatalf("WAIT when acknowledged: %q", got)
	}
	if got := cl.Do("WAIT", "2", "10"); got != ":1\r\n" {
		t.Fatalf("WAIT 2 10: %q", got)
	}
	// PSYNC: +FULLRESYNC, then the same as SYNC; a new replica makes the
	// stream select its database again
	r2 := attachStream(t, srv.Addr, "PSYNC ? -1")
	cl.Do("SET", "b", "2")
	r.expect("SELECT 0", "SET b 2")
	r2.expect("SELECT 0", "SET b 2")

	// a WAIT for more replicas than there are waits out its timeout while
	// acknowledgements come: the master asks the PSYNC replica once, and
	// its REPLCONF ACK gets no reply (the GETACK a rerun of the WAIT asked
	// for again landed in the acknowledging replica's own output, which read
	// as a reply to its REPLCONF: the replica was dropped, the WAIT answered
	// 0 at once)
	start = time.Now()
	cl.Write(hotkvtest.EncodeCommand("WAIT", "3", "300"))
	if got := r2.next(time.Second); got != "REPLCONF GETACK *" {
		t.Fatalf("the master asks for acknowledgements: %q", got)
	}
	ackOff := strings.TrimSpace(strings.SplitN(strings.SplitN(cl2Info(t, srv.Addr), "master_repl_offset:", 2)[1], "\r\n", 2)[0])
	_, _ = r2.c.Write(hotkvtest.EncodeCommand("REPLCONF", "ACK", ackOff, "FACK", "0"))
	if got, err := cl.ReadReply(); err != nil || got != ":1\r\n" || time.Since(start) < 290*time.Millisecond {
		t.Fatalf("WAIT 3 300: %q %v after %v", got, err, time.Since(start))
	}
	if c := r2.next(100 * time.Millisecond); c != "" {
		t.Fatalf("the replica got %q after acknowledging", c)
	}
	if got := cl.Do("INFO", "replication"); !strings.Contains(got, "connected_slaves:2\r\n") {
		t.Fatalf("a replica was dropped:\n%s", got)
	}

	// PING every repl-ping-replica-period seconds
	cl.Do("CONFIG", "SET", "repl-ping-replica-period", "1")
	if got := r.next(3 * time.Second); got != "PING" {
		t.Fatalf("want PING, got %q", got)
	}
	cl.Do("CONFIG", "SET", "repl-ping-replica-period", "3600")

	// a replica that goes away is forgotten
	_ = r.c.Close()
	_ = r2.c.Close()
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(cl.Do("INFO", "replication"), "connected_slaves:0\r\n") {
		if time.Now().After(deadline) {
			t.Fatal("replicas still listed after disconnecting")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cl.Do("SET", "c", "3") // nothing to propagate to: no panic, no stream
}

// cl2Info is INFO replication from a connection of its own.
func cl2Info(t *testing.T, addr string) string {
	t.Helper()
	return hotkvtest.Dial(t, addr).Do("INFO", "replication")
}

// TestReplconf: REPLCONF's replies as Redis's.
func TestReplconf(t *testing.T) {
	srv := hotkvtest.Start(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"REPLCONF", "listening-port", "6380"}, "+OK\r\n"},
		{[]string{"REPLCONF", "capa", "eof", "capa", "psync2"}, "+OK\r\n"},
		{[]string{"REPLCONF", "listening-port", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"REPLCONF", "foo", "1"}, "-ERR Unrecognized REPLCONF option: foo\r\n"},
		{[]string{"REPLCONF", "capa"}, "-ERR syntax error\r\n"},
		{[]string{"REPLCONF", "rdb-only", "2"}, "-ERR value is out of range, value must between 0 and 1\r\n"},
		{[]string{"REPLCONF", "rdb-only", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"REPLCONF", "rdb-filter-only", "keys"}, "-ERR Unsupported rdb-filter-only option: keys\r\n"},
		{[]string{"REPLCONF", "rdb-filter-only", "\"functions"}, "-ERR Missing rdb-filter-only values\r\n"},
		{[]string{"REPLCONF"}, "+OK\r\n"},
		{[]string{"SYNC", "x"}, "-ERR wrong number of arguments for 'sync' command\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"SYNC"}, "-ERR Command not allowed inside a transaction\r\n"},
		{[]string{"DISCARD"}, "+OK\r\n"},
	} {
		if got := cl.Do(c.args...); got != c.want {
			t.Errorf("%v: got %q, want %q", c.args, got, c.want)
		}
	}
	// every type goes into the snapshot (internal/rdb)
	cl.Do("RPUSH", "l", "a")
	cl.Do("HSET", "h", "f", "v")
	r := attachStream(t, srv.Addr, "SYNC")
	ks := keyspace.New(16, 1)
	if _, err := rdb.Load(bytes.NewReader(r.rdb), ks, rdb.LoadOptions{}); err != nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	if ks.DBs[0].Len() != 2 || ks.DBs[0].Peek([]byte("l")).Kind != keyspace.KindList || ks.DBs[0].Peek([]byte("h")).Kind != keyspace.KindHash {
		t.Fatalf("snapshot db 0 has %d keys", ks.DBs[0].Len())
	}
}

// checkRDB loads the snapshot with internal/rdb (which checks the framing and
// the CRC64) into an empty keyspace and compares its string keys with want
// (value "v@ms" for a key with a deadline); a database in want with no keys
// is absent from the snapshot.
func checkRDB(t *testing.T, b []byte, want map[int]map[string]string) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("REDIS0013")) {
		t.Fatalf("RDB header: %q", b[:min(len(b), 9)])
	}
	ks := keyspace.New(16, 1)
	if _, err := rdb.Load(bytes.NewReader(b), ks, rdb.LoadOptions{}); err != nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	got := map[int]map[string]string{}
	for i, db := range ks.DBs {
		db.Range(func(key string, e *keyspace.Entry) bool {
			if got[i] == nil {
				got[i] = map[string]string{}
			}
			v := string(e.Bytes())
			if at := db.ExpireAt(e); at != 0 {
				v += "@" + strconv.FormatInt(at, 10)
			}
			got[i][key] = v
			return true
		})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("RDB keys %v, want %v", got, want)
	}
}

// TestPropagationEviction is Redis's "propagation with eviction" and "...in
// MULTI" (tests/unit/maxmemory.tcl, 7.2+): CONFIG SET maxmemory evicts after
// the command (Redis starts its eviction time event), so each evicted key is
// a DEL of its own, not a MULTI around the CONFIG SET's evictions, and inside
// a transaction the commands after it still see the key (1 OK 2); the key
// goes once EXEC has ended.
func TestPropagationEviction(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		srv := startStreamServer(t)
		cl := hotkvtest.Dial(t, srv.Addr)
		r := attachStream(t, srv.Addr, "SYNC")
		cl.Do("SET", "asdf1", "1")
		cl.Do("SET", "asdf2", "2")
		cl.Do("SET", "asdf3", "3")
		cl.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		cl.Do("CONFIG", "SET", "maxmemory", "1")
		if n := cl.Do("DBSIZE"); n != ":0\r\n" {
			t.Fatalf("DBSIZE after CONFIG SET maxmemory 1: %q", n)
		}
		cl.Do("CONFIG", "SET", "maxmemory", "0")
		cl.Do("SET", "asdf4", "4")
		var dels []string
		got := []string{r.next(time.Second), r.next(time.Second), r.next(time.Second), r.next(time.Second)}
		for range 3 {
			dels = append(dels, r.next(time.Second))
		}
		got = append(got, r.next(time.Second))
		slices.Sort(dels)
		want := []string{"SELECT 0", "SET asdf1 1", "SET asdf2 2", "SET asdf3 3", "SET asdf4 4"}
		if !slices.Equal(got, want) || !slices.Equal(dels, []string{"DEL asdf1", "DEL asdf2", "DEL asdf3"}) {
			t.Fatalf("stream: %q, then %q", got, dels)
		}
	})
	t.Run("multi", func(t *testing.T) {
		srv := startStreamServer(t)
		cl := hotkvtest.Dial(t, srv.Addr)
		r := attachStream(t, srv.Addr, "SYNC")
		cl.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		cl.Do("MULTI")
		cl.Do("INCR", "x")
		cl.Do("CONFIG", "SET", "maxmemory", "1")
		cl.Do("INCR", "x")
		if got := cl.Do("EXEC"); got != "*3\r\n:1\r\n+OK\r\n:2\r\n" {
			t.Fatalf("EXEC: %q, want 1 OK 2", got)
		}
		if n := cl.Do("DBSIZE"); n != ":0\r\n" {
			t.Fatalf("DBSIZE after EXEC: %q", n)
		}
		cl.Do("CONFIG", "SET", "maxmemory", "0")
		r.expect("MULTI", "SELECT 0", "INCR x", "INCR x", "EXEC", "DEL x")
	})
}

// redis-cli --rdb and --functions-rdb: REPLCONF rdb-only 1 gets the snapshot
// alone and the connection closes (no replica stays attached);
// rdb-filter-only "functions" leaves the keys out, "" the libraries too.
func TestRDBOnlyAndFilters(t *testing.T) {
	srv := hotkvtest.Start(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("SET", "k", "v")
	cl.Do("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
	for _, c := range []struct {
		filter          []string
		keys, functions int
	}{{nil, 1, 1}, {[]string{"functions"}, 0, 1}, {[]string{""}, 0, 0}} {
		conn, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		req := hotkvtest.EncodeCommand("REPLCONF", "rdb-only", "1")
		if c.filter != nil {
			req = append(req, hotkvtest.EncodeCommand("REPLCONF", "rdb-filter-only", c.filter[0])...)
		}
		req = append(req, hotkvtest.EncodeCommand("SYNC")...)
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		all, err := io.ReadAll(conn) // until the server closes
		conn.Close()
		if err != nil {
			t.Fatalf("filter %v: %v (the connection was not closed after the snapshot)", c.filter, err)
		}
		oks := "+OK\r\n"
		if c.filter != nil {
			oks += "+OK\r\n"
		}
		rest, ok := bytes.CutPrefix(all, []byte(oks+"$"))
		if !ok {
			t.Fatalf("filter %v: reply %q", c.filter, all[:min(len(all), 40)])
		}
		payload := rest[bytes.Index(rest, []byte("\r\n"))+2:]
		ks := keyspace.New(16, 1)
		st, err := rdb.Load(bytes.NewReader(payload), ks, rdb.LoadOptions{})
		if err != nil || st.Loaded != c.keys || st.FunctionLibraries != c.functions {
			t.Fatalf("filter %v: %d keys, %d libraries (%v), want %d and %d", c.filter, st.Loaded, st.FunctionLibraries, err, c.keys, c.functions)
		}
	}
	if info := cl.Do("INFO", "replication"); !strings.Contains(info, "connected_slaves:0\r\n") {
		t.Fatalf("an rdb-only client stayed a replica: %q", info)
	}
}
