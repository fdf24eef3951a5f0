package difftest

import (
	"bufio"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// respItem is one element of a parsed reply: a scalar line ("+OK", ":1",
// "-ERR ...", "$-1", "_") or a bulk string's bytes (Bulk set), or a nested
// aggregate (Kids).
type respItem struct {
	Line string
	Bulk *string
	Kids []respItem
}

// parseResp parses one RESP2/RESP3 reply.
func parseResp(r string) (respItem, string) {
	i := strings.Index(r, "\r\n")
	line, rest := r[:i], r[i+2:]
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return respItem{Line: line}, rest
		}
		b := rest[:n]
		return respItem{Bulk: &b}, rest[n+2:]
	case '*', '~', '%':
		n, _ := strconv.Atoi(line[1:])
		if line[0] == '%' {
			n *= 2
		}
		it := respItem{Line: line[:1]}
		if n < 0 {
			it.Line = line
			return it, rest
		}
		for range n {
			var k respItem
			k, rest = parseResp(rest)
			it.Kids = append(it.Kids, k)
		}
		return it, rest
	}
	return respItem{Line: line}, rest
}

// bulks returns the bulk strings of a flat aggregate, and whether it was one.
func (it respItem) bulks() ([]string, bool) {
	if it.Kids == nil && (it.Line != "*" && it.Line != "~") {
		return nil, false
	}
	out := make([]string, 0, len(it.Kids))
	for _, k := range it.Kids {
		if k.Bulk == nil {
			return nil, false
		}
		out = append(out, *k.Bulk)
	}
	return out, true
}

// sortedReply renders a flat aggregate of bulk strings with its members sorted
// (set replies: Redis 7.0 keeps small string sets in hashtables, HotKV in
// listpacks, so their orders differ); any other reply verbatim.
func sortedReply(r string) string {
	it, _ := parseResp(r)
	ms, ok := it.bulks()
	if !ok {
		return r
	}
	slices.Sort(ms)
	return it.Line + strconv.Itoa(len(ms)) + "|" + strings.Join(ms, "|")
}

// TestDiffSetRandom sends a seeded random stream of set commands, over a few keys
// whose sets cross the intset/listpack/hashtable limits, to HotKV and to
// redis-server. Replies are compared byte for byte, except: set replies are
// compared as sorted members (hash and listpack orders differ from 7.0's);
// OBJECT ENCODING only as "intset or not" (7.0 has no listpack sets); SPOP runs on
// HotKV, is checked against the members Redis holds, and is mirrored to Redis as
// an SREM of what HotKV popped; SRANDMEMBER replies are checked for their size,
// distinctness and membership.
func TestDiffSetRandom(t *testing.T) {
	p := newPair(t)
	p3 := newPair3(t, p)
	p.same("FLUSHALL")
	rng := rand.New(rand.NewPCG(setSeed(), 5))
	keys := []string{"s1", "s2", "s3", "s4", "str"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	member := func() string {
		switch rng.IntN(12) {
		case 0, 1, 2, 3:
			return strconv.Itoa(rng.IntN(40) - 5)
		case 4:
			return strconv.FormatInt(rng.Int64()-rng.Int64(), 10)
		case 5:
			return []string{"01", "-0", "+1", "1.0", " 2", "", "9223372036854775808", "-9223372036854775809"}[rng.IntN(8)]
		case 6:
			return strings.Repeat("L", 60+rng.IntN(10)) // around set-max-listpack-value
		default:
			return string(rune('a' + rng.IntN(26)))
		}
	}
	members := func(lo, hi int) []string {
		n := lo + rng.IntN(hi-lo+1)
		out := make([]string, n)
		for i := range out {
			out[i] = member()
		}
		return out
	}
	many := func(ints bool) []string {
		// enough members to cross 128 (listpack), or 512 (intset) over a few
		// calls: fewer than 513 at once, because Redis 8 converts an intset on
		// SADD's argument count alone and 7.0 does not
		n := 100 + rng.IntN(400)
		out := make([]string, n)
		for i := range out {
			if ints {
				out[i] = strconv.Itoa(rng.IntN(700))
			} else {
				out[i] = "m" + strconv.Itoa(rng.IntN(300))
			}
		}
		return out
	}
	keyList := func(lo, hi int) []string {
		n := lo + rng.IntN(hi-lo+1)
		out := make([]string, n)
		for i := range out {
			out[i] = key()
			if rng.IntN(8) == 0 {
				out[i] = "nokey"
			}
		}
		return out
	}
	count := func() string {
		return []string{"0", "1", "2", "3", "5", "10", "40", "200", "-1", "-3", "-20", "abc"}[rng.IntN(12)]
	}
	cat := func(a []string, b ...string) []string { return append(append([]string{}, a...), b...) }
	var hist []string // the last commands, shown when a comparison fails
	note := func(args []string) {
		if len(hist) == 30 {
			hist = hist[1:]
		}
		h := strings.Join(args, " ")
		if len(h) > 200 {
			h = h[:200] + "..."
		}
		hist = append(hist, h)
	}
	defer func() {
		if t.Failed() {
			t.Logf("last commands:\n%s", strings.Join(hist, "\n"))
		}
	}()
	exact := func(args ...string) { note(args); p.same(args...) }
	sorted := func(args ...string) {
		t.Helper()
		note(args)
		hk, rd := p.do(args...)
		if sortedReply(hk) != sortedReply(rd) {
			t.Errorf("%s\n hotkv %q\n redis %q", strings.Join(args, " "), hk, rd)
		}
	}
	smembers := func(k string) []string {
		_, rd := p.do("SMEMBERS", k)
		it, _ := parseResp(rd)
		ms, _ := it.bulks()
		return ms
	}
	gens := []func(){
		func() { exact(cat([]string{"SADD", key()}, members(1, 6)...)...) },
		func() { exact(cat([]string{"SADD", key()}, many(rng.IntN(2) == 0)...)...) },
		func() { exact(cat([]string{"SREM", key()}, members(1, 8)...)...) },
		func() { exact("SCARD", key()) },
		func() { exact("SISMEMBER", key(), member()) },
		func() { exact(cat([]string{"SMISMEMBER", key()}, members(1, 5)...)...) },
		func() { sorted("SMEMBERS", key()) },
		func() { exact("SMOVE", key(), key(), member()) },
		func() { sorted(cat([]string{"SINTER"}, keyList(1, 4)...)...) },
		func() { sorted(cat([]string{"SUNION"}, keyList(1, 4)...)...) },
		func() { sorted(cat([]string{"SDIFF"}, keyList(1, 4)...)...) },
		func() { exact(cat([]string{"SINTERSTORE", key()}, keyList(1, 3)...)...) },
		func() { exact(cat([]string{"SUNIONSTORE", key()}, keyList(1, 3)...)...) },
		func() { exact(cat([]string{"SDIFFSTORE", key()}, keyList(1, 3)...)...) },
		func() {
			ks := keyList(1, 3)
			a := cat([]string{"SINTERCARD", strconv.Itoa(len(ks))}, ks...)
			if rng.IntN(2) == 0 {
				a = append(a, "LIMIT", []string{"0", "1", "2", "5", "-1"}[rng.IntN(5)])
			}
			exact(a...)
		},
		func() {
			k := key()
			if hk, _ := p.do("TYPE", k); hk != "+set\r\n" {
				exact("OBJECT", "ENCODING", k)
				return
			}
			note([]string{"OBJECT", "ENCODING", k})
			hk, rd := p.do("OBJECT", "ENCODING", k)
			if (hk == "$6\r\nintset\r\n") != (rd == "$6\r\nintset\r\n") {
				t.Errorf("OBJECT ENCODING %s: hotkv %q redis %q", k, hk, rd)
			}
		},
		func() { exact("DEBUG", "DIGEST-VALUE", key(), key()) },
		func() { exact("TYPE", key()) },
		func() { exact("DEL", key()) },
		func() { exact("SET", "str", "v") },
		func() { exact("EXPIRE", key(), "1000") },
		func() { exact("TTL", key()) },
		func() { exact("COPY", key(), key(), "REPLACE") },
		func() {
			k := key()
			a := []string{"SSCAN", k, "0"}
			if rng.IntN(2) == 0 {
				a = append(a, "MATCH", []string{"*", "1*", "[a-f]", "L*", "-*"}[rng.IntN(5)])
			}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", []string{"1", "5", "1000", "0"}[rng.IntN(4)])
			}
			note(a)
			hk, rd := p.do(a...)
			if !strings.HasPrefix(hk, "*2\r\n") || !strings.HasPrefix(rd, "*2\r\n") {
				if hk != rd {
					t.Errorf("%s\n hotkv %q\n redis %q", strings.Join(a, " "), hk, rd)
				}
				return
			}
			// a whole iteration reports the same members on both
			if got, want := sscanAll(t, p, true, a), sscanAll(t, p, false, a); got != want {
				t.Errorf("full %s\n hotkv %s\n redis %s", strings.Join(a, " "), got, want)
			}
		},
		func() { // SPOP: HotKV pops, Redis mirrors with SREM
			k := key()
			a := []string{"SPOP", k}
			if rng.IntN(3) > 0 {
				a = append(a, count())
			}
			before := smembers(k)
			note(a)
			hk := p.hkOnly(a...)
			it, _ := parseResp(hk)
			popped, isAgg := it.bulks()
			if it.Bulk != nil {
				popped, isAgg = []string{*it.Bulk}, true
			}
			if !isAgg || len(popped) == 0 {
				if rd := p.rdOnly(a...); rd != hk {
					t.Errorf("%s\n hotkv %q\n redis %q", strings.Join(a, " "), hk, rd)
				}
				return
			}
			want := 1
			if len(a) == 3 {
				n, _ := strconv.Atoi(a[2])
				want = min(n, len(before))
			}
			if len(popped) != want || !distinct(popped) || !subset(popped, before) {
				t.Errorf("%s popped %q from %q", strings.Join(a, " "), popped, before)
			}
			if rd := p.rdOnly(cat([]string{"SREM", k}, popped...)...); rd != ":"+strconv.Itoa(len(popped))+"\r\n" {
				t.Errorf("mirroring %s: SREM replied %q", strings.Join(a, " "), rd)
			}
			exact("SCARD", k)
		},
		func() { // SRANDMEMBER: shape, distinctness, membership
			k := key()
			a := []string{"SRANDMEMBER", k}
			if rng.IntN(4) > 0 {
				a = append(a, count())
			}
			note(a)
			hk, rd := p.do(a...)
			it, _ := parseResp(hk)
			got, isAgg := it.bulks()
			if it.Bulk != nil {
				got, isAgg = []string{*it.Bulk}, true
			}
			if !isAgg || len(got) == 0 {
				if hk != rd {
					t.Errorf("%s\n hotkv %q\n redis %q", strings.Join(a, " "), hk, rd)
				}
				return
			}
			all := smembers(k)
			n := 1
			if len(a) == 3 {
				n, _ = strconv.Atoi(a[2])
			}
			wantLen := n
			if n > 0 {
				wantLen = min(n, len(all))
			} else {
				wantLen = -n
			}
			if len(got) != wantLen || !subset(got, all) || (n > 0 && !distinct(got)) {
				t.Errorf("%s returned %q from %q", strings.Join(a, " "), got, all)
			}
			if n >= len(all) && sortedReply(hk) != sortedReply(rd) {
				t.Errorf("%s (whole set)\n hotkv %q\n redis %q", strings.Join(a, " "), hk, rd)
			}
		},
		func() { // RESP3: set replies are sets on both
			k := key()
			args := [][]string{{"SMEMBERS", k}, cat([]string{"SINTER"}, keyList(1, 3)...), cat([]string{"SUNION"}, keyList(1, 3)...),
				cat([]string{"SDIFF"}, keyList(1, 3)...), {"SPOP", "nokey", "3"}, {"SRANDMEMBER", "nokey", "3"}, {"SISMEMBER", k, member()}}[rng.IntN(7)]
			note(args)
			hk, rd := p3.do(args...)
			if sortedReply(hk) != sortedReply(rd) {
				t.Errorf("RESP3 %s\n hotkv %q\n redis %q", strings.Join(args, " "), hk, rd)
			}
		},
	}
	rounds := 4000
	if testing.Short() {
		rounds = 800
	}
	for i := 0; i < rounds && !t.Failed(); i++ {
		gens[rng.IntN(len(gens))]()
	}
	// the final state: every key's members and digest
	for _, k := range keys {
		sorted("SMEMBERS", k)
		exact("DEBUG", "DIGEST-VALUE", k)
	}
}

// newPair3 opens a second connection to each server of p, switched to RESP3.
func newPair3(t *testing.T, p *pair) *pair {
	q := &pair{t: t}
	q.hk, q.rd = dialLike(t, p.hk), dialLike(t, p.rd)
	q.hkbr, q.rdbr = newReader(q.hk), newReader(q.rd)
	q.do("HELLO", "3")
	return q
}

// hkOnly and rdOnly send a command to one server.
func (p *pair) hkOnly(args ...string) string {
	p.t.Helper()
	if _, err := p.hk.Write(encode(args)); err != nil {
		p.t.Fatal(err)
	}
	return p.read(p.hk, p.hkbr, args)
}

func (p *pair) rdOnly(args ...string) string {
	p.t.Helper()
	if _, err := p.rd.Write(encode(args)); err != nil {
		p.t.Fatal(err)
	}
	return p.read(p.rd, p.rdbr, args)
}

// sscanAll iterates SSCAN (args with cursor at index 2) to the end on one
// server and returns the sorted distinct members.
func sscanAll(t *testing.T, p *pair, hotkv bool, args []string) string {
	seen := map[string]bool{}
	a := slices.Clone(args)
	for n := 0; n < 100000; n++ {
		var r string
		if hotkv {
			r = p.hkOnly(a...)
		} else {
			r = p.rdOnly(a...)
		}
		it, _ := parseResp(r)
		if len(it.Kids) != 2 || it.Kids[0].Bulk == nil {
			t.Fatalf("bad SSCAN reply %q", r)
		}
		ms, _ := it.Kids[1].bulks()
		for _, m := range ms {
			seen[m] = true
		}
		a[2] = *it.Kids[0].Bulk
		if a[2] == "0" {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.Sort(out)
	return strings.Join(out, "|")
}

func distinct(ms []string) bool {
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m] {
			return false
		}
		seen[m] = true
	}
	return true
}

func subset(ms, of []string) bool {
	in := map[string]bool{}
	for _, m := range of {
		in[m] = true
	}
	for _, m := range ms {
		if !in[m] {
			return false
		}
	}
	return true
}

// dialLike opens another connection to the server c is connected to.
func dialLike(t *testing.T, c net.Conn) net.Conn {
	nc, err := net.Dial(c.RemoteAddr().Network(), c.RemoteAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

func encode(args []string) []byte { return hotkvtest.EncodeCommand(args...) }

func setSeed() uint64 {
	if v, err := strconv.ParseUint(os.Getenv("SETSEED"), 10, 64); err == nil {
		return v
	}
	return 23
}
