package server

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/command"
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
// A command that had no effects and names its keys at fixed positions (GET,
// a refused SET NX, a DELEX whose token did not match) depends only on those
// keys: its replies carry the last unit that changed one of them (keysSeq),
// not the last unit of all, so that a reader of keys no held unit touched is
// answered at once (a refused lock acquisition does not wait for the fsync
// of other clients' acquisitions). Anything else carries the last unit.
//
// With no barrier set, nothing is recorded, and the check before a write is
// one atomic load that finds 0.

// ReplyBarrier decides when replies may be written.
type ReplyBarrier interface {
	// Released reports whether the units up to and including seq are
	// released (durable, committed). Any goroutine may call it, often.
	Released(seq uint64) bool
	// Reached reports whether the units up to seq are released already,
	// without acting to release them (Released may: the AOF writes what is
	// pending under everysec): whether a batch's replies may be written
	// at once rather than at the event loop's cycle end. Any goroutine.
	Reached(seq uint64) bool
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

	// The units that changed keys (engine lock), kept while the barrier is
	// set: dirty[dirtySlot(db, key)] is the last unit that changed a key
	// hashing there (dirtyPending while that unit runs: pend lists those
	// slots, numbered when it ends); allSeq is the last unit that changed
	// every key (FLUSHDB, FLUSHALL, SWAPDB, a load; allPend while it runs),
	// and the unit the barrier was set at. Keys sharing a slot share its
	// number: a reader may wait for a unit that changed another key, never
	// miss one that changed its own.
	dirty   [dirtySlots]uint64
	pend    []uint16
	allSeq  uint64
	allPend bool
}

// dirtySlots is the size of barrierState.dirty: 8 KiB, in the CPU caches.
const dirtySlots = 1024

// dirtyPending marks a slot whose key a running unit changed.
const dirtyPending = math.MaxUint64

var dirtySeed = maphash.MakeSeed()

// dirtySlot is db's key's slot in barrierState.dirty.
func dirtySlot(db int, key []byte) uint16 {
	h := maphash.Bytes(dirtySeed, key) ^ uint64(db)*0x9e3779b97f4a7c15
	return uint16(h >> (64 - 10)) // dirtySlots = 1<<10
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
		// keys changed before the barrier was set were not recorded: a
		// reader of any key depends on the units until now
		s.barrier.allSeq = max(s.barrier.allSeq, s.barrier.seq.Load())
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
// after one of its commands (c, of spec; seqBefore: the last unit handed
// before it ran): for a command without effects whose keys are at fixed
// positions, the last unit that changed one of them; otherwise the last unit
// of all. A stamp never goes down: the client's earlier replies share its
// buffer. Called with the barrier set; engine lock held.
func (s *Server) noteReplySeq(cl *client, c *command.Ctx, spec *command.Spec, seqBefore uint64) {
	prev := cl.replySeq.Load()
	if prev == replyPending {
		return
	}
	seq := s.barrier.seq.Load()
	if seq == seqBefore && !c.Parked && spec.Flags&command.RunsCommands == 0 {
		if first, last, step, ok := spec.KeyRange(len(c.Argv)); ok {
			seq = s.keysSeq(c.DB.ID, c.Argv, first, last, step)
		}
	}
	if seq > prev {
		cl.replySeq.Store(seq)
	}
}

// keysSeq is the last unit that changed one of argv's keys at first, first
// + step, ... last in db (or every key). Engine lock held, no unit running.
func (s *Server) keysSeq(db int, argv [][]byte, first, last, step int) uint64 {
	bs := &s.barrier
	if bs.allPend {
		return bs.seq.Load()
	}
	seq := bs.allSeq
	for i := first; i <= last; i += step {
		v := bs.dirty[dirtySlot(db, argv[i])]
		if v == dirtyPending {
			return bs.seq.Load()
		}
		seq = max(seq, v)
	}
	return seq
}

// markDirty records that key changed in the running unit (Modified, with
// the barrier set). Engine lock held.
func (s *Server) markDirty(db int, key []byte) {
	bs := &s.barrier
	i := dirtySlot(db, key)
	if bs.dirty[i] != dirtyPending {
		bs.dirty[i] = dirtyPending
		bs.pend = append(bs.pend, i)
	}
}

// markKeysDirty records that the command c ran (of spec, with effects)
// changed its keys: every key the command table says it names, or every key
// when it names none (FUNCTION LOAD). The keyspace reports each change too
// (Modified); this keeps a reader of the command's keys waiting for it even
// where a change in place was not reported. Engine lock held.
func (s *Server) markKeysDirty(c *command.Ctx, spec *command.Spec) {
	db := c.DB.ID
	if first, last, step, ok := spec.KeyRange(len(c.Argv)); ok { // without allocating
		for i := first; i <= last; i += step {
			s.markDirty(db, c.Argv[i])
		}
		return
	}
	pos := spec.KeyIndexes(c.Argv) // a keys function's
	for _, i := range pos {
		s.markDirty(db, c.Argv[i])
	}
	if len(pos) == 0 {
		s.markAllDirty()
	}
}

// markAllDirty records that every key changed in the running unit (a
// flush, SWAPDB, a command with effects that names no key), while the
// barrier is set. Engine lock held.
func (s *Server) markAllDirty() {
	if s.barrier.on {
		s.barrier.allPend = true
	}
}

// numberDirty gives the slots the unit that just ended marked its number
// (closeUnit, after the hand-over; a change made outside any unit, such as
// an active expiry's deletion, is handed over before any command runs, so
// the next unit's end numbers it no lower than its own). Engine lock held.
func (s *Server) numberDirty() {
	bs := &s.barrier
	seq := bs.seq.Load()
	for _, i := range bs.pend {
		bs.dirty[i] = seq
	}
	bs.pend = bs.pend[:0]
	if bs.allPend {
		bs.allSeq, bs.allPend = seq, false
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
func (s *Server) replyHeld(cl *client) bool { return s.replyWaitsFor(cl, true) }

// replyWaits reports whether cl's output waits for a unit the barrier has
// not reached yet (Reached: it does nothing to release it). Engine lock held.
func (s *Server) replyWaits(cl *client) bool { return s.replyWaitsFor(cl, false) }

// replyWaitsFor is replyHeld (release: the barrier's Released, which may
// act to release) and replyWaits (its Reached).
func (s *Server) replyWaitsFor(cl *client, release bool) bool {
	seq := cl.replySeq.Load()
	if seq == 0 {
		return false
	}
	if seq == replyPending {
		return true
	}
	b := s.barrier.b.Load()
	if b == nil {
		return false
	}
	if release {
		return !(*b).Released(seq)
	}
	return !(*b).Reached(seq)
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
