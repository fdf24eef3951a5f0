package server

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/hotkv/hotkv/internal/rdb"
)

// SnapshotFunc writes the whole dataset as an RDB file to w: SYNC's payload.
// It runs under the engine lock (the dataset does not change meanwhile).
type SnapshotFunc func(w io.Writer) error

// SetSnapshot replaces the snapshot writer (tests use it to make SYNC slow
// or fail); nil restores internal/rdb's.
func (s *Server) SetSnapshot(f SnapshotFunc) {
	s.eng.Lock()
	s.snapshotFn = f
	s.eng.Unlock()
}

// snapshot writes the dataset and the function libraries as internal/rdb's
// file format (decision 0020), the same bytes DEBUG RELOAD saves.
func (s *Server) snapshot(w io.Writer) error {
	if s.snapshotFn != nil {
		return s.snapshotFn(w)
	}
	return s.rdb.WriteSnapshot(w)
}

// forked counts a child process a BGSAVE or a rewrite started (the
// processes that write their files: internal/childwrite), for INFO's
// total_forks and latest_fork_usec. Engine lock.
func (s *Server) forked(us int64) {
	s.stats.forks++
	s.stats.latestForkUs = us
	s.latencyEvent("fork", us/1000)
}

// stepTarget is how long one snapshot step may hold the engine lock:
// runSnapshot sizes its steps to it from the time the last ones took.
const stepTarget = time.Millisecond

// runSnapshot drives a snapshot stream (BGSAVE's, an AOF rewrite's base, a
// replica's payload) to its end from the calling goroutine, a background
// one: each Step runs under the engine lock, handing out as many keys as
// fit in about a millisecond (so that no client waits longer for the
// lock), on an event loop at the end of its cycle (onLoop, looptask.go:
// a step on this goroutine's own thread held the lock for 3-17 ms whenever
// the kernel gave its processor to another thread meanwhile), and its
// bytes are written to out without the lock (through a 256
// KiB buffer, flushed at the end; out is the child process that writes the
// file, internal/childwrite, or a replica's connection). After a step
// during which clients ran commands it sleeps as long as the step took:
// the snapshot gets at most half a core, and the event loops always find a
// free processor (on two cores, a snapshot that ran flat out kept clients
// waiting 10-20 ms for one: Go preempts a running goroutine only every
// 10 ms; yielding the processor instead of sleeping still let the probe of
// bench/snapshot.sh wait 9-11 ms, and cut the writes served meanwhile by
// two thirds). After a step during which none did it only yields: an idle
// server's snapshot runs flat out (a replica's full sync of 80 MB took 3 s
// to encode at half pace, where Redis's child takes 0.3). While a busy script has
// lent the lock (its unit is still in progress: the keyspace must not be
// touched) it tries again a millisecond later. maxKeys, when > 0, caps a
// step's keys; pause, when not nil, runs after each step that handed out
// keys, with their number (rdb-key-save-delay), and returns false to stop.
// Closing the stream (under the lock, by whoever abandons the job) makes it
// return an error.
func (s *Server) runSnapshot(st *rdb.Stream, out io.Writer, maxKeys int, pause func(keys int) bool) error {
	w := bufio.NewWriterSize(out, 256<<10)
	n := 64
	var cmds int64 = -1
	for {
		var (
			lent, busy, done bool
			chunk            []byte
			keys             int
			took             time.Duration
			err              error
		)
		s.onLoop(func() {
			s.eng.Lock()
			defer s.eng.Unlock()
			if lent = s.eng.Lent(); lent {
				return
			}
			busy = s.stats.commands != cmds // commands ran since the last step
			cmds = s.stats.commands
			before := st.Keys()
			start := time.Now()
			chunk, done, err = st.Step(n)
			took = time.Since(start)
			keys = st.Keys() - before
		})
		if lent {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		if pause != nil && keys > 0 && !pause(keys) {
			return errSnapshotStopped // after each key, the last one too
		}
		if done {
			return w.Flush()
		}
		if busy {
			time.Sleep(took)
		} else {
			runtime.Gosched()
		}
		switch {
		case took < stepTarget/2 && keys >= n/2:
			n = min(2*n, 1<<20)
		case took > stepTarget:
			n = max(n/2, 1)
		}
		if maxKeys > 0 {
			n = min(n, maxKeys)
		}
	}
}

var errSnapshotStopped = errors.New("snapshot stopped")
