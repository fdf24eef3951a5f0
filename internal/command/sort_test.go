package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"math/rand/v2"
	"slices"
	"testing"
)

// keyspace.ZSet is what SORT reads sorted sets through.
var _ SortableZSet = (*keyspace.ZSet)(nil)

// sort.c: weights are parsed by fast_float_strtod up to the first NUL.
func TestSortScore(t *testing.T) {
	for _, c := range []struct {
		in string
		f  float64
		ok bool
	}{
		{"", 0, true}, {"1", 1, true}, {"-1.5", -1.5, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"1E-2", 0.01, true}, {"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
		{"1\x00junk", 1, true}, {"\x00", 0, true},
		{" 1", 0, false}, {"+1", 0, false}, {"0x10", 0, false}, {"nan", 0, false}, {"1e", 0, false},
		{"1e+", 0, false}, {".", 0, false}, {"-", 0, false}, {"abc", 0, false}, {"1e400", 0, false}, {"infin", 0, false},
	} {
		f, ok := sortScore([]byte(c.in))
		if ok != c.ok || (ok && f != c.f) {
			t.Errorf("sortScore(%q) = %v, %v; want %v, %v", c.in, f, ok, c.f, c.ok)
		}
	}
}

// pqsort must leave [lo, hi] exactly as a full sort would (distinct keys).
func TestPqsortRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		n := rng.IntN(100)
		keys := rng.Perm(n)
		want := slices.Clone(keys)
		slices.Sort(want)
		lo := rng.IntN(n + 1)
		hi := lo + rng.IntN(n+1-lo) - 1
		pqsort(n, func(i, j int) bool { return keys[i] < keys[j] },
			func(i, j int) { keys[i], keys[j] = keys[j], keys[i] }, lo, hi)
		for i := lo; i <= hi; i++ {
			if keys[i] != want[i] {
				t.Fatalf("n=%d range [%d,%d]: position %d = %d, want %d", n, lo, hi, i, keys[i], want[i])
			}
		}
	}
}
