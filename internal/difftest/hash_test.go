package difftest

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestDiffHashRandom sends a seeded random stream of hash commands to both servers,
// in RESP2 and then RESP3, with small listpack limits so that hashes convert to
// tables along the way, and compares the replies byte for byte. Where the two
// servers may legitimately differ the stream normalizes:
//   - a hashtable's iteration order is its hash function's (HGETALL, HKEYS, HVALS,
//     HSCAN): those replies are compared sorted, and HSCAN is iterated to the end
//     and compared as a set;
//   - HRANDFIELD is random: the reply's shape and length are compared, and every
//     field it names must be a field of the hash;
//   - Redis 7.0 lacks the field-expiry commands, HGETDEL/HGETEX/HSETEX and HSCAN
//     NOVALUES (redis8-vs-redis7.md), and Redis 7.2+ converts an HSET with more
//     pairs than hash-max-listpack-entries before inserting, 7.0 does not: the
//     stream uses none of them and never sends more pairs than that limit (the
//     golden script covers all of it).
func TestDiffHashRandom(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	const maxEntries = 8
	p.same("CONFIG", "SET", "hash-max-listpack-entries", strconv.Itoa(maxEntries))
	p.same("CONFIG", "SET", "hash-max-listpack-value", "16")
	rng := rand.New(rand.NewPCG(3, 2026))
	keys := []string{"h1", "h2", "h3", "h4", "str", "nokey"}
	p.same("SET", "str", "x")
	key := func() string { return keys[rng.IntN(len(keys))] }
	field := func() string {
		switch rng.IntN(12) {
		case 0:
			return strings.Repeat("F", 17+rng.IntN(5)) // longer than the value limit
		case 1:
			return strconv.Itoa(rng.IntN(30) - 10)
		default:
			return "f" + strconv.Itoa(rng.IntN(14))
		}
	}
	num := func() string { return strconv.Itoa(rng.IntN(200) - 100) }
	val := func() string {
		switch rng.IntN(6) {
		case 0:
			return num()
		case 1:
			return ""
		case 2:
			return strings.Repeat("v", 17+rng.IntN(10))
		case 3:
			return strconv.FormatFloat(float64(rng.IntN(2000)-1000)/8, 'f', -1, 64)
		default:
			return "v" + strconv.Itoa(rng.IntN(100))
		}
	}
	pairs := func(cmd string) []string {
		a := []string{cmd, key()}
		for n := 1 + rng.IntN(maxEntries); n > 0; n-- {
			a = append(a, field(), val())
		}
		if rng.IntN(30) == 0 {
			a = a[:len(a)-1] // odd: arity error
		}
		return a
	}
	fields := func(a []string) []string {
		for n := rng.IntN(5); n >= 0; n-- {
			a = append(a, field())
		}
		return a
	}
	exact := []func() []string{
		func() []string { return pairs("HSET") },
		func() []string { return pairs("HMSET") },
		func() []string { return []string{"HSETNX", key(), field(), val()} },
		func() []string { return []string{"HGET", key(), field()} },
		func() []string { return fields([]string{"HMGET", key()}) },
		func() []string { return fields([]string{"HDEL", key()}) },
		func() []string { return []string{"HLEN", key()} },
		func() []string { return []string{"HSTRLEN", key(), field()} },
		func() []string { return []string{"HEXISTS", key(), field()} },
		func() []string { return []string{"HINCRBY", key(), field(), num()} },
		func() []string {
			incr := []string{"1.5", "-0.25", "abc", "10", "1e3", "0.1"}[rng.IntN(6)]
			return []string{"HINCRBYFLOAT", key(), field(), incr}
		},
		func() []string { return []string{"TYPE", key()} },
		func() []string { return []string{"EXISTS", key()} },
		func() []string { return []string{"DEL", key()} },
		func() []string { return []string{"COPY", key(), key(), "REPLACE"} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"DEBUG", "DIGEST-VALUE", key()} },
		func() []string { return []string{"HRANDFIELD", key(), "0"} },
		func() []string { return []string{"HSCAN", key(), "x"} },
		func() []string { return []string{"HSCAN", key(), "0", "COUNT", "0"} },
	}
	for _, proto := range []string{"2", "3"} {
		p.do("HELLO", proto) // the replies name different versions
		for i := 0; i < 2500 && !t.Failed(); i++ {
			switch r := rng.IntN(10); {
			case r < 7:
				p.same(exact[rng.IntN(len(exact))]()...)
			case r == 7:
				k := key()
				enc := p.same("OBJECT", "ENCODING", k)
				cmd := []string{"HGETALL", "HKEYS", "HVALS", "HSCAN"}[rng.IntN(4)]
				switch {
				case !strings.Contains(enc, "hashtable") && cmd == "HSCAN":
					p.same("HSCAN", k, "0", "MATCH", []string{"*", "f1*", "[0-9]*"}[rng.IntN(3)])
				case !strings.Contains(enc, "hashtable"):
					p.same(cmd, k)
				case proto == "2" && cmd == "HSCAN":
					hashScanBoth(t, p, k)
				case proto == "2":
					hk, rd := p.do(cmd, k)
					if a, b := sortedItems(hk, cmd == "HGETALL"), sortedItems(rd, cmd == "HGETALL"); a != b {
						t.Errorf("%s %s differs (sorted):\n hotkv %s\n redis %s", cmd, k, a, b)
					}
				default:
					p.same("HLEN", k)
				}
			default:
				hrandfieldBoth(t, p, key(), rng)
			}
		}
	}
}

// sortedItems returns the bulk strings of a flat RESP2 array reply, sorted (as
// field/value pairs when pairs).
func sortedItems(r string, pairs bool) string {
	items := parseArray(r)
	if !pairs {
		sort.Strings(items)
		return strings.Join(items, "|")
	}
	var ps []string
	for i := 0; i+1 < len(items); i += 2 {
		ps = append(ps, items[i]+"="+items[i+1])
	}
	sort.Strings(ps)
	return strings.Join(ps, "|")
}

// hashScanBoth iterates HSCAN to the end on both servers and compares the sets of
// field/value pairs.
func hashScanBoth(t *testing.T, p *pair, key string) {
	t.Helper()
	all := func(hotkv bool) string {
		seen := map[string]bool{}
		cursor := "0"
		for n := 0; n < 10000; n++ {
			hk, rd := p.do("HSCAN", key, cursor, "COUNT", "3")
			r := rd
			if hotkv {
				r = hk
			}
			items := parseArray(r)
			cursor = items[0]
			for i := 1; i+1 < len(items); i += 2 {
				seen[items[i]+"="+items[i+1]] = true
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
		return strings.Join(out, "|")
	}
	if a, b := all(true), all(false); a != b {
		t.Errorf("HSCAN %s to the end differs:\n hotkv %s\n redis %s", key, a, b)
	}
}

// hrandfieldBoth compares HRANDFIELD by shape: same reply type and length, and
// only fields of the hash (and, with WITHVALUES, their values).
func hrandfieldBoth(t *testing.T, p *pair, key string, rng *rand.Rand) {
	t.Helper()
	args := []string{"HRANDFIELD", key}
	if rng.IntN(4) != 0 {
		args = append(args, strconv.Itoa(rng.IntN(24)-8))
		if rng.IntN(2) == 0 {
			args = append(args, "WITHVALUES")
		}
	}
	hk, rd := p.do(args...)
	// the type, and for an array its length (a bulk string's length varies)
	head := func(r string) string {
		if r[0] == '$' && r != "$-1\r\n" {
			return "$"
		}
		return r[:strings.IndexByte(r, '\n')+1]
	}
	if head(hk) != head(rd) || strings.Count(hk, "\r\n") != strings.Count(rd, "\r\n") {
		t.Errorf("%v: shapes differ\n hotkv %q\n redis %q", args, hk, rd)
		return
	}
	if strings.HasPrefix(hk, "-") {
		if hk != rd {
			t.Errorf("%v: errors differ\n hotkv %q\n redis %q", args, hk, rd)
		}
		return
	}
	// the fields and values named must be the hash's (checked on HotKV, whose
	// content the rest of the stream shows to be Redis's)
	all, _ := p.do("HGETALL", key)
	valid := map[string]bool{}
	for _, it := range parseArray(all) { // RESP3's map too: parseArray skips headers
		valid[it] = true
	}
	for _, it := range parseArray(hk) {
		if !valid[it] {
			t.Errorf("%v: %q is not in the hash (%q)", args, it, all)
		}
	}
}
