package cli_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// commonScript covers every RESP2 reply type and redis-cli's rendering rules:
// status, integers (negative too), bulk strings with every escape sredis-cli
// uses (sdscatrepr: \n \r \t \a \b \" \\ and \xHH for other bytes), nil,
// empty and nested arrays, index widths of 10+ elements, errors, inline
// quoting errors, transactions and databases.
var commonScript = []string{
	`FLUSHALL`,
	`PING`,
	`PING "hello world"`,
	`ECHO "line1\nline2\ttab \"quoted\" back\\slash \a\b\r \x00\x01\x7f\xff"`,
	`ECHO 'single \'quoted\' "words"'`,
	`SET str:1 hello`,
	`SET str:bin "\xe2\x82\xac euro \x00 nul"`,
	`GET str:1`,
	`GET str:bin`,
	`GET missing`,
	`SET n 10`,
	`INCR n`,
	`INCRBY n -25`,
	`DECR n`,
	`APPEND str:1 " world"`,
	`STRLEN str:1`,
	`GETRANGE str:1 0 4`,
	`MSET a 1 b 2 c 3`,
	`MGET a b missing c`,
	`DEL a b c missing`,
	`EXISTS str:1 missing`,
	`RPUSH list a b c d e f g h i j k l`,
	`LRANGE list 0 -1`,
	`LRANGE list 0 2`,
	`LRANGE list 5 1`,
	`LLEN list`,
	`LPOP list 2`,
	`SADD set m1 m2 m3`,
	`SMEMBERS set`,
	`SISMEMBER set m1`,
	`SMEMBERS missing`,
	`HSET hash f1 v1 f2 v2 f3 "v 3"`,
	`HGETALL hash`,
	`HGET hash f1`,
	`HMGET hash f1 nofield f3`,
	`HGETALL missing`,
	`ZADD z 1 one 2.5 two 3 three`,
	`ZRANGE z 0 -1 WITHSCORES`,
	`ZSCORE z two`,
	`ZINCRBY z 0.25 one`,
	`ZRANGE z 0 -1`,
	`TYPE hash`,
	`EXPIRE str:1 1000`,
	`TTL str:1`,
	`PERSIST str:1`,
	`OBJECT ENCODING list`,
	`EVAL "return {1,{2,{3,'nested'}},{},'x'}" 0`,
	`EVAL "return {1,2,3,4,5,6,7,8,9,10,{1,{2,3}},12}" 0`,
	`EVAL "return redis.error_reply('MYERR custom error')" 0`,
	`EVAL "return {ok='STATUS'}" 0`,
	`EVAL "return nil" 0`,
	`EVAL "return 3.99" 0`,
	`LPUSH hash x`,
	`SET k v NX XX`,
	`NOSUCHCMD a b`,
	`GET`,
	`"unbalanced quote`,
	`'closing quote'x`,
	`MULTI`,
	`SET tx 1`,
	`INCR tx`,
	`GET tx`,
	`EXEC`,
	`SELECT 2`,
	`SET k2 v2`,
	`DBSIZE`,
	`SELECT 0`,
	`CONFIG GET maxmemory-policy`,
	`DEBUG PROTOCOL string`,
	`DEBUG PROTOCOL integer`,
	`DEBUG PROTOCOL double`,
	`DEBUG PROTOCOL null`,
	`DEBUG PROTOCOL array`,
	`DEBUG PROTOCOL set`,
	`DEBUG PROTOCOL map`,
	`DEBUG PROTOCOL true`,
	`DEBUG PROTOCOL false`,
	`DEBUG PROTOCOL verbatim`,
	`   `,
	`3 PING`,
	`FLUSHALL`,
}

// resp2Only: DEBUG PROTOCOL attrib and push behave differently per protocol
// (RESP2 attrib is a plain string; RESP3 attributes make redis-cli's
// hiredis fail, see resp3Script).
var resp2Only = []string{
	`DEBUG PROTOCOL attrib`,
	`DEBUG PROTOCOL push`,
}

// resp3Only adds what only RESP3 has: maps (with multi-line values), sets,
// doubles, booleans, verbatim strings, out-of-band pushes, empty
// map/set/array renderings. Big numbers and attributes are left out: redis-cli
// 7.x cannot print them (it exits with "Unknown reply type: 13", or a protocol
// error); TestBigNumberAndAttribute covers hotkv-cli's rendering.
var resp3Only = []string{
	`DEBUG PROTOCOL push`,
	`HSET h3 f1 v1 f2 v2 f3 v3`,
	`HGETALL h3`,
	`SADD s3 x y z 1 2 3`,
	`SMEMBERS s3`,
	`ZADD z3 1.5 a 2 b`,
	`ZRANGE z3 0 -1 WITHSCORES`,
	`ZSCORE z3 a`,
	`CONFIG GET maxmemory*`,
	// Lua tables iterate in no fixed order: one key per map or set.
	`EVAL "redis.setresp(3); return {map={a={1,2}}}" 0`,
	`EVAL "redis.setresp(3); return {1, {map={a={map={c={1,{2,3}}}}}}}" 0`,
	`EVAL "redis.setresp(3); return {map={one={7}}}" 0`,
	`EVAL "redis.setresp(3); return {map={k={map={x={1}}}}}" 0`,
	`EVAL "redis.setresp(3); return {set={a=true}}" 0`,
	`EVAL "redis.setresp(3); return {double=3.5}" 0`,
	`EVAL "redis.setresp(3); return {true, false, {double=-0.5}}" 0`,
	`FLUSHALL`,
}

func script(parts ...[]string) string {
	var b strings.Builder
	for _, p := range parts {
		for _, l := range p {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestRenderingMatchesRedisCLI runs the same scripts through redis-cli and
// hotkv-cli against the same HotKV server, commands on stdin, and requires
// byte-identical output on a terminal (pseudo-terminal stdout) and raw
// (a pipe), in RESP2 and RESP3 (-3), plus --no-raw on a pipe.
func TestRenderingMatchesRedisCLI(t *testing.T) {
	redis := redisCLI(t)
	hotkv := hotkvCLI(t)
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	scripts := map[string]string{
		"resp2": script(commonScript, resp2Only),
		"resp3": script(commonScript, resp3Only),
	}
	if n := len(commonScript) + len(resp3Only); n < 50 {
		t.Fatalf("the script has %d commands, the bar is 50+", n)
	}
	for _, proto := range []string{"resp2", "resp3"} {
		for _, mode := range []string{"tty", "raw", "no-raw"} {
			t.Run(proto+"/"+mode, func(t *testing.T) {
				args := []string{"-h", host, "-p", port}
				if proto == "resp3" {
					args = append(args, "-3")
				}
				if mode == "no-raw" {
					args = append(args, "--no-raw")
				}
				o := runOpts{stdin: scripts[proto], tty: mode == "tty"}
				want := redis.run(t, o, args...)
				got := hotkv.run(t, o, args...)
				// The modes really differ: terminal rendering or raw bytes.
				styled := strings.Contains(want.stdout, "(integer) 1")
				if styled != (mode != "raw") || (mode == "tty") != strings.Contains(want.stdout, "\r\n") {
					t.Fatalf("redis-cli's %s output is not in the expected mode:\n%s", mode, want.stdout)
				}
				compareRuns(t, want, got)
			})
		}
	}
}

// TestOneShotMatchesRedisCLI compares one-shot commands, -r, -x, -d/-D, --csv,
// -e and --scan with redis-cli's output.
func TestOneShotMatchesRedisCLI(t *testing.T) {
	redis := redisCLI(t)
	hotkv := hotkvCLI(t)
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	conn := hotkvtest.Dial(t, srv.Addr)
	conn.Do("RPUSH", "list", "a", "b\x00c", "d\ne")
	for i := 0; i < 30; i++ {
		conn.Do("SET", fmt.Sprintf("key:%02d", i), "v")
	}
	conn.Do("SET", "user:\x01odd", "v")
	cases := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"lrange", "", []string{"LRANGE", "list", "0", "-1"}},
		{"args-not-unescaped", "", []string{"ECHO", `a\x41"b"`}},
		{"repeat", "", []string{"-r", "3", "INCR", "counter"}},
		{"stdin-last-arg", "from\nstdin\n", []string{"-x", "ECHO"}},
		{"error", "", []string{"GET"}},
		{"error-exit-code", "", []string{"-e", "GET"}},
		{"delimiters", "", []string{"-d", "|", "-D", "<end>\n", "LRANGE", "list", "0", "-1"}},
		{"csv", "", []string{"--csv", "LRANGE", "list", "0", "-1"}},
		{"resp3-map", "", []string{"-3", "DEBUG", "PROTOCOL", "map"}},
		{"resp3-push", "", []string{"-3", "DEBUG", "PROTOCOL", "push"}},
		{"db", "", []string{"-n", "3", "SET", "in3", "x"}},
		{"scan", "", []string{"--scan"}},
		{"scan-pattern", "", []string{"--scan", "--pattern", "key:1*"}},
		{"uri", "", []string{"-u", "redis://" + srv.Addr + "/4", "SET", "in4", "y"}},
	}
	for _, c := range cases {
		for _, tty := range []bool{true, false} {
			name := c.name + "/raw"
			if tty {
				name = c.name + "/tty"
			}
			t.Run(name, func(t *testing.T) {
				args := append([]string{"-h", host, "-p", port}, c.args...)
				if c.name == "uri" {
					args = c.args
				}
				o := runOpts{stdin: c.stdin, tty: tty}
				conn.Do("DEL", "counter")
				want := redis.run(t, o, args...)
				conn.Do("DEL", "counter")
				got := hotkv.run(t, o, args...)
				if c.name == "scan" || c.name == "scan-pattern" {
					// SCAN order is the server's, the same for both; keep the
					// comparison strict but say what differed.
					if want.stdout == "" {
						t.Fatalf("redis-cli printed no keys")
					}
				}
				compareRuns(t, want, got)
			})
		}
	}
}

// TestPipeMatchesRedisCLI feeds the same RESP (with errors in it) to both
// programs' --pipe and compares the summary lines, errors and exit codes.
func TestPipeMatchesRedisCLI(t *testing.T) {
	redis := redisCLI(t)
	hotkv := hotkvCLI(t)
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	var in strings.Builder
	for i := 0; i < 2000; i++ {
		in.Write(hotkvtest.EncodeCommand("SET", fmt.Sprintf("k%d", i), strings.Repeat("v", i%50)))
	}
	in.Write(hotkvtest.EncodeCommand("INCR", "k5"))      // an error: not an integer
	in.Write(hotkvtest.EncodeCommand("NOSUCHCOMMAND"))   // an error: unknown
	in.Write(hotkvtest.EncodeCommand("RPUSH", "l", "x")) // a reply
	for _, data := range []string{in.String(), ""} {
		for _, tty := range []bool{false, true} {
			o := runOpts{stdin: data, tty: tty}
			want := redis.run(t, o, "-h", host, "-p", port, "--pipe")
			got := hotkv.run(t, o, "-h", host, "-p", port, "--pipe")
			compareRuns(t, want, got)
		}
	}
	r := hotkv.run(t, runOpts{stdin: in.String()}, "-h", host, "-p", port, "--pipe")
	if !strings.Contains(r.stdout, "errors: 2, replies: 2003\n") || r.code != 1 {
		t.Errorf("--pipe summary: %q exit %d", r.stdout, r.code)
	}
}

func compareRuns(t *testing.T, want, got result) {
	t.Helper()
	if got.stdout != want.stdout {
		t.Errorf("stdout differs from redis-cli's:\n%s", lineDiff(want.stdout, got.stdout))
	}
	if got.stderr != want.stderr {
		t.Errorf("stderr differs from redis-cli's:\nredis-cli: %q\nhotkv-cli: %q", want.stderr, got.stderr)
	}
	if got.code != want.code {
		t.Errorf("exit code %d, redis-cli's %d", got.code, want.code)
	}
}

// lineDiff shows the first differing lines of two outputs.
func lineDiff(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n  redis-cli: %q\n  hotkv-cli: %q\n", i+1, wl, gl)
			if shown++; shown == 5 {
				break
			}
		}
	}
	return b.String()
}

func splitAddr(t *testing.T, addr string) (string, string) {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	return addr[:i], addr[i+1:]
}
