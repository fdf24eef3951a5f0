package difftest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

var (
	// a slow log entry's id, time and duration
	slowHead = regexp.MustCompile(`\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n`)
	// a client's address: HotKV's test server is on TCP, the reference on
	// a Unix socket
	peerBulk = regexp.MustCompile(`\$\d+\r\n(127\.0\.0\.1:\d+|/[^\r\n]*\.sock:0)\r\n`)
	// a command's latency histogram
	histBody = regexp.MustCompile(`histogram_usec\r\n([*%])(\d+)\r\n(:\d+\r\n)*`)
	// a MONITOR line's time and client
	monHead = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (127\.0\.0\.1:\d+|unix:[^\]]*|lua)\]`)
)

// normMonitor masks a MONITOR line's time and client address (a script's
// "lua" stays).
func normMonitor(line string) string {
	return monHead.ReplaceAllStringFunc(line, func(h string) string {
		m := monHead.FindStringSubmatch(h)
		if m[2] != "lua" {
			m[2] = "C"
		}
		return "+T [" + m[1] + " " + m[2] + "]"
	})
}

func normIntrospect(r string) string {
	r = slowHead.ReplaceAllString(r, "*6\r\n:ID\r\n:T\r\n:D\r\n")
	r = peerBulk.ReplaceAllString(r, "$P\r\nPEER\r\n")
	return histBody.ReplaceAllString(r, "histogram_usec\r\n${1}N\r\n")
}

// SLOWLOG, LATENCY and MONITOR against redis-server 8.6.3, byte for byte
// once times, durations and client addresses are masked: what enters the
// slow log and how (trimming, redaction, scripts, transactions, rewritten
// commands logged as sent), SLOWLOG's and LATENCY's replies and errors in
// both protocols, and MONITOR's lines for the same commands.
func TestDiffIntrospection(t *testing.T) {
	p := newPair(t)
	mon := p.another()
	if hk, rd := mon.do("MONITOR"); hk != rd {
		t.Fatalf("MONITOR: %q / %q", hk, rd)
	}
	many := []string{"SADD", "s"}
	for i := 0; i < 40; i++ {
		many = append(many, strings.Repeat("m", i))
	}
	script := [][]string{
		{"CONFIG", "SET", "slowlog-max-len", "100"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
		{"SLOWLOG", "RESET"},
		{"CLIENT", "SETNAME", "svc"},
		{"SET", "k", strings.Repeat("v", 300)},
		many,
		{"EVAL", "redis.call('incr', KEYS[1]); return redis.call('get', KEYS[1])", "1", "n"},
		{"SADD", "one", "m"},
		{"MULTI"}, {"GETSET", "k", "w"}, {"SPOP", "one", "100"}, {"INCRBYFLOAT", "f", "1.5"}, {"EXEC"},
		{"MULTI"}, {"NOSUCH"}, {"EXEC"},
		{"AUTH", "nosuch"}, {"AUTH", "u", "p"}, {"AUTH", "a", "b", "c"},
		{"HELLO", "2", "AUTH", "u", "p"},
		{"CONFIG", "SET", "masterauth", "x", "requirepass", ""},
		{"ACL", "SETUSER", "bob", "on", ">pw"}, {"ACL", "GETUSER", "bob"}, {"ACL", "DELUSER", "bob", "nosuch"},
		{"SELECT", "3"}, {"PING", "x\r\ny\x00\"\\"}, {"SELECT", "0"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "-1"},
		{"SLOWLOG", "GET", "-1"}, {"SLOWLOG", "LEN"}, {"SLOWLOG", "GET", "0"}, {"SLOWLOG", "GET", "2"},
		{"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "GET", "x"}, {"SLOWLOG", "GET", "1", "2"},
		{"SLOWLOG", "HELP"}, {"SLOWLOG", "NOSUCH"}, {"SLOWLOG"},
		{"LATENCY", "HELP"}, {"LATENCY", "HELP", "x"}, {"LATENCY", "NOSUCH"},
		{"LATENCY", "LATEST"}, {"LATENCY", "HISTORY", "nosuch"}, {"LATENCY", "RESET", "nosuch"},
		{"LATENCY", "GRAPH", "nosuch"}, {"LATENCY", "DOCTOR"},
		{"CONFIG", "SET", "latency-monitor-threshold", "100"}, {"LATENCY", "DOCTOR"},
		{"CONFIG", "SET", "latency-monitor-threshold", "0"},
		{"CONFIG", "RESETSTAT"}, {"SET", "a", "b"}, {"CLIENT", "GETNAME"},
		{"LATENCY", "HISTOGRAM", "set", "client", "nosuch", "client|getname", "config|resetstat"},
		{"MONITOR"},
	}
	for _, args := range script {
		hk, rd := p.do(args...)
		if normIntrospect(hk) != normIntrospect(rd) {
			t.Errorf("%s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
		}
	}
	// RESP3 (HELLO's own reply differs: client ids, Redis's vectorset module)
	p3 := p.another()
	p3.do("HELLO", "3")
	for _, args := range [][]string{{"SLOWLOG", "GET", "3"}, {"LATENCY", "HISTOGRAM", "set"}, {"LATENCY", "LATEST"},
		{"LATENCY", "DOCTOR"}, {"SLOWLOG", "HELP"}} {
		hk, rd := p3.do(args...)
		if normIntrospect(hk) != normIntrospect(rd) {
			t.Errorf("RESP3 %s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
		}
	}
	// the monitor saw the same commands, in the same order
	for i := 0; ; i++ {
		_ = mon.hk.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		var hb []byte
		if err := hotkvtest.ReadReplyFrom(mon.hkbr, &hb); err != nil {
			_ = mon.rd.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			var rb []byte
			if err := hotkvtest.ReadReplyFrom(mon.rdbr, &rb); err == nil {
				t.Fatalf("line %d: redis has more: %q", i, rb)
			}
			if i < 20 {
				t.Fatalf("only %d MONITOR lines", i)
			}
			return
		}
		_ = mon.rd.SetReadDeadline(time.Now().Add(2 * time.Second))
		var rb []byte
		if err := hotkvtest.ReadReplyFrom(mon.rdbr, &rb); err != nil {
			t.Fatalf("line %d: hotkv has more: %q", i, hb)
		}
		h, r := normMonitor(string(hb)), normMonitor(string(rb))
		if h != r {
			t.Errorf("MONITOR line %d\n hotkv %q\n redis %q", i, h, r)
		}
	}
}

// DELEX with a condition reads its key as Redis's delexCommand does
// (lookupKeyRead): keyspace hits and misses, and the "keymiss" event; plain
// DELEX and a token release's other forms count none. Found by
// redis_exporter's figures (exporter_test.go).
func TestDiffDelexCountsReads(t *testing.T) {
	p := newPair(t)
	p.same("CONFIG", "RESETSTAT")
	p.same("SET", "lock", "tok")
	p.same("DELEX", "lock", "IFEQ", "other")
	p.same("DELEX", "lock", "IFDEQ", "0000000000000000")
	p.same("DELEX", "lock", "IFEQ", "tok")
	p.same("DELEX", "lock", "IFEQ", "tok")
	p.same("DELEX", "nosuch")
	p.same("SET", "h", "v")
	p.same("DELEX", "h", "IFNE", "x")
	p.same("DELEX", "lock", "BADCOND", "x")
	hk, rd := p.do("INFO", "stats")
	field := func(info, k string) string {
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, k+":"); ok {
				return v
			}
		}
		return "?"
	}
	for _, k := range []string{"keyspace_hits", "keyspace_misses"} {
		if field(hk, k) != field(rd, k) {
			t.Errorf("%s: hotkv %s, redis %s", k, field(hk, k), field(rd, k))
		}
	}
}

// proc-title-template: stored and checked as Redis checks it (HotKV sets no
// process title), so that the command-line tests and CONFIG SET agree.
func TestDiffProcTitleTemplate(t *testing.T) {
	p := newPair(t)
	p.same("CONFIG", "GET", "proc-title-template")
	for _, v := range []string{"{invalid-var}", "{title", "{", "{title}", "{server-mode} ", "", "{{title}} x", "TEST {title} {listen-addr} {port} {tls-port} {unixsocket} {config-file}", "--my--title--template"} {
		p.same("CONFIG", "SET", "proc-title-template", v)
		p.same("CONFIG", "GET", "proc-title-template")
	}
}

// shutdown-on-sigint/-sigterm read back in Redis's enum order.
func TestDiffShutdownFlagsOrder(t *testing.T) {
	p := newPair(t)
	for _, v := range []string{"nosave force now", "force save", "default", "now default", "save nosave", "bogus", ""} {
		p.same("CONFIG", "SET", "shutdown-on-sigint", v)
		p.same("CONFIG", "GET", "shutdown-on-sigint")
	}
}

// The replication load and channel parameters take Redis's values and give
// its errors (repl-diskless-load's enum, repl-rdb-channel,
// replica-full-sync-buffer-limit).
func TestDiffReplicationParams(t *testing.T) {
	p := newPair(t)
	for _, v := range []string{"flushdb", "swapdb", "on-empty-db", "disabled", "flush-before-load", "bogus", ""} {
		p.same("CONFIG", "SET", "repl-diskless-load", v)
		p.same("CONFIG", "GET", "repl-diskless-load")
	}
	for _, v := range []string{"no", "yes", "maybe"} {
		p.same("CONFIG", "SET", "repl-rdb-channel", v)
		p.same("CONFIG", "GET", "repl-rdb-channel")
	}
	for _, v := range []string{"20mb", "0", "1024", "-1", "x"} {
		p.same("CONFIG", "SET", "replica-full-sync-buffer-limit", v)
		p.same("CONFIG", "GET", "replica-full-sync-buffer-limit")
	}
}
