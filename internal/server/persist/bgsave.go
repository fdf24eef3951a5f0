package persist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hotkv/hotkv/internal/childwrite"
	"github.com/hotkv/hotkv/internal/rdb"
)

// BGSAVE without stopping the world: the command starts a snapshot of the
// keyspace (rdb.Stream over keyspace.Snapshot: a key changed meanwhile is
// encoded as it was, just before the change), a goroutine drives it a
// millisecond of encoding at a time under the engine lock and writes,
// syncs and renames the file, and the cron collects the result.

// bgJob is one BGSAVE: its background writer and its result.
type bgJob struct {
	startUnix   int64 // rdb_save_time_start
	dirtyBefore int64 // server.dirty at the start (dirty_before_bgsave)
	stream      *rdb.Stream
	child       *childwrite.Writer // the process writing the file
	done        chan bgResult
	kill        chan struct{} // closed by KillBG
	mu          sync.Mutex    // orders kill against the rename
	killed      bool
}

type bgResult struct {
	err     error
	endUnix int64
}

// BGSave is BGSAVE [SCHEDULE] (bgsaveCommand): inExec is a BGSAVE inside
// EXEC, which Redis schedules instead of starting. status is the +reply,
// errText the error reply. HotKV has no other child process (AOF rewrite,
// module fork), so SCHEDULE alone never has anything to wait for.
func (r *RDB) BGSave(schedule, inExec bool) (status, errText string) {
	switch {
	case r.bg != nil:
		return "", errBGInProgress
	case inExec:
		r.scheduled = true
		return "Background saving scheduled", ""
	}
	if r.startBG() != nil {
		return "", "ERR"
	}
	return "Background saving started", ""
}

// startBG is rdbSaveBackground: the snapshot starts now (engine lock), and
// a goroutine encodes and writes it.
func (r *RDB) startBG() error {
	if r.bg != nil {
		return errors.New(errBGInProgress)
	}
	r.saves++
	startUs := r.d.Clock.NowUs()
	r.lastBgTry = startUs / 1e6
	r.jobs++
	path := r.Path()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), r.jobs))
	child, err := childwrite.Start(tmp, r.autosync())
	if err != nil {
		r.lastErr = true
		r.d.Log.Warn("Can't save in background: " + err.Error())
		return err
	}
	if r.d.Forked != nil {
		r.d.Forked(r.d.Clock.NowUs() - startUs)
	}
	job := &bgJob{startUnix: startUs / 1e6, dirtyBefore: *r.d.Dirty, done: make(chan bgResult, 1), kill: make(chan struct{}),
		stream: rdb.NewStream(r.d.KS, r.SaveInfo(startUs)), child: child}
	r.encodeUs = r.d.Clock.NowUs() - startUs
	r.bg = job
	r.d.Log.Info(fmt.Sprintf("Background saving started by pid %d", child.Pid()), "start_ms", float64(r.encodeUs)/1000)
	go r.writeBG(job, tmp, path, r.bgDelay, r.d.Config.Int("rdb-key-save-delay"))
	return nil
}

// writeBG is the background half of a BGSAVE (the child's rdbSave): encode
// and write, fsync, rename. It touches the keyspace only through the
// stream's steps, under the engine lock; the cron collects the result.
// keyDelay is rdb-key-save-delay: Redis's child sleeps after each key.
func (r *RDB) writeBG(job *bgJob, tmp, path string, delay time.Duration, keyDelay int64) {
	err := errKilled
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-job.kill:
		case <-job.child.Exited():
		}
	}
	job.mu.Lock()
	killed := job.killed
	job.mu.Unlock()
	if !killed {
		err = r.streamTo(job, keyDelay)
		job.mu.Lock()
		if job.killed {
			err = errKilled
		} else if err == nil {
			err = os.Rename(tmp, path)
		}
		job.mu.Unlock()
	}
	var ke *childwrite.KilledError
	switch {
	case err == nil:
		r.d.Log.Info("DB saved on disk")
	case errors.As(err, &ke):
		r.d.Log.Warn(fmt.Sprintf("Background saving terminated by signal %d", ke.Signal))
	case err != errKilled:
		r.d.Log.Warn("Write error saving DB on disk: " + err.Error())
	}
	if err != nil {
		start := time.Now()
		_ = os.Remove(tmp)
		if r.d.Latency != nil {
			r.d.Latency("rdb-unlink-temp-file", time.Since(start).Milliseconds())
		}
	}
	job.done <- bgResult{err: err, endUnix: r.nowUnix()}
}

// streamTo runs the job's stream into its child (Deps.RunSnapshot), which
// writes and fsyncs the file (rdb-save-incremental-fsync: every 4 MB);
// keyDelay µs per key (rdb-key-save-delay) are slept between steps of one
// key, until the job is killed or its child dies. The error of a child
// that died is its KilledError.
func (r *RDB) streamTo(job *bgJob, keyDelay int64) error {
	child := job.child
	maxKeys, pause := child.KeyDelay(keyDelay, job.kill)
	return child.Feed(func(w io.Writer) error { return r.d.RunSnapshot(job.stream, w, maxKeys, pause) })
}

var errKilled = errors.New("killed")

// autosync is rdb-save-incremental-fsync's period for the child.
func (r *RDB) autosync() int64 {
	if r.d.Config.Bool("rdb-save-incremental-fsync") {
		return childwrite.AutosyncBytes
	}
	return 0
}

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

// BGInProgress reports a BGSAVE in progress.
func (r *RDB) BGInProgress() bool { return r.bg != nil }

// KillBG is killRDBChild: the BGSAVE in progress is abandoned; its file is
// not renamed into place (unless it already was).
func (r *RDB) KillBG() {
	job := r.bg
	if job == nil {
		return
	}
	job.mu.Lock()
	job.killed = true
	job.mu.Unlock()
	close(job.kill)
	job.stream.Close() // the writer's next step ends it
	go job.child.Kill()
	r.bg = nil
	r.lastBgTime = r.nowUnix() - job.startUnix
}

// bgsaveDone is backgroundSaveDoneHandlerDisk.
func (r *RDB) bgsaveDone(job *bgJob, res bgResult) {
	if res.err == nil {
		r.d.Log.Info("Background saving terminated with success")
		*r.d.Dirty -= job.dirtyBefore
		r.lastSave = res.endUnix
		r.lastErr = false
		r.failures = 0
	} else {
		r.d.Log.Warn("Background saving error")
		r.lastErr = true
		r.failures++
	}
	r.lastBgTime = res.endUnix - job.startUnix
	r.bg = nil
}

// Cron is serverCron's persistence part: collect a finished BGSAVE, else
// check the save points; then start a scheduled BGSAVE.
func (r *RDB) Cron() {
	now := r.nowUnix()
	retryOK := func() bool { return now-r.lastBgTry > bgsaveRetryDelay || !r.lastErr }
	if job := r.bg; job != nil {
		select {
		case res := <-job.done:
			r.bgsaveDone(job, res)
		default:
		}
	} else {
		for _, sp := range r.d.Config.Save() {
			if *r.d.Dirty >= int64(sp.Changes) && now-r.lastSave > sp.Seconds && retryOK() {
				r.d.Log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", sp.Changes, sp.Seconds))
				_ = r.startBG()
				break
			}
		}
	}
	if r.bg == nil && r.scheduled && retryOK() {
		if r.startBG() == nil {
			r.scheduled = false
		}
	}
}
