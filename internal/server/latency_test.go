package server

import "testing"

// Buckets cover every value with the value's bucket's highest equivalent value at
// most 1/64 above it, and percentiles never understate.
func TestLatencyHistogram(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 129, 1000, 1007, 65535, 1 << 20, 123456789, 1 << 40} {
		i := histIndex(v)
		hi := histHighest(i)
		if hi < v || (v >= histExact && float64(hi-v) > float64(v)/64+1) {
			t.Errorf("v=%d: bucket %d highest %d", v, i, hi)
		}
		if i > 0 && histHighest(i-1) >= v {
			t.Errorf("v=%d fits an earlier bucket", v)
		}
	}
	var h latencyHist
	for i := 1; i <= 1000; i++ {
		h.record(uint64(i) * 1000) // 1..1000 µs in ns
	}
	for _, c := range []struct {
		p    float64
		want uint64
	}{{50, 500_000}, {99, 990_000}, {100, 1_000_000}} {
		got := h.percentile(c.p)
		if got < c.want || float64(got) > float64(c.want)*1.02 {
			t.Errorf("p%v = %d, want about %d (never less)", c.p, got, c.want)
		}
	}
}
