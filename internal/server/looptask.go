package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Work that holds the engine lock on behalf of a background goroutine (a
// snapshot's steps) runs on an event loop, at the end of one of its cycles,
// rather than on the goroutine's own thread. A thread that holds the lock
// can lose its processor to any other the kernel runs (on two vCPUs: the
// load, the file's writer, the kernel's own threads), and every client
// then waits for it as well: during a 5M-key BGSAVE, steps of 1 ms held the
// lock for 3-17 ms. On the loop, a step delays the loop's clients by its
// own length only, and the lock's holder is the thread they wait for
// anyway.

// loopTask is one piece of such work; claimed makes exactly one of the
// loop and the goroutine that posted it run it.
type loopTask struct {
	fn      func()
	claimed atomic.Bool
	done    chan struct{}
}

// loopTasks is the queue of posted tasks (any loop may run them).
type loopTasks struct {
	mu      sync.Mutex
	q       []*loopTask
	pending atomic.Int32 // len(q), read without the mutex at every cycle's end
}

// loopTaskPatience is how long a poster waits for a loop before it runs the
// task itself (a loop inside a long command, or stopping).
const loopTaskPatience = 50 * time.Millisecond

// onLoop runs fn on an event loop (Net.Wake wakes the first one), or on the
// calling goroutine when no loop runs or none took it within
// loopTaskPatience, and returns once fn did. fn takes the engine lock
// itself: call without it.
func (s *Server) onLoop(fn func()) {
	t := &loopTask{fn: fn, done: make(chan struct{})}
	s.tasks.mu.Lock()
	s.tasks.q = append(s.tasks.q, t)
	s.tasks.pending.Store(int32(len(s.tasks.q)))
	s.tasks.mu.Unlock()
	if s.net.Wake() {
		timer := time.NewTimer(loopTaskPatience)
		select {
		case <-t.done:
			timer.Stop()
			return
		case <-timer.C:
		}
	}
	if !t.claimed.CompareAndSwap(false, true) {
		<-t.done // a loop runs it
		return
	}
	s.tasks.mu.Lock()
	for i, q := range s.tasks.q {
		if q == t {
			s.tasks.q = append(s.tasks.q[:i], s.tasks.q[i+1:]...)
			break
		}
	}
	s.tasks.pending.Store(int32(len(s.tasks.q)))
	s.tasks.mu.Unlock()
	fn()
}

// runLoopTasks runs the tasks posted so far: an event loop at the end of a
// cycle (netHost.CycleDone), without the engine lock.
func (s *Server) runLoopTasks() {
	if s.tasks.pending.Load() == 0 {
		return
	}
	s.tasks.mu.Lock()
	q := s.tasks.q
	s.tasks.q = nil
	s.tasks.pending.Store(0)
	s.tasks.mu.Unlock()
	for _, t := range q {
		if t.claimed.CompareAndSwap(false, true) {
			t.fn()
			close(t.done)
		}
	}
}
