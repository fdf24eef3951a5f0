package server

import (
	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// The methods below implement command.Server for connection and server commands.
// They run on the calling client's goroutine with the engine lock held.

var _ command.Server = (*Server)(nil)

// SetCopyAvoidance implements command.Server.
func (s *Server) SetCopyAvoidance(on bool) { s.copyAvoid.Store(on) }

// Warn implements command.Server.
func (s *Server) Warn(msg string) { s.log.Warn(msg) }

// ConfigGet implements CONFIG GET.
func (s *Server) ConfigGet(patterns []string) [][2]string { return s.cfg.Match(patterns...) }

// ConfigSet implements CONFIG SET (atomic over all pairs). Protected parameters
// follow enable-protected-configs, which may allow local clients only.
func (s *Server) ConfigSet(c *command.Client, pairs [][2]string) error {
	local := false
	s.mu.Lock()
	if cl := s.clients[c.ID]; cl != nil {
		local = isLocal(cl.raddr)
	}
	s.mu.Unlock()
	return s.cfg.SetFrom(local, pairs...)
}

// ConfigSensitive implements command.Server.
func (s *Server) ConfigSensitive(name string) bool { return s.cfg.Sensitive(name) }

// ConfigRewrite implements CONFIG REWRITE.
func (s *Server) ConfigRewrite() error { return s.cfg.Rewrite() }

// ResetStats implements CONFIG RESETSTAT.
func (s *Server) ResetStats() {
	for i := range s.cmdStats {
		s.cmdStats[i] = cmdStat{}
		s.latency[i] = latencyHist{}
	}
	s.errStats = map[string]int64{}
	s.errStatsOff = false
	s.locks.Reset()
	s.ks.Stats.ExpiredSubkeys, s.ks.Stats.ExpiredSubkeysActive, s.ks.Stats.ExpiredKeysActive = 0, 0, 0
	s.stats.commands, s.stats.errorReplies = 0, 0
	s.acl.Stats = acl.Stats{}
	s.stats.syncFull, s.stats.syncPartialErr, s.stats.syncPartialOK, s.stats.unexpectedErrors = 0, 0, 0, 0
	s.stats.forks, s.stats.latestForkUs = 0, 0
	s.stats.obufLimitDisconnects.Store(0)
	s.inst = instantaneous{}
	s.memPeak, s.memPeakTime = 0, 0
	s.net.Stats.Reset()
	s.cronSum.Store(0)
	s.stats.evictedClients.Store(0)
	s.ks.Stats.KeyspaceHits, s.ks.Stats.KeyspaceMisses, s.ks.Stats.ExpiredKeys = 0, 0, 0
	s.ks.Stats.EvictedKeys, s.mem.exceedSum = 0, 0
	s.ks.Stats.LazyFreed = 0
	if s.mem.exceededUs != 0 {
		s.mem.exceededUs = s.clock.NowUs()
	}
	s.eng.ExpireCycleCapHits, s.eng.ExpireCycleTimeUs = 0, 0
	s.rdb.ResetStats()
}

// Table returns the command table.
func (s *Server) Table() *command.Table { return s.table }

// LastSave is LASTSAVE (the start time: nothing has been saved).
func (s *Server) LastSave() int64 { return s.rdb.LastSave() }

// DBCount is the number of databases.
func (s *Server) DBCount() int { return len(s.ks.DBs) }

// ProtoMaxBulkLen is proto-max-bulk-len.
func (s *Server) ProtoMaxBulkLen() int64 { return s.limits.MaxBulkLen.Load() }

// LFU reports whether maxmemory-policy is an LFU policy.
func (s *Server) LFU() bool { return s.ks.AccessPolicy() == keyspace.AccessLFU }

// NowUs is the live server clock.
func (s *Server) NowUs() int64 { return s.clock.NowUs() }

// SetActiveExpire implements DEBUG SET-ACTIVE-EXPIRE.
func (s *Server) SetActiveExpire(on bool) { s.eng.SetActiveExpire(on) }
