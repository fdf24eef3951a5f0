package server

import "runtime/debug"

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
// amount freed since the last release starts one, at most every 10 s (each
// is a full collection).
func (s *Server) releaseAfterFrees(nowMs int64) {
	freed := s.ks.Freed - s.freedAtRelease
	if freed < bigFreeBytes || freed*4 < int64(s.usedMemory()) || nowMs-s.releaseMs < 10_000 {
		return
	}
	s.freedAtRelease, s.releaseMs = s.ks.Freed, nowMs
	s.releaseMemory()
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
		debug.FreeOSMemory()
		s.flushFrees.Add(1)
	}()
}
