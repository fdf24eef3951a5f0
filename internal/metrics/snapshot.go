package metrics

import (
	"github.com/hotkv/hotkv/internal/introspect"
	"github.com/hotkv/hotkv/internal/locks"
)

// Snapshot is the server's state at one scrape.
type Snapshot struct {
	NowMs int64  // the server clock (Unix ms)
	Info  string // INFO everything
	// Config holds the parameters redis_exporter reads with CONFIG GET:
	// databases, maxclients, maxmemory, io-threads, repl-backlog-size,
	// client-output-buffer-limit
	Config     map[string]string
	SlowLen    int
	Slow       []introspect.SlowEntry // the newest entries, newest first
	Latency    []LatencyEvent         // LATENCY LATEST
	Histograms []CmdHistogram         // LATENCY HISTOGRAM of every command called
	Locks      LockView
}

// LatencyEvent is one row of LATENCY LATEST.
type LatencyEvent struct {
	Name         string
	Time, LastMs int64 // Unix seconds of the latest spike, and its length
	MaxMs        int64
}

// CmdHistogram is one command's LATENCY HISTOGRAM: calls and the cumulative
// counts at each bucket's upper bound (µs).
type CmdHistogram struct {
	Cmd   string
	Calls int64
	CDF   [][2]int64
}

// LockView is the lock view at the scrape (internal/locks).
type LockView struct {
	Held       int
	C          locks.Counters
	Hold, Wait locks.Histogram
	Top        []locks.KeyView // the most active keys
	Locks      []locks.Lock    // the locks held, oldest first (bounded by the server)
	TTLms      []int64         // Locks[i]'s TTL in ms (-1: none)
}
