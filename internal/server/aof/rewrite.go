package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/internal/childwrite"
	"github.com/hotkv/hotkv/internal/rdb"
)

// The rewrite without fork (BGREWRITEAOF, the automatic rewrite, and the
// first rewrite of CONFIG SET appendonly yes): under the engine lock the
// appends move to a new incremental file and a snapshot of the dataset
// starts (rdb.Stream: no pause but the start's); a goroutine encodes it a
// millisecond at a time under the lock, writes the new base file and
// fsyncs it; the cron then renames it into place and
// switches the manifest (new base + the new incremental file; the old ones
// become history, and are deleted). A crash at any point leaves a manifest
// whose files load: until the switch, the old base and every incremental
// file since, the new one included (persisted when it was opened).

// rewriteJob is one rewrite in progress.
type rewriteJob struct {
	startUnix int64
	tmp       string // the new base, written by the goroutine
	done      chan error
	rdbFormat bool // the base is an RDB file (.base.rdb), else commands (.base.aof)
	kill      chan struct{}
	stream    *rdb.Stream        // the base, encoded by the goroutine a step at a time
	child     *childwrite.Writer // the process writing the base
}

const errRewriteStartFailed = "ERR Can't execute an AOF background rewriting. Please check the server logs for more information."

// BGRewrite is BGREWRITEAOF (bgrewriteaofCommand): status is the +reply,
// errText the error. childBusy reports a BGSAVE in progress, which (as in
// Redis, where both are forks) schedules the rewrite after it.
func (a *AOF) BGRewrite(childBusy bool) (status, errText string) {
	switch {
	case a.rw != nil:
		return "", ErrRewriteInProgress.Error()
	case childBusy:
		a.scheduled = true
		return "Background append only file rewriting scheduled", ""
	}
	if err := a.startRewrite(); err != nil {
		return "", errRewriteStartFailed
	}
	return "Background append only file rewriting started", ""
}

// startRewrite is rewriteAppendOnlyFileBackground.
func (a *AOF) startRewrite() error {
	if a.rw != nil {
		return ErrRewriteInProgress
	}
	if a.dirPath == "" {
		a.dirPath = a.dir()
	}
	if err := os.MkdirAll(a.dirPath, 0o755); err != nil {
		a.warnf("Can't open or create append-only dir %s: %v", a.dirName, err)
		return err
	}
	if a.man == nil {
		a.man = &manifest{}
	}
	// the appends from now on go to a new incremental file, listed at once
	// (a crash during the rewrite loads the old base and every incremental
	// file); turning the AOF on, it is a temporary one no manifest lists yet
	if a.state != Off {
		if err := a.openNextIncr(); err != nil {
			a.lastRwErr = true
			return err
		}
	}
	start := time.Now()
	var autosync int64
	if a.d.Config.Bool("aof-rewrite-incremental-fsync") {
		autosync = childwrite.AutosyncBytes
	}
	tmp := a.path(fmt.Sprintf("temp-rewriteaof-bg-%d-%d.aof", os.Getpid(), a.rwJobs))
	a.rwJobs++
	child, err := childwrite.Start(tmp, autosync)
	if err != nil {
		a.warnf("Can't rewrite append only file in background: %v", err)
		a.lastRwErr = true
		return err
	}
	if a.d.Forked != nil {
		a.d.Forked(time.Since(start).Microseconds())
	}
	job := &rewriteJob{startUnix: time.Now().Unix(), done: make(chan error, 1), kill: make(chan struct{}),
		stream: a.baseStream(), tmp: tmp, child: child}
	a.rw = job
	a.rwActive.Store(true)
	a.feedBlessed()
	a.scheduled = false
	a.d.Log.Info(fmt.Sprintf("Background append only file rewriting started by pid %d", child.Pid()), "start_ms",
		float64(time.Since(start).Microseconds())/1000)
	job.rdbFormat = a.d.Config.Bool("aof-use-rdb-preamble")
	go a.saveBase(job, a.rwDelay, a.d.Config.Int("rdb-key-save-delay"))
	return nil
}

// baseStream starts a snapshot of the dataset as a base file: an RDB file
// with aof-use-rdb-preamble yes, commands with no (starting with a
// timestamp annotation when aof-timestamp-enabled). Engine lock.
func (a *AOF) baseStream() *rdb.Stream {
	if a.d.Config.Bool("aof-use-rdb-preamble") {
		return a.d.BaseStream()
	}
	ts := ""
	if a.d.Config.Bool("aof-timestamp-enabled") {
		ts = "#TS:" + strconv.FormatInt(a.d.Clock.NowMs()/1000, 10) + "\r\n"
	}
	var fns []string
	if a.d.Functions != nil {
		fns = a.d.Functions()
	}
	return commandStream(a.d.KS, fns, ts)
}

// feedBlessed starts the new incremental file with a BLESS SET of every key
// protected from eviction: the base (an RDB file Redis 8.6 reads, or the
// commands of the values) does not carry the protection. Engine lock.
func (a *AOF) feedBlessed() {
	if a.d.KS == nil || a.state == Off {
		return
	}
	for _, db := range a.d.KS.DBs {
		if db.Blessed() == 0 {
			continue
		}
		db.RangeBlessed(func(key string) {
			a.Propagate(db.ID, [][]byte{[]byte("BLESS"), []byte("SET"), []byte(key), []byte("NO-EVICT")})
		})
	}
	a.write() // in the file now, not with the next unit (installBase fsyncs it)
}

// openNextIncr is openNewIncrAofForAppend.
func (a *AOF) openNextIncr() error {
	if a.state == WaitRewrite {
		a.tempStart = a.replOffset()
		f, _, err := a.openIncr(a.tempIncrName(), true)
		if err != nil {
			a.warnf("Can't open the append-only file %s: %v", a.tempIncrName(), err)
			return err
		}
		a.switchFile(f, 0)
		return nil
	}
	m := a.man.clone()
	name := m.newIncr(a)
	f, size, err := a.openIncr(name, true)
	if err != nil {
		a.warnf("Can't open the append-only file %s: %v", name, err)
		return err
	}
	if err := a.persistManifest(m); err != nil {
		_ = f.Close()
		_ = os.Remove(a.path(name))
		a.warnf("Can't persist the AOF manifest: %v", err)
		return err
	}
	a.man = m
	a.switchFile(f, size)
	a.logf("Creating AOF incr file %s on background rewrite", name)
	return nil
}

// saveBase is the goroutine's half (Redis's child, rewriteAppendOnlyFile):
// encode the snapshot a step at a time under the engine lock (see
// Deps.RunSnapshot) into the job's child process, which writes and fsyncs
// the file (aof-rewrite-incremental-fsync: every 4 MB). keyDelay is
// rdb-key-save-delay (µs slept per key, as Redis's child does). A killed
// job, or one whose child died, removes its file.
func (a *AOF) saveBase(job *rewriteJob, delay time.Duration, keyDelay int64) {
	err := errKilled
	select {
	case <-time.After(delay):
		err = a.streamBase(job, keyDelay)
	case <-job.kill:
		job.child.Kill()
	case <-job.child.Exited():
		err = job.child.Finish()
	}
	select {
	case <-job.kill:
		err = errKilled
	default:
	}
	if err != nil {
		_ = os.Remove(job.tmp)
	}
	job.done <- err
}

func (a *AOF) streamBase(job *rewriteJob, keyDelay int64) error {
	maxKeys, pause := job.child.KeyDelay(keyDelay, job.kill)
	return job.child.Feed(func(w io.Writer) error { return a.d.RunSnapshot(job.stream, w, maxKeys, pause) })
}

var errKilled = fmt.Errorf("killed")

// killRewrite is killAppendOnlyChild: the rewrite is abandoned (its file
// removed); turning the AOF on, its temporary incremental file goes too.
func (a *AOF) killRewrite() {
	job := a.rw
	if job == nil {
		return
	}
	close(job.kill)
	job.stream.Close() // the goroutine's next step ends, and it removes its file
	go job.child.Kill()
	a.rw = nil
	a.rwActive.Store(false)
	a.lastRwSec = time.Now().Unix() - job.startUnix
}

// rewriteDone is backgroundRewriteDoneHandler: the new base is renamed into
// place and the manifest switched; on failure the old files stay.
func (a *AOF) rewriteDone(job *rewriteJob, err error) {
	a.rw = nil
	a.rwActive.Store(false)
	a.lastRwSec = time.Now().Unix() - job.startUnix
	if err == nil {
		err = a.installBase(job)
	}
	if err != nil {
		_ = os.Remove(job.tmp)
		a.lastRwErr = true
		a.failures++
		var ke *childwrite.KilledError
		if errors.As(err, &ke) {
			a.d.Log.Warn(fmt.Sprintf("Background AOF rewrite terminated by signal %d", ke.Signal))
		} else {
			a.d.Log.Warn("Background AOF rewrite failed: " + err.Error())
		}
		if a.state == WaitRewrite {
			// turning the AOF on: what the temporary incremental file got
			// is in the next rewrite's snapshot (aofDelTempIncrAofFile)
			name := a.tempIncrName()
			a.logf("Removing the temp incr aof file %s in the background", name)
			go func() { _ = os.Remove(a.path(name)) }()
			a.scheduled = true // try again (Redis reschedules)
		}
		return
	}
	a.lastRwErr = false
	a.failures = 0
	a.rewrites++
	a.d.Log.Info("Background AOF rewrite terminated with success")
	if !a.d.Config.Bool("aof-disable-auto-gc") {
		a.delHistory()
	}
	a.d.Log.Info("Background AOF rewrite finished successfully")
}

// installBase renames the new base into place and persists the manifest
// that lists it.
func (a *AOF) installBase(job *rewriteJob) error {
	m := a.man.clone()
	base := m.newBase(a, job.rdbFormat)
	start := time.Now()
	if err := os.Rename(job.tmp, a.path(base)); err != nil {
		return fmt.Errorf("Error trying to rename the temporary AOF base file %s into %s: %v", job.tmp, base, err)
	}
	a.renameLatency(start)
	var tempIncr, newIncr string
	if a.state == WaitRewrite {
		// the temporary incremental file becomes the first one listed
		tempIncr = a.tempIncrName()
		newIncr = m.newIncrAt(a, a.tempStart)
		start := time.Now()
		if err := os.Rename(a.path(tempIncr), a.path(newIncr)); err != nil {
			_ = os.Remove(a.path(base))
			return fmt.Errorf("Error trying to rename the temporary AOF incr file %s into %s: %v", tempIncr, newIncr, err)
		}
		a.renameLatency(start)
	}
	if a.state == Off {
		// BGREWRITEAOF with the AOF off: the base is the whole AOF
		m.retire(len(m.incrs))
	} else {
		m.retireIncrs()
	}
	// what the new incremental file holds so far (its first commands: the
	// blessed keys) is durable before the manifest makes it the AOF
	if a.state != Off {
		a.write()
		if err := a.fsyncAll(false); err != nil {
			return err
		}
	}
	if err := a.persistManifest(m); err != nil {
		if newIncr != "" {
			_ = os.Rename(a.path(newIncr), a.path(tempIncr))
		}
		_ = os.Remove(a.path(base))
		return err
	}
	if a.state == WaitRewrite {
		a.setState(On)
		a.d.Log.Info("AOF rewrite done, AOF is now enabled")
	}
	a.man = m
	a.baseSize = a.fileSize(base)
	a.wmu.Lock()
	a.curSize.Store(a.baseSize + a.incrSize)
	a.wmu.Unlock()
	a.logf("Successfully renamed the temporary AOF base file %s into %s", job.tmp, base)
	return nil
}

// AutoGC is aof-disable-auto-gc's apply function (updateAofAutoGCEnabled):
// turned back on, the history goes at once. Engine lock.
func (a *AOF) AutoGC() {
	if a.man != nil && !a.d.Config.Bool("aof-disable-auto-gc") && a.dirPath != "" {
		a.delHistory()
	}
}

// delHistory is aofDelHistoryFiles: the history files are deleted and the
// manifest rewritten without them.
func (a *AOF) delHistory() {
	if len(a.man.history) == 0 {
		return
	}
	m := a.man.clone()
	hist := m.history
	m.history = nil
	if err := a.persistManifest(m); err != nil {
		return
	}
	a.man = m
	paths := make([]string, len(hist))
	for i, h := range hist {
		a.logf("Removing the history file %s in the background", h.name)
		paths[i] = a.path(h.name)
	}
	// bg_unlink: unlinking a big file can take milliseconds, not to be
	// spent under the engine lock (the manifest no longer lists them)
	go func() {
		for _, p := range paths {
			_ = os.Remove(p)
		}
	}()
}

// Cron is serverCron's AOF part: collect a finished rewrite, start a
// scheduled or automatic one. childBusy: a BGSAVE runs.
func (a *AOF) Cron(childBusy bool) {
	if job := a.rw; job != nil {
		select {
		case err := <-job.done:
			a.rewriteDone(job, err)
		default:
		}
		return
	}
	if childBusy {
		return
	}
	if a.scheduled {
		// BGREWRITEAOF scheduled behind a BGSAVE runs with the AOF off too
		_ = a.startRewrite()
		return
	}
	if a.state == Off {
		return
	}
	perc := a.d.Config.Int("auto-aof-rewrite-percentage")
	if a.state == On && perc > 0 {
		size := a.curSize.Load()
		base := max(a.baseSize, 1)
		if size > a.d.Config.Int("auto-aof-rewrite-min-size") && (size-base)*100/base >= perc && !a.rewriteLimited() {
			a.logf("Starting automatic rewriting of AOF on %d%% growth", (size-base)*100/base)
			_ = a.startRewrite()
		}
	}
}

// rewriteLimited is aofRewriteLimited: after 3 rewrites in a row failed, the
// automatic rewrite waits 1 minute, then 2, 4, ... up to 60 between tries,
// so that a disk that keeps failing is not rewritten to in a loop
// (BGREWRITEAOF is not limited).
func (a *AOF) rewriteLimited() bool {
	const threshold, maxMinutes = 3, 60
	if a.failures < threshold {
		a.limitDelayMin, a.limitNext = 0, 0
		return false
	}
	now := time.Now().Unix()
	if a.limitNext != 0 {
		if now < a.limitNext {
			return true
		}
		a.limitNext = 0
		return false
	}
	a.limitDelayMin = min(max(a.limitDelayMin*2, 1), maxMinutes)
	a.limitNext = now + a.limitDelayMin*60
	a.warnf("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes", a.limitDelayMin)
	return true
}

// RewriteInProgress reports a rewrite in progress (BGSAVE waits for it).
func (a *AOF) RewriteInProgress() bool { return a.rw != nil }

// SetRewriteDelay makes each later rewrite's writer wait d before writing
// the base (tests: a rewrite that stays in progress).
func (a *AOF) SetRewriteDelay(d time.Duration) { a.rwDelay = d }

// renameLatency reports a rename of the rewrite's files that started at
// start (Redis's aof-rename event).
func (a *AOF) renameLatency(start time.Time) {
	if a.d.Latency != nil {
		a.d.Latency("aof-rename", time.Since(start).Milliseconds())
	}
}
