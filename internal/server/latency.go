package server

import (
	"math"
	"math/bits"
	"strconv"
)

// latencyHist is a log-linear histogram of command durations in nanoseconds:
// exact below 128 ns, then 64 sub-buckets per power of two (under 1.6% relative
// error, close to the 2 significant digits of the HdrHistogram Redis uses).
// Percentiles report a bucket's highest equivalent value, so they never
// understate a latency.
type latencyHist struct {
	counts []uint64
	total  uint64
}

const (
	histExact = 128
	histSub   = 64
)

func histIndex(v uint64) int {
	if v < histExact {
		return int(v)
	}
	e := bits.Len64(v) - 7 // v>>e in [64, 127]
	return histExact + (e-1)*histSub + int(v>>uint(e)) - histSub
}

// histHighest is the largest value that lands in bucket i.
func histHighest(i int) uint64 {
	if i < histExact {
		return uint64(i)
	}
	i -= histExact
	e := i/histSub + 1
	m := uint64(i%histSub + histSub)
	return (m+1)<<uint(e) - 1
}

func (h *latencyHist) record(ns uint64) {
	i := histIndex(ns)
	if i >= len(h.counts) {
		n := max(2*len(h.counts), i+1, 256)
		grown := make([]uint64, n)
		copy(grown, h.counts)
		h.counts = grown
	}
	h.counts[i]++
	h.total++
}

// percentile returns the value at percentile p (0..100).
func (h *latencyHist) percentile(p float64) uint64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return histHighest(i)
		}
	}
	return histHighest(len(h.counts) - 1)
}

// recordLatency adds one command's duration (Redis records at least 1 µs).
func (s *Server) recordLatency(id int, us int64) {
	if !s.latencyTracking.Load() {
		return
	}
	h := &s.latency[id]
	h.record(uint64(max(us, 1)) * 1000)
}

// infoLatencystats is INFO latencystats: latency_percentiles_usec_<cmd> lines.
func (s *Server) infoLatencystats(b []byte) []byte {
	if !s.latencyTracking.Load() {
		return b
	}
	pcts := s.cfg.LatencyPercentiles()
	for id := range s.latency {
		h := &s.latency[id]
		if h.total == 0 {
			continue
		}
		b = append(b, "latency_percentiles_usec_"...)
		b = append(b, s.table.ByID(id).FullName()...)
		b = append(b, ':')
		for j, p := range pcts {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, 'p')
			b = strconv.AppendFloat(b, p, 'f', -1, 64)
			b = append(b, '=')
			b = strconv.AppendFloat(b, float64(h.percentile(p))/1000, 'f', 3, 64)
		}
		b = append(b, "\r\n"...)
	}
	return b
}
