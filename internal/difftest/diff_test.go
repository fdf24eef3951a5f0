package difftest

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Scripted cases: every string and generic command Redis 7.0 has, with the error
// paths (arity, syntax, types, overflow, ranges).
var scripted = [][]string{
	{"SET", "k", "v"}, {"GET", "k"}, {"GET", "nokey"}, {"SET", "k", "v2", "NX"}, {"SET", "k", "v3", "XX"},
	{"SET", "k", "v4", "GET"}, {"SET", "k", "v5", "NX", "GET"}, {"SET", "nk", "v", "XX", "GET"},
	{"SET", "k", "v", "EX", "100"}, {"TTL", "k"}, {"SET", "k", "v", "KEEPTTL"}, {"TTL", "k"},
	{"SET", "k", "v", "EX", "0"}, {"SET", "k", "v", "EX", "-1"}, {"SET", "k", "v", "PX", "abc"},
	{"SET", "k", "v", "EX", "10", "PX", "10"}, {"SET", "k", "v", "EX"}, {"SET", "k", "v", "NX", "XX"},
	{"SET", "k", "v", "EX", "9223372036854775807"}, {"SET", "k", "v", "PXAT", "1"}, {"EXISTS", "k"},
	{"SET", "k"}, {"GET"}, {"GET", "a", "b"}, {"FOO", "bar"}, {"set", "k", "v", "ex", "100", "ex", "200"}, {"TTL", "k"},
	{"LPUSH", "list", "a", "b"}, {"GET", "list"}, {"SET", "list", "x", "GET"}, {"SET", "list", "x", "NX"},
	{"INCR", "n"}, {"INCRBY", "n", "10"}, {"DECR", "n"}, {"DECRBY", "n", "5"}, {"INCRBY", "n", "1.5"},
	{"INCR", "list"}, {"SET", "big", "9223372036854775807"}, {"INCR", "big"}, {"DECRBY", "n", "-9223372036854775808"},
	{"SET", "neg", "-9223372036854775808"}, {"DECR", "neg"}, {"SET", "sp", " 1"}, {"INCR", "sp"},
	{"SET", "f", "10.5"}, {"INCRBYFLOAT", "f", "0.1"}, {"INCRBYFLOAT", "f", "-5"}, {"INCRBYFLOAT", "f", "abc"},
	{"INCRBYFLOAT", "nf", "3.0e3"}, {"INCRBYFLOAT", "list", "1"}, {"SET", "nan", "abc"}, {"INCRBYFLOAT", "nan", "1"},
	{"INCRBYFLOAT", "f", "1e308"}, {"INCRBYFLOAT", "f", "1e308"},
	{"APPEND", "s", "hello"}, {"APPEND", "s", " world"}, {"STRLEN", "s"}, {"STRLEN", "nokey"}, {"APPEND", "list", "x"},
	{"GETRANGE", "s", "0", "4"}, {"GETRANGE", "s", "-5", "-1"}, {"GETRANGE", "s", "5", "2"}, {"GETRANGE", "s", "-1", "-5"},
	{"GETRANGE", "s", "0", "100"}, {"GETRANGE", "nokey", "0", "1"}, {"GETRANGE", "s", "a", "1"}, {"SUBSTR", "s", "1", "3"},
	{"SETRANGE", "s", "6", "WORLD"}, {"GET", "s"}, {"SETRANGE", "s", "20", "x"}, {"GET", "s"}, {"SETRANGE", "s", "-1", "x"},
	{"SETRANGE", "nokey2", "0", ""}, {"EXISTS", "nokey2"}, {"SETRANGE", "s", "0", ""}, {"SETRANGE", "s", "536870912", "x"},
	{"SETRANGE", "n", "0", "9"}, {"GET", "n"}, {"OBJECT", "ENCODING", "n"}, {"OBJECT", "ENCODING", "s"},
	{"MSET", "a", "1", "b", "2"}, {"MSET", "a"}, {"MSET", "a", "1", "b"}, {"MGET", "a", "b", "nokey", "list"},
	{"MSETNX", "a", "1", "c", "3"}, {"MSETNX", "c", "3", "d", "4"}, {"MGET", "c", "d"},
	{"GETSET", "a", "new"}, {"GETSET", "nokey3", "x"}, {"GETSET", "list", "x"},
	{"GETDEL", "a"}, {"GETDEL", "a"}, {"GETDEL", "list"},
	{"SET", "g", "v"}, {"GETEX", "g", "EX", "100"}, {"TTL", "g"}, {"GETEX", "g", "PERSIST"}, {"TTL", "g"},
	{"GETEX", "g", "EX", "0"}, {"GETEX", "g", "PX", "10", "EX", "10"}, {"GETEX", "g", "KEEPTTL"}, {"GETEX", "nokey", "EX", "0"},
	{"GETEX", "list"}, {"GETEX", "g", "EXAT", "1"}, {"EXISTS", "g"},
	{"SETNX", "sn", "1"}, {"SETNX", "sn", "2"}, {"SETEX", "se", "100", "v"}, {"TTL", "se"}, {"SETEX", "se", "0", "v"},
	{"PSETEX", "pe", "100000", "v"}, {"TTL", "pe"}, {"PSETEX", "pe", "-1", "v"}, {"SETEX", "se", "x", "v"},
	{"SET", "l1", "ohmytext"}, {"SET", "l2", "mynewtext"}, {"LCS", "l1", "l2"}, {"LCS", "l1", "l2", "LEN"},
	{"LCS", "l1", "l2", "IDX"}, {"LCS", "l1", "l2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"}, {"LCS", "l1", "l2", "LEN", "IDX"},
	{"LCS", "l1", "list"}, {"LCS", "l1", "nokey"}, {"LCS", "l1", "l2", "FOO"},
	// generic
	{"DEL", "a", "b", "c", "nokey"}, {"UNLINK", "d"}, {"EXISTS", "s", "s", "nokey"}, {"TYPE", "s"}, {"TYPE", "list"}, {"TYPE", "nokey"},
	{"SET", "e", "v"}, {"EXPIRE", "e", "100"}, {"TTL", "e"}, {"EXPIRE", "e", "50", "GT"}, {"EXPIRE", "e", "200", "GT"}, {"TTL", "e"},
	{"EXPIRE", "e", "300", "LT"}, {"EXPIRE", "e", "10", "LT"}, {"TTL", "e"}, {"EXPIRE", "e", "10", "NX"}, {"EXPIRE", "e", "10", "XX"},
	{"EXPIRE", "e", "10", "NX", "XX"}, {"EXPIRE", "e", "10", "GT", "LT"}, {"EXPIRE", "e", "10", "FOO"}, {"EXPIRE", "e", "abc"},
	{"PERSIST", "e"}, {"PERSIST", "e"}, {"TTL", "e"}, {"EXPIRE", "e", "10", "XX"}, {"EXPIRE", "e", "10", "GT"}, {"EXPIRE", "e", "10", "LT"},
	{"EXPIRE", "e", "9223372036854775807"}, {"PEXPIRE", "e", "9223372036854775807"}, {"EXPIREAT", "e", "9223372036854775807"},
	{"EXPIRE", "e", "-1"}, {"EXISTS", "e"}, {"EXPIRE", "nokey", "10"}, {"TTL", "nokey"}, {"PTTL", "nokey"}, {"PTTL", "s"},
	{"SET", "e", "v"}, {"EXPIREAT", "e", "1"}, {"EXISTS", "e"}, {"EXPIRETIME", "s"}, {"EXPIRETIME", "nokey"},
	{"SET", "e", "v"}, {"PEXPIREAT", "e", "99999999999999"}, {"PEXPIRETIME", "e"}, {"EXPIRETIME", "e"},
	{"RENAME", "e", "e2"}, {"GET", "e2"}, {"RENAME", "nokey", "x"}, {"RENAME", "e2", "e2"}, {"RENAMENX", "e2", "s"}, {"RENAMENX", "e2", "e3"},
	{"PEXPIRETIME", "e3"}, {"COPY", "e3", "e4"}, {"COPY", "e3", "e4"}, {"COPY", "e3", "e4", "REPLACE"}, {"COPY", "e3", "e3"},
	{"COPY", "e3", "x", "DB", "16"}, {"COPY", "e3", "x", "DB", "abc"}, {"COPY", "e3", "x", "DB", "1"}, {"COPY", "e3", "x", "FOO"},
	{"COPY", "list", "list2"}, {"LRANGE", "list2", "0", "-1"}, {"PEXPIRETIME", "e4"},
	{"MOVE", "e4", "1"}, {"MOVE", "e4", "1"}, {"MOVE", "x", "0"}, {"MOVE", "s", "16"}, {"MOVE", "s", "abc"},
	{"SELECT", "1"}, {"GET", "e4"}, {"GET", "x"}, {"DBSIZE"}, {"SELECT", "0"}, {"SWAPDB", "0", "1"}, {"GET", "e4"}, {"SWAPDB", "0", "1"},
	{"SWAPDB", "0", "16"}, {"SWAPDB", "a", "0"}, {"SWAPDB", "0", "a"},
	{"TOUCH", "s", "nokey", "list"}, {"OBJECT", "ENCODING", "nokey"}, {"OBJECT", "REFCOUNT", "n"}, {"OBJECT", "FOO"},
	{"OBJECT", "FREQ", "s"}, {"OBJECT"}, {"OBJECT", "ENCODING"},
	{"SCAN", "abc"}, {"SCAN", "0", "COUNT", "0"}, {"SCAN", "0", "COUNT", "abc"}, {"SCAN", "0", "FOO"},
	{"SCAN", "18446744073709551616"},
	// connection and server
	{"PING"}, {"PING", "x"}, {"PING", "a", "b"}, {"ECHO", "x"}, {"ECHO"}, {"SELECT", "16"}, {"SELECT", "-1"}, {"SELECT", "x"},
	{"AUTH", "x"}, {"AUTH", "default", "x"}, {"AUTH", "a", "b", "c"}, {"HELLO", "4"}, {"HELLO", "abc"}, {"HELLO", "2", "AUTH", "a"},
	{"CLIENT"}, {"CLIENT", "FOO"}, {"CLIENT", "SETNAME", "a b"}, {"CLIENT", "SETNAME", "n1"}, {"CLIENT", "GETNAME"},
	// CLIENT SETINFO and NO-TOUCH are 7.2+: their golden data is reference_resp3.golden
	{"CLIENT", "NO-EVICT", "on"}, {"CLIENT", "NO-EVICT", "maybe"},
	{"CLIENT", "PAUSE", "abc"}, {"CLIENT", "PAUSE", "-1"}, {"CLIENT", "KILL", "1.2.3.4:5"}, {"CLIENT", "KILL", "ID", "999999"},
	{"CLIENT", "KILL", "TYPE", "foo"}, {"CLIENT", "KILL", "ID"}, {"CLIENT", "LIST", "TYPE", "foo"},
	{"CONFIG"}, {"CONFIG", "GET"}, {"CONFIG", "GET", "maxmemory-policy"}, {"CONFIG", "SET", "nosuch", "1"},
	{"CONFIG", "GET", "nosuch*"}, {"CONFIG", "SET", "maxclients"}, {"CONFIG", "FOO"},
	{"FLUSHDB", "FOO"}, {"FLUSHALL", "FOO"}, {"WAIT", "0", "0"}, {"WAIT", "0", "-1"}, {"DBSIZE", "x"},
	// COMMAND GETKEYS PING: Redis 8 (GETKEYS of arity -3) and 7.0 (-4) differ;
	// testdata/reference_86.golden in internal/command has 8.6.3's reply
	{"COMMAND", "GETKEYS", "GET", "a"}, {"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"},
	{"COMMAND", "GETKEYS", "NOSUCH", "a"}, {"COMMAND", "GETKEYS", "GET", "a", "b"}, {"COMMAND", "GETKEYS", "PING", "a"},
	{"COMMAND", "GETKEYS", "MSET", "a", "1", "b"}, {"COMMAND", "FOO"},
	// transactions
	{"MULTI"}, {"SET", "t1", "1"}, {"INCR", "t1"}, {"INCR", "s"}, {"GET", "t1"}, {"EXEC"},
	{"MULTI"}, {"MULTI"}, {"WATCH", "x"}, {"SET", "t2", "2"}, {"NOSUCH", "arg"}, {"EXEC"}, {"EXISTS", "t2"},
	{"EXEC"}, {"DISCARD"}, {"MULTI"}, {"GET", "t1"}, {"EXEC", "x"}, {"DISCARD"},
	{"WATCH", "t1"}, {"SET", "t1", "5"}, {"MULTI"}, {"GET", "t1"}, {"EXEC"},
	{"WATCH", "t1"}, {"UNWATCH"}, {"SET", "t1", "6"}, {"MULTI"}, {"GET", "t1"}, {"EXEC"},
	{"WATCH", "nokey"}, {"FLUSHDB"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"FLUSHALL"}, {"DBSIZE"}, {"RANDOMKEY"},
}

func TestDiffScripted(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	for _, args := range scripted {
		p.same(args...)
	}
}

// KEYS and full SCAN iterations are compared as sets (the hash order differs).
func TestDiffKeysAndScan(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	for i := 0; i < 300; i++ {
		k := "user:" + strconv.Itoa(i)
		if i%3 == 0 {
			k = "item:" + strconv.Itoa(i)
		}
		p.same("SET", k, "v")
	}
	p.same("RPUSH", "user:list", "a")
	for _, pat := range []string{"*", "user:*", "item:1?", "*[0-2]", "user:\\*", "[a-i]tem:*"} {
		hk, rd := p.do("KEYS", pat)
		if a, b := sortedLines(hk), sortedLines(rd); a != b {
			t.Errorf("KEYS %s differ:\n hotkv %s\n redis %s", pat, a, b)
		}
		for _, extra := range [][]string{nil, {"TYPE", "string"}, {"TYPE", "list"}, {"COUNT", "7"}} {
			a := scanAll(t, p, true, pat, extra)
			b := scanAll(t, p, false, pat, extra)
			if strings.Join(a, ",") != strings.Join(b, ",") {
				t.Errorf("SCAN MATCH %s %v differs:\n hotkv %v\n redis %v", pat, extra, a, b)
			}
		}
	}
}

func sortedLines(r string) string {
	parts := strings.Split(r, "\r\n")
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// scanAll iterates SCAN to the end on one server and returns the sorted keys.
func scanAll(t *testing.T, p *pair, hotkv bool, pat string, extra []string) []string {
	seen := map[string]bool{}
	cursor := "0"
	for n := 0; n < 10000; n++ {
		args := append([]string{"SCAN", cursor, "MATCH", pat}, extra...)
		hk, rd := p.do(args...)
		r := rd
		if hotkv {
			r = hk
		}
		items := parseArray(r)
		if len(items) < 1 {
			t.Fatalf("bad SCAN reply %q", r)
		}
		cursor = items[0]
		for _, k := range items[1:] {
			seen[k] = true
		}
		if cursor == "0" {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseArray flattens a RESP2 reply of bulk strings into their values.
func parseArray(r string) []string {
	var out []string
	lines := strings.Split(r, "\r\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "$") && lines[i] != "$-1" && i+1 < len(lines) {
			out = append(out, lines[i+1])
			i++
		}
	}
	return out
}

// TestDiffRandom sends the same seeded random stream of commands over a small key
// space to both servers and compares every reply.
func TestDiffRandom(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	rng := rand.New(rand.NewPCG(7, 11))
	keys := []string{"a", "b", "c", "d", "n", "lst", "h"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	num := func() string { return strconv.Itoa(rng.IntN(40) - 10) }
	// ttl is a TTL in seconds that is either invalid (<= 0) or at least 100
	ttl := func() string {
		if v := rng.IntN(40) - 10; v <= 0 {
			return strconv.Itoa(v)
		} else {
			return strconv.Itoa(100 + v)
		}
	}
	val := func() string {
		switch rng.IntN(4) {
		case 0:
			return num()
		case 1:
			return ""
		default:
			return strings.Repeat("x", rng.IntN(60))
		}
	}
	gens := []func() []string{
		func() []string {
			a := []string{"SET", key(), val()}
			// TTLs are long or invalid, never short: both servers must agree on
			// whether a key expired, whatever their timing
			for _, o := range [][]string{{"NX"}, {"XX"}, {"GET"}, {"EX", "100"}, {"PX", "500000"}, {"KEEPTTL"}, {"EX", ttl()}} {
				if rng.IntN(5) == 0 {
					a = append(a, o...)
				}
			}
			return a
		},
		func() []string { return []string{"GET", key()} },
		func() []string { return []string{"DEL", key(), key()} },
		func() []string { return []string{"EXISTS", key(), key()} },
		func() []string { return []string{"INCR", key()} },
		func() []string { return []string{"INCRBY", key(), num()} },
		func() []string { return []string{"DECRBY", key(), num()} },
		func() []string { return []string{"APPEND", key(), val()} },
		func() []string { return []string{"STRLEN", key()} },
		func() []string { return []string{"GETRANGE", key(), num(), num()} },
		func() []string { return []string{"SETRANGE", key(), strconv.Itoa(rng.IntN(20)), val()} },
		func() []string { return []string{"MGET", key(), key(), key()} },
		func() []string { return []string{"MSET", key(), val(), key(), val()} },
		func() []string { return []string{"MSETNX", key(), val(), key(), val()} },
		func() []string { return []string{"GETSET", key(), val()} },
		func() []string { return []string{"GETDEL", key()} },
		func() []string {
			a := []string{"GETEX", key()}
			if rng.IntN(2) == 0 {
				a = append(a, [][]string{{"EX", "100"}, {"PERSIST"}, {"PX", ttl() + "000"}}[rng.IntN(3)]...)
			}
			return a
		},
		func() []string {
			a := []string{"EXPIRE", key(), []string{"100", "200", "0", "-5", ttl()}[rng.IntN(5)]}
			if rng.IntN(3) == 0 {
				a = append(a, []string{"NX", "XX", "GT", "LT"}[rng.IntN(4)])
			}
			return a
		},
		func() []string { return []string{"TTL", key()} },
		func() []string { return []string{"PERSIST", key()} },
		func() []string { return []string{"TYPE", key()} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"RENAMENX", key(), key()} },
		func() []string { return []string{"COPY", key(), key()} },
		func() []string { return []string{"LPUSH", key(), val()} },
		func() []string { return []string{"RPOP", key()} },
		func() []string { return []string{"LRANGE", key(), "0", "-1"} },
		func() []string { return []string{"HSET", key(), "f", val()} },
		func() []string { return []string{"HGET", key(), "f"} },
		func() []string { return []string{"SETNX", key(), val()} },
		func() []string { return []string{"INCRBYFLOAT", key(), "1.5"} },
		func() []string { return []string{"DBSIZE"} },
		func() []string {
			k := key()
			// 7.0 has no listpack lists (redis8-vs-redis7.md): compare encodings of strings only
			if hk, _ := p.do("TYPE", k); hk != "+string\r\n" {
				return []string{"EXISTS", k}
			}
			return []string{"OBJECT", "ENCODING", k}
		},
	}
	var hist []string
	for i := 0; i < 3000 && !t.Failed(); i++ {
		a := gens[rng.IntN(len(gens))]()
		hist = append(hist, strings.Join(a, " "))
		p.same(a...)
	}
	if t.Failed() {
		for _, h := range hist[max(0, len(hist)-60):] {
			t.Log(h)
		}
	}
}
