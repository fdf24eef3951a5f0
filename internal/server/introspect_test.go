package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// The slow log from go-redis in both protocols: what Redis logs (a script's
// commands with an empty peer, EXEC's commands but not EXEC, passwords and
// ACL arguments redacted, long commands trimmed), newest first with the
// client's address and name, SLOWLOG GET's count and its error, max-len.
func TestSlowlogFromGoRedis(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil && !strings.Contains(err.Error(), "WRONGPASS") {
				t.Fatal(err)
			}
		}
		must(c.ConfigSet(ctx, "slowlog-max-len", "100").Err())
		must(c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
		must(c.Do(ctx, "SLOWLOG", "RESET").Err())
		must(c.Do(ctx, "CLIENT", "SETNAME", "billing").Err())
		must(c.Eval(ctx, "return redis.call('set', KEYS[1], 'v')", []string{"k"}).Err())
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Incr(ctx, "n"); return nil })
		must(err)
		must(c.Do(ctx, "AUTH", "nosuch", "secret").Err())
		must(c.ConfigSet(ctx, "requirepass", "").Err())
		must(c.Do(ctx, "ACL", "SETUSER", "svc", "on", ">pw", "+get").Err())
		must(c.Do(ctx, "ACL", "DELUSER", "svc").Err())
		many := []any{"SADD", "s"}
		for i := 0; i < 33; i++ {
			many = append(many, i)
		}
		must(c.Do(ctx, many...).Err())
		must(c.Set(ctx, "long", strings.Repeat("x", 200), 0).Err())
		must(c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err())

		log, err := c.SlowLogGet(ctx, -1).Result()
		must(err)
		var got []string
		for _, e := range log {
			got = append(got, strings.Join(e.Args, " ")+" @"+e.ClientName)
			if e.ClientName == "billing" && !strings.HasPrefix(e.ClientAddr, "127.0.0.1:") {
				t.Fatalf("client address %q", e.ClientAddr)
			}
		}
		// (the pool's other connections have no name)
		trimmed := "SADD s 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 ... (4 more arguments) @billing"
		expect := []string{
			"set long " + strings.Repeat("x", 128) + "... (72 more bytes) @billing",
			trimmed,
			"ACL DELUSER (redacted) @billing",
			"ACL SETUSER (redacted) (redacted) (redacted) (redacted) @billing",
			"config set requirepass (redacted) @billing",
			"AUTH (redacted) (redacted) @billing",
			"incr n @",
			"multi @",
		}
		if len(got) < len(expect) {
			t.Fatalf("%d entries: %q", len(got), got)
		}
		for i, w := range expect {
			if got[i] != w {
				t.Fatalf("entry %d = %q, want %q\nall: %q", i, got[i], w, got)
			}
		}
		script := false
		for i, g := range got {
			if strings.HasPrefix(g, "exec") {
				t.Fatalf("EXEC logged: %q", got)
			}
			if g == "set k v @" { // the script's command: no peer, no name, logged before its EVAL
				script = log[i].ClientAddr == "" && i > 0 && strings.HasPrefix(got[i-1], "eval")
			}
		}
		if !script {
			t.Fatalf("the script's command: %q", got)
		}
		if n, err := c.Do(ctx, "SLOWLOG", "LEN").Int(); err != nil || n != len(got) {
			t.Fatalf("SLOWLOG LEN %d, %v; GET -1 gave %d", n, err, len(got))
		}
		if l, _ := c.SlowLogGet(ctx, 2).Result(); len(l) != 2 || l[0].ID != log[0].ID {
			t.Fatalf("GET 2: %d entries", len(l))
		}
		if err := c.Do(ctx, "SLOWLOG", "GET", "-2").Err(); err == nil || err.Error() != "ERR count should be greater than or equal to -1" {
			t.Fatalf("GET -2: %v", err)
		}
		if err := c.Do(ctx, "SLOWLOG", "GET", "x").Err(); err == nil || err.Error() != "ERR count should be greater than or equal to -1" {
			t.Fatalf("GET x: %v", err)
		}
		// max-len trims at the next entry
		must(c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
		must(c.ConfigSet(ctx, "slowlog-max-len", "2").Err())
		must(c.Ping(ctx).Err())
		if n, _ := c.Do(ctx, "SLOWLOG", "LEN").Int(); n != 2 {
			t.Fatalf("max-len 2 kept %d", n)
		}
	})
}

// A blocked command enters the slow log once it is served, not when it
// blocks (slowlog.tcl), with its own arguments.
func TestSlowlogBlockedCommandAfterServed(t *testing.T) {
	srv := hotkvtest.Start(t)
	admin := hotkvtest.Dial(t, srv.Addr)
	admin.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	admin.Do("SLOWLOG", "RESET")
	waiter := hotkvtest.Dial(t, srv.Addr)
	waiter.Write(hotkvtest.EncodeCommand("BLPOP", "q", "0"))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(admin.Do("INFO", "clients"), "blocked_clients:1") {
		if time.Now().After(deadline) {
			t.Fatal("BLPOP did not block")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if log := admin.Do("SLOWLOG", "GET", "-1"); strings.Contains(log, "BLPOP") {
		t.Fatalf("logged while blocked: %q", log)
	}
	admin.Do("LPUSH", "q", "job")
	if r, err := waiter.ReadReply(); err != nil || !strings.Contains(r, "job") {
		t.Fatalf("%q %v", r, err)
	}
	if log := admin.Do("SLOWLOG", "GET", "-1"); strings.Count(log, "BLPOP") != 1 {
		t.Fatalf("the served BLPOP logged %d times: %q", strings.Count(log, "BLPOP"), log)
	}
}

// MONITOR: a line per command after it ran (a script before its commands,
// shown as [db lua]; a transaction's commands between MULTI and EXEC; a
// blocking command once, when it first runs), admin commands and
// passwords hidden; CLIENT LIST flag O; RESET ends it, and a closed
// monitor is forgotten.
func TestMonitorLines(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		c := hotkvtest.Dial(t, srv.Addr)
		mon := hotkvtest.Dial(t, srv.Addr)
		if r := mon.Do("MONITOR"); r != "+OK\r\n" {
			t.Fatal(r)
		}
		if r := c.Do("CLIENT", "LIST"); !strings.Contains(r, " flags=O ") {
			t.Fatalf("no monitor in CLIENT LIST: %q", r)
		}
		blocked := hotkvtest.Dial(t, srv.Addr)
		blocked.Write(hotkvtest.EncodeCommand("BLPOP", "q", "0"))
		time.Sleep(50 * time.Millisecond)
		c.Do("SET", "k", "v\n\"x")
		c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "k")
		c.Do("AUTH", "pw")
		c.Do("CONFIG", "GET", "maxmemory") // admin: not shown
		c.Do("MULTI")
		c.Do("INCR", "n")
		c.Do("EXEC")
		c.Do("LPUSH", "q", "a")
		if _, err := blocked.ReadReply(); err != nil {
			t.Fatal(err)
		}
		c.Do("SELECT", "2")
		c.Do("PING")
		want := []string{
			`[0 ADDR] "BLPOP" "q" "0"`,
			`[0 ADDR] "SET" "k" "v\n\"x"`,
			`[0 ADDR] "EVAL" "return redis.call('get', KEYS[1])" "1" "k"`,
			`[0 lua] "get" "k"`,
			`[0 ADDR] "AUTH" "(redacted)"`,
			`[0 ADDR] "MULTI"`,
			`[0 ADDR] "INCR" "n"`,
			`[0 ADDR] "EXEC"`,
			`[0 ADDR] "LPUSH" "q" "a"`,
			`[2 ADDR] "SELECT" "2"`, // the database after the command, as Redis
			`[2 ADDR] "PING"`,
		}
		for i, w := range want {
			line, err := mon.ReadReply()
			if err != nil {
				t.Fatal(err)
			}
			// +<sec>.<usec> [<db> <ip:port>] ...
			f := strings.SplitN(strings.TrimSuffix(strings.TrimPrefix(line, "+"), "\r\n"), " ", 2)
			if len(f) != 2 || len(f[0]) != 17 || f[0][10] != '.' {
				t.Fatalf("line %d: %q", i, line)
			}
			rest := f[1]
			if j := strings.Index(rest, " 127.0.0.1:"); j >= 0 {
				k := strings.IndexByte(rest, ']')
				rest = rest[:j] + " ADDR" + rest[k:]
			}
			if rest != w {
				t.Fatalf("line %d: %q, want %q", i, rest, w)
			}
		}
		if r := mon.Do("RESET"); r != "+RESET\r\n" {
			t.Fatal(r)
		}
		c.Do("SET", "after", "reset")
		if r := mon.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("a monitor line after RESET: %q", r)
		}
		if r := c.Do("CLIENT", "LIST"); strings.Contains(r, "flags=O") {
			t.Fatalf("still a monitor: %q", r)
		}
	})
}

// The latency monitor: a command past latency-monitor-threshold is an
// event (LATEST, HISTORY, GRAPH, DOCTOR), RESET drops it; LATENCY
// HISTOGRAM reports each command's calls in Redis's buckets.
func TestLatencyMonitor(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("CONFIG", "SET", "latency-monitor-threshold", "50")
	c.Do("DEBUG", "SLEEP", "0.06")
	latest := c.Do("LATENCY", "LATEST")
	if !strings.HasPrefix(latest, "*1\r\n*4\r\n$7\r\ncommand\r\n:") {
		t.Fatalf("LATEST %q", latest)
	}
	var ts, ms, maxMs int64
	if _, err := fmt.Sscanf(latest[len("*1\r\n*4\r\n$7\r\ncommand\r\n"):], ":%d\r\n:%d\r\n:%d\r\n", &ts, &ms, &maxMs); err != nil || ms < 60 || ms > 1000 || maxMs != ms || ts < 1_600_000_000 {
		t.Fatalf("LATEST %q: %v", latest, err)
	}
	if h := c.Do("LATENCY", "HISTORY", "command"); h != fmt.Sprintf("*1\r\n*2\r\n:%d\r\n:%d\r\n", ts, ms) {
		t.Fatalf("HISTORY %q", h)
	}
	if g := c.Do("LATENCY", "GRAPH", "command"); !strings.Contains(g, fmt.Sprintf("command - high %d ms, low %d ms", ms, ms)) {
		t.Fatalf("GRAPH %q", g)
	}
	if d := c.Do("LATENCY", "DOCTOR"); !strings.Contains(d, "1. command: 1 latency spikes") {
		t.Fatalf("DOCTOR %q", d)
	}
	if r := c.Do("LATENCY", "GRAPH", "nosuch"); r != "-ERR No samples available for event 'nosuch'\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("LATENCY", "RESET"); r != ":1\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("LATENCY", "LATEST"); r != "*0\r\n" {
		t.Fatal(r)
	}
	c.Do("CONFIG", "RESETSTAT")
	c.Do("SET", "a", "b")
	c.Do("SET", "a", "c")
	c.Do("CLIENT", "ID")
	h := c.Do("LATENCY", "HISTOGRAM", "set", "client", "nosuch")
	if !strings.HasPrefix(h, "*4\r\n$3\r\nset\r\n*4\r\n$5\r\ncalls\r\n:2\r\n$14\r\nhistogram_usec\r\n*") ||
		!strings.Contains(h, "$9\r\nclient|id\r\n*4\r\n$5\r\ncalls\r\n:1\r\n") {
		t.Fatalf("HISTOGRAM %q", h)
	}
	if r := c.Do("LATENCY", "HELP", "x"); r != "-ERR wrong number of arguments for 'latency|help' command\r\n" {
		t.Fatal(r)
	}
}
