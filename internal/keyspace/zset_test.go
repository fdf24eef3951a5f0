package keyspace

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// zmodel is a naive sorted set: the reference the ZSet is checked against.
type zmodel map[string]float64

func (m zmodel) sorted() []ZEntry {
	out := make([]ZEntry, 0, len(m))
	for k, v := range m {
		out = append(out, ZEntry{[]byte(k), v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score < out[j].Score
		}
		return bytes.Compare(out[i].Member, out[j].Member) < 0
	})
	return out
}

func entriesString(es []ZEntry) string {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "%s=%v ", e.Member, e.Score)
	}
	return b.String()
}

// checkZSet compares every read path of z with the model.
func checkZSet(t *testing.T, z *ZSet, m zmodel) {
	t.Helper()
	checkTree(t, z)
	want := m.sorted()
	if z.Len() != len(want) {
		t.Fatalf("Len %d, want %d", z.Len(), len(want))
	}
	got := z.Entries(nil)
	if a, b := entriesString(got), entriesString(want); a != b {
		t.Fatalf("entries\n got  %s\n want %s", a, b)
	}
	for i, e := range want {
		r, s, ok := z.Rank(e.Member, false)
		if !ok || r != i || s != e.Score {
			t.Fatalf("Rank(%s) = %d %v %v, want %d", e.Member, r, s, ok, i)
		}
		r, _, _ = z.Rank(e.Member, true)
		if r != len(want)-1-i {
			t.Fatalf("rev Rank(%s) = %d", e.Member, r)
		}
		if s, ok := z.Score(e.Member); !ok || s != e.Score {
			t.Fatalf("Score(%s) = %v %v", e.Member, s, ok)
		}
	}
	if len(want) == 0 {
		return
	}
	// every rank window, both directions
	for start := 0; start < len(want); start += 1 + len(want)/7 {
		end := min(len(want)-1, start+len(want)/3)
		var fw, rv []ZEntry
		z.RangeByRank(start, end, false, func(mb []byte, s float64) { fw = append(fw, ZEntry{mb, s}) })
		z.RangeByRank(start, end, true, func(mb []byte, s float64) { rv = append(rv, ZEntry{mb, s}) })
		if a, b := entriesString(fw), entriesString(want[start:end+1]); a != b {
			t.Fatalf("RangeByRank(%d,%d)\n got  %s\n want %s", start, end, a, b)
		}
		for i := range rv {
			j := len(want) - 1 - start - i
			if !bytes.Equal(rv[i].Member, want[j].Member) {
				t.Fatalf("rev RangeByRank(%d,%d) at %d: %s want %s", start, end, i, rv[i].Member, want[j].Member)
			}
		}
	}
}

func TestZSetModel(t *testing.T) {
	for _, entries := range []int64{128, 0, 16} {
		t.Run(fmt.Sprint("entries=", entries), func(t *testing.T) {
			ks := New(1, 42)
			lim := ZLimits{Entries: entries, Value: 64}
			rng := rand.New(rand.NewPCG(1, uint64(entries)))
			z := ks.NewZSet(1, 1, lim)
			m := zmodel{}
			for step := 0; step < 3000; step++ {
				mem := []byte(fmt.Sprintf("m%d", rng.IntN(60)))
				score := float64(rng.IntN(20) - 10)
				if rng.IntN(4) == 0 {
					score += rng.Float64()
				}
				switch op := rng.IntN(10); {
				case op < 5:
					flags := []int{0, ZAddNX, ZAddXX, ZAddGT, ZAddLT, ZAddIncr}[rng.IntN(6)]
					out, ns := z.Add(mem, score, flags, lim)
					cur, exists := m[string(mem)]
					switch {
					case flags == ZAddNX && exists, flags == ZAddXX && !exists:
						if out != ZNop {
							t.Fatalf("flags %d out %d", flags, out)
						}
					case flags == ZAddGT && exists && score <= cur, flags == ZAddLT && exists && score >= cur:
						if out != ZNop {
							t.Fatalf("GT/LT out %d", out)
						}
					default:
						if flags == ZAddIncr {
							score += cur
						}
						m[string(mem)] = score
						if ns != score {
							t.Fatalf("newscore %v want %v", ns, score)
						}
					}
				case op < 7:
					_, exists := m[string(mem)]
					if z.Delete(mem) != exists {
						t.Fatalf("Delete(%s) != %v", mem, exists)
					}
					delete(m, string(mem))
				case op == 7 && z.Len() > 0:
					var got ZEntry
					max := rng.IntN(2) == 0
					z.Pop(max, func(mb []byte, s float64) { got = ZEntry{append([]byte(nil), mb...), s} })
					w := m.sorted()
					e := w[0]
					if max {
						e = w[len(w)-1]
					}
					if !bytes.Equal(got.Member, e.Member) || got.Score != e.Score {
						t.Fatalf("Pop(max=%v) = %s %v, want %s %v", max, got.Member, got.Score, e.Member, e.Score)
					}
					delete(m, string(e.Member))
				case op == 8:
					lo, hi := float64(rng.IntN(20)-10), float64(rng.IntN(20)-10)
					r := &ScoreRange{Min: lo, Max: hi, MinEx: rng.IntN(2) == 0, MaxEx: rng.IntN(2) == 0}
					var want []ZEntry
					for _, e := range m.sorted() {
						if r.gteMin(e.Score) && r.lteMax(e.Score) {
							want = append(want, e)
						}
					}
					if n := z.CountByScore(r); n != len(want) {
						t.Fatalf("CountByScore %+v = %d, want %d", r, n, len(want))
					}
					off, lim2 := rng.IntN(4), rng.IntN(6)-1
					var got []ZEntry
					z.RangeByScore(r, off, lim2, false, func(mb []byte, s float64) { got = append(got, ZEntry{mb, s}) })
					exp := want[min(off, len(want)):]
					if lim2 >= 0 && lim2 < len(exp) {
						exp = exp[:lim2]
					}
					if a, b := entriesString(got), entriesString(exp); a != b {
						t.Fatalf("RangeByScore %+v off %d lim %d\n got  %s\n want %s", r, off, lim2, a, b)
					}
					got = got[:0]
					z.RangeByScore(r, off, lim2, true, func(mb []byte, s float64) { got = append(got, ZEntry{mb, s}) })
					rw := make([]ZEntry, len(want))
					for i := range want {
						rw[i] = want[len(want)-1-i]
					}
					exp = rw[min(off, len(rw)):]
					if lim2 >= 0 && lim2 < len(exp) {
						exp = exp[:lim2]
					}
					if a, b := entriesString(got), entriesString(exp); a != b {
						t.Fatalf("rev RangeByScore %+v off %d lim %d\n got  %s\n want %s", r, off, lim2, a, b)
					}
					if rng.IntN(3) == 0 {
						if n := z.DeleteByScore(r); n != len(want) {
							t.Fatalf("DeleteByScore = %d, want %d", n, len(want))
						}
						for _, e := range want {
							delete(m, string(e.Member))
						}
					}
				case op == 9 && z.Len() > 0:
					a, b := rng.IntN(z.Len()), rng.IntN(z.Len())
					if a > b {
						a, b = b, a
					}
					w := m.sorted()
					if n := z.DeleteByRank(a, b); n != b-a+1 {
						t.Fatalf("DeleteByRank = %d", n)
					}
					for _, e := range w[a : b+1] {
						delete(m, string(e.Member))
					}
				}
				if step%50 == 0 || z.Len() < 5 {
					checkZSet(t, z, m)
				}
				if entries == 0 && z.IsCompact() && z.Len() > 0 {
					t.Fatal("compact with zset-max-listpack-entries 0")
				}
			}
			checkZSet(t, z, m)
			c := z.Clone().(*ZSet)
			if c.Encoding() != z.Encoding() {
				t.Fatal("Clone changed the encoding")
			}
			checkZSet(t, c, m)
		})
	}
}

func TestZSetLexRanges(t *testing.T) {
	ks := New(1, 1)
	for _, lim := range []ZLimits{{Entries: 128, Value: 64}, {}} {
		z := ks.NewZSet(1, 1, lim)
		words := []string{"alpha", "bar", "cool", "down", "elephant", "foo", "great", "hill", "omega"}
		for _, w := range words {
			z.Add([]byte(w), 0, 0, lim)
		}
		b := func(s string) LexBound {
			switch s {
			case "-":
				return LexBound{Inf: -1, Ex: true}
			case "+":
				return LexBound{Inf: 1, Ex: true}
			}
			return LexBound{Value: []byte(s[1:]), Ex: s[0] == '('}
		}
		for _, c := range []struct {
			min, max string
			n        int
		}{{"-", "+", 9}, {"+", "-", 0}, {"+", "[c", 0}, {"[c", "-", 0}, {"[bar", "+", 8}, {"[bar", "[foo", 5},
			{"[bar", "(foo", 4}, {"(bar", "[foo", 4}, {"(bar", "(foo", 3}, {"-", "(foo", 5}, {"(maxstring", "+", 1}} {
			r := &LexRange{b(c.min), b(c.max)}
			if n := z.CountByLex(r); n != c.n {
				t.Errorf("%s CountByLex(%s, %s) = %d, want %d", z.Encoding(), c.min, c.max, n, c.n)
			}
			if n := z.RangeByLex(r, 0, -1, false, func([]byte, float64) {}); n != c.n {
				t.Errorf("%s RangeByLex(%s, %s) = %d, want %d", z.Encoding(), c.min, c.max, n, c.n)
			}
		}
	}
}

func TestZSetScoresRoundTrip(t *testing.T) {
	ks := New(1, 1)
	lim := ZLimits{Entries: 128, Value: 64}
	z := ks.NewZSet(1, 1, lim)
	scores := []float64{0, math.Copysign(0, -1), 1, -1, 1 << 53, -(1 << 53), 1<<53 + 2, 0.1, math.Inf(1), math.Inf(-1),
		math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.25}
	for i, s := range scores {
		z.Add([]byte(fmt.Sprint("m", i)), s, 0, lim)
	}
	for i, s := range scores {
		got, ok := z.Score([]byte(fmt.Sprint("m", i)))
		if s == 0 {
			s = 0 // a listpack stores -0 as the integer 0, as Redis's does
		}
		if !ok || math.Float64bits(got) != math.Float64bits(s) {
			t.Errorf("score %v came back as %v", s, got)
		}
	}
	// the big encoding keeps the sign
	big := ks.NewZSet(1, 1, ZLimits{})
	big.Add([]byte("m"), math.Copysign(0, -1), 0, ZLimits{})
	if got, _ := big.Score([]byte("m")); !math.Signbit(got) {
		t.Errorf("skiplist lost the sign of -0")
	}
}

// ZADD and ZPOPMIN are redis-benchmark hot paths: updates, pops and range walks
// allocate nothing; a new member of a big set allocates its string, its dict
// entry (which holds the skiplist node) and, for one node in four, its levels.
func TestZSetAllocs(t *testing.T) {
	ks := New(1, 3)
	for _, lim := range []ZLimits{{Entries: 128, Value: 64}, {}} {
		z := ks.NewZSet(1, 8, lim)
		for i := 0; i < 100; i++ {
			z.Add([]byte(fmt.Sprintf("element:%d", i)), float64(i), 0, lim)
		}
		m := []byte("element:42")
		if n := testing.AllocsPerRun(200, func() {
			z.Add(m, 1000, 0, lim)
			z.Add(m, 42, 0, lim)
		}); n != 0 {
			t.Errorf("%s: score updates allocate %.1f", z.Encoding(), n)
		}
		if n := testing.AllocsPerRun(200, func() {
			z.RangeByRank(0, 10, true, func([]byte, float64) {})
			z.RangeByScore(&ScoreRange{Min: 3, Max: 50}, 2, 10, false, func([]byte, float64) {})
			z.CountByLex(&LexRange{Min: LexBound{Value: []byte("element:1")}, Max: LexBound{Inf: 1}})
			z.Rank(m, false)
		}); n != 0 {
			t.Errorf("%s: reads allocate %.1f", z.Encoding(), n)
		}
		var popped []byte
		pop := func(mb []byte, _ float64) { popped = append(popped[:0], mb...) }
		z.Pop(false, pop)
		n := testing.AllocsPerRun(200, func() {
			z.Add(popped, -1, 0, lim)
			z.Pop(false, pop)
		})
		if max := map[bool]float64{true: 0, false: 3}[z.IsCompact()]; n > max {
			t.Errorf("%s: add+pop allocates %.1f, want <= %v", z.Encoding(), n, max)
		}
	}
}

// Reserve changes nothing but the allocation.
func TestZSetReserveSameResult(t *testing.T) {
	ks := New(1, 7)
	lim := ZLimits{Entries: 128, Value: 64}
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		n := 2 + r.IntN(160)
		pairs := make([][]byte, 0, 2*n)
		scores := make([]float64, n)
		for j := range n {
			scores[j] = float64(r.IntN(1000)) / float64(1+r.IntN(3))
			pairs = append(pairs, []byte("s"), bytes.Repeat([]byte{'a' + byte(r.IntN(26))}, 1+r.IntN(70)))
		}
		a, b := ks.NewZSet(n, len(pairs[1]), lim), ks.NewZSet(n, len(pairs[1]), lim)
		b.Reserve(pairs, scores)
		for j, sc := range scores {
			oa, _ := a.Add(pairs[2*j+1], sc, 0, lim)
			ob, _ := b.Add(pairs[2*j+1], sc, 0, lim)
			if oa != ob {
				t.Fatalf("round %d: Add differs", round)
			}
		}
		if a.Encoding() != b.Encoding() || entriesString(a.Entries(nil)) != entriesString(b.Entries(nil)) {
			t.Fatalf("round %d: %s vs %s", round, a.Encoding(), b.Encoding())
		}
	}
}

// BenchmarkZSetAddBig is redis-benchmark's ZADD on a set of 100,000 members:
// "ZADD myzset <rand> element:<rand>" with independent random numbers, so
// most calls move an existing member and the rest insert one (skiplist
// searches on a set far bigger than the CPU caches).
func BenchmarkZSetAddBig(b *testing.B) {
	ks := New(1, 7)
	lim := ZLimits{Entries: 128, Value: 64}
	z := ks.NewZSet(1, 1, lim)
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 100000
	for i := 0; i < n; i++ {
		z.Add([]byte(fmt.Sprintf("element:%012d", i)), float64(rng.IntN(n)), 0, lim)
	}
	members := make([][]byte, 1<<16)
	scores := make([]float64, len(members))
	for i := range members {
		members[i] = []byte(fmt.Sprintf("element:%012d", rng.IntN(n)))
		scores[i] = float64(rng.IntN(n))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & (len(members) - 1)
		z.Add(members[j], scores[j], 0, lim)
	}
}
