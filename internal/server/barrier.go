package server

import (
	"math"
	"sync"
	"sync/atomic"
)

// The reply barrier: the hook before replies are written to sockets (where
// Redis's beforeSleep fsyncs the AOF before handleClientsWithPendingWrites),
// so that a feature can hold a unit's replies until its effects are durable
// (appendfsync always) or committed (a Raft log), and release them in order.
//
// Every execution unit whose effects are handed to the propagation targets
// gets the next unit sequence number (UnitSeq, read by the targets in
// UnitDone). With a barrier set, a client's replies carry the sequence number
// of the last unit with effects when its command ended: its own writes and
// everything it could have read. A message pushed to another client while a
// unit runs (Pub/Sub, keyspace events, invalidations) waits for that unit to
// end, then carries its number. Before writing a client's buffer, its owner
// asks the barrier whether that number is released; if not, the buffer waits
// (the client's pipeline with it) until the barrier's owner calls
// ReleaseReplies. Replies of one client stay in order: they share its buffer.
//
// With no barrier set, nothing is recorded, and the check before a write is
// one atomic load that finds 0.

// ReplyBarrier decides when replies may be written.
type ReplyBarrier interface {
	// Released reports whether the units up to and including seq are
	// released (durable, committed). Any goroutine may call it, often.
	Released(seq uint64) bool
}

// replyPending marks a client that a running unit pushed messages to: held
// until the unit ends (then it carries the unit's number).
const replyPending = math.MaxUint64

// barrierState is the server's side of the barrier.
type barrierState struct {
	b   atomic.Pointer[ReplyBarrier]
	on  bool          // b is set (engine lock: read by every command)
	seq atomic.Uint64 // the last unit with effects handed over
	// pushed are the clients messages went to during the running unit
	// (engine lock)
	pushed []*client

	mu      sync.Mutex
	waiting []*client     // event-loop clients whose write waits for a release
	release chan struct{} // closed by ReleaseReplies: goroutine-mode writers wait on it
}

// SetReplyBarrier installs b (nil removes it, releasing everything). Call
// with no command running: at start-up, before the feature's first unit.
func (s *Server) SetReplyBarrier(b ReplyBarrier) {
	s.eng.Lock()
	s.setReplyBarrierLocked(b)
	s.eng.Unlock()
}

// setReplyBarrierLocked is SetReplyBarrier with the engine lock held (a
// feature switched on or off by a command: CONFIG SET appendonly).
func (s *Server) setReplyBarrierLocked(b ReplyBarrier) {
	if b == nil {
		s.barrier.b.Store(nil)
		s.barrier.on = false
	} else {
		s.barrier.b.Store(&b)
		s.barrier.on = true
	}
	s.ReleaseReplies()
}

// UnitSeq is the sequence number of the last execution unit whose effects
// were handed to the propagation targets: in UnitDone, the unit just handed.
func (s *Server) UnitSeq() uint64 { return s.barrier.seq.Load() }

// ReleaseReplies tells the server that the barrier released more units: the
// replies that waited are written if they may be now. Any goroutine.
func (s *Server) ReleaseReplies() {
	bs := &s.barrier
	bs.mu.Lock()
	waiting := bs.waiting
	bs.waiting = nil
	ch := bs.release
	bs.release = nil
	bs.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	for _, cl := range waiting {
		cl.wakeForPush() // its loop flushes it again
	}
}

// noteUnitHanded numbers a unit whose effects went to the targets, before
// they are told (propFlush). Engine lock held.
func (s *Server) noteUnitHanded() { s.barrier.seq.Add(1) }

// noteReplySeq stamps cl's replies with the last unit they may depend on,
// after one of its commands. Engine lock held.
func (s *Server) noteReplySeq(cl *client) {
	if s.barrier.on && cl.replySeq.Load() != replyPending {
		cl.replySeq.Store(s.barrier.seq.Load())
	}
}

// notePushed holds cl's output until the running unit ends (pushMsg, for a
// message a unit produced). Engine lock held.
func (s *Server) notePushed(cl *client) {
	if !s.barrier.on {
		return
	}
	if s.prop.nesting == 0 {
		if cl.replySeq.Load() != replyPending {
			cl.replySeq.Store(s.barrier.seq.Load())
		}
		return
	}
	if cl.replySeq.Swap(replyPending) != replyPending {
		s.barrier.pushed = append(s.barrier.pushed, cl)
	}
}

// unitEnded gives the clients the unit pushed to its number and wakes them
// (closeUnit, at the end of the outermost unit, when there are some). Engine
// lock held.
func (s *Server) unitEnded() {
	seq := s.barrier.seq.Load()
	for i, cl := range s.barrier.pushed {
		cl.replySeq.Store(seq)
		s.barrier.pushed[i] = nil
	}
	s.barrier.pushed = s.barrier.pushed[:0]
	s.ReleaseReplies() // their writers try again
}

// replyHeld reports whether cl's output must wait for the barrier. The
// client's owner calls it before a write, without the engine lock.
func (s *Server) replyHeld(cl *client) bool {
	seq := cl.replySeq.Load()
	if seq == 0 {
		return false
	}
	if seq == replyPending {
		return true
	}
	b := s.barrier.b.Load()
	return b != nil && !(*b).Released(seq)
}

// holdForBarrier registers an event-loop client whose write waits, and
// reports whether it still must (a release may have come in between).
func (s *Server) holdForBarrier(cl *client) bool {
	bs := &s.barrier
	bs.mu.Lock()
	bs.waiting = append(bs.waiting, cl)
	bs.mu.Unlock()
	return s.replyHeld(cl)
}

// waitForBarrier blocks a goroutine-mode client's writer until its output
// may be written; false when the server stops first (the output is never
// written: it was never acknowledged).
func (s *Server) waitForBarrier(cl *client) bool {
	for {
		bs := &s.barrier
		bs.mu.Lock()
		if bs.release == nil {
			bs.release = make(chan struct{})
		}
		ch := bs.release
		bs.mu.Unlock()
		if !s.replyHeld(cl) {
			return true
		}
		select {
		case <-ch:
		case <-s.shutdown:
			return false
		}
	}
}
