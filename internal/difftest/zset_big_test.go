package difftest

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestDiffZSetBigTree is TestDiffZSetRandom at sizes where HotKV's sorted set
// is a B+tree of two and three levels (decision 0034): thousands of members
// with many tied scores, and a lex key whose scores are all 0. It compares
// every reply of rank windows, score and lex ranges with LIMIT, counts, ranks,
// updates, increments, pops and the range deletions (small ones, which go leaf
// by leaf, and large ones, which rebuild the tree), with whole-set reads along
// the way. Scores are multiples of 0.5 and LIMIT offsets are not negative:
// where 7.0 and 8.x differ (see TestDiffZSetRandom).
func TestDiffZSetBigTree(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	rng := rand.New(rand.NewPCG(34, 34))
	const space = 9000 // member names m0000..m8999
	member := func() string { return "m" + strconv.Itoa(1000+rng.IntN(space)) }
	score := func() string {
		s := strconv.Itoa(rng.IntN(400) - 200)
		if rng.IntN(4) == 0 {
			s += ".5"
		}
		return s
	}
	fill := func(key string, n int, lex bool) {
		for n > 0 {
			a := []string{"ZADD", key}
			for j := 0; j < 200 && n > 0; j, n = j+1, n-1 {
				if lex {
					a = append(a, "0", lexMember(rng))
				} else {
					a = append(a, score(), member())
				}
			}
			p.same(a...)
		}
	}
	fill("zb", 6000, false)
	fill("zl", 5000, true)
	bound := func() string {
		b := score()
		switch rng.IntN(8) {
		case 0:
			return "-inf"
		case 1:
			return "+inf"
		case 2, 3:
			return "(" + b
		}
		return b
	}
	lexBound := func() string {
		switch rng.IntN(10) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2, 3:
			return "(" + lexMember(rng)
		}
		return "[" + lexMember(rng)
	}
	limit := func(a []string) []string {
		if rng.IntN(2) == 0 {
			a = append(a, "LIMIT", strconv.Itoa(rng.IntN(400)), strconv.Itoa(rng.IntN(300)-1))
		}
		return a
	}
	rank := func() string { return strconv.Itoa(rng.IntN(12000) - 6000) }
	ws := func(a []string) []string {
		if rng.IntN(2) == 0 {
			a = append(a, "WITHSCORES")
		}
		return a
	}
	gens := []func() []string{
		func() []string { return ws([]string{"ZRANGE", "zb", rank(), rank()}) },
		func() []string { return ws([]string{"ZREVRANGE", "zb", rank(), rank()}) },
		func() []string { return limit(ws([]string{"ZRANGEBYSCORE", "zb", bound(), bound()})) },
		func() []string { return limit(ws([]string{"ZREVRANGEBYSCORE", "zb", bound(), bound()})) },
		func() []string { return []string{"ZCOUNT", "zb", bound(), bound()} },
		func() []string { return []string{"ZRANK", "zb", member()} },
		func() []string { return []string{"ZREVRANK", "zb", member()} },
		func() []string { return []string{"ZSCORE", "zb", member()} },
		func() []string { return []string{"ZMSCORE", "zb", member(), member(), member()} },
		func() []string {
			a := []string{"ZADD", "zb"}
			if rng.IntN(3) == 0 {
				a = append(a, []string{"NX", "XX", "GT", "LT", "CH"}[rng.IntN(5)])
			}
			for n := 1 + rng.IntN(20); n > 0; n-- {
				a = append(a, score(), member())
			}
			return a
		},
		func() []string { return []string{"ZINCRBY", "zb", score(), member()} },
		func() []string { return []string{"ZREM", "zb", member(), member(), member()} },
		func() []string {
			s := rng.IntN(6000)
			return []string{"ZREMRANGEBYRANK", "zb", strconv.Itoa(s), strconv.Itoa(s + rng.IntN(200))}
		},
		func() []string {
			lo := rng.IntN(400) - 200
			return []string{"ZREMRANGEBYSCORE", "zb", strconv.Itoa(lo), "(" + strconv.Itoa(lo+1+rng.IntN(3))}
		},
		func() []string {
			return []string{[]string{"ZPOPMIN", "ZPOPMAX"}[rng.IntN(2)], "zb", strconv.Itoa(rng.IntN(150))}
		},
		func() []string { return limit([]string{"ZRANGEBYLEX", "zl", lexBound(), lexBound()}) },
		func() []string { return limit([]string{"ZREVRANGEBYLEX", "zl", lexBound(), lexBound()}) },
		func() []string { return []string{"ZLEXCOUNT", "zl", lexBound(), lexBound()} },
		func() []string { return []string{"ZRANK", "zl", lexMember(rng)} },
		func() []string { return []string{"ZADD", "zl", "0", lexMember(rng), "0", lexMember(rng)} },
		func() []string { return []string{"ZREM", "zl", lexMember(rng), lexMember(rng)} },
		func() []string {
			a := lexMember(rng)
			return []string{"ZREMRANGEBYLEX", "zl", "[" + a, "(" + a + "c"}
		},
		func() []string {
			return limit([]string{"ZRANGESTORE", "dst", "zb", bound(), bound(), "BYSCORE"})
		},
		func() []string { return []string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"} },
		func() []string { return []string{"ZUNIONSTORE", "dst", "2", "zb", "dst", "WEIGHTS", "1", "2"} },
		func() []string { return []string{"ZCARD", "zb"} },
		func() []string { return []string{"ZCARD", "zl"} },
	}
	errs := 0
	for i := 0; i < 3000 && !t.Failed(); i++ {
		switch r := rng.IntN(200); {
		case r == 0:
			p.same("ZRANGE", "zb", "0", "-1", "WITHSCORES")
			p.same("ZRANGE", "zl", "0", "-1")
		case r == 1:
			// A large deletion (the tree rebuilds), then the set grows back.
			s := rng.IntN(2000)
			p.same("ZREMRANGEBYRANK", "zb", strconv.Itoa(s), strconv.Itoa(s+1500+rng.IntN(2000)))
			p.same("ZRANGE", "zb", "0", "-1", "WITHSCORES")
			fill("zb", 3000, false)
		case r == 2:
			a := lexMember(rng)[:2]
			p.same("ZREMRANGEBYLEX", "zl", "["+a, "("+a+"z")
			p.same("ZRANGE", "zl", "0", "-1")
			fill("zl", 1000, true)
		default:
			if r := p.same(gens[rng.IntN(len(gens))]()...); strings.HasPrefix(r, "-") {
				errs++
			}
		}
	}
	if errs > 0 {
		t.Errorf("%d commands answered with an error on both servers: the stream has a bad generator", errs)
	}
	t.Logf("zb %s members, zl %s", p.same("ZCARD", "zb"), p.same("ZCARD", "zl"))
	p.same("ZRANGE", "zb", "0", "-1", "WITHSCORES")
	p.same("ZRANGE", "zl", "0", "-1")
	p.same("ZRANGE", "dst", "0", "-1", "WITHSCORES")
	if n := strings.Count(p.same("ZRANGE", "zb", "0", "-1"), "\r\n"); n < 2000 {
		t.Errorf("zb ended with %d lines of reply: the test wants a big set", n)
	}
}

// lexMember is a random member of 3 to 5 letters from a small alphabet, so
// that lex bounds fall between, on and around members.
func lexMember(rng *rand.Rand) string {
	b := make([]byte, 3+rng.IntN(3))
	for i := range b {
		b[i] = "abcdefghij"[rng.IntN(10)]
	}
	return string(b)
}
