package metrics

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed status.html
var statusPage []byte

// Handler serves /metrics (Prometheus's text or protobuf format, with the Go
// runtime's and the process's metrics beside the server's), /status.json
// (the status page's figures) and / (the status page). src is called once
// per request.
func Handler(src func() *Snapshot) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(src), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	st := &status{src: src}
	mux.HandleFunc("GET /status.json", st.serve)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'")
		_, _ = w.Write(statusPage)
	})
	return mux
}

// Status is what /status.json returns: the live figures of the status page.
type Status struct {
	Version          string      `json:"version"`
	UptimeSec        int64       `json:"uptime_sec"`
	OpsPerSec        float64     `json:"ops_per_sec"` // over the last window (at least 1 s)
	P50us            float64     `json:"p50_us"`      // of the commands in that window
	P99us            float64     `json:"p99_us"`
	Commands         int64       `json:"commands"`
	UsedMemory       int64       `json:"used_memory"`
	Maxmemory        int64       `json:"maxmemory"`
	MaxmemoryPolicy  string      `json:"maxmemory_policy"`
	ConnectedClients int64       `json:"connected_clients"`
	BlockedClients   int64       `json:"blocked_clients"`
	Keys             int64       `json:"keys"`
	Slowlog          []SlowRow   `json:"slowlog"`
	SlowlogLen       int         `json:"slowlog_len"`
	Locks            StatusLocks `json:"locks"`
}

// SlowRow is a slow log entry as the page shows it.
type SlowRow struct {
	ID     int64  `json:"id"`
	Time   int64  `json:"time"`
	DurUs  int64  `json:"duration_us"`
	Cmd    string `json:"command"`
	Peer   string `json:"client"`
	Client string `json:"client_name"`
}

// StatusLocks is the lock table and counters.
type StatusLocks struct {
	Held        int       `json:"held"`
	Acquired    int64     `json:"acquired"`
	Contended   int64     `json:"contended"`
	Released    int64     `json:"released"`
	Stale       int64     `json:"released_stale"`
	Extended    int64     `json:"extended"`
	ExpiredHeld int64     `json:"expired_while_held"`
	Removed     int64     `json:"removed"`
	HoldP99us   float64   `json:"hold_p99_us"`
	WaitP99us   float64   `json:"wait_p99_us"`
	Table       []LockRow `json:"table"`
}

// LockRow is one held lock.
type LockRow struct {
	Key      string `json:"key"`
	DB       int    `json:"db"`
	Token    string `json:"token_digest"`
	AgeMs    int64  `json:"age_ms"`
	TTLms    int64  `json:"ttl_ms"`
	Refused  int64  `json:"refused"`
	Extended int64  `json:"extended"`
}

// status computes the window figures: operations per second and latency
// quantiles between the previous window's end and now, the window at least
// a second long whoever polls.
type status struct {
	src  func() *Snapshot
	mu   sync.Mutex
	prev window
	last Status // figures of the last closed window
}

type window struct {
	ms       int64
	commands int64
	cdfs     map[string][][2]int64 // LATENCY HISTOGRAM: command → (bound µs, calls at or below), bounds ascending
}

func (st *status) serve(w http.ResponseWriter, _ *http.Request) {
	s := st.src()
	out := st.compute(s)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}

// infoMap reads INFO's fields.
func infoMap(info string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// compute builds the Status of snapshot s.
func (st *status) compute(s *Snapshot) Status {
	f := infoMap(s.Info)
	cur := window{ms: s.NowMs, commands: atoi(f["total_commands_processed"]), cdfs: map[string][][2]int64{}}
	for _, h := range s.Histograms {
		cur.cdfs[h.Cmd] = h.CDF
	}
	st.mu.Lock()
	if st.prev.ms == 0 || cur.ms-st.prev.ms >= 1000 || cur.commands < st.prev.commands {
		if st.prev.ms != 0 && cur.ms > st.prev.ms && cur.commands >= st.prev.commands {
			st.last.OpsPerSec = float64(cur.commands-st.prev.commands) * 1000 / float64(cur.ms-st.prev.ms)
			st.last.P50us, st.last.P99us = windowQuantiles(st.prev.cdfs, cur.cdfs)
		} else {
			// no window yet: the server's own sampled rate (INFO's
			// instantaneous_ops_per_sec) and the latency since the start
			st.last.OpsPerSec, _ = strconv.ParseFloat(f["instantaneous_ops_per_sec"], 64)
			st.last.P50us, st.last.P99us = windowQuantiles(nil, cur.cdfs)
		}
		st.prev = cur
	}
	out := st.last
	st.mu.Unlock()

	out.Version = f["hotkv_version"]
	out.UptimeSec = atoi(f["uptime_in_seconds"])
	out.Commands = cur.commands
	out.UsedMemory = atoi(f["used_memory"])
	out.Maxmemory = atoi(f["maxmemory"])
	out.MaxmemoryPolicy = f["maxmemory_policy"]
	out.ConnectedClients = atoi(f["connected_clients"])
	out.BlockedClients = atoi(f["blocked_clients"])
	for k, v := range f {
		if n, ok := strings.CutPrefix(k, "db"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			if n, ok := fieldVal(strings.Split(v, ",")[0]); ok {
				out.Keys += int64(n)
			}
		}
	}
	out.SlowlogLen = s.SlowLen
	out.Slowlog = []SlowRow{}
	for _, e := range s.Slow {
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = string(a)
		}
		out.Slowlog = append(out.Slowlog, SlowRow{e.ID, e.Time, e.DurUs, strings.Join(args, " "), e.Peer, e.Client})
	}
	l := &s.Locks
	out.Locks = StatusLocks{Held: l.Held, Acquired: l.C.Acquired, Contended: l.C.Contended, Released: l.C.Released,
		Stale: l.C.Stale, Extended: l.C.Extended, ExpiredHeld: l.C.ExpiredHeld, Removed: l.C.Removed,
		HoldP99us: l.Hold.Quantile(0.99), WaitP99us: l.Wait.Quantile(0.99), Table: []LockRow{}}
	for i, k := range l.Locks {
		ttl := int64(-1)
		if i < len(l.TTLms) {
			ttl = l.TTLms[i]
		}
		out.Locks.Table = append(out.Locks.Table, LockRow{k.Key, k.DB, fmt.Sprintf("%016x", k.Digest), max(s.NowMs-k.AcquiredUs/1000, 0), ttl, k.Refusals, k.Extends})
	}
	return out
}

// windowQuantiles is p50 and p99 (µs, a bucket's upper bound) of the calls
// made between two sets of per-command cumulative histograms.
func windowQuantiles(prev, cur map[string][][2]int64) (p50, p99 float64) {
	seen := map[int64]bool{}
	var bounds []int64
	for _, cdf := range cur {
		for _, p := range cdf {
			if !seen[p[0]] {
				seen[p[0]] = true
				bounds = append(bounds, p[0])
			}
		}
	}
	if len(bounds) == 0 {
		return 0, 0
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	delta := make([]int64, len(bounds)) // calls in the window at or below bounds[i]
	for i, b := range bounds {
		for cmd, cdf := range cur {
			delta[i] += cumOf(cdf, b) - cumOf(prev[cmd], b)
		}
	}
	total := delta[len(delta)-1]
	if total <= 0 {
		return 0, 0
	}
	q := func(p float64) float64 {
		for i, d := range delta {
			if float64(d) >= p*float64(total) {
				return float64(bounds[i])
			}
		}
		return float64(bounds[len(bounds)-1])
	}
	return q(0.5), q(0.99)
}

// cumOf is a cumulative histogram's count at bound b: the count at the
// highest bound it lists at or below b (0 below its first).
func cumOf(cdf [][2]int64, b int64) int64 {
	var v int64
	for _, p := range cdf {
		if p[0] > b {
			break
		}
		v = p[1]
	}
	return v
}
