package introspect

import "math/bits"

// HotkeysConfig is what HOTKEYS START asked for.
type HotkeysConfig struct {
	CPU, Net    bool  // the metrics tracked: CPU time (µs), network bytes
	Count       int   // the K of top K (1 to 64)
	DurationMs  int64 // stop by itself after this long; 0: when HOTKEYS STOP says
	SampleRatio int   // track a command's keys with probability 1/SampleRatio
}

// Hotkeys is one HOTKEYS session (Redis's hotkeyStats, hotkeys.c): the top
// keys by CPU time and by network bytes of the commands that name them, and
// totals. The server feeds it (Note) from its execution path while it is
// Active, and keeps it, stopped, until HOTKEYS RESET or the next START.
// HotKV has no cluster mode, so there are no selected slots (all of them
// are). Times come in as arguments; rnd decides sampling and the top-K's
// dice.
type Hotkeys struct {
	Cfg        HotkeysConfig
	CPUTop     *TopK // nil unless Cfg.CPU
	NetTop     *TopK // nil unless Cfg.Net
	StartMs    int64 // Unix ms
	Active     bool
	DurationMs int64 // as configured while active; how long it ran once stopped
	// the CPU time the process had used at the start (getrusage), for
	// GET's total-cpu-time-user-ms and -sys-ms
	StartUserUs, StartSysUs int64

	// all-commands-all-slots-us and net-bytes-all-commands-all-slots: every
	// command that named a key, sampled or not
	TimeAllUs, NetAll uint64
	// TrackUs is the time spent updating the top-K structures (INFO's
	// hotkeys-cmd-cpu-time, in ms)
	TrackUs int64

	rnd func() float64
}

// NewHotkeys starts a session at nowMs (hotkeyStatsCreate): each top-K keeps
// 10 times Count keys for accuracy, in a power of 2 of at least 100 times
// Count buckets.
func NewHotkeys(cfg HotkeysConfig, nowMs int64, rnd func() float64) *Hotkeys {
	h := &Hotkeys{Cfg: cfg, StartMs: nowMs, Active: true, DurationMs: cfg.DurationMs, rnd: rnd}
	buckets := nextPow2(cfg.Count * 100)
	if cfg.CPU {
		h.CPUTop = NewTopK(cfg.Count*10, buckets, 1.08, rnd)
	}
	if cfg.Net {
		h.NetTop = NewTopK(cfg.Count*10, buckets, 1.08, rnd)
	}
	return h
}

func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// Sampled rolls the dice for one command: whether its keys go into the top
// K (always with a ratio of 1).
func (h *Hotkeys) Sampled() bool {
	return h.Cfg.SampleRatio <= 1 || h.rnd() < 1/float64(h.Cfg.SampleRatio)
}

// Note counts one command that named keys (at least one), took cpuUs and
// moved netBytes (request and reply), spread evenly over its keys
// (hotkeyStatsUpdateCurrentCmd). The totals count it whether sampled or not.
func (h *Hotkeys) Note(keys [][]byte, cpuUs, netBytes int64, sampled bool) {
	if len(keys) == 0 {
		return
	}
	h.TimeAllUs += uint64(cpuUs)
	h.NetAll += uint64(netBytes)
	if !sampled {
		return
	}
	n := int64(len(keys))
	for _, k := range keys {
		if h.CPUTop != nil {
			h.CPUTop.Update(k, uint64(cpuUs/n))
		}
		if h.NetTop != nil {
			h.NetTop.Update(k, uint64(netBytes/n))
		}
	}
}

// Stop ends the session at nowMs; its results stay (HOTKEYS STOP, or the
// duration passed).
func (h *Hotkeys) Stop(nowMs int64) {
	h.Active = false
	h.DurationMs = nowMs - h.StartMs
}

// Expired reports whether an active session's duration has passed at nowMs.
func (h *Hotkeys) Expired(nowMs int64) bool {
	return h.Active && h.Cfg.DurationMs > 0 && nowMs-h.StartMs >= h.Cfg.DurationMs
}

// ElapsedMs is GET's collection-duration-ms.
func (h *Hotkeys) ElapsedMs(nowMs int64) int64 {
	if h.Active {
		return nowMs - h.StartMs
	}
	return h.DurationMs
}

// Top is a metric's top keys for GET: at most Cfg.Count, largest first,
// those with a count.
func (h *Hotkeys) Top(t *TopK) []TopKItem {
	l := t.List()
	n := 0
	for n < h.Cfg.Count && n < len(l) && l[n].Count != 0 {
		n++
	}
	return l[:n]
}

// MemBytes is the memory the session holds (hotkeysGetMemoryUsage).
func (h *Hotkeys) MemBytes() int {
	n := 200 // the session itself
	if h.CPUTop != nil {
		n += h.CPUTop.MemBytes()
	}
	if h.NetTop != nil {
		n += h.NetTop.MemBytes()
	}
	return n
}
