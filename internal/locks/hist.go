package locks

import "math"

// Bounds are the upper bounds (µs) of a Histogram's buckets: 100 µs to 10 min,
// about three to a decade, as a Prometheus histogram's le labels (seconds)
// show them. A value past the last one falls in the +Inf bucket.
var Bounds = [...]int64{
	100, 250, 500,
	1e3, 2500, 5e3,
	1e4, 25e3, 5e4,
	1e5, 25e4, 5e5,
	1e6, 25e5, 5e6,
	1e7, 3e7, 6e7,
	12e7, 3e8, 6e8,
}

// Histogram counts durations (µs) in Bounds' buckets.
type Histogram struct {
	Counts [len(Bounds) + 1]int64 // the last one is +Inf
	Count  int64
	SumUs  int64
	Zeros  int64 // samples of exactly 0 (in Counts[0] too): an uncontended acquisition's wait
}

// Add counts one duration; a negative one counts as 0.
func (h *Histogram) Add(us int64) {
	us = max(us, 0)
	if us == 0 {
		h.Zeros++
	}
	i := 0
	for i < len(Bounds) && us > Bounds[i] {
		i++
	}
	h.Counts[i]++
	h.Count++
	h.SumUs += us
}

// Quantile estimates the q-quantile (0 < q <= 1) in µs as Prometheus's
// histogram_quantile does: linear within the bucket that holds it, the lower
// bound of the +Inf bucket when it falls there; except that the samples of
// exactly 0 are known, so a rank among them is 0. 0 with no samples.
func (h *Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	if rank <= float64(h.Zeros) {
		return 0
	}
	var seen int64
	counts := h.Counts
	counts[0] -= h.Zeros // the first bucket's other samples lie in (0, Bounds[0]]
	seen = h.Zeros
	for i, n := range counts {
		if n == 0 || float64(seen+n) < rank {
			seen += n
			continue
		}
		if i == len(Bounds) {
			return float64(Bounds[len(Bounds)-1])
		}
		lo := 0.0
		if i > 0 {
			lo = float64(Bounds[i-1])
		}
		hi := float64(Bounds[i])
		return lo + (hi-lo)*math.Max(0, rank-float64(seen))/float64(n)
	}
	return float64(Bounds[len(Bounds)-1])
}
