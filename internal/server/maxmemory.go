package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
	"unsafe"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// maxmemory (Redis's evict.c and processCommand's OOM rule). With maxmemory
// set, every command first runs performEvictions: when used memory is over
// the limit, the policy evicts keys until the estimate is back under it (or
// the tenacity time limit passes: a background loop then goes on evicting);
// under noeviction, or when nothing is evictable, denyoom commands get
// Redis's OOM error and no key is touched. With maxmemory 0 none of this
// runs.
//
// Used memory (decision 0022) is what INFO's used_memory reports and what
// eviction acts on:
//
//	used = live heap marked by the last GC
//	     + bytes allocated since that GC (at least the estimated bytes of
//	       the keys stored since: keyspace.Keyspace.Added, as the runtime's
//	       counter learns of small objects late)
//	     - estimated bytes of the keys deleted, expired, evicted or
//	       overwritten since that GC (keyspace.Keyspace.Freed, the MEMORY
//	       USAGE estimator), and of the buffers of the clients closed since
//	       (releaseClient)
//	     - the published tot-mem of the clients that client eviction
//	       disconnected and their owners have not closed yet (evictedMem)
//
// so an eviction lowers it at once, although the Go heap only shrinks at the
// next GC. The runtime counters are read at most once a millisecond. Garbage
// allocated since the last GC counts as used until a GC proves otherwise:
// when the estimate is over the limit and enough has been allocated since
// the last GC to explain the excess, performEvictions runs a GC first
// (gcMayExplain: when maxmemory/16 bytes were allocated since the last one,
// or when ten times the last forced GC's duration has passed; on a heap of
// 64 MB or more only from 64 KiB), and again, whatever the time, before it
// refuses writes (from 4 KiB), so garbage neither evicts live keys for long
// nor refuses writes. runtime/debug.SetMemoryLimit is tied
// to maxmemory (plus headroom) so that Go's garbage does not push the
// process far past the limit.

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// performEvictions results.
const (
	evictOK = iota
	evictRunning
	evictFail
)

// memAcct is the used-memory estimate's state; engine lock.
type memAcct struct {
	clientBudget int64  // the clients' buffers the Go memory limit leaves room for (followClientMemory)
	sampleUs     int64  // when the runtime counters were last read
	cycles       uint64 // GC cycles at the last read
	live         uint64 // /gc/heap/live:bytes of the last GC
	allocsAtGC   uint64 // /gc/heap/allocs:bytes when the last GC was first seen
	allocs       uint64 // /gc/heap/allocs:bytes at the last read
	freedAtGC    int64  // keyspace Freed when the last GC was first seen
	addedAtGC    int64  // keyspace Added when the last GC was first seen
	forceGC      bool   // a flush happened: collect before the next estimate
	settled      bool   // the running command reports used memory (forgetReportGarbage)
	reportMark   uint64 // allocs when it settled
	reportUsed   uint64 // used memory then: what the report shows
	evictAfter   bool   // maxmemory changed: evict once the command ends
	near         bool   // the last estimate was near maxmemory: read afresh
	lastGCUs     int64  // when the last forced GC ended (monoUs)
	forcedCycle  uint64 // the GC cycle collect ran
	lastGCDurUs  int64  // how long it took
	startup      uint64 // used memory when the server started serving
	released     int64  // buffers of closed clients, estimated (releaseClient)
	relAtGC      int64  // released when the last GC was first seen

	policy     keyspace.EvictPolicy
	pool       keyspace.EvictionPool
	procActive bool  // the background eviction loop runs (evictionTimeProc)
	exceededUs int64 // start of the current over-the-limit period, 0 = none
	exceedSum  int64 // total_eviction_exceeded_time, µs

	userLimit int64 // the Go memory limit before maxmemory set one
	limitSet  bool
}

var memSamples = []metrics.Sample{
	{Name: "/gc/cycles/total:gc-cycles"},
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/heap/allocs:bytes"},
}

// readMem reads the runtime counters (no stop-the-world). Engine lock.
func (s *Server) readMem() {
	metrics.Read(memSamples)
	cycles, live, allocs := memSamples[0].Value.Uint64(), memSamples[1].Value.Uint64(), memSamples[2].Value.Uint64()
	m := &s.mem
	if cycles != m.cycles || m.sampleUs == 0 {
		m.cycles, m.live, m.allocsAtGC, m.freedAtGC, m.relAtGC = cycles, live, allocs, s.ks.Freed, m.released
		m.addedAtGC = s.ks.Added
		if cycles == 0 { // no GC yet: everything allocated is in use
			m.allocsAtGC, m.freedAtGC, m.relAtGC, m.addedAtGC = 0, 0, 0, 0
		}
	}
	m.allocs = allocs
	m.sampleUs = monoUs()
}

// memEpoch anchors monoUs: the sampling interval and the eviction time limit
// are real time, whatever clock the server runs on (tests use a fake one).
var memEpoch = time.Now()

func monoUs() int64 { return int64(time.Since(memEpoch)/time.Microsecond) + 1 }

// collect runs a garbage collection now and re-anchors the estimate on it.
func (s *Server) collect() {
	start := monoUs()
	runtime.GC()
	// the allocation caches flushed: without it, bytes allocated before the
	// GC reach /gc/heap/allocs:bytes later and would count twice, in the
	// live figure and as allocated since
	s.flushedAllocs()
	s.mem.lastGCUs, s.mem.lastGCDurUs = monoUs(), monoUs()-start
	s.mem.forceGC = false
	s.mem.forcedCycle = s.mem.cycles
}

// mayCollect bounds the GCs the eviction pass forces to about a tenth of the
// time: the next may run once ten times the last one's duration has passed.
func (s *Server) mayCollect() bool {
	return monoUs()-s.mem.lastGCUs >= 10*s.mem.lastGCDurUs
}

// releaseClient counts the buffers of a client being closed as freed, as
// Redis's used_memory drops when freeClient frees them: without it, buffers
// that were live at the last GC (a dead client's half-read request, a slow
// subscriber's output) would count as used until the next GC, and eviction
// would take keys for them. Engine lock.
func (s *Server) releaseClient(cl *client) {
	s.uncount(cl)
	s.evictedMem.Add(-cl.mem.evicted.Swap(0)) // from now on counted in released
	n := int64(cl.w.Cap())
	if cl.nc != nil {
		n += cl.nc.Reader().Mem()
	}
	cl.push.mu.Lock()
	n += int64(cap(cl.push.buf) + cap(cl.push.self))
	cl.push.mu.Unlock()
	s.mem.released += n
}

// usedMemory is used_memory: see the file comment. Engine lock.
func (s *Server) usedMemory() uint64 {
	if s.mem.forceGC {
		s.collect()
	} else if s.mem.near || monoUs()-s.mem.sampleUs >= 1000 || s.mem.sampleUs == 0 {
		s.readMem()
	}
	// the allocation counter lags (small objects are counted when their span
	// cache is refilled): the keys stored since the GC are a floor for it
	since := max(int64(s.mem.allocs-s.mem.allocsAtGC), s.ks.Added-s.mem.addedAtGC)
	freed := (s.ks.Freed - s.mem.freedAtGC) + (s.mem.released - s.mem.relAtGC)
	used := uint64(max(int64(s.mem.live)+since-freed-s.evictedMem.Load(), 0))
	// near the limit every reading is fresh (about a microsecond), so that
	// one big write (a 200 KB SETBIT) is seen by the next command's eviction
	// pass, not a millisecond later
	maxmem := s.maxmemory()
	s.mem.near = maxmem > 0 && used+max(maxmem/16, 1<<20) >= maxmem
	return used
}

// reportHeapMax is the live heap under which INFO memory and MEMORY STATS
// collect the garbage before they report (settleForReport).
const reportHeapMax = 64 << 20

// settleForReport makes used_memory the live figure when the heap is small:
// a GC first, if 4 KiB or more were allocated since the last one (and at
// least a 1024th of the live heap: a GC's work grows with the heap, 50 ms at
// 50 MB, so a poller's INFO pays for one only once the garbage it would
// remove is worth it). Redis's used_memory never counts freed buffers;
// HotKV's estimate counts what was allocated since the last GC until a GC
// proves it garbage, so without this a client that reads used_memory, sets
// maxmemory a little above it and writes (as Redis's own tests do, 100 KB
// above on a 1.5 MB heap) would find the garbage of the commands before
// taken for data. From 64 MB INFO reports the estimate as it stands. Then
// it marks the allocation counter (span caches flushed, so the mark is
// exact), for forgetReportGarbage, and notes used memory (reportUsed): the
// report shows it as it was before the report's own allocations. Engine
// lock held.
func (s *Server) settleForReport() {
	s.mem.reportMark = s.flushedAllocs()
	if s.settleUsed() {
		s.mem.reportMark = s.mem.allocs // collect flushed and read them
	}
	s.mem.reportUsed = s.usedMemory()
	s.mem.settled = true
}

// settleUsed collects the garbage when the heap is small and enough was
// allocated since the last GC to matter (settleForReport's rule), and
// reports whether it did: used memory is then the live figure. Engine lock
// held.
func (s *Server) settleUsed() bool {
	if s.mem.live < reportHeapMax && s.allocatedSinceGC() >= max(4<<10, s.mem.live>>10) {
		s.collect()
		return true
	}
	return false
}

// forgetReportGarbage runs after a command that settled (INFO, MEMORY STATS,
// CONFIG SET maxmemory; also inside EXEC or a script): what it allocated
// since settleForReport's mark (INFO's text, its copy into the reply) is
// garbage once the reply is built, as Redis frees INFO's string before the
// next command, so it leaves the "allocated since the GC" figure; what was
// allocated before the mark stays. Counted as used until the next GC, that
// text made the eviction pass keep the live data some KB under the limit,
// and INFO's figure came within 4 KB of it only after minutes (Redis's
// maxmemory unit adds keys until it does). Engine lock held.
func (s *Server) forgetReportGarbage() {
	s.mem.settled = false
	cycles := s.mem.cycles
	report := s.flushedAllocs() - s.mem.reportMark
	if s.mem.cycles != cycles {
		// a GC ran during the report: all allocated since it is the report's
		s.mem.allocsAtGC = s.mem.allocs
		return
	}
	s.mem.allocsAtGC += report
}

// flushedAllocs flushes every P's allocation cache into the runtime's
// counters (ReadMemStats: a short stop-the-world; the counter otherwise learns
// of small objects only when a span is refilled), reads them, and returns
// the bytes allocated so far.
func (s *Server) flushedAllocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.readMem()
	return s.mem.allocs
}

// failUnlessGarbage is evict's last step before it refuses writes (nothing
// left to evict, or noeviction): a GC whatever the time bound, when at least
// 4 KiB were allocated since the last one and that could explain the excess,
// since a write must not be refused for garbage. Each such GC needs as many
// new bytes allocated as the excess that remains (and 4 KiB), so a client
// that keeps writing into a full server does not make one GC per command.
func (s *Server) failUnlessGarbage(maxmem uint64) int {
	if used := s.usedMemory(); used <= maxmem || s.collectIfGarbage(used, maxmem, true) <= maxmem {
		return evictOK
	}
	return evictFail
}

// collectIfGarbage runs a GC when the bytes allocated since the last one
// could explain used's excess over maxmem and the rule allows it (last: the
// step before a refusal, from 4 KiB whatever the time; else gcMayExplain),
// and returns used memory after it (used itself when it did not run).
func (s *Server) collectIfGarbage(used, maxmem uint64, last bool) uint64 {
	since := s.allocatedSinceGC()
	if since < used-maxmem || (last && since < 4<<10) || (!last && !s.gcMayExplain(since)) {
		if last && s.mem.live < reportHeapMax && s.mayCollect() {
			// before a refusal, on a small heap: what was live at the last
			// GC may be garbage now (a closed client's request, an argument
			// the last refusal dropped), which the allocations since cannot
			// show; a GC settles it, at most a tenth of the time
			s.collect()
			return s.usedMemory()
		}
		return used
	}
	s.collect()
	return s.usedMemory()
}

// gcMayExplain tells evict whether to collect before it evicts, given the
// bytes allocated since the last GC (at least the excess): once maxmemory/16
// bytes were allocated, or when the time bound allows (mayCollect). On a
// larger heap only once 64 KiB were allocated; on a small one (under
// reportHeapMax: a GC takes a few hundred microseconds) also below that,
// else a few KB of garbage over a limit set close to used_memory (Redis's own
// tests leave 100 KB) would evict keys for it.
func (s *Server) gcMayExplain(since uint64) bool {
	if since < 64<<10 && s.mem.live >= reportHeapMax {
		return false
	}
	return since >= s.maxmemory()/16 || s.mayCollect()
}

// allocatedSinceGC is what a GC could find to be garbage.
func (s *Server) allocatedSinceGC() uint64 { return s.mem.allocs - s.mem.allocsAtGC }

func (s *Server) maxmemory() uint64 { return uint64(s.hot.maxmemory.Load()) }

// evictionTimeLimitUs is Redis's tenacity curve: 0..10 linear up to 500 µs,
// then 15% a step, unlimited at 100.
func evictionTimeLimitUs(tenacity int64) int64 {
	switch {
	case tenacity <= 10:
		return 50 * tenacity
	case tenacity < 100:
		return int64(500 * math.Pow(1.15, float64(tenacity-10)))
	}
	return math.MaxInt64
}

// performEvictions is Redis's: it returns evictOK when memory is under the
// limit (or evicting is not allowed now), evictRunning when keys were evicted
// but the time limit stopped it before the limit was reached (the background
// loop goes on), evictFail when over the limit with nothing to evict.
// Engine lock held.
func (s *Server) performEvictions() int {
	if s.eng.Lent() || s.pauseActive() {
		// a busy script holds the dataset, or clients are paused: the
		// dataset must not change (isPerformEvictions); a fake OK
		return evictOK
	}
	result := s.evict()
	// total_eviction_exceeded_time / current_eviction_exceeded_time
	m := &s.mem
	if result != evictOK {
		if m.exceededUs == 0 {
			m.exceededUs = s.clock.NowUs()
		}
	} else if m.exceededUs != 0 {
		m.exceedSum += s.clock.NowUs() - m.exceededUs
		m.exceededUs = 0
	}
	return result
}

func (s *Server) evict() int {
	maxmem := s.maxmemory()
	if maxmem == 0 {
		return evictOK
	}
	used := s.usedMemory()
	if used <= maxmem {
		return evictOK
	}
	if used = s.collectIfGarbage(used, maxmem, false); used <= maxmem {
		return evictOK // the excess was garbage (see the file comment)
	}
	if s.mem.cycles != s.mem.forcedCycle && s.mem.live < reportHeapMax {
		// the live figure is the runtime's own GC's, which may have marked
		// while a burst of output was live (an eviction's invalidations for
		// tracking clients, not yet written, see resetReplyBuf): on a small
		// heap a GC of ours confirms an excess before keys go for it. No
		// time bound: there is at most one such GC per GC of the runtime's
		s.collect()
		if used = s.usedMemory(); used <= maxmem {
			return evictOK
		}
	}
	policy := s.mem.policy
	if policy == keyspace.NoEviction {
		return s.failUnlessGarbage(maxmem)
	}
	tofree := int64(used - maxmem)
	limitUs := evictionTimeLimitUs(s.cfg.Int("maxmemory-eviction-tenacity"))
	samples := int(s.cfg.Int("maxmemory-samples"))
	s.eng.BeginAt(s.clock.NowMs()) // LRU clock and deadlines at the current time
	start := monoUs()
	// the latency monitor's eviction-cycle (the whole pass) and
	// eviction-del (each key's deletion) events
	defer func() {
		s.latencyEvent("eviction-cycle", (monoUs()-start)/1000)
		if s.locks.HasPending() { // evicted locks: counted as removed
			s.checkLocks(s.clock.NowUs(), false)
		}
	}()
	timed := s.obs.thresholdMs.Load() != 0
	var freed int64
	for n := 1; freed < tofree; n++ {
		db, key, ok := s.ks.EvictionCandidate(&s.mem.pool, policy, samples, s.eng.Rand)
		if !ok {
			return s.failUnlessGarbage(maxmem)
		}
		var delStart int64
		if timed {
			delStart = monoUs()
		}
		// key is the table's own string: a copy per evicted key was garbage
		// counted as used until the next GC (a 1 KB key name, 1 KB more to
		// evict), and the next command's eviction pass took keys for it
		f, _ := db.Evict(unsafe.Slice(unsafe.StringData(key), len(key)))
		freed += f
		if timed {
			s.latencyEvent("evict-del", // Redis's name (DOCTOR looks for "eviction-del")
				(monoUs()-delStart)/1000)
		}
		if n%16 == 0 && monoUs()-start > limitUs {
			s.startEvictionProc()
			return evictRunning
		}
	}
	if s.mem.procActive {
		return evictRunning
	}
	return evictOK
}

// startEvictionProc starts evictionTimeProc: a loop that takes the engine
// lock for one time-limited performEvictions at a time until memory is under
// the limit or nothing is left to evict, letting clients run in between.
// Engine lock held.
func (s *Server) startEvictionProc() {
	if s.mem.procActive {
		return
	}
	s.mem.procActive = true
	go func() {
		for {
			runtime.Gosched()
			s.eng.Lock()
			s.mem.procActive = false // performEvictions restarts it when needed
			res := evictFail
			select {
			case <-s.shutdown:
			default:
				res = s.performEvictions()
			}
			if res == evictRunning {
				s.mem.procActive = true
			}
			s.eng.Unlock()
			if res != evictRunning {
				return
			}
		}
	}()
}

// rejectOnOOM is processCommand's maxmemory step: run performEvictions (any
// command, when maxmemory is set), then refuse denyoom commands (flags are
// admit's, EXEC's with its queue's) and, inside MULTI, every command but those
// that end it (queuing grows memory) when out of memory. It records the state
// for scripts (pre_command_oom_state). The eviction's own messages (tracking
// invalidations, keyspace events) to cl go before its reply: they are drained
// into its buffer here, and dispatch marks the reply's start after them.
func (s *Server) rejectOnOOM(cl *client, spec *command.Spec, flags command.Flag) bool {
	s.preCommandOOM = false
	return s.hot.maxmemory.Load() != 0 && s.oomAfterEvicting(cl, flags) // inlined: maxmemory 0 is the default
}

// oomAfterEvicting is rejectOnOOM with maxmemory set.
func (s *Server) oomAfterEvicting(cl *client, flags command.Flag) bool {
	evicted := s.ks.Stats.EvictedKeys
	if flags&command.ReportsMemory != 0 {
		// the report will settle the estimate (settleForReport): the pass
		// acts on the settled figure, as Redis's acts on the figure its
		// report shows. Without it, a GC inside the report could find more
		// live than the estimate the pass kept under the limit (a few KB
		// after a burst of writes), and INFO read over maxmemory until the
		// next command's pass
		s.settleUsed()
	}
	oom := s.performEvictions() == evictFail
	if s.ks.Stats.EvictedKeys != evicted {
		cl.drainPush()
	}
	// Redis 8: only denyoom commands are refused (EXEC when it queued one);
	// inside MULTI the others queue (7.x refused every command there)
	deny := flags&command.DenyOOM != 0
	if flags&command.RunsCommands != 0 {
		// EVAL and FCALL check the state as they start (their flags depend
		// on the script's shebang), EXEC's queued scripts too
		s.preCommandOOM = oom
	}
	return oom && deny
}

// applyMaxmemory follows maxmemory: the Go memory limit, and (as Redis 7.2+'s
// CONFIG SET maxmemory, startEvictionTimeProc) an eviction pass right after
// the command, before its reply is written (evictAfterCommand), not inside
// it. Inside it, a CONFIG SET in a MULTI would evict keys the transaction's
// next commands use (Redis: "1 OK 2" for INCR x, CONFIG SET maxmemory 1,
// INCR x), and the DELs would join the command's unit, wrapped in
// MULTI/EXEC, where Redis propagates each eviction as a unit of its own.
// Outside any command (the config file) the background loop evicts.
// Engine lock held.
func (s *Server) applyMaxmemory() {
	maxmem := s.maxmemory()
	m := &s.mem
	if maxmem == 0 {
		restoreMemoryLimit(m)
		return
	}
	if !m.limitSet {
		m.userLimit = debug.SetMemoryLimit(-1)
		m.limitSet = true
	}
	s.setGoMemoryLimit(maxmem)
	if s.prop.nesting == 0 {
		s.startEvictionProc()
		return
	}
	// a limit set a little under used_memory (Redis's tests take 40 KB off
	// INFO's figure) must evict that much, not that plus the garbage of the
	// commands since (INFO's own text among it): on a small heap the garbage
	// goes first, as INFO's figure was taken (settleForReport)
	s.settleForReport()
	s.mem.evictAfter = true
}

// evictAfterCommand runs the eviction pass a CONFIG SET maxmemory asked for,
// once the outermost command has ended (its propagation unit handed over)
// and before its reply goes out: Redis's time event runs in the same event
// loop iteration, before beforeSleep writes the replies, so the client sees
// the keys gone when it reads OK, and the eviction's messages (tracking
// invalidations) are written with it, not counted as used by the client's
// next command. Engine lock held.
func (s *Server) evictAfterCommand() {
	s.mem.evictAfter = false
	if s.performEvictions() == evictRunning {
		s.startEvictionProc()
	}
}

// applyPolicy follows maxmemory-policy: what Entry.Access holds and which
// keys may be evicted. Engine lock held.
func (s *Server) applyPolicy() {
	s.mem.policy = keyspace.ParseEvictPolicy(s.cfg.String("maxmemory-policy"))
	s.ks.SetAccessPolicy(s.mem.policy.Access())
	s.mem.pool.Reset()
}

// wireMaxmemory connects the maxmemory parameters; called by New.
func (s *Server) wireMaxmemory() {
	s.ks.Rand = s.eng.Rand
	s.ks.OverMaxmemoryAfterAlloc = func(more int) bool { // engine lock held: a command's insert
		maxmem := s.maxmemory()
		return maxmem > 0 && s.usedMemory()+uint64(more) > maxmem
	}
	s.ks.LFULogFactor = s.cfg.IntFunc("lfu-log-factor")
	s.ks.LFUDecayTime = s.cfg.IntFunc("lfu-decay-time")
	s.applyPolicy()
	s.cfg.OnChange("maxmemory-policy", func(string) error {
		s.applyPolicy()
		return nil
	})
	s.cfg.OnChange("maxmemory", func(string) error {
		s.applyMaxmemory()
		return nil
	})
}

// evictionExceeded is INFO's total_eviction_exceeded_time and
// current_eviction_exceeded_time, in ms.
func (s *Server) evictionExceeded() (total, current int64) {
	total = s.mem.exceedSum
	if s.mem.exceededUs != 0 {
		current = s.clock.NowUs() - s.mem.exceededUs
		total += current
	}
	return total / 1000, current / 1000
}

// setGoMemoryLimit sets the Go memory limit for maxmem: maxmem, headroom
// for the runtime and the garbage between collections, and the clients'
// buffers (clientBudget). The limit paces the collector only: a limit below
// the live heap makes it collect back to back, so the output a client does
// not read (bounded by client-output-buffer-limit and maxmemory-clients,
// not by maxmemory) must not count against it, or a few never-reading
// clients make every other client wait for the collector.
func (s *Server) setGoMemoryLimit(maxmem uint64) {
	m := &s.mem
	limit := int64(min(maxmem, math.MaxInt64/2))
	limit += max(limit/4, 64<<20) // headroom: runtime overhead, garbage between GCs
	limit += m.clientBudget
	debug.SetMemoryLimit(min(limit, m.userLimit))
}

// followClientMemory moves the Go memory limit with the clients' buffers
// (their published tot-mem, summed), in 8 MB steps. The cron calls it.
// Engine lock held.
func (s *Server) followClientMemory() {
	maxmem := s.maxmemory()
	if maxmem == 0 || !s.mem.limitSet {
		return
	}
	var sum int64
	s.mu.Lock()
	for _, cl := range s.clients {
		sum += cl.mem.tot.Load()
	}
	s.mu.Unlock()
	const step = 8 << 20
	sum = (sum + step - 1) / step * step
	if sum == s.mem.clientBudget {
		return
	}
	s.mem.clientBudget = sum
	s.setGoMemoryLimit(maxmem)
}

// restoreMemoryLimit gives back the Go memory limit that was in force before
// maxmemory set one.
func restoreMemoryLimit(m *memAcct) {
	if m.limitSet {
		debug.SetMemoryLimit(m.userLimit)
		m.limitSet = false
	}
}
