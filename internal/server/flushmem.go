package server

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// flushFreeKeys is the number of keys a FLUSHALL or FLUSHDB must drop for the
// server to hand the freed memory back to the operating system at once. Below
// it the Go runtime's background scavenger does it at its own pace.
var flushFreeKeys = 10_000

// releaseAfterFlush is called by Flushing (under the engine lock, before the keys
// of a database of n keys are dropped). After a big flush the Go runtime keeps
// the freed heap: no collection runs until the program allocates again, and the
// scavenger returns pages slowly (BENCHMARKS.md "Memory per key": 165 MB of RSS
// kept after flushing 1M keys, where Redis gives back all but 12 MB). So for a
// big flush one goroutine waits for the engine lock (the flush and its batch are
// then over, so the old tables are unreachable), then runs
// debug.FreeOSMemory: a collection and a scavenge of every free page. The
// collection's marking is concurrent and short (little survives a flush); no
// command waits for it. At most one such goroutine runs at a time.
func (s *Server) releaseAfterFlush(n int) {
	if n < flushFreeKeys {
		return
	}
	s.releaseMemory()
}

// bigFreeBytes is how much the keyspace must have freed since the last
// release (by DEL, UNLINK, overwrites, expiry, eviction: keyspace.Freed) for
// the cron to hand the memory back at once, when it is also a quarter of the
// dataset or more: a deleted 5M-field hash left its 500 MB of RSS to the
// scavenger's pace, where Redis gives it back at once.
var bigFreeBytes int64 = 64 << 20

// releaseAfterFrees is the cron's check (engine lock held): a big enough
// amount freed since the last release starts one, at most every 10 s; so do
// free heap pages the runtime keeps (retainedFree), at most every 10 s after
// any release and no sooner than 100 times the last one's duration, up to a
// minute (each release is a full collection).
func (s *Server) releaseAfterFrees(nowMs int64) {
	freed := s.ks.Freed - s.freedAtRelease
	if freed >= bigFreeBytes && freed*4 >= int64(s.usedMemory()) && nowMs-s.freedReleaseMs >= 10_000 {
		s.freedAtRelease, s.freedReleaseMs, s.releaseMs = s.ks.Freed, nowMs, nowMs
		s.releaseMemory()
		return
	}
	if nowMs-s.releaseMs < max(10_000, min(100*s.releaseDurMs.Load(), 60_000)) || nowMs-s.retainedCheckMs < 1000 {
		return
	}
	s.retainedCheckMs = nowMs
	if retainedFree(&s.retained) {
		s.releaseMs = nowMs
		s.releaseMemory()
	}
}

// retainedFree reports whether the Go heap holds at least retainedMinBytes that a
// collection would hand back (garbage not collected yet and free pages not
// returned yet), an eighth of the live heap or more, while the server
// allocated little in each of the last two checks' seconds (under a
// sixty-fourth of that each: it is not about to reuse them). The runtime
// collects only when the program allocates, and returns free pages at its scavenger's pace only above its
// heap goal (twice the live heap), so memory let go without a DEL stayed in
// the RSS of an idle server: a 5M-field hash's tables, outgrown while it
// filled, and its load's garbage kept its RSS at 1.3 times its live heap,
// where Redis's allocator gives freed pages back within seconds. A read of
// four runtime counters, once a second. g is the server's own (servers in
// one process, as tests run them, each keep theirs).
var retainedFree = func(g *retainedGauge) bool {
	metrics.Read(g.samples[:])
	u := func(i int) int64 { return int64(g.samples[i].Value.Uint64()) }
	return g.verdict(u(0), u(1), u(2), u(3))
}

// retainedMinBytes is the least retainedFree hands back.
const retainedMinBytes = 32 << 20

// retainedGauge is retainedFree's rule over the runtime's counters: heap
// objects, free pages, the live heap at the last collection, and bytes
// allocated so far. It keeps the last check's allocations and quiet verdict,
// and the samples it reads them into. A server's cron owns its gauge.
type retainedGauge struct {
	lastAllocs int64
	lastQuiet  bool
	samples    [4]metrics.Sample
}

// newRetainedGauge names the counters the gauge reads.
func newRetainedGauge() retainedGauge {
	var g retainedGauge
	for i, name := range []string{
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/free:bytes",
		"/gc/heap/live:bytes",
		"/gc/heap/allocs:bytes",
	} {
		g.samples[i].Name = name
	}
	return g
}

func (g *retainedGauge) verdict(obj, free, live, allocs int64) bool {
	recent := allocs - g.lastAllocs
	back := max(obj-live, 0) + free
	quiet := recent*64 < back
	wasQuiet := g.lastQuiet
	g.lastAllocs, g.lastQuiet = allocs, quiet
	return back >= retainedMinBytes && back*8 >= live && quiet && wasQuiet
}

// releaseMemory starts the goroutine that hands free memory back to the
// operating system once the current batch has let the engine lock go; at
// most one runs at a time.
func (s *Server) releaseMemory() {
	if !s.flushFree.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.flushFree.Store(false)
		s.eng.Lock()
		s.eng.Unlock() //nolint:staticcheck // only waits for the flushing batch to end
		start := time.Now()
		debug.FreeOSMemory()
		s.releaseDurMs.Store(time.Since(start).Milliseconds())
		s.flushFrees.Add(1)
	}()
}
