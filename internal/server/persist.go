package server

import (
	"errors"
	"github.com/hotkv/hotkv/internal/rdb"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/server/persist"
)

// Persistence on disk is internal/server/persist (RDB snapshots); this file
// wires it to the server: the commands' API, the startup load, SHUTDOWN and
// the signals. Every method runs under the engine lock unless it says
// otherwise.

const errShutdown = "ERR Errors trying to SHUTDOWN. Check logs."

// errMisconf is persist.ErrMisconf, admission's MISCONF refusal.
const errMisconf = persist.ErrMisconf

// diskError is writeCommandsDeniedByDiskError: the MISCONF error that
// refuses writes after a failed background save or a failed write to the
// AOF; "" when writes are allowed.
func (s *Server) diskError() string {
	if s.rdb.WritesDenied() {
		return errMisconf
	}
	return s.aofWriteError()
}

// Persistence implements command.Server.
func (s *Server) Persistence() command.Persistence { return s.rdb }

// SetBGSaveDelay makes every later BGSAVE's background writer wait d before
// writing the file (tests: a BGSAVE that stays in progress). It takes the
// engine lock.
func (s *Server) SetBGSaveDelay(d time.Duration) {
	s.eng.Lock()
	s.rdb.SetBGSaveDelay(d)
	s.eng.Unlock()
}

// loadAtStartup starts serving clients (startNet) and loads the snapshot
// file, if any (persist.RDB.LoadAtStartup). It takes the engine lock before
// the first client can, and lends it every
// loading-process-events-interval-bytes of the file, so that clients get
// their LOADING error (or run what is allowed while loading); a shutdown in
// the meantime stops the load (persist.ErrLoadStopped).
func (s *Server) loadAtStartup(startNet func() error) error {
	s.eng.Lock()
	defer s.eng.Unlock()
	if err := startNet(); err != nil {
		return err
	}
	s.eng.Begin() // keys that expired before now are not loaded
	if s.cfg.Bool("appendonly") {
		return s.loadAOFAtStartup()
	}
	var expired []dbKey // keys left out as expired: DELs for the restored history
	s.rdb.ExpiredAtStartup = func(db int, key []byte) { expired = append(expired, dbKey{db, key}) }
	err := s.rdb.LoadAtStartup(func() error {
		s.eng.Lend()
		select {
		case <-s.shutdown:
			return persist.ErrLoadStopped
		default:
			return nil
		}
	})
	s.rdb.ExpiredAtStartup = nil
	if err == nil {
		s.restoreReplication(s.rdb.LoadedRepl, expired)
	}
	if err == nil && s.cfg.Bool("appendonly") {
		// CONFIG SET appendonly yes while the snapshot loaded: the AOF
		// starts now, from the loaded dataset
		err = s.switchAOF(true)
	}
	return err
}

// restoreReplication continues the history the snapshot loaded at startup
// recorded (loadDataFromDisk): a replica takes the id, offset and database
// back, to ask its master for a partial resync; a master keeps them as its
// replid2 up to the offset, with a backlog from there, so that its replicas
// continue.
//
// The keys the load left out because they had expired are deleted in the
// history too (a DEL each, UNLINK with lazyfree-lazy-expire, in the backlog
// after the restored offset: Redis's RDBFLAGS_FEED_REPL), so that a replica
// that continues gets them; past the backlog's size it cannot continue.
func (s *Server) restoreReplication(ri *rdb.ReplInfo, expired []dbKey) {
	if ri == nil {
		return
	}
	if host, _ := s.cfg.ReplicaOf(); host != "" {
		s.replID = ri.ID
		s.repl.ResetBacklog(ri.Offset)
		s.rs.db = ri.StreamDB
		return
	}
	s.replID2, s.secondOffset = ri.ID, ri.Offset+1
	s.repl.RestoreHistory(ri.Offset)
	del := []byte("DEL")
	if s.cfg.Bool("lazyfree-lazy-expire") {
		del = []byte("UNLINK")
	}
	for _, k := range expired {
		s.repl.FeedBacklog(k.db, [][]byte{del, k.key})
	}
}

// dbKey is a key of a database.
type dbKey struct {
	db  int
	key []byte
}

// replInfo is what a snapshot records of replication (rdbPopulateSaveInfo):
// a master's state when it has a backlog, a replica's when it has a master.
func (s *Server) replInfo() *rdb.ReplInfo {
	if s.isReplica() {
		if s.rs.offset.Load() == 0 && !s.rs.up.Load() {
			return nil
		}
		return &rdb.ReplInfo{StreamDB: s.rs.db, ID: s.replID, Offset: s.repl.Offset()}
	}
	if active, _, _, _ := s.repl.BacklogInfo(); !active {
		return nil
	}
	return &rdb.ReplInfo{StreamDB: max(s.repl.StreamDB(), 0), ID: s.replID, Offset: s.repl.Offset()}
}

// libraries are the function libraries as persist sees them.
type libraries struct{ sc *scripting }

func (l libraries) Codes() []string {
	var codes []string
	for _, lib := range l.sc.vm.Libraries() {
		codes = append(codes, lib.Code)
	}
	return codes
}

func (l libraries) Load(code string, merge bool) error {
	if _, errText := l.sc.vm.LoadLibrary(code, merge, l.sc.nowMs); errText != "" {
		return errors.New(errText)
	}
	return nil
}

func (l libraries) Flush() { l.sc.vm.FlushFunctions() }

// Shutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
// (prepareForShutdown). HotKV does not wait for replicas, so NOW changes
// nothing and ABORT never finds a shutdown in progress.
func (s *Server) Shutdown(f command.ShutdownFlags) error {
	if f.Abort {
		return errors.New("ERR No shutdown in progress.")
	}
	if st := s.busyScript(); st != nil {
		// while a script is busy only SHUTDOWN NOSAVE is allowed (Redis's
		// shutdownCommand): it kills the script, the dataset in the middle
		// of the script's changes is not saved
		if !f.NoSave {
			return errors.New(busyError(st))
		}
		st.killReq.Store(true)
		f.Save = false
	}
	if s.rdb.Loading() {
		// the dataset is half loaded: it is not saved (prepareForShutdown)
		f.Save, f.NoSave = false, true
	}
	s.log.Info("User requested shutdown...")
	if err := s.rdb.FinishShutdown(f); err != nil {
		return errors.New(errShutdown)
	}
	s.Close()
	return nil
}

// ShutdownOnSignal handles SIGTERM (sigint false) or SIGINT as Redis's cron
// does: SHUTDOWN with the flags of shutdown-on-sigterm / shutdown-on-sigint.
// It reports whether the server stops; after a failed save it keeps running.
// A signal that arrives while a script is busy stops the server without
// saving (the dataset is in the middle of the script's changes). It takes the
// engine lock itself.
func (s *Server) ShutdownOnSignal(sigint bool) bool {
	name, param := "SIGTERM", "shutdown-on-sigterm"
	if sigint {
		name, param = "SIGINT", "shutdown-on-sigint"
	}
	s.log.Warn("Received " + name + " scheduling shutdown...")
	s.eng.Lock()
	defer s.eng.Unlock()
	if s.eng.Lent() {
		s.Close()
		return true
	}
	f := parseShutdownFlags(s.cfg.String(param))
	if s.rdb.FinishShutdown(f) != nil {
		return false
	}
	s.Close()
	return true
}

// parseShutdownFlags reads shutdown-on-sigterm's value: "default" or words
// among save, nosave, now, force.
func parseShutdownFlags(v string) command.ShutdownFlags {
	var f command.ShutdownFlags
	for _, w := range strings.Fields(v) {
		switch w {
		case "save":
			f.Save = true
		case "nosave":
			f.NoSave = true
		case "now":
			f.Now = true
		case "force":
			f.Force = true
		}
	}
	return f
}
