// Package aof is HotKV's append-only file, a feature that hangs off the
// execution path (docs/ARCHITECTURE.md §8, decision 0043): Redis 7+'s
// multi-part AOF (a manifest, a base file, incremental files) in Redis's own
// formats, fed by the propagated stream (the same effects replicas get:
// absolute expiry times, SREM for SPOP...), made durable before replies go
// out through the reply barrier, rewritten without fork, and loaded at
// startup.
//
// Three parties touch it:
//
//   - the execution path, under the engine lock: Propagate and UnitDone (a
//     propagation target) append the stream to the pending buffer;
//   - the reply barrier, from any goroutine: Released writes what is pending
//     (everysec, no: the bytes are in the file before the reply leaves, as
//     Redis's beforeSleep writes before it answers) or waits for the writer's
//     fsync (always);
//   - the writer goroutine: it writes and fsyncs (always: every batch of
//     units that arrived while the previous fsync ran, a group commit;
//     everysec: once a second), and tells the server to release replies.
//
// Everything else (the commands, the cron, loading, the rewrite's start and
// end) runs under the engine lock.
package aof

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb"
	"github.com/hotkv/hotkv/internal/resp"
)

// State is aof_state.
type State int32

const (
	Off         State = iota // AOF_OFF
	On                       // AOF_ON
	WaitRewrite              // AOF_WAIT_REWRITE: enabled live, the first rewrite runs
)

// Fsync policies (appendfsync).
const (
	fsyncNo int32 = iota
	fsyncAlways
	fsyncEverysec
)

// Deps are the parts of the server the AOF uses.
type Deps struct {
	Config *config.Config
	Log    *slog.Logger
	Clock  clock.Clock
	// BaseStream starts a snapshot of the dataset and the function
	// libraries as an RDB base file (rdb.Stream). Engine lock.
	BaseStream func() *rdb.Stream
	// RunSnapshot drives a snapshot stream to its end from the rewrite's
	// goroutine, its steps under the engine lock, into w (the server's
	// runSnapshot): maxKeys caps a step's keys when > 0, pause runs after
	// each step with its keys and returns false to stop.
	RunSnapshot func(s *rdb.Stream, w io.Writer, maxKeys int, pause func(keys int) bool) error
	// Forked, when set, is told of each child process started (INFO's
	// total_forks, latest_fork_usec: how long starting it took).
	Forked func(us int64)
	// Latency, when set, is told how long each write of the file and each
	// fsync of appendfsync always took, in ms, under Redis's latency
	// monitor event names (aof-write, aof-write-alone,
	// aof-write-active-child, aof-write-pending-fsync, aof-fsync-always).
	// Any goroutine.
	Latency func(event string, ms int64)
	// KS and Functions are the dataset and the function libraries' code,
	// for a base file of commands (aof-use-rdb-preamble no). Engine lock.
	KS        *keyspace.Keyspace
	Functions func() []string
	// ReplOffset is master_repl_offset (nil: 0), which the manifest records
	// at each incremental file's start and a graceful close's end;
	// SetReplOffset restores it after a load. Engine lock.
	ReplOffset    func() int64
	SetReplOffset func(int64)
	// LoadRDB loads an RDB stream (a base file, or an old-style AOF's
	// preamble) into the dataset, every key (expired ones too, as Redis
	// loads an AOF preamble), and returns how many bytes it was. Engine lock.
	LoadRDB func(data []byte) (int, error)
	// Apply runs one unit of commands read from an AOF, from database db,
	// with expiry suspended (Redis expires nothing while it loads); it
	// returns the database selected at its end, or the error text of a
	// command that does not exist. Engine lock.
	Apply func(db int, cmds [][][]byte) (int, error)
	// Yield lends the engine lock while a file loads, so that clients get
	// their LOADING error; an error stops the load.
	Yield func() error
	// UnitSeq is the number of the last unit handed to the targets
	// (Server.UnitSeq).
	UnitSeq func() uint64
	// Release tells the server the barrier released more units
	// (Server.ReleaseReplies). Any goroutine.
	Release func()
	// Loading marks the startup load (INFO loading).
	Loading func(on bool, totalBytes int64)
	// Progress reports the bytes loaded so far.
	Progress func(loaded int64)
}

// AOF is the append-only file's state.
type AOF struct {
	d     Deps
	state State // engine lock; set through setState
	// stateNow is state for any goroutine (StateNow)
	stateNow atomic.Int32

	fileName string    // appendfilename (immutable)
	dirName  string    // appenddirname (immutable)
	dirPath  string    // dir/appenddirname when the AOF was opened
	man      *manifest // the persisted manifest; engine lock

	selDB  int   // aof_selected_db: the database of the last command fed; engine lock
	lastTS int64 // the second of the last timestamp annotation; engine lock
	argBuf []byte

	// the pending stream: fed under the engine lock, taken by the writers
	mu       sync.Mutex
	pend     []byte
	spare    []byte
	pendSeq  uint64        // the last unit whose commands are all in pend (or written)
	received atomic.Uint64 // pendSeq, for the barrier

	// the file: writes, rotation, close
	wmu      sync.Mutex
	f        *os.File
	incrSize int64      // bytes in the current incremental file (aof_last_incr_size)
	retired  []*os.File // files a rotation left to the writer to fsync and close
	written  atomic.Uint64
	synced   atomic.Uint64
	writeErr atomic.Pointer[string] // the last write's error (aof_last_write_status err)

	curSize  atomic.Int64 // aof_current_size
	writes   atomic.Int64 // write(2)s of the incremental file (Writes)
	baseSize int64        // aof_rewrite_base_size; engine lock
	policy   atomic.Int32

	kick       chan struct{}
	stop, done chan struct{}
	fsyncing   atomic.Bool // aof_pending_bio_fsync
	loops      bool        // event loops call CycleStart/End/Done (set before the writer starts)
	// inCycle counts the event loops between CycleStart and CycleDone: a
	// unit that ends while one is there is fsynced by its cycle end
	inCycle   atomic.Int32
	stopped   atomic.Bool  // the files are closed: CycleEnd has nothing to do
	delayed   atomic.Int64 // aof_delayed_fsync
	lastFsync atomic.Int64 // Unix ms of the last background fsync's start

	rw        *rewriteJob // the rewrite in progress; engine lock
	rwActive  atomic.Bool // rw != nil, for the writer goroutine
	scheduled bool        // aof_rewrite_scheduled
	rewrites  int64       // aof_rewrites
	failures  int64       // aof_rewrites_consecutive_failures
	lastRwSec int64       // aof_last_rewrite_time_sec (-1 before the first)
	lastRwErr bool        // aof_last_bgrewrite_status err
	rwDelay   time.Duration
	rwJobs    int // rewrites started (temporary file names)
	// tempStart is master_repl_offset when the temporary incremental file
	// of an AOF being turned on was opened (tempIncAofStartReplOffset)
	tempStart int64
	// the automatic rewrite's back-off after failures (rewriteLimited)
	limitDelayMin, limitNext int64
	// flushSleep is DEBUG AOF-FLUSH-SLEEP: µs to sleep before each write
	flushSleep atomic.Int64
	// the parameters read for every command or cycle
	timestamps, noFsyncOnRewrite func() bool
}

// SetFlushSleep is DEBUG AOF-FLUSH-SLEEP <µs>.
func (a *AOF) SetFlushSleep(us int64) { a.flushSleep.Store(us) }

// New returns the AOF of a server; Start opens it.
func New(d Deps) *AOF {
	a := &AOF{d: d, selDB: -1, lastRwSec: -1, kick: make(chan struct{}, 1)}
	a.fileName = d.Config.String("appendfilename")
	a.dirName = d.Config.String("appenddirname")
	a.policy.Store(policyOf(d.Config.String("appendfsync")))
	a.timestamps = d.Config.BoolFunc("aof-timestamp-enabled")
	a.noFsyncOnRewrite = d.Config.BoolFunc("no-appendfsync-on-rewrite")
	d.Config.OnChange("appendfsync", func(v string) error {
		a.policy.Store(policyOf(v))
		return nil
	})
	return a
}

func policyOf(v string) int32 {
	switch v {
	case "always":
		return fsyncAlways
	case "no":
		return fsyncNo
	}
	return fsyncEverysec
}

// State is aof_state. Engine lock.
func (a *AOF) State() State { return a.state }

// StateNow is State for a goroutine without the engine lock.
func (a *AOF) StateNow() State { return State(a.stateNow.Load()) }

// setState changes the state. Engine lock held.
func (a *AOF) setState(st State) {
	a.state = st
	a.stateNow.Store(int32(st))
}

// Enabled reports whether the AOF is on or being turned on.
func (a *AOF) Enabled() bool { return a.state != Off }

// dir is where the AOF lives: appenddirname inside dir.
func (a *AOF) dir() string {
	return filepath.Join(a.d.Config.String("dir"), a.dirName)
}

// ----------------------------------------------------------------------------
// Feeding (the propagation target), engine lock.

// Propagate appends one command of the propagated stream
// (feedAppendOnlyFile): a SELECT first when the database changes, a
// timestamp annotation first when aof-timestamp-enabled and the second
// changed.
func (a *AOF) Propagate(db int, argv [][]byte) {
	if a.state == WaitRewrite && a.rw == nil {
		return // turning on, the rewrite not started yet: its base will hold this
	}
	a.mu.Lock()
	if a.timestamps() {
		if sec := a.d.Clock.NowMs() / 1000; sec != a.lastTS {
			a.lastTS = sec
			a.pend = append(a.pend, "#TS:"...)
			a.pend = strconv.AppendInt(a.pend, sec, 10)
			a.pend = append(a.pend, "\r\n"...)
		}
	}
	if db >= 0 && db != a.selDB {
		a.argBuf = strconv.AppendInt(a.argBuf[:0], int64(db), 10)
		a.pend = resp.AppendCommand(a.pend, wordSelect, a.argBuf)
		a.selDB = db
	}
	a.pend = resp.AppendCommand(a.pend, argv...)
	a.mu.Unlock()
}

var wordSelect = []byte("SELECT")

// UnitDone marks the end of a unit: its commands are all pending. With
// appendfsync always the writer starts on them at once, unless an event
// loop is in a cycle: its cycle end fsyncs them (a unit of its own
// commands, or of any other goroutine's that ended meanwhile).
func (a *AOF) UnitDone() {
	if a.state == WaitRewrite && a.rw == nil {
		return
	}
	seq := a.d.UnitSeq()
	a.mu.Lock()
	a.pendSeq = seq
	a.mu.Unlock()
	a.received.Store(seq)
	// received is stored before inCycle is read, and CycleDone leaves the
	// cycle before it reads received: one of the two sees the other
	if a.policy.Load() == fsyncAlways && (!a.loops || a.inCycle.Load() == 0) {
		a.wake()
	}
}

func (a *AOF) wake() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// ----------------------------------------------------------------------------
// The barrier, any goroutine.

// Released reports whether the units up to seq are durable as appendfsync
// asks: fsynced (always), or written to the file (everysec and no: a process
// crash loses nothing acknowledged; a power loss at most a second, or what
// the kernel had not written). Under everysec and no it writes what is
// pending itself, as Redis's beforeSleep does before it answers. A unit that
// fed the AOF nothing (a replica-only effect) is released when everything
// the AOF received is.
func (a *AOF) Released(seq uint64) bool {
	always := a.policy.Load() == fsyncAlways
	durable := &a.written
	if always {
		durable = &a.synced
	}
	recv := a.received.Load()
	if d := durable.Load(); d >= seq || d >= recv {
		return true
	}
	if always {
		if !a.loops {
			a.wake()
		}
		return false
	}
	a.write()
	d := durable.Load()
	return d >= seq || d >= recv
}

// Reached is Released without its acting: whether the units up to seq are
// durable as the policy asks already. Any goroutine.
func (a *AOF) Reached(seq uint64) bool {
	durable := &a.written
	if a.policy.Load() == fsyncAlways {
		durable = &a.synced
	}
	recv := a.received.Load()
	d := durable.Load()
	return d >= seq || d >= recv
}

// write writes what is pending to the current file; a failed write leaves it
// pending (the file is cut back to its size before it) and is retried.
func (a *AOF) write() {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.writeLocked()
}

func (a *AOF) writeLocked() {
	if a.f == nil {
		return
	}
	a.mu.Lock()
	buf, seq := a.pend, a.pendSeq
	a.pend = a.spare[:0]
	a.mu.Unlock()
	if len(buf) > 0 {
		if d := a.flushSleep.Load(); d > 0 {
			time.Sleep(time.Duration(d) * time.Microsecond) // DEBUG AOF-FLUSH-SLEEP
		}
		start := time.Now()
		n, err := a.f.Write(buf)
		a.writeLatency(time.Since(start))
		if err != nil {
			a.writeFailed(buf, n, err)
			return
		}
		a.incrSize += int64(n)
		a.curSize.Add(int64(n))
		a.writes.Add(1)
	}
	if a.writeErr.Load() != nil {
		a.d.Log.Warn("AOF write error looks solved, Redis can write again.")
		a.writeErr.Store(nil)
	}
	if seq > a.written.Load() {
		a.written.Store(seq)
	}
	if cap(buf) <= 1<<20 {
		a.spare = buf[:0]
	} else {
		a.spare = nil
	}
}

// writeLatency reports a write's duration as flushAppendOnlyFile does: by
// what it may have waited for (an fsync in progress, a rewrite's child),
// and as aof-write.
func (a *AOF) writeLatency(d time.Duration) {
	if a.d.Latency == nil {
		return
	}
	ms := d.Milliseconds()
	switch {
	case a.fsyncing.Load():
		a.d.Latency("aof-write-pending-fsync", ms)
	case a.rewriting():
		a.d.Latency("aof-write-active-child", ms)
	default:
		a.d.Latency("aof-write-alone", ms)
	}
	a.d.Latency("aof-write", ms)
}

// writeFailed is flushAppendOnlyFile's error path: the partial write is cut
// off, the bytes stay pending, writes are refused (WritesDenied) until one
// succeeds.
func (a *AOF) writeFailed(buf []byte, n int, err error) {
	msg := err.Error()
	if n > 0 {
		if terr := a.f.Truncate(a.incrSize); terr != nil {
			// the partial write stays: count it, and pend only the rest
			a.incrSize += int64(n)
			a.curSize.Add(int64(n))
			buf = buf[n:]
		}
		_, _ = a.f.Seek(0, io.SeekEnd)
	}
	if a.writeErr.Load() == nil {
		a.d.Log.Warn("Error writing to the AOF file: " + msg)
	}
	a.writeErr.Store(&msg)
	a.mu.Lock()
	a.pend = append(buf[:len(buf):len(buf)], a.pend...)
	a.mu.Unlock()
}

// fsyncAll fsyncs (and closes) the files a rotation retired, then the
// current file, and marks what was written before as synced. raw: the
// caller is an event loop that may keep its P through the fsync (syncData).
func (a *AOF) fsyncAll(raw bool) error {
	a.wmu.Lock()
	f, retired, w := a.f, a.retired, a.written.Load()
	a.retired = nil
	a.wmu.Unlock()
	a.fsyncing.Store(true)
	defer a.fsyncing.Store(false)
	var err error
	for _, r := range retired {
		if e := syncData(r, raw); e != nil && err == nil {
			err = e
		}
		_ = r.Close()
	}
	if f != nil {
		start := time.Now()
		if e := syncData(f, raw); e != nil && err == nil {
			err = e
		}
		if a.d.Latency != nil && a.policy.Load() == fsyncAlways {
			a.d.Latency("aof-fsync-always", time.Since(start).Milliseconds())
		}
	}
	if err != nil {
		msg := err.Error()
		a.d.Log.Warn("Error syncing the AOF file: " + msg)
		a.writeErr.Store(&msg)
		return err
	}
	if w > a.synced.Load() {
		a.synced.Store(w)
	}
	return nil
}

// writer is the background writer: under always, each wake-up writes and
// fsyncs everything pending (the units that came while the last fsync ran
// share the next: a group commit; with event loops it is woken only for
// units no cycle end fsyncs); under everysec it writes and fsyncs once a
// second. It releases the replies that waited.
func (a *AOF) writer(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-a.kick:
			always := a.policy.Load() == fsyncAlways
			if always && a.received.Load() <= a.synced.Load() {
				continue // a cycle end fsynced it first
			}
			a.write()
			if always {
				if a.noFsyncOnRewrite() && a.rewriting() {
					a.markSynced()
				} else if a.fsyncAll(false) != nil {
					// Redis exits: it cannot tell which acknowledged
					// writes reached the disk. Replies stay held, and the
					// next wake-up tries again.
					time.Sleep(100 * time.Millisecond)
					a.wake()
				}
			}
			a.d.Release()
		case <-t.C:
			a.write()
			switch a.policy.Load() {
			case fsyncEverysec:
				if a.noFsyncOnRewrite() && a.rewriting() {
					break
				}
				start := time.Now()
				a.lastFsync.Store(start.UnixMilli())
				_ = a.fsyncAll(false)
				if time.Since(start) > 2*time.Second {
					a.delayed.Add(1) // the disk lags: Redis's aof_delayed_fsync
				}
			case fsyncAlways:
				_ = a.fsyncAll(false)
			}
			a.d.Release()
		}
	}
}

// Fsynced reports whether the units up to seq are fsynced (WAITAOF's local
// acknowledgement). Any goroutine.
func (a *AOF) Fsynced(seq uint64) bool {
	recv := a.received.Load()
	d := a.synced.Load()
	return d >= seq || d >= recv
}

// WakeForFsync has the writer fsync at once what is pending when it fsyncs
// on demand (appendfsync always); under everysec the next second's fsync
// comes anyway (WAITAOF waits for it).
func (a *AOF) WakeForFsync() {
	if a.policy.Load() == fsyncAlways {
		a.wake()
	}
}

// SyncedAll reports whether every unit received is fsynced, under a policy
// that fsyncs (not "no"): what a replica acknowledges as fsynced is then its
// whole offset (Redis's flushAppendOnlyFile setting fsynced_reploff_pending
// to master_repl_offset when there is nothing to write). Any goroutine.
func (a *AOF) SyncedAll() bool {
	return a.policy.Load() != fsyncNo && a.received.Load() <= a.synced.Load()
}

// SyncedSeq is the last unit fsynced. Any goroutine.
func (a *AOF) SyncedSeq() uint64 { return a.synced.Load() }

// CycleStart is called by an event loop before it runs the commands of a
// cycle: units that end from now to its CycleDone are left to its CycleEnd.
func (a *AOF) CycleStart() { a.inCycle.Add(1) }

// CycleEnd is the group commit of appendfsync always on an event loop,
// called at the end of each of its cycles, after its commands and before
// its replies are written (Redis's beforeSleep): what is pending is written
// and fsynced, then the replies that waited are released, every client the
// cycle served (and every unit another goroutine ended meanwhile) sharing
// one fsync. raw: the loop may keep its P through the fsync (it waits for
// epoll the same way), which spares the runtime's hand-off of the P and
// sysmon's 20 µs ticks for each fsync. It costs two atomic loads when there
// is nothing to do. The loop's goroutine, without the engine lock.
func (a *AOF) CycleEnd(raw bool) {
	recv, synced := a.received.Load(), a.synced.Load()
	if a.policy.Load() != fsyncAlways || recv <= synced || a.stopped.Load() {
		return
	}
	a.write()
	if a.noFsyncOnRewrite() && a.rewriting() {
		a.markSynced()
	} else if a.fsyncAll(raw) != nil {
		a.wake() // the writer retries
		return
	}
	a.d.Release()
}

// CycleDone is called by an event loop when its cycle runs no more
// commands: a unit that ended after its CycleEnd (a blocked client's
// pipeline resumed among the pushes) goes to the writer.
func (a *AOF) CycleDone() {
	a.inCycle.Add(-1)
	if a.policy.Load() == fsyncAlways && a.received.Load() > a.synced.Load() && !a.stopped.Load() {
		a.wake()
	}
}

// markSynced counts what is written as fsynced (no-appendfsync-on-rewrite
// while a rewrite runs: the user traded durability for the rewrite's disk
// bandwidth, as Redis's flushAppendOnlyFile does).
func (a *AOF) markSynced() {
	if w := a.written.Load(); w > a.synced.Load() {
		a.synced.Store(w)
	}
}

// SetLoops tells the AOF that event loops call CycleStart, CycleEnd and
// CycleDone: the writer goroutine then fsyncs under always only the units
// that end while no loop is in a cycle (the cron's, a master link's,
// connections served on goroutines).
func (a *AOF) SetLoops(on bool) { a.loops = on }

// rewriting is read by the writer goroutine.
func (a *AOF) rewriting() bool { return a.rwActive.Load() }

// WriteError is aof_last_write_status's error ("" when ok). Any goroutine.
func (a *AOF) WriteError() string {
	if p := a.writeErr.Load(); p != nil {
		return *p
	}
	return ""
}

// ----------------------------------------------------------------------------
// Opening and closing, engine lock.

// errors the server reports
var (
	ErrRewriteInProgress = errors.New("ERR Background append only file rewriting already in progress")
)

// openIncr opens name in the AOF directory for appending.
func (a *AOF) openIncr(name string, truncate bool) (*os.File, int64, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if truncate {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(a.path(name), flags, 0o644)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	st, err := f.Stat()
	if a.d.Latency != nil {
		a.d.Latency("aof-fstat", time.Since(start).Milliseconds())
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// switchFile makes f the file appends go to: what is pending is written to
// the old one first, which the writer fsyncs and closes.
func (a *AOF) switchFile(f *os.File, size int64) {
	a.wmu.Lock()
	a.writeLocked()
	if a.f != nil {
		a.retired = append(a.retired, a.f)
	}
	a.f, a.incrSize = f, size
	a.wmu.Unlock()
	a.selDB = -1 // a file is loaded from database 0: the next command selects its own
	a.wake()
}

// startWriter starts the background writer.
func (a *AOF) startWriter() {
	a.stopped.Store(false)
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	go a.writer(a.stop, a.done)
}

// closeFiles stops the writer, writes and fsyncs what is pending, and closes
// the files (stopAppendOnly, and the shutdown's flush).
func (a *AOF) closeFiles() error {
	a.stopped.Store(true)
	if a.stop != nil {
		close(a.stop)
		<-a.done
		a.stop, a.done = nil, nil
	}
	a.write()
	err := a.fsyncAll(false)
	a.wmu.Lock()
	if a.f != nil {
		_ = a.f.Close()
		a.f = nil
	}
	a.wmu.Unlock()
	return err
}

// Flush writes and fsyncs everything pending (SHUTDOWN, before the process
// exits; DEBUG's flushes). Engine lock.
func (a *AOF) Flush() error {
	if a.state == Off {
		return nil
	}
	a.write()
	return a.fsyncAll(false)
}

// Shutdown is the AOF's part of SHUTDOWN (finishShutdown): a rewrite in
// progress is killed, and what is pending is written and fsynced.
func (a *AOF) Shutdown() error {
	if a.state == Off {
		return nil
	}
	if a.rw != nil {
		a.d.Log.Warn("There is a child rewriting the AOF. Killing it!")
		a.killRewrite()
	}
	a.d.Log.Info("Calling fsync() on the AOF file.")
	err := a.closeFiles()
	a.recordEndOffset()
	return err
}

// replOffset is master_repl_offset.
func (a *AOF) replOffset() int64 {
	if a.d.ReplOffset == nil {
		return 0
	}
	return a.d.ReplOffset()
}

// recordEndOffset is updateCurIncrAofEndOffset: closing gracefully, the
// last incremental file gets the replication offset at its end (a file
// without a start offset, from before Redis 8, gets none). A failure to
// persist it is not an error: a load estimates the offset from the start
// and the size.
func (a *AOF) recordEndOffset() {
	if a.state != On || a.man == nil || len(a.man.incrs) == 0 {
		return
	}
	m := a.man.clone()
	m.incrs[len(m.incrs)-1].endOffset = a.replOffset()
	if a.persistManifest(m) == nil {
		a.man = m
	}
}

// RestoreOffset is updateReplOffsetAndResetEndOffset, after the AOF loaded
// at startup: master_repl_offset resumes from the last incremental file's
// end offset (which is then dropped from the manifest, since appends go on
// in that file), else from its start offset plus its size.
func (a *AOF) RestoreOffset() error {
	if a.man == nil || len(a.man.incrs) == 0 || a.d.SetReplOffset == nil {
		return nil
	}
	last := a.man.incrs[len(a.man.incrs)-1]
	if last.endOffset != -1 {
		a.d.SetReplOffset(last.endOffset)
		m := a.man.clone()
		m.incrs[len(m.incrs)-1].endOffset = -1
		if err := a.persistManifest(m); err != nil {
			a.warnf("Can't persist the AOF manifest: %v", err)
			return ErrLoad
		}
		a.man = m
		return nil
	}
	a.d.SetReplOffset(max(last.startOffset, 0) + a.fileSize(last.name))
	return nil
}

// Sizes for INFO and the automatic rewrite.
func (a *AOF) fileSize(name string) int64 {
	st, err := os.Stat(a.path(name))
	if err != nil {
		return 0
	}
	return st.Size()
}

func (a *AOF) logf(format string, args ...any) { a.d.Log.Info(fmt.Sprintf(format, args...)) }
func (a *AOF) warnf(format string, args ...any) {
	a.d.Log.Warn(fmt.Sprintf(format, args...))
}

// Writes is how many writes of the incremental file were made: under
// everysec the event loops write it once per cycle, whatever the number of
// clients served (tests).
func (a *AOF) Writes() int64 { return a.writes.Load() }
