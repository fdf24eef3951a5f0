package server

import (
	"fmt"
	"testing"
)

// The histogram reports what Redis's HdrHistogram (1 ns..1 s, 2 significant
// figures) reports: values seen in Redis's INFO latencystats, and for a call
// over 1 s the last bucket's highest value (1 s is 238<<22 ns, so its bucket
// ends at 239<<22-1).
func TestLatencyHistogramMatchesRedis(t *testing.T) {
	for _, c := range []struct {
		us   int64
		want string
	}{
		{0, "0.001"}, {1, "1.003"}, {2, "2.007"}, {3, "3.007"}, {4, "4.015"},
		{5, "5.023"}, {10, "10.047"}, {21, "21.119"}, {35, "35.071"},
		{58, "58.111"}, {131, "131.071"}, {167, "167.935"},
		{524, "524.287"}, {720, "720.895"}, {757, "757.759"}, {1044, "1044.479"},
		{5341, "5341.183"}, {69730, "69730.303"},
		{1_000_000, "1002438.655"}, {5_000_000, "1002438.655"}, // clamped to 1 s
	} {
		var h latencyHist
		h.record(c.us)
		for _, p := range []float64{50, 99, 99.9, 100} {
			if got := fmt.Sprintf("%.3f", float64(h.percentile(p))/1000); got != c.want {
				t.Errorf("%d µs: p%v = %s, want %s", c.us, p, got, c.want)
			}
		}
	}
}

// Percentiles use Redis's rank, round(p% of the count), and its edges.
func TestLatencyPercentiles(t *testing.T) {
	var h latencyHist
	if h.percentile(50) != 0 {
		t.Fatal("empty histogram")
	}
	for us := int64(1); us <= 100; us++ {
		h.record(us)
	}
	for _, c := range []struct {
		p    float64
		want uint64
	}{{0, 0}, {0.4, 0}, {0.5, 1003}, {50, 50_175}, {99, 99_327}, {100, 100_351}, {150, 100_351}} {
		if got := h.percentile(c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	h.record(0)
	if got := h.percentile(0.5); got != 1 {
		t.Errorf("a sub-µs call first: p0.5 = %d, want 1", got)
	}
}

// The counts are allocated at the first call and never again: a slow outlier
// must not grow the server's memory (it raised the baseline under maxmemory).
func TestLatencyHistogramFixedSize(t *testing.T) {
	var h latencyHist
	h.record(0)
	if len(h.counts) != histLen || histLen*8 > 21<<10 {
		t.Fatalf("counts: %d entries", len(h.counts))
	}
	first := &h.counts[0]
	if n := testing.AllocsPerRun(100, func() {
		for _, us := range []int64{0, 1, 999, 123456, 1e6, 1e9} {
			h.record(us)
		}
	}); n != 0 || &h.counts[0] != first {
		t.Fatalf("record allocated %v times", n)
	}
}
