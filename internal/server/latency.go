package server

import (
	"math"
	"math/bits"
	"strconv"
)

// latencyHist is one command's latency histogram with the layout of the
// HdrHistogram Redis keeps per command (lowest 1 ns, highest 1 s, 2
// significant figures: 128 sub-buckets per power of two above 256 ns), so
// percentiles come out as Redis prints them (1 µs is "1.003", under 1 µs
// "0.001").
//
// Its counts are allocated whole at the command's first call, as Redis's are,
// and never grow: a histogram that grew with each slower outlier raised the
// server's memory baseline during a churn and so pushed an empty database
// over maxmemory. Durations arrive in whole microseconds, so only two kinds of
// index occur: 1 ns (a call under 1 µs, Redis's floor) and 1 µs..1 s. The
// indexes between them are never used and are not stored.
type latencyHist struct {
	counts []uint64 // counts[i-histFirst] for hdr index i >= histFirst
	subUs  uint64   // calls under 1 µs, recorded as 1 ns (hdr index 1)
	total  uint64
}

const (
	histMaxNs   = 1_000_000_000    // Redis's LATENCY_HISTOGRAM_MAX_VALUE
	histHalfMag = 7                // sub_bucket_half_count_magnitude for 2 significant figures
	histHalf    = 1 << histHalfMag // sub_bucket_half_count
)

var (
	histFirst = hdrIndex(1000) // 1 µs
	histLen   = hdrIndex(histMaxNs) + 1 - histFirst
)

// hdrBucket is the power-of-two bucket of v (HdrHistogram's get_bucket_index).
func hdrBucket(v uint64) int { return bits.Len64(v|(2*histHalf-1)) - (histHalfMag + 1) }

// hdrIndex is v's position in HdrHistogram's counts array.
func hdrIndex(v uint64) int {
	b := hdrBucket(v)
	return (b+1)*histHalf + int(v>>uint(b)) - histHalf
}

// hdrValueAt is the lowest value counted at index i (hdr_value_at_index).
func hdrValueAt(i int) uint64 {
	b, sub := i/histHalf-1, i%histHalf+histHalf
	if b < 0 {
		b, sub = 0, sub-histHalf
	}
	return uint64(sub) << uint(b)
}

// hdrHighest is the highest value equivalent to the lowest value v of a bucket.
func hdrHighest(v uint64) uint64 { return v + 1<<uint(hdrBucket(v)) - 1 }

// record counts one call of us microseconds (Redis: duration*1000 ns, clamped
// to 1 ns..1 s).
func (h *latencyHist) record(us int64) {
	if h.counts == nil {
		h.counts = make([]uint64, histLen)
	}
	h.total++
	if us <= 0 {
		h.subUs++
		return
	}
	ns := uint64(min(us, histMaxNs/1000)) * 1000
	h.counts[hdrIndex(ns)-histFirst]++
}

// percentile is hdr_value_at_percentile: the highest value equivalent to the
// bucket where the count reaches round(p% of the total), in nanoseconds.
func (h *latencyHist) percentile(p float64) uint64 {
	rank := uint64(math.Min(p, 100)/100*float64(h.total) + 0.5)
	rank = min(rank, h.total)
	if rank == 0 {
		return 0
	}
	if h.subUs >= rank {
		return hdrHighest(1)
	}
	seen := h.subUs
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			return hdrHighest(hdrValueAt(i + histFirst))
		}
	}
	return 0 // unreachable: the counts sum to total
}

// recordLatency adds one command's duration in microseconds.
func (s *Server) recordLatency(id int, us int64) {
	if !s.latencyTracking.Load() {
		return
	}
	s.latency[id].record(us)
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

// cdfCountsLen is the length of the counts array of Redis's histogram (1 ns
// to 1 s, 2 significant figures: 23 buckets), which bounds its iteration.
const cdfCountsLen = 24 * histHalf

// cdf is LATENCY HISTOGRAM's histogram_usec (Redis's fillCommandCDF over
// hdr_iter_log_init(h, 1024, 2)): for each reporting level L = 1024 ns·2^k
// the iterator stops at L's bucket, so each pair is the highest value
// equivalent to L in µs and the calls counted up to that bucket, listed when
// the count grew since the previous level. Calls slower than the last level
// Redis's counts reach (2^29 ns and its bucket) are in no pair, as there.
func (h *latencyHist) cdf() [][2]int64 {
	var out [][2]int64
	var prev uint64
	cum := h.subUs
	next := 0 // the next counts index not yet summed
	for level := uint64(1024); hdrIndex(level) < cdfCountsLen; level *= 2 {
		for upto := hdrIndex(level) - histFirst; next <= upto && next < len(h.counts); next++ {
			cum += h.counts[next]
		}
		if cum > prev {
			out = append(out, [2]int64{int64(hdrHighest(level) / 1000), int64(cum)})
			prev = cum
		}
		if cum >= h.total {
			break
		}
	}
	return out
}
