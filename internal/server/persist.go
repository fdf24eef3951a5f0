package server

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/rdb"
)

// RDB snapshots (internal/rdb, decision 0027): the file dir/dbfilename that
// SAVE, BGSAVE, the save points, SHUTDOWN and DEBUG RELOAD write, and that the
// server loads at startup, as Redis's rdb.c does. Go cannot fork, so BGSAVE
// encodes the dataset into memory under the engine lock (the pause Redis's
// fork costs) and a goroutine writes, syncs and renames the file. Every
// method runs under the engine lock unless it says otherwise.

// bgsaveRetryDelay is CONFIG_BGSAVE_RETRY_DELAY: seconds before a save point
// or a scheduled BGSAVE tries again after a failed background save.
const bgsaveRetryDelay = 5

const (
	errBGInProgress = "ERR Background save already in progress"
	errShutdown     = "ERR Errors trying to SHUTDOWN. Check logs."
)

// errMisconf is shared.bgsaveerr: writes (and PING) refused after a failed
// background save while save points are set (stop-writes-on-bgsave-error).
const errMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
	"Commands that may modify the data set are disabled, because this instance is configured to report errors " +
	"during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " +
	"for details about the RDB error."

// writesDeniedByDiskError is writeCommandsDeniedByDiskError (RDB part): the
// last background save failed, save points are set and
// stop-writes-on-bgsave-error is yes. The status is checked first, so the
// common case costs one load.
func (s *Server) writesDeniedByDiskError() bool {
	return s.rdb.lastErr && s.diskErrorStopsWrites() // inlined: no error is the common case
}

// diskErrorStopsWrites: stop-writes-on-bgsave-error, with save points set.
func (s *Server) diskErrorStopsWrites() bool {
	return s.cfg.Bool("stop-writes-on-bgsave-error") && len(s.cfg.Save()) > 0
}

// rdbState is the persistence state guarded by the engine lock.
type rdbState struct {
	skipChecksum bool   // DEBUG SET-SKIP-CHECKSUM-VALIDATION
	saves        int64  // rdb_saves: SAVE and BGSAVE attempts
	lastErr      bool   // rdb_last_bgsave_status err
	lastBgTry    int64  // Unix s of the last BGSAVE attempt (lastbgsave_try)
	lastBgTime   int64  // rdb_last_bgsave_time_sec; -1 before the first
	scheduled    bool   // rdb_bgsave_scheduled
	bg           *bgJob // the BGSAVE in progress, nil when none
	jobs         int    // BGSAVEs started (temporary file names)
	lastSize     int    // bytes of the last BGSAVE's file (buffer size hint)
	loadedKeys   int64  // rdb_last_load_keys_loaded
	expiredKeys  int64  // rdb_last_load_keys_expired
	// bgDelay is a test hook: the background writer sleeps this long before
	// writing (Redis's tests slow a BGSAVE with rdb-key-save-delay).
	bgDelay  time.Duration
	encodeUs int64 // the last BGSAVE's encoding pause (µs)
}

// bgJob is one BGSAVE: its background writer and its result.
type bgJob struct {
	startUnix   int64 // rdb_save_time_start
	dirtyBefore int64 // server.dirty at the start (dirty_before_bgsave)
	done        chan bgResult
	kill        chan struct{} // closed by killBG
	mu          sync.Mutex    // orders kill against the rename
	killed      bool
}

type bgResult struct {
	err     error
	endUnix int64
}

// Persistence implements command.Server.
func (s *Server) Persistence() command.Persistence { return s }

// RDBCompression is rdbcompression.
func (s *Server) RDBCompression() bool { return s.cfg.Bool("rdbcompression") }

// SkipChecksum is DEBUG SET-SKIP-CHECKSUM-VALIDATION's state.
func (s *Server) SkipChecksum() bool { return s.rdb.skipChecksum }

// SetSkipChecksum sets DEBUG SET-SKIP-CHECKSUM-VALIDATION.
func (s *Server) SetSkipChecksum(on bool) { s.rdb.skipChecksum = on }

// SetBGSaveDelay makes every later BGSAVE's background writer wait d before
// writing the file (tests: a BGSAVE that stays in progress).
func (s *Server) SetBGSaveDelay(d time.Duration) {
	s.eng.Lock()
	s.rdb.bgDelay = d
	s.eng.Unlock()
}

// rdbPath is the snapshot file: dbfilename in dir.
func (s *Server) rdbPath() string {
	return filepath.Join(s.cfg.String("dir"), s.cfg.String("dbfilename"))
}

func (s *Server) nowUnix() int64 { return s.clock.NowUs() / 1e6 }

// saveRDB is rdbSave: the dataset and the function libraries are written to a
// temporary file in dir, synced and renamed over the snapshot file, so that
// the file is replaced atomically; then the change counter resets, LASTSAVE
// moves and the last save status is ok. A failure leaves all three alone.
func (s *Server) saveRDB() error {
	path := s.rdbPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		s.log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %v",
			filepath.Base(tmp), filepath.Dir(path), err))
		return err
	}
	nowUs := s.clock.NowUs()
	err = rdb.Write(f, s.ks, s.rdbInfo(nowUs))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		s.log.Warn("Write error saving DB on disk: " + err.Error())
		return err
	}
	s.log.Info("DB saved on disk")
	s.stats.dirty = 0
	s.lastSave = s.nowUnix()
	s.rdb.lastErr = false
	return nil
}

// Save is SAVE: errText is the error reply, "" for +OK.
func (s *Server) Save() string {
	if s.rdb.bg != nil {
		return errBGInProgress
	}
	s.rdb.saves++
	if s.saveRDB() != nil {
		return "ERR" // shared.err
	}
	return ""
}

// BGSave is BGSAVE [SCHEDULE] (bgsaveCommand): inExec is a BGSAVE inside
// EXEC, which Redis schedules instead of starting. status is the +reply,
// errText the error reply. HotKV has no other child process (AOF rewrite,
// module fork), so SCHEDULE alone never has anything to wait for.
func (s *Server) BGSave(schedule, inExec bool) (status, errText string) {
	switch {
	case s.rdb.bg != nil:
		return "", errBGInProgress
	case inExec:
		s.rdb.scheduled = true
		return "Background saving scheduled", ""
	}
	if s.startBGSave() != nil {
		return "", "ERR"
	}
	return "Background saving started", ""
}

// startBGSave is rdbSaveBackground: the dataset is encoded into memory now
// (the engine lock is held: this is the pause), and a goroutine writes it.
func (s *Server) startBGSave() error {
	if s.rdb.bg != nil {
		return errors.New(errBGInProgress)
	}
	s.rdb.saves++
	startUs := s.clock.NowUs()
	s.rdb.lastBgTry = startUs / 1e6
	var buf bytes.Buffer
	buf.Grow(s.rdb.lastSize + s.rdb.lastSize/8)
	if err := rdb.Write(&buf, s.ks, s.rdbInfo(startUs)); err != nil {
		s.rdb.lastErr = true
		s.log.Warn("Can't save in background: " + err.Error())
		return err
	}
	s.rdb.encodeUs = s.clock.NowUs() - startUs
	s.rdb.lastSize = buf.Len()
	s.rdb.jobs++
	job := &bgJob{startUnix: startUs / 1e6, dirtyBefore: s.stats.dirty, done: make(chan bgResult, 1), kill: make(chan struct{})}
	s.rdb.bg = job
	path := s.rdbPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), s.rdb.jobs))
	s.log.Info("Background saving started", "encode_ms", float64(s.rdb.encodeUs)/1000, "bytes", buf.Len())
	go s.writeBG(job, buf.Bytes(), tmp, path, s.rdb.bgDelay)
	return nil
}

// writeBG is the background half of a BGSAVE (the child's rdbSave): write,
// fsync, rename. It runs without the engine lock and touches nothing shared
// but job; the cron collects the result.
func (s *Server) writeBG(job *bgJob, data []byte, tmp, path string, delay time.Duration) {
	err := errKilled
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-job.kill:
		}
	}
	job.mu.Lock()
	killed := job.killed
	job.mu.Unlock()
	if !killed {
		err = writeFileSync(tmp, data)
		job.mu.Lock()
		if job.killed {
			err = errKilled
		} else if err == nil {
			err = os.Rename(tmp, path)
		}
		job.mu.Unlock()
	}
	switch {
	case err == nil:
		s.log.Info("DB saved on disk")
	case err != errKilled:
		s.log.Warn("Write error saving DB on disk: " + err.Error())
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	job.done <- bgResult{err: err, endUnix: s.nowUnix()}
}

var errKilled = errors.New("killed")

func writeFileSync(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// killBG is killRDBChild: the BGSAVE in progress is abandoned; its file is
// not renamed into place (unless it already was).
func (s *Server) killBG() {
	job := s.rdb.bg
	if job == nil {
		return
	}
	job.mu.Lock()
	job.killed = true
	job.mu.Unlock()
	close(job.kill)
	s.rdb.bg = nil
	s.rdb.lastBgTime = s.nowUnix() - job.startUnix
}

// bgsaveDone is backgroundSaveDoneHandlerDisk.
func (s *Server) bgsaveDone(job *bgJob, r bgResult) {
	if r.err == nil {
		s.log.Info("Background saving terminated with success")
		s.stats.dirty -= job.dirtyBefore
		s.lastSave = r.endUnix
		s.rdb.lastErr = false
	} else {
		s.log.Warn("Background saving error")
		s.rdb.lastErr = true
	}
	s.rdb.lastBgTime = r.endUnix - job.startUnix
	s.rdb.bg = nil
}

// rdbCron is serverCron's persistence part: collect a finished BGSAVE, else
// check the save points; then start a scheduled BGSAVE.
func (s *Server) rdbCron() {
	now := s.nowUnix()
	retryOK := func() bool { return now-s.rdb.lastBgTry > bgsaveRetryDelay || !s.rdb.lastErr }
	if job := s.rdb.bg; job != nil {
		select {
		case r := <-job.done:
			s.bgsaveDone(job, r)
		default:
		}
	} else {
		for _, sp := range s.cfg.Save() {
			if s.stats.dirty >= int64(sp.Changes) && now-s.lastSave > sp.Seconds && retryOK() {
				s.log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", sp.Changes, sp.Seconds))
				_ = s.startBGSave()
				break
			}
		}
	}
	if s.rdb.bg == nil && s.rdb.scheduled && retryOK() {
		if s.startBGSave() == nil {
			s.rdb.scheduled = false
		}
	}
}

// loadRDB is rdbLoad: the snapshot file's keys and libraries are added (merge:
// replacing existing ones). Keys that expired before now are skipped.
// Loading announces no keyspace events (Redis notifies only modules).
func (s *Server) loadRDB(merge bool) error {
	f, err := os.Open(s.rdbPath())
	if err != nil {
		return err
	}
	defer f.Close()
	events := s.ks.Events
	s.ks.Events = nil
	defer func() { s.ks.Events = events }()
	opts := rdb.LoadOptions{Now: s.ks.Now(), Merge: merge, SkipChecksum: !s.cfg.Bool("rdbchecksum")}
	if s.scripts != nil {
		opts.Function = func(code string) error {
			if _, errText := s.scripts.vm.LoadLibrary(code, merge, s.scripts.nowMs); errText != "" {
				return errors.New(errText)
			}
			return nil
		}
	}
	st, err := rdb.Load(f, s.ks, opts)
	if err != nil {
		s.log.Warn("Error loading the RDB file", "err", err)
		return err
	}
	s.rdb.loadedKeys, s.rdb.expiredKeys = int64(st.Loaded), int64(st.Expired)
	s.log.Info("Done loading RDB", "keys_loaded", st.Loaded, "keys_expired", st.Expired)
	return nil
}

// loadAtStartup is loadDataFromDisk: when dir/dbfilename exists it is loaded
// before the server accepts clients; a file that does not load stops the
// server (Redis exits with status 1).
func (s *Server) loadAtStartup() error {
	if _, err := os.Stat(s.rdbPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	s.eng.Lock()
	defer s.eng.Unlock()
	s.loading.Store(true)
	defer s.loading.Store(false)
	start := time.Now()
	s.eng.Begin() // keys that expired before now are not loaded
	if err := s.loadRDB(false); err != nil {
		s.log.Error("Fatal error loading the DB, check server logs. Exiting.")
		return fmt.Errorf("loading %s: %w", s.rdbPath(), err)
	}
	s.log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// DebugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
func (s *Server) DebugReload(save, flush, merge bool) string {
	if save {
		if err := s.saveRDB(); err != nil {
			return "ERR"
		}
	}
	if flush {
		s.ks.FlushAll()
		if s.scripts != nil {
			s.scripts.vm.FlushFunctions()
		}
	}
	if err := s.loadRDB(merge); err != nil {
		return "ERR Error trying to load the RDB dump, check server logs."
	}
	s.log.Info("DB reloaded by DEBUG RELOAD")
	return ""
}

// FlushAllSave is what FLUSHALL does for persistence (flushAllDataAndResetRDB):
// a BGSAVE in progress is killed, and with save points configured the now
// empty dataset is saved at once. saved reports the save.
func (s *Server) FlushAllSave() (saved bool) {
	s.killBG()
	if len(s.cfg.Save()) == 0 {
		return false
	}
	return s.saveRDB() == nil
}

// finishShutdown is finishShutdown's persistence part: kill a BGSAVE in
// progress, then save when save points are configured (unless NOSAVE) or
// SAVE is given; a failed save stops the shutdown unless FORCE.
func (s *Server) finishShutdown(f command.ShutdownFlags) error {
	if s.rdb.bg != nil {
		s.log.Warn("There is a child saving an .rdb. Killing it!")
		s.killBG()
	}
	if (len(s.cfg.Save()) > 0 && !f.NoSave) || f.Save {
		s.log.Info("Saving the final RDB snapshot before exiting.")
		if err := s.saveRDB(); err != nil {
			if !f.Force {
				s.log.Warn("Error trying to save the DB, can't exit.")
				s.log.Warn("Errors trying to shut down the server. Check the logs for more information.")
				return err
			}
			s.log.Warn("Error trying to save the DB. Exit anyway.")
		}
	}
	return nil
}

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
	s.log.Warn("User requested shutdown...")
	if err := s.finishShutdown(f); err != nil {
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
	if s.finishShutdown(f) != nil {
		return false
	}
	s.Close()
	return true
}

// parseShutdownFlags reads shutdown-on-sigterm's value: "default" or words
// among save, nosave, now, force.
func parseShutdownFlags(v string) command.ShutdownFlags {
	var f command.ShutdownFlags
	for _, w := range splitFields(v) {
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

// rdbInfo is what a snapshot records besides the keyspace: the AUX fields and
// the function libraries. Engine lock held.
func (s *Server) rdbInfo(nowUs int64) rdb.SaveInfo {
	var codes []string
	if s.scripts != nil {
		for _, l := range s.scripts.vm.Libraries() {
			codes = append(codes, l.Code)
		}
	}
	return rdb.SaveInfo{
		RedisVersion: command.Version,
		CTime:        nowUs / 1e6,
		Functions:    codes,
		Compress:     s.cfg.Bool("rdbcompression"),
		Checksum:     s.cfg.Bool("rdbchecksum"),
	}
}

// infoPersistence is INFO persistence in Redis 8's field order; the fork
// (copy-on-write) and AOF fields are 0 (no fork, no AOF).
func (s *Server) infoPersistence(b []byte) []byte {
	loading := "0"
	if s.loading.Load() {
		loading = "1"
	}
	b = kv(b, "loading", loading)
	b = kv(b, "async_loading", "0")
	b = kv(b, "current_cow_peak", "0")
	b = kv(b, "current_cow_size", "0")
	b = kv(b, "current_cow_size_age", "0")
	b = kv(b, "current_fork_perc", "0.00")
	b = kv(b, "current_save_keys_processed", "0")
	b = kv(b, "current_save_keys_total", "0")
	b = kvi(b, "rdb_changes_since_last_save", s.stats.dirty)
	inProgress, cur := "0", int64(-1)
	if s.rdb.bg != nil {
		inProgress, cur = "1", s.nowUnix()-s.rdb.bg.startUnix
	}
	b = kv(b, "rdb_bgsave_in_progress", inProgress)
	b = kvi(b, "rdb_last_save_time", s.lastSave)
	status := "ok"
	if s.rdb.lastErr {
		status = "err"
	}
	b = kv(b, "rdb_last_bgsave_status", status)
	b = kvi(b, "rdb_last_bgsave_time_sec", s.rdb.lastBgTime)
	b = kvi(b, "rdb_current_bgsave_time_sec", cur)
	b = kvi(b, "rdb_saves", s.rdb.saves)
	b = kv(b, "rdb_last_cow_size", "0")
	b = kvi(b, "rdb_last_load_keys_expired", s.rdb.expiredKeys)
	b = kvi(b, "rdb_last_load_keys_loaded", s.rdb.loadedKeys)
	b = kv(b, "aof_enabled", "0")
	b = kv(b, "aof_rewrite_in_progress", "0")
	b = kv(b, "aof_rewrite_scheduled", "0")
	b = kv(b, "aof_last_rewrite_time_sec", "-1")
	b = kv(b, "aof_current_rewrite_time_sec", "-1")
	b = kv(b, "aof_last_bgrewrite_status", "ok")
	b = kv(b, "aof_rewrites", "0")
	b = kv(b, "aof_rewrites_consecutive_failures", "0")
	b = kv(b, "aof_last_write_status", "ok")
	b = kv(b, "aof_last_cow_size", "0")
	b = kv(b, "module_fork_in_progress", "0")
	b = kv(b, "module_fork_last_cow_size", "0")
	return b
}
