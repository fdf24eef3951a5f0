package introspect

import (
	"fmt"
	"strings"
	"sync"
)

// SeriesLen is how many samples an event keeps (Redis's LATENCY_TS_LEN).
const SeriesLen = 160

// Sample is one second's worst latency of an event.
type Sample struct {
	Time int64 // Unix seconds; 0: an unused slot
	Ms   int64
}

// Series is one event's time series: the last SeriesLen seconds in which it
// passed the threshold, and its all-time maximum.
type Series struct {
	Event   string
	idx     int // the next slot
	Max     int64
	samples [SeriesLen]Sample
}

// Latest is the most recent sample.
func (s *Series) Latest() Sample { return s.samples[(s.idx+SeriesLen-1)%SeriesLen] }

// Samples returns the samples oldest first.
func (s *Series) Samples() []Sample {
	var out []Sample
	for j := 0; j < SeriesLen; j++ {
		if sm := s.samples[(s.idx+j)%SeriesLen]; sm.Time != 0 {
			out = append(out, sm)
		}
	}
	return out
}

// Latency is the latency monitor's events, in the order they first
// happened. It is safe for concurrent use: events come from the command
// path and from the AOF's writers alike.
type Latency struct {
	mu     sync.Mutex
	series []*Series
}

// Add records an event's latency at nowSec, as Redis's latencyAddSample:
// the caller has compared ms with latency-monitor-threshold. Within one
// second an event keeps its worst sample.
func (l *Latency) Add(event string, ms, nowSec int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.get(event)
	if s == nil {
		s = &Series{Event: event}
		l.series = append(l.series, s)
	}
	s.Max = max(s.Max, ms)
	prev := &s.samples[(s.idx+SeriesLen-1)%SeriesLen]
	if prev.Time == nowSec {
		prev.Ms = max(prev.Ms, ms)
		return
	}
	s.samples[s.idx] = Sample{Time: nowSec, Ms: ms}
	s.idx = (s.idx + 1) % SeriesLen
}

// Get returns a copy of an event's series (false when it never happened
// since the last reset). Event names match exactly, as Redis's dict lookup.
func (l *Latency) Get(event string) (Series, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.get(event); s != nil {
		return *s, true
	}
	return Series{}, false
}

func (l *Latency) get(event string) *Series {
	for _, s := range l.series {
		if s.Event == event {
			return s
		}
	}
	return nil
}

// All returns a copy of every event's series.
func (l *Latency) All() []Series {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Series, len(l.series))
	for i, s := range l.series {
		out[i] = *s
	}
	return out
}

// Reset drops the series of event (matched case-insensitively, as Redis's
// latencyResetEvent), or all of them when event is "", and says how many
// went.
func (l *Latency) Reset(event string, all bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.series[:0]
	n := 0
	for _, s := range l.series {
		if all || strings.EqualFold(s.Event, event) {
			n++
			continue
		}
		kept = append(kept, s)
	}
	clear(l.series[len(kept):])
	l.series = kept
	return n
}

// graphCols is the sparkline's width (LATENCY_GRAPH_COLS).
const graphCols = 80

// Graph is LATENCY GRAPH's text for s at nowSec (latencyCommandGenSparkeline).
func (s *Series) Graph(nowSec int64) string {
	var seq sparkline
	var lo, hi int64
	for i, sm := range s.Samples() {
		if i == 0 {
			lo, hi = sm.Ms, sm.Ms
		} else {
			lo, hi = min(lo, sm.Ms), max(hi, sm.Ms)
		}
		var label string
		switch elapsed := int32(nowSec - sm.Time); {
		case elapsed < 60:
			label = fmt.Sprintf("%ds", elapsed)
		case elapsed < 3600:
			label = fmt.Sprintf("%dm", elapsed/60)
		case elapsed < 3600*24:
			label = fmt.Sprintf("%dh", elapsed/3600)
		default:
			label = fmt.Sprintf("%dd", elapsed/(3600*24))
		}
		seq.add(float64(sm.Ms), label)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", s.Event, hi, lo, s.Max)
	b.WriteString(strings.Repeat("-", graphCols))
	b.WriteByte('\n')
	seq.render(&b, graphCols, 4, true)
	return b.String()
}

// stats is Redis's struct latencyStats for one event (analyzeLatencyForEvent).
type stats struct {
	allTimeHigh, avg, min, max, mad, samples, period int64
}

func (s *Series) analyze(nowSec int64) stats {
	st := stats{allTimeHigh: s.Max}
	var sum int64
	for _, sm := range s.Samples() {
		st.samples++
		if st.samples == 1 {
			st.min, st.max = sm.Ms, sm.Ms
		} else {
			st.min, st.max = min(st.min, sm.Ms), max(st.max, sm.Ms)
		}
		sum += sm.Ms
		if st.period == 0 || sm.Time < st.period {
			st.period = sm.Time
		}
	}
	if st.samples == 0 {
		return st
	}
	st.avg = sum / st.samples
	st.period = max(nowSec-st.period, 1)
	sum = 0
	for _, sm := range s.Samples() {
		d := st.avg - sm.Ms
		if d < 0 {
			d = -d
		}
		sum += d
	}
	st.mad = sum / st.samples
	return st
}
