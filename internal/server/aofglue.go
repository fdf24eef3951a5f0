package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/server/aof"
)

// The append-only file is internal/server/aof (decision 0043); this file
// wires it to the server: a propagation target (the AOF stream), the reply
// barrier (appendfsync), the startup load through Apply, CONFIG SET
// appendonly, the commands (BGREWRITEAOF, WAITAOF, DEBUG LOADAOF) and the
// cron. Engine lock unless a method says otherwise.

// loadNowMs is the frozen time of the commands an AOF load applies: before
// every deadline, so that nothing expires while the AOF loads (Redis's
// keyIsExpired is false while loading): a key the file sets with a past
// PXAT, then increments, is one key that expires once the load is done, as
// in Redis. The active expiry cycle deletes what expired afterwards.
const loadNowMs = 1

func (s *Server) newAOF() *aof.AOF {
	return aof.New(aof.Deps{
		Config:      s.cfg,
		Log:         s.log,
		Clock:       s.clock,
		BaseStream:  s.rdb.AOFBaseStream,
		RunSnapshot: s.runSnapshot,
		Forked:      s.forked,
		Latency:     s.latencyEvent,
		ReplOffset:  s.repl.Offset,
		SetReplOffset: func(off int64) {
			s.repl.SetOffset(off)
		},
		KS: s.ks,
		Functions: func() []string {
			return libraries{s.scripts}.Codes()
		},
		LoadRDB: s.rdb.LoadAOFBase,
		Apply:   s.applyLoaded,
		Yield: func() error {
			s.eng.Lend()
			select {
			case <-s.shutdown:
				return aof.ErrStopped
			default:
				return nil
			}
		},
		UnitSeq:  s.UnitSeq,
		Release:  s.aofReleased,
		Loading:  s.rdb.SetLoading,
		Progress: s.rdb.SetLoaded,
	})
}

// applyLoaded runs one unit read from an AOF (the loader's fake client).
// Engine lock held.
func (s *Server) applyLoaded(db int, cmds [][][]byte) (int, error) {
	for _, argv := range cmds {
		if spec, _ := s.lookup(argv); spec == nil {
			return db, fmt.Errorf("Unknown command '%s'", argv[0])
		}
	}
	a := s.applyLocked(Unit{DB: db, Cmds: cmds, NowMs: loadNowMs})
	return a.DB, nil
}

// aofReleased runs when the AOF's writer made more units durable (any
// goroutine): the replies that waited go out, and WAITAOF clients are told.
func (s *Server) aofReleased() {
	s.ReleaseReplies()
	// WAITAOF clients are run again only when more was fsynced (a release
	// after a write alone would only block them again)
	if s.aofWaiting.Load() && s.aof.SyncedSeq() != s.aofWokeAt.Swap(s.aof.SyncedSeq()) {
		go func() {
			s.eng.Lock()
			s.wakeWaiters()
			s.eng.Unlock()
		}()
	}
}

// aofOn attaches the AOF to the stream and the reply barrier.
func (s *Server) aofOn() {
	s.AddPropagationTarget(s.aof, command.PropAOF)
	s.setReplyBarrierLocked(s.aof)
}

// aofOff detaches it.
func (s *Server) aofOff() {
	s.RemovePropagationTarget(s.aof)
	s.setReplyBarrierLocked(nil)
}

// loadAOFAtStartup is loadDataFromDisk with appendonly yes: the AOF's files
// (not the snapshot) are loaded, then the AOF opened for appending (a base
// file made of the dataset if there was none). Engine lock held.
func (s *Server) loadAOFAtStartup() error {
	if err := s.uncounted(s.aof.LoadAtStartup); err != nil {
		return err
	}
	s.stats.dirty = 0
	if !s.cfg.Bool("appendonly") {
		return nil // CONFIG SET appendonly no while it loaded
	}
	if err := s.aof.RestoreOffset(); err != nil {
		return err
	}
	if err := s.aof.OpenAtStart(); err != nil {
		return err
	}
	s.aofOn()
	return nil
}

// switchAOF is CONFIG SET appendonly's apply function (updateAppendonly).
func (s *Server) switchAOF(on bool) error {
	if on == s.aof.Enabled() || s.rdb.Loading() {
		return nil // while loading, the end of the load acts on the new value
	}
	if !on {
		s.aofOff()
		s.aof.Disable()
		s.wakeWaiters() // a WAITAOF waiting for a local fsync gets its error
		s.fackOff()
		return nil
	}
	s.aofOn() // the commands after the rewrite's snapshot go to its temporary file
	if err := s.aof.Enable(s.rdb.BGInProgress()); err != nil {
		s.aofOff()
		return errors.New("Unable to turn on AOF. Check server logs.")
	}
	s.fackEnabled(s.rs.offset.Load()) // a replica's stream offset, held by the first rewrite
	return nil
}

// BGRewriteAOF implements command.AOF.
func (s *Server) BGRewriteAOF() (status, errText string) {
	return s.aof.BGRewrite(s.rdb.BGInProgress())
}

// DebugLoadAOF implements command.AOF (DEBUG LOADAOF): the loaded commands
// feed no target (Redis turns the AOF off while it loads). A script of the
// file that runs past busy-reply-threshold serves the other clients of the
// caller's event loop (LOADING), as one run by a client does (loadCaller).
func (s *Server) DebugLoadAOF(caller *command.Client) string {
	s.loadCaller = s.clientOf(caller)
	defer func() { s.loadCaller = nil }()
	_ = s.aof.Flush()
	s.ks.FlushAll()
	s.scripts.vm.FlushFunctions()
	targets := s.prop.targets
	s.prop.targets = nil
	err := s.uncounted(s.aof.DebugLoad)
	s.prop.targets = targets
	if err != nil {
		return "ERR Error loading the AOF, check server logs."
	}
	s.stats.dirty = 0
	s.log.Info("Append Only File loaded by DEBUG LOADAOF")
	return ""
}

// WaitAOF implements command.AOF: WAITAOF numlocal numreplicas timeout
// (waitaofCommand). The local count is 1 once the AOF fsynced the client's
// last write; the replica count is how many replicas acknowledged its
// stream offset as fsynced to their own AOF (REPLCONF ACK ... FACK). Too few
// block the client until enough do, the timeout passes, or the AOF is turned
// off under a numlocal wait (an error, as Redis's
// processClientsWaitingReplicas).
func (s *Server) WaitAOF(c *command.Ctx, numLocal, numReplicas, timeoutMs int64) {
	if s.isReplica() {
		c.Error("ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.")
		return
	}
	if numLocal > 0 && !s.aof.Enabled() {
		c.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
		return
	}
	cl := s.clientOf(c.Client)
	local, replicas := int64(0), int64(0)
	// while the first rewrite of an AOF turned on live runs, nothing counts
	// as fsynced (Redis's AOF_WAIT_REWRITE: fsynced_reploff stays)
	if s.aof.State() == aof.On && (cl == nil || s.aof.Fsynced(cl.wseq)) {
		local = 1
	}
	if cl != nil {
		replicas = s.repl.AckedAOF(cl.woff)
	}
	reply := func() {
		c.W.ArrayLen(2)
		c.W.Int(local)
		c.W.Int(replicas)
	}
	if (local >= numLocal && replicas >= numReplicas) || cl == nil || c.NoBlock {
		reply()
		return
	}
	if !s.blockForAcks(c, cl, timeoutMs, numReplicas > 0) {
		reply()
		return
	}
	s.aofWaiting.Store(true)
	s.aof.WakeForFsync()
}

// aofWriteError is the AOF's part of writeCommandsDeniedByDiskError: the
// MISCONF text while the last write to the AOF failed, "" otherwise.
func (s *Server) aofWriteError() string {
	if !s.aof.Enabled() {
		return ""
	}
	if e := s.aof.WriteError(); e != "" {
		return "MISCONF Errors writing to the AOF file: " + strings.TrimPrefix(e, "write ")
	}
	return ""
}

// SetAOFFlushSleep implements command.AOF (DEBUG AOF-FLUSH-SLEEP).
func (s *Server) SetAOFFlushSleep(us int64) { s.aof.SetFlushSleep(us) }

// SetAOFRewriteDelay makes every later AOF rewrite wait d before writing its
// base file (tests: a rewrite that stays in progress). It takes the engine
// lock.
func (s *Server) SetAOFRewriteDelay(d time.Duration) {
	s.eng.Lock()
	s.aof.SetRewriteDelay(d)
	s.eng.Unlock()
}

// blessedKeys counts the keys protected from eviction (BLESS) in every
// database. Engine lock.
func (s *Server) blessedKeys() int {
	n := 0
	for _, db := range s.ks.DBs {
		n += db.Blessed()
	}
	return n
}

// uncounted runs load without leaving its commands in the statistics:
// Redis's AOF loader runs commands without call(), so commandstats,
// latencystats, errorstats, total_commands_processed and the keyspace hits
// and misses do not see them. Engine lock held.
func (s *Server) uncounted(load func() error) error {
	cmds := append([]cmdStat(nil), s.cmdStats...)
	lat := make([]latencyHist, len(s.latency))
	for i, h := range s.latency {
		lat[i] = latencyHist{counts: append([]uint64(nil), h.counts...), subUs: h.subUs, total: h.total}
	}
	errs := make(map[string]int64, len(s.errStats))
	for k, v := range s.errStats {
		errs[k] = v
	}
	commands, errReplies := s.stats.commands, s.stats.errorReplies
	hits, misses := s.ks.Stats.KeyspaceHits, s.ks.Stats.KeyspaceMisses
	err := load()
	copy(s.cmdStats, cmds)
	copy(s.latency, lat)
	s.errStats = errs
	s.stats.commands, s.stats.errorReplies = commands, errReplies
	s.ks.Stats.KeyspaceHits, s.ks.Stats.KeyspaceMisses = hits, misses
	return err
}
