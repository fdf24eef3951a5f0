// Package persist is HotKV's persistence on disk, a feature that hangs off the
// execution path (docs/ARCHITECTURE.md §8, decision 0037): RDB snapshots
// (internal/rdb, decision 0027), the file dir/dbfilename that SAVE, BGSAVE,
// the save points, SHUTDOWN and DEBUG RELOAD write and that the server loads
// at startup, as Redis's rdb.c does. Go cannot fork, so BGSAVE encodes the
// dataset into memory under the engine lock (the pause Redis's fork costs)
// and a goroutine writes, syncs and renames the file.
//
// The server owns one RDB and calls it from its cron (Cron), its admission
// (WritesDenied), its shutdown (FinishShutdown) and the commands
// (command.Persistence). Every method runs under the engine lock unless it
// says otherwise.
package persist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/childwrite"
	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/logging"
	"github.com/hotkv/hotkv/internal/rdb"
)

// bgsaveRetryDelay is CONFIG_BGSAVE_RETRY_DELAY: seconds before a save point
// or a scheduled BGSAVE tries again after a failed background save.
const bgsaveRetryDelay = 5

const errBGInProgress = "ERR Background save already in progress"

// ErrMisconf is shared.bgsaveerr: writes (and PING) refused after a failed
// background save while save points are set (stop-writes-on-bgsave-error).
const ErrMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
	"Commands that may modify the data set are disabled, because this instance is configured to report errors " +
	"during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " +
	"for details about the RDB error."

// Functions is what a snapshot needs of the function libraries.
type Functions interface {
	// Codes are the libraries' source code, in the order they are saved.
	Codes() []string
	// Load loads one library read from a snapshot (merge: it replaces a
	// library of the same name).
	Load(code string, merge bool) error
	// Flush drops every library (DEBUG RELOAD).
	Flush()
}

// Deps are the parts of the server persistence uses.
type Deps struct {
	Config    *config.Config
	Log       *slog.Logger
	Clock     clock.Clock
	KS        *keyspace.Keyspace
	Functions Functions // nil: none
	// Dirty is server.dirty, the changes since the last save, which the
	// execution path counts and a save resets (engine lock).
	Dirty *int64
	// RunSnapshot drives a snapshot stream to its end from a background
	// goroutine, its steps under the engine lock, into w (the server's
	// runSnapshot): maxKeys caps a step's keys when > 0, pause runs after
	// each step with its keys and returns false to stop.
	RunSnapshot func(s *rdb.Stream, w io.Writer, maxKeys int, pause func(keys int) bool) error
	// Forked, when set, is told of each child process started (INFO's
	// total_forks, latest_fork_usec: how long starting it took).
	Forked func(us int64)
	// Latency, when set, is told how long a step the latency monitor
	// watches took (rdb-unlink-temp-file), from any goroutine.
	Latency func(event string, ms int64)
	// Repl, when set, is the replication state a snapshot records (nil:
	// none; rdbPopulateSaveInfo). Engine lock.
	Repl func() *rdb.ReplInfo
}

// RDB is the snapshot state.
type RDB struct {
	d        Deps
	lastSave int64       // LASTSAVE, Unix s
	loading  atomic.Bool // INFO persistence loading: the startup load runs
	// asyncLoading: a replica's full sync arrives while the old dataset is
	// served (INFO async_loading)
	asyncLoading atomic.Bool
	progress     struct { // INFO persistence loading_*: the startup load's progress
		start, total, loaded atomic.Int64 // Unix s, bytes
	}
	skipChecksum bool   // DEBUG SET-SKIP-CHECKSUM-VALIDATION
	saves        int64  // rdb_saves: SAVE and BGSAVE attempts
	failures     int64  // rdb_saves_consecutive_failures: failed BGSAVEs since the last good one
	lastErr      bool   // rdb_last_bgsave_status err
	lastBgTry    int64  // Unix s of the last BGSAVE attempt (lastbgsave_try)
	lastBgTime   int64  // rdb_last_bgsave_time_sec; -1 before the first
	scheduled    bool   // rdb_bgsave_scheduled
	bg           *bgJob // the BGSAVE in progress, nil when none
	// replica snapshots being encoded (a full sync's payload: Redis's
	// BGSAVE for replication) and when the oldest began, Unix s
	replSnaps      int
	replSnapsSince int64
	// ExpiredAtStartup collects the keys the startup load left out because
	// they had expired (db, key), for a restarted master to tell its
	// replicas (Redis's RDBFLAGS_FEED_REPL); set before LoadAtStartup
	ExpiredAtStartup func(db int, key []byte)
	expiredAtLoad    func(db int, key []byte) // the load's current hook
	jobs             int                      // BGSAVEs started (temporary file names)
	lastSize         int                      // bytes of the last BGSAVE's file (buffer size hint)
	loadedKeys       int64                    // rdb_last_load_keys_loaded
	// LoadedRepl is the replication state the file loaded at startup
	// recorded (nil: none), for the server to continue its history
	LoadedRepl  *rdb.ReplInfo
	expiredKeys int64 // rdb_last_load_keys_expired
	// bgDelay is a test hook: the background writer sleeps this long before
	// writing (Redis's tests slow a BGSAVE with rdb-key-save-delay).
	bgDelay  time.Duration
	encodeUs int64 // the last BGSAVE's start pause (µs)
}

// New returns the snapshot state of a server started at startUnix: at
// startup the dataset counts as saved.
func New(d Deps, startUnix int64) *RDB {
	return &RDB{d: d, lastSave: startUnix, lastBgTime: -1}
}

var _ command.Persistence = (*RDB)(nil)

// WritesDenied is writeCommandsDeniedByDiskError (RDB part): the last
// background save failed, save points are set and stop-writes-on-bgsave-error
// is yes. The status is checked first, so the common case costs one load.
func (r *RDB) WritesDenied() bool {
	return r.lastErr && r.diskErrorStopsWrites() // inlined: no error is the common case
}

// diskErrorStopsWrites: stop-writes-on-bgsave-error, with save points set.
func (r *RDB) diskErrorStopsWrites() bool {
	return r.d.Config.Bool("stop-writes-on-bgsave-error") && len(r.d.Config.Save()) > 0
}

// LastSave is LASTSAVE.
func (r *RDB) LastSave() int64 { return r.lastSave }

// Loading reports whether the startup load runs. Any goroutine.
func (r *RDB) Loading() bool { return r.loading.Load() }

// AsyncLoading reports a replica's full sync that keeps serving the old
// dataset while the new one arrives (INFO async_loading).
func (r *RDB) AsyncLoading() bool { return r.asyncLoading.Load() }

// SetAsyncLoading marks it.
func (r *RDB) SetAsyncLoading(on bool) { r.asyncLoading.Store(on) }

// RDBCompression is rdbcompression.
func (r *RDB) RDBCompression() bool { return r.d.Config.Bool("rdbcompression") }

// SkipChecksum is DEBUG SET-SKIP-CHECKSUM-VALIDATION's state.
func (r *RDB) SkipChecksum() bool { return r.skipChecksum }

// SetSkipChecksum sets DEBUG SET-SKIP-CHECKSUM-VALIDATION.
func (r *RDB) SetSkipChecksum(on bool) { r.skipChecksum = on }

// SetBGSaveDelay makes every later BGSAVE's background writer wait d before
// writing the file (tests: a BGSAVE that stays in progress).
func (r *RDB) SetBGSaveDelay(d time.Duration) { r.bgDelay = d }

// Path is the snapshot file: dbfilename in dir.
func (r *RDB) Path() string {
	return filepath.Join(r.d.Config.String("dir"), r.d.Config.String("dbfilename"))
}

func (r *RDB) nowUnix() int64 { return r.d.Clock.NowUs() / 1e6 }

// saveNow is rdbSave: the dataset and the function libraries are written to a
// temporary file in dir, synced and renamed over the snapshot file, so that
// the file is replaced atomically; then the change counter resets, LASTSAVE
// moves and the last save status is ok. A failure leaves all three alone.
func (r *RDB) saveNow() error {
	path := r.Path()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		r.d.Log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %v",
			filepath.Base(tmp), filepath.Dir(path), err))
		return err
	}
	nowUs := r.d.Clock.NowUs()
	info := r.SaveInfo(nowUs)
	info.KeyDelay = debugDelay(r.d.Config.Int("rdb-key-save-delay"))
	err = rdb.Write(f, r.d.KS, info)
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
		r.d.Log.Warn("Write error saving DB on disk: " + err.Error())
		return err
	}
	r.d.Log.Info("DB saved on disk")
	*r.d.Dirty = 0
	r.lastSave = r.nowUnix()
	r.lastErr = false
	return nil
}

// Save is SAVE: errText is the error reply, "" for +OK.
func (r *RDB) Save() string {
	if r.bg != nil {
		return errBGInProgress
	}
	r.saves++
	if r.saveNow() != nil {
		return "ERR" // shared.err
	}
	return ""
}

// load is rdbLoad: the snapshot file's keys and libraries are added (merge:
// replacing existing ones). Keys that expired before now are skipped.
// Loading announces no keyspace events (Redis notifies only modules).
func (r *RDB) load(merge bool, progress func(read, total int) error) error {
	f, err := os.Open(r.Path())
	if err != nil {
		return err
	}
	defer f.Close()
	ks := r.d.KS
	events := ks.Events
	ks.Events = nil
	defer func() { ks.Events = events }()
	opts := rdb.LoadOptions{Now: ks.Now(), Merge: merge, SkipChecksum: !r.d.Config.Bool("rdbchecksum"),
		KeyDelay: r.keyLoadDelay(),
		Resized: func(db, keyBuckets, expireSlots int) {
			r.d.Log.Log(context.Background(), logging.LevelVerbose,
				fmt.Sprintf("DB %d resized: %d key buckets, %d expire buckets", db, keyBuckets, expireSlots))
		},
		Progress: progress, Expired: r.expiredAtLoad}
	if fn := r.d.Functions; fn != nil {
		opts.Function = func(code string) error { return fn.Load(code, merge) }
	}
	st, err := rdb.Load(f, ks, opts)
	if errors.Is(err, ErrLoadStopped) {
		return err
	}
	if err != nil {
		r.d.Log.Warn("Error loading the RDB file", "err", err)
		return err
	}
	r.loadedKeys, r.expiredKeys = int64(st.Loaded), int64(st.Expired)
	r.LoadedRepl = st.Repl
	if st.EmptyKeysSkipped > 0 {
		r.d.Log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d, empty keys skipped: %d.",
			st.Loaded, st.Expired, st.EmptyKeysSkipped))
	} else {
		r.d.Log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", st.Loaded, st.Expired))
	}
	return nil
}

// ResetStats is CONFIG RESETSTAT's part: rdb_saves and
// rdb_saves_consecutive_failures start again from 0.
func (r *RDB) ResetStats() { r.saves, r.failures = 0, 0 }

// SetLoading marks a load of the AOF at startup (INFO loading, LOADING
// refusals): on with the bytes to load, off when it ends.
func (r *RDB) SetLoading(on bool, total int64) {
	if on {
		r.progress.start.Store(r.nowUnix())
		r.progress.loaded.Store(0)
		r.progress.total.Store(total)
	}
	r.loading.Store(on)
}

// SetLoaded is the AOF load's progress: bytes loaded.
func (r *RDB) SetLoaded(n int64) { r.progress.loaded.Store(n) }

// LoadAOFBase loads an RDB stream that starts an AOF (a base file, an
// old-style preamble): every key, expired ones too (Redis's
// RDBFLAGS_AOF_PREAMBLE: they expire once the AOF is loaded), and the
// function libraries. It returns the stream's length.
func (r *RDB) LoadAOFBase(data []byte) (int, error) {
	ks := r.d.KS
	events := ks.Events
	ks.Events = nil
	defer func() { ks.Events = events }()
	opts := rdb.LoadOptions{Now: 0, SkipChecksum: !r.d.Config.Bool("rdbchecksum")}
	if fn := r.d.Functions; fn != nil {
		opts.Function = func(code string) error { return fn.Load(code, false) }
	}
	st, err := rdb.Load(bytes.NewReader(data), ks, opts)
	if err != nil {
		r.d.Log.Warn("Error loading the RDB base of the AOF", "err", err)
		return 0, err
	}
	return st.Size, nil
}

// LoadFromMaster replaces the dataset with a snapshot a replica received
// from its master (readSyncBulkPayload): everything is flushed, then every
// key loaded, expired ones too (on a replica keys expire when the master
// says so, with a DEL in the stream), and the function libraries. It
// returns the keys loaded. Every loading-process-events-interval-bytes,
// yield (when not nil) is called, as LoadAtStartup's; an error it returns
// stops the load (ErrLoadStopped). A load that fails puts the function
// libraries back as they were (the keys are the caller's: swapdb).
func (r *RDB) LoadFromMaster(rd io.Reader, yield func() error) (int, error) {
	ks := r.d.KS
	if r.d.Config.Bool("replica-lazy-flush") {
		ks.Stats.LazyFreed += int64(ks.Keys()) // emptyData(EMPTYDB_ASYNC) counts every key
	}
	ks.FlushAll()
	var libs []string // the libraries as they were: a failed load puts them back
	if r.d.Functions != nil {
		libs = r.d.Functions.Codes()
		r.d.Functions.Flush()
	}
	events := ks.Events
	ks.Events = nil
	defer func() { ks.Events = events }()
	opts := rdb.LoadOptions{Now: 0, SkipChecksum: !r.d.Config.Bool("rdbchecksum"), KeyDelay: r.keyLoadDelay()}
	if fn := r.d.Functions; fn != nil {
		opts.Function = func(code string) error { return fn.Load(code, true) }
	}
	interval := int(r.d.Config.Int("loading-process-events-interval-bytes"))
	next := interval
	opts.Progress = func(read, total int) error {
		r.progress.loaded.Store(int64(read))
		if yield == nil || read < next {
			return nil
		}
		next = read + interval
		if yield() != nil {
			return ErrLoadStopped
		}
		return nil
	}
	st, err := rdb.Load(rd, ks, opts)
	if err != nil {
		r.d.Log.Warn("Failed trying to load the MASTER synchronization DB", "err", err)
		if fn := r.d.Functions; fn != nil {
			fn.Flush()
			for _, code := range libs {
				_ = fn.Load(code, true)
			}
		}
		return 0, err
	}
	return st.Loaded, nil
}

// keyLoadDelay is a load's key-load-delay (DEBUG: µs per key), read again
// every 128 keys: clients may change it while the load lends them the lock
// (the test suite speeds a load up).
func (r *RDB) keyLoadDelay() func() {
	delayUs, keys := r.d.Config.Int("key-load-delay"), 0
	return func() {
		if keys++; keys%128 == 0 {
			delayUs = r.d.Config.Int("key-load-delay")
		}
		if sleep := debugDelay(delayUs); sleep != nil {
			sleep()
		}
	}
}

// ErrLoadStopped is what LoadAtStartup returns when its yield reports that
// the server is shutting down.
var ErrLoadStopped = errors.New("loading stopped: the server is shutting down")

// LoadAtStartup is loadDataFromDisk: when dir/dbfilename exists it is loaded
// while the server already accepts clients; a file that does not load stops
// the server (Redis exits with status 1). The caller holds the engine lock
// with a command's time begun (keys that expired before now are not loaded).
// Every loading-process-events-interval-bytes of the file, yield is called
// (Redis's processEventsWhileBlocked): it lets clients' commands run, which
// get LOADING unless they are allowed while loading (admission's check of
// Loading), and returns an error to stop the load, which LoadAtStartup then
// returns (ErrLoadStopped).
func (r *RDB) LoadAtStartup(yield func() error) error {
	st, err := os.Stat(r.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	interval := int(r.d.Config.Int("loading-process-events-interval-bytes"))
	r.progress.start.Store(r.nowUnix())
	r.progress.loaded.Store(0)
	if err == nil {
		r.progress.total.Store(st.Size())
	}
	r.loading.Store(true)
	defer r.loading.Store(false)
	r.expiredAtLoad = r.ExpiredAtStartup
	defer func() { r.expiredAtLoad = nil }()
	start := time.Now()
	next := interval
	progress := func(read, total int) error {
		r.progress.loaded.Store(int64(read))
		if read < next || yield == nil {
			return nil
		}
		next = read + interval
		if yield() != nil {
			return ErrLoadStopped
		}
		return nil
	}
	if err := r.load(false, progress); err != nil {
		if errors.Is(err, ErrLoadStopped) {
			return err
		}
		r.d.Log.Error("Fatal error loading the DB, check server logs. Exiting.")
		return fmt.Errorf("loading %s: %w", r.Path(), err)
	}
	r.d.Log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// DebugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
func (r *RDB) DebugReload(save, flush, merge bool) string {
	if save {
		if err := r.saveNow(); err != nil {
			return "ERR"
		}
	}
	if flush {
		r.d.KS.FlushAll()
		if r.d.Functions != nil {
			r.d.Functions.Flush()
		}
	}
	if err := r.load(merge, nil); err != nil {
		return "ERR Error trying to load the RDB dump, check server logs."
	}
	r.d.Log.Info("DB reloaded by DEBUG RELOAD")
	return ""
}

// FlushAllSave is what FLUSHALL does for persistence (flushAllDataAndResetRDB):
// a BGSAVE in progress is killed, and with save points configured the now
// empty dataset is saved at once. saved reports the save.
func (r *RDB) FlushAllSave() (saved bool) {
	r.KillBG()
	if len(r.d.Config.Save()) == 0 {
		return false
	}
	return r.saveNow() == nil
}

// FinishShutdown is finishShutdown's persistence part: kill a BGSAVE in
// progress, then save when save points are configured (unless NOSAVE) or
// SAVE is given; a failed save stops the shutdown unless FORCE.
func (r *RDB) FinishShutdown(f command.ShutdownFlags) error {
	if r.bg != nil {
		r.d.Log.Warn("There is a child saving an .rdb. Killing it!")
		r.KillBG()
	}
	if (len(r.d.Config.Save()) > 0 && !f.NoSave) || f.Save {
		r.d.Log.Info("Saving the final RDB snapshot before exiting.")
		if err := r.saveNow(); err != nil {
			if !f.Force {
				r.d.Log.Warn("Error trying to save the DB, can't exit.")
				r.d.Log.Warn("Errors trying to shut down the server. Check the logs for more information.")
				return err
			}
			r.d.Log.Warn("Error trying to save the DB. Exit anyway.")
		}
	}
	return nil
}

// SaveInfo is what a snapshot records besides the keyspace: the AUX fields
// and the function libraries.
func (r *RDB) SaveInfo(nowUs int64) rdb.SaveInfo {
	var codes []string
	if r.d.Functions != nil {
		codes = r.d.Functions.Codes()
	}
	var repl *rdb.ReplInfo
	if r.d.Repl != nil {
		repl = r.d.Repl()
	}
	return rdb.SaveInfo{
		Repl:         repl,
		RedisVersion: command.Version,
		CTime:        nowUs / 1e6,
		Functions:    codes,
		Compress:     r.d.Config.Bool("rdbcompression"),
		Checksum:     r.d.Config.Bool("rdbchecksum"),
	}
}

// debugDelay is Redis's debugDelay for key-load-delay and rdb-key-save-delay:
// usec µs after each key, or for a negative -N, 1 µs once in N keys on
// average; nil when usec is 0.
func debugDelay(usec int64) func() {
	switch {
	case usec > 0:
		return func() { time.Sleep(time.Duration(usec) * time.Microsecond) }
	case usec < 0:
		return func() {
			if rand.Int64N(-usec) == 0 {
				time.Sleep(time.Microsecond)
			}
		}
	}
	return nil
}

// KeyDelayFor is how long rdb-key-save-delay (us µs per key) pauses a
// snapshot after keys keys: the rule BGSAVE's writer follows
// (childwrite.KeyDelayFor), for the snapshots the server streams to
// replicas itself.
func KeyDelayFor(keys int, us int64) time.Duration { return childwrite.KeyDelayFor(keys, us) }

// ReplSnapshot counts a replica's snapshot that begins (true) or ends
// (false): INFO's rdb_bgsave_in_progress shows it, as Redis's shows the
// BGSAVE it forks for a full sync. Engine lock.
func (r *RDB) ReplSnapshot(begins bool) {
	if begins {
		if r.replSnaps == 0 {
			r.replSnapsSince = r.nowUnix()
		}
		r.replSnaps++
	} else if r.replSnaps > 0 {
		r.replSnaps--
	}
}

// ReplSnapshots is the number of replicas' snapshots in progress. Engine
// lock.
func (r *RDB) ReplSnapshots() int { return r.replSnaps }

// SyncStream starts a snapshot of the dataset as an RDB stream: a
// replica's SYNC payload.
func (r *RDB) SyncStream() *rdb.Stream {
	return rdb.NewStream(r.d.KS, r.SaveInfo(r.d.Clock.NowUs()))
}

// WriteSnapshot writes the dataset as an RDB stream to w (a replica's SYNC
// payload, encoded at once).
func (r *RDB) WriteSnapshot(w io.Writer) error {
	return rdb.Write(w, r.d.KS, r.SaveInfo(r.d.Clock.NowUs()))
}

// AOFBaseStream starts a snapshot of the dataset as an AOF's RDB base file
// (its aof-base AUX field is 1, as Redis writes it).
func (r *RDB) AOFBaseStream() *rdb.Stream {
	info := r.SaveInfo(r.d.Clock.NowUs())
	info.AOFBase = true
	info.Repl = nil // an AOF's base records no replication state (Redis passes no rsi)
	return rdb.NewStream(r.d.KS, info)
}

// WriteFiltered is WriteSnapshot with REPLCONF rdb-filter-only's include
// filters: no keys, and the function libraries only when functions is set.
func (r *RDB) WriteFiltered(w io.Writer, functions bool) error {
	info := r.SaveInfo(r.d.Clock.NowUs())
	info.NoKeys = true
	if !functions {
		info.Functions = nil
	}
	return rdb.Write(w, r.d.KS, info)
}
