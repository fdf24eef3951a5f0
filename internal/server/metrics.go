package server

import "github.com/hotkv/hotkv/internal/server/aof"

// instMetric is Redis's instantaneous metric (server.c trackInstantaneousMetric):
// each cron tick adds one sample, and the metric is the mean of the last 16.
type instMetric struct {
	samples  [16]float64
	idx      int
	lastVal  int64
	lastBase int64
}

// track records (val-last)*factor/(base-lastBase): a rate when base is a time.
func (m *instMetric) track(val, base int64, factor float64) {
	if m.lastBase != 0 && base > m.lastBase {
		m.samples[m.idx] = float64(val-m.lastVal) * factor / float64(base-m.lastBase)
		m.idx = (m.idx + 1) % len(m.samples)
	}
	m.lastVal, m.lastBase = val, base
}

func (m *instMetric) mean() float64 {
	var sum float64
	for _, s := range m.samples {
		sum += s
	}
	return sum / float64(len(m.samples))
}

// instantaneous holds the sampled metrics; touched only on cron ticks and by
// INFO, both under the engine lock.
type instantaneous struct {
	ops, in, out, cycles, elDur instMetric
}

// cronTick runs hz times a second under the engine lock (engine.RunCron): it
// samples the instantaneous metrics and the memory peak.
func (s *Server) cronTick(startUs int64) {
	now := s.clock.NowUs()
	ms := now / 1000
	s.inst.ops.track(s.stats.commands, ms, 1000)
	ns := &s.net.Stats
	s.inst.in.track(ns.NetInput.Load(), ms, 1000.0/1024)
	s.inst.out.track(ns.NetOutput.Load(), ms, 1000.0/1024)
	cycles := ns.Loop.Cycles.Load()
	s.inst.cycles.track(cycles, now, 1e6)
	s.inst.elDur.track(ns.Loop.DurSum.Load(), cycles, 1)
	s.notePeak(s.usedMemory())
	s.followClientMemory()
	s.releaseAfterFrees(ms)
	s.trk.Cron()
	s.repl.Cron()
	s.rdb.Cron()
	waiting := s.aof.State() == aof.WaitRewrite
	s.aof.Cron(s.rdb.BGInProgress())
	if waiting && s.aof.State() == aof.On {
		s.wakeWaiters() // WAITAOF counts the local fsync from now on
	}
	s.migrateCron()
	s.hotkeysCron(ms)
	s.expireOwnKeys()
	s.failoverCron(ms)
	s.startDueSyncs(ms)
	// in Redis the cron runs inside an event-loop cycle; here it has its own
	// goroutine, so its tick counts as one cycle of its own
	d := s.clock.NowUs() - startUs
	s.cronSum.Add(d)
	ns.Loop.Cycle(d, 0, 0)
}

// notePeak updates used_memory_peak and its time.
func (s *Server) notePeak(used uint64) {
	if used > s.memPeak {
		s.memPeak = used
		s.memPeakTime = s.clock.NowMs() / 1000
	}
}
