package server

import (
	"github.com/hotkv/hotkv/internal/acl"
	"slices"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// Blocking commands (BLPOP, BLMOVE, BZPOPMIN, BLMPOP...) park the connection,
// never the engine (docs/ARCHITECTURE.md §1), as Redis 7 does:
//
//   - A handler that finds nothing to serve calls Ctx.Block(keys, timeout). The
//     client is recorded, in arrival order, under each key, and its connection
//     stops reading until it is released.
//   - Every change to a key (keyspace.Observer.Modified) marks the key ready if
//     someone waits on it. When the execution unit that changed it ends (the
//     command, the whole EXEC, the whole script), the clients waiting on ready
//     keys run their command again, oldest first; one that is served leaves,
//     one that still finds nothing stays in its place.
//   - On timeout (a timer), CLIENT UNBLOCK or a disconnect, the client leaves;
//     on timeout a command blocked on keys replies a null array without
//     looking at them again (timeoutBlocked), and WAIT runs once more with
//     Ctx.NoBlock set and replies its count.
//
// The reply of a released client is produced under the engine lock by whoever
// released it and delivered through the client's push buffer (pubsub.go),
// which also wakes its owner to flush it and carry on with its pipeline.

// blockedState is a client's blocking state; touched under the engine lock.
type blockedState struct {
	on      bool
	argv    [][]byte // the command, copied
	db      int
	keys    []string
	timer   *time.Timer
	wake    *time.Timer   // BlockOn.WakeAt's
	started int64         // Unix ms
	kind    keyspace.Kind // the type its keys must hold to serve it
	// noKey: run again when a key is deleted or changes type too (XREADGROUP,
	// which then fails: Redis's unblock_on_nokey)
	noKey bool
}

type blockKey struct {
	db  int
	key string
}

// blocking is the server's registry of blocked clients.
type blocking struct {
	waiting map[blockKey][]*client
	ready   []blockKey
	isReady map[blockKey]bool
	count   int // blocked clients
	w       resp.Writer
}

func newBlocking() *blocking {
	return &blocking{waiting: map[blockKey][]*client{}, isReady: map[blockKey]bool{}}
}

// Block implements command.Server's Block: see the file comment.
func (s *Server) Block(c *command.Ctx, on command.BlockOn) bool {
	if !c.MayBlock() {
		return false
	}
	cl := s.clientOf(c.Client)
	if cl == nil {
		return false
	}
	b := &cl.block
	c.Parked = true
	if b.on {
		s.armWake(cl, on.WakeAt, c.Now)
		return true // its command ran again and still finds nothing: it keeps its place
	}
	b.on = true
	cl.isBlocked.Store(true)
	b.kind, b.noKey = on.Kind, on.UnblockOnNoKey
	b.db = cl.DB
	b.started = c.Now
	b.argv = b.argv[:0]
	for _, a := range c.Argv {
		b.argv = append(b.argv, append([]byte(nil), a...))
	}
	b.keys = b.keys[:0]
	seen := map[string]bool{}
	for _, k := range on.Keys {
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		b.keys = append(b.keys, string(k))
		bk := blockKey{cl.DB, string(k)}
		s.blocked.waiting[bk] = append(s.blocked.waiting[bk], cl)
	}
	s.blocked.count++
	s.stats.blockedClients.Add(1)
	if on.Deadline > 0 {
		wait := max(on.Deadline-c.Now, 0)
		b.timer = time.AfterFunc(time.Duration(wait)*time.Millisecond, func() { s.blockTimeout(cl) })
	}
	s.armWake(cl, on.WakeAt, c.Now)
	return true
}

// armWake (re)sets cl's wake-up for BlockOn.WakeAt (0: none).
func (s *Server) armWake(cl *client, at, now int64) {
	b := &cl.block
	if b.wake != nil {
		b.wake.Stop()
		b.wake = nil
	}
	if at <= 0 {
		return
	}
	wait := max(at-now, 0) + 1 // the time must have passed when it runs again
	b.wake = time.AfterFunc(time.Duration(wait)*time.Millisecond, func() { s.blockWake(cl) })
}

// blockWake runs at a blocked client's WakeAt: its keys are ready, so it and
// every client waiting on them run again (Redis's handleClaimableStreamEntries
// signals the stream key).
func (s *Server) blockWake(cl *client) {
	s.eng.Lock()
	defer s.eng.Unlock()
	if s.eng.Lent() {
		cl.block.wake = time.AfterFunc(10*time.Millisecond, func() { s.blockWake(cl) })
		return
	}
	if !cl.block.on {
		return
	}
	cl.block.wake = nil
	for _, k := range cl.block.keys {
		s.keyChanged(cl.block.db, []byte(k))
	}
	s.serveReady()
}

// keyChanged marks key ready when clients wait on it (from Modified).
func (s *Server) keyChanged(db int, key []byte) {
	if s.blocked.count == 0 {
		return
	}
	bk := blockKey{db, string(key)}
	if len(s.blocked.waiting[bk]) == 0 || s.blocked.isReady[bk] {
		return
	}
	s.blocked.isReady[bk] = true
	s.blocked.ready = append(s.blocked.ready, bk)
}

// SignalKeyReady implements command.Server: key is ready for its waiters
// without a change WATCH would see (signalKeyAsReady).
func (s *Server) SignalKeyReady(db int, key []byte) { s.keyChanged(db, key) }

// readyDeletedKeys readies the keys of db that clients failing on a missing
// key wait on (XREADGROUP after FLUSHDB: signalDeletedKeyAsReady), in a fixed
// order.
func (s *Server) readyDeletedKeys(db int) {
	if s.blocked.count == 0 {
		return
	}
	var keys []string
	for bk, cls := range s.blocked.waiting {
		if bk.db != db {
			continue
		}
		for _, cl := range cls {
			if cl.block.noKey {
				keys = append(keys, bk.key)
				break
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.keyChanged(db, []byte(k))
	}
}

// serveReady runs the commands of the clients waiting on ready keys, until no
// key is ready (a served command may ready others, e.g. BLMOVE). Called with
// the engine lock held, at the end of an execution unit.
func (s *Server) serveReady() {
	for len(s.blocked.ready) > 0 {
		bk := s.blocked.ready[0]
		s.blocked.ready = s.blocked.ready[1:]
		delete(s.blocked.isReady, bk)
		queue := append([]*client(nil), s.blocked.waiting[bk]...)
		for _, cl := range queue {
			if !cl.block.on {
				continue
			}
			db := s.ks.DBs[bk.db]
			e := db.Peek([]byte(bk.key))
			if !cl.block.noKey && (e == nil || e.Kind != cl.block.kind || (db.ExpireAt(e) != 0 && db.ExpireAt(e) <= s.clock.NowMs())) {
				// consumed, deleted, expired, or now of another type (LPUSH + DEL +
				// SET in one transaction): this client is not woken, as in Redis;
				// the next may be (an XREADGROUP waiting on the same key fails
				// when it is deleted: handleClientsBlockedOnKey checks each)
				continue
			}
			s.rerunBlocked(cl, false)
		}
	}
	s.blocked.ready = s.blocked.ready[:0]
}

// rerunBlocked runs a blocked client's command again. When it is served (it
// replied) or noBlock (timeout, CLIENT UNBLOCK TIMEOUT: it replies as for an
// empty result) the client is released with the reply; otherwise it called
// Block again and keeps its place. Engine lock held.
func (s *Server) rerunBlocked(cl *client, noBlock bool) bool {
	b := &cl.block
	spec := s.specFor(b.argv)
	if spec == nil {
		s.releaseBlocked(cl, nil)
		return true
	}
	w := &s.blocked.w
	w.Buf = w.Buf[:0]
	w.Proto = cl.Proto
	// a command served because its keys are ready goes through the ACL
	// again, as Redis's processCommand for a reprocessed command: the
	// user's rules may have changed while it waited (not on a timeout,
	// which Redis answers without processing)
	if u := cl.User; !noBlock && u != nil && !u.AllPerms() {
		if e := s.aclCheck(cl, spec, b.argv, acl.CtxToplevel); e != "" {
			w.Error(s.refuse(spec, e))
			s.releaseBlocked(cl, append([]byte(nil), w.Buf...))
			return true
		}
	}
	start := s.clock.NowUs()
	c := command.Ctx{Argv: b.argv, W: w, Client: &cl.Client, KS: s.ks, DB: s.ks.DBs[b.db],
		Srv: s, Rand: s.eng.Rand, Now: start / 1000, NoBlock: noBlock, Locks: s.lockView()}
	prev := s.trk.Save()
	s.trk.BeforeExec(cl, &cl.Client) // cl's own invalidations follow its reply, as for any command
	prevCur := s.cur
	s.cur = cl
	s.call(fromBlocked, &c, spec, start)
	s.cur = prevCur
	if c.Parked {
		s.trk.Restore(prev)
		return false
	}
	s.releaseBlocked(cl, append([]byte(nil), w.Buf...))
	// then its own invalidations (queued after the reply, not in its buffer:
	// the client's owner is another goroutine)
	s.trackAfterCommand(cl, spec)
	if self := cl.push.self; len(self) > 0 {
		cl.push.self = nil
		cl.pushMsg(self)
	}
	s.trk.Restore(prev)
	return true
}

// unlinkBlocked removes cl from the queues of its keys.
func (s *Server) unlinkBlocked(cl *client) {
	b := &cl.block
	if !b.on {
		return
	}
	for _, k := range b.keys {
		bk := blockKey{b.db, k}
		q := s.blocked.waiting[bk]
		for i, x := range q {
			if x == cl {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(s.blocked.waiting, bk)
		} else {
			s.blocked.waiting[bk] = q
		}
	}
	b.on = false
	cl.isBlocked.Store(false)
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.wake != nil {
		b.wake.Stop()
		b.wake = nil
	}
	s.blocked.count--
	s.stats.blockedClients.Add(-1)
}

// releaseBlocked delivers reply (may be nil) and lets the owner read again.
func (s *Server) releaseBlocked(cl *client, reply []byte) {
	s.unlinkBlocked(cl)
	if len(reply) > 0 {
		cl.pushMsg(reply) // wakes the owner, which flushes and reads on
	} else {
		cl.wakeForPush()
	}
}

// blockTimeout runs when a blocked client's timeout passes.
func (s *Server) blockTimeout(cl *client) {
	s.eng.Lock()
	defer s.eng.Unlock()
	if s.eng.Lent() { // a busy script lent the lock: not a command boundary
		cl.block.timer = time.AfterFunc(10*time.Millisecond, func() { s.blockTimeout(cl) })
		return
	}
	if !cl.block.on {
		return
	}
	s.timeoutBlocked(cl)
	s.serveReady()
}

// countUnblocked counts a blocked command that ends without running again
// (Redis's updateStatsOnUnblock): one call of no time of its own, failed or
// not. Engine lock held.
func (s *Server) countUnblocked(cl *client, failed bool) {
	spec := s.specFor(cl.block.argv)
	if spec == nil {
		return
	}
	st := &s.cmdStats[spec.ID]
	st.calls++
	if failed {
		st.failed++
	}
	s.recordLatency(spec.ID, 0)
	s.stats.commands++
}

// timeoutBlocked ends cl's blocked command at its timeout or by CLIENT UNBLOCK
// TIMEOUT, as Redis's replyToBlockedClientTimedOut: a command blocked on keys
// replies a null array without looking at them again (no lazy expiry of a key
// that expired meanwhile, no keyspace hit or miss, no WRONGTYPE for a key that
// changed type); one blocked on no key (WAIT) runs again with NoBlock and
// replies what it counts. Engine lock held.
func (s *Server) timeoutBlocked(cl *client) {
	if len(cl.block.keys) == 0 {
		s.rerunBlocked(cl, true)
		return
	}
	var w resp.Writer
	w.Proto = cl.Proto
	w.NullArray()
	s.countUnblocked(cl, false)
	s.releaseBlocked(cl, w.Buf)
}

// unblockClient is CLIENT UNBLOCK: TIMEOUT replies as a timeout, ERROR with
// Redis's UNBLOCKED error. Engine lock held. false when cl was not blocked.
func (s *Server) unblockClient(cl *client, withError bool) bool {
	if !cl.block.on {
		return false
	}
	if withError {
		s.unblockWithError(cl, "UNBLOCKED client unblocked via CLIENT UNBLOCK")
		return true
	}
	s.timeoutBlocked(cl)
	return true
}

// unblockWithError ends cl's blocked command with the error msg (an
// UNBLOCKED one), counted as failed. Engine lock held.
func (s *Server) unblockWithError(cl *client, msg string) {
	var w resp.Writer
	w.Proto = cl.Proto
	w.Error(msg)
	s.countError("UNBLOCKED")
	s.countUnblocked(cl, true) // the blocked command ends here, failed
	s.releaseBlocked(cl, w.Buf)
}

// disconnectAllBlocked is Redis's disconnectAllBlockedClients, for a master
// that turns replica: what its blocked clients wait for would now come from
// the master's stream (a BLPOP served on the replica would pop what the
// master keeps), so they get UNBLOCKED and are closed after it. Engine
// lock held.
func (s *Server) disconnectAllBlocked() {
	s.mu.Lock()
	var blocked []*client
	for _, cl := range s.clients {
		if cl.block.on {
			blocked = append(blocked, cl)
		}
	}
	s.mu.Unlock()
	for _, cl := range blocked {
		cl.closeAfterBlocked.Store(true)
		s.unblockWithError(cl, "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
	}
}

// dropBlocked forgets a disconnecting client. Engine lock held.
func (s *Server) dropBlocked(cl *client) {
	if cl.block.on {
		s.unlinkBlocked(cl)
	}
}

// UnblockClient is CLIENT UNBLOCK id [TIMEOUT|ERROR].
func (s *Server) UnblockClient(id int64, withError bool) int {
	s.mu.Lock()
	cl := s.clients[id]
	s.mu.Unlock()
	if cl == nil || !s.unblockClient(cl, withError) {
		return 0
	}
	return 1
}
