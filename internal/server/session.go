package server

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/network"
)

// The seam between the network side (internal/server/network) and the
// execution path: a connection hands its commands to its client in batches
// (Run), and the client answers what the network asks before and after it
// writes. The network side needs of the server only netHost.

// netHost is the Server as the network side's Host.
type netHost Server

var (
	_ network.Host    = (*netHost)(nil)
	_ network.Session = (*client)(nil)
)

// Released implements network.Host: n bytes of connection buffers were given
// back; used_memory counts them as freed at once, as Redis's does when it
// frees them, not at the next GC.
func (h *netHost) Released(n int64) {
	s := (*Server)(h)
	s.eng.Lock()
	s.mem.released += n
	s.eng.Unlock()
}

// PauseRemainingMs implements network.Host.
func (h *netHost) PauseRemainingMs() int64 { return (*Server)(h).pauseRemainingMs() }

// CycleStart, CycleEnd and CycleDone implement network.Host: the AOF's group
// commit (appendfsync always) before the cycle's replies are written; at
// the cycle's end, the work background goroutines posted (looptask.go).
func (h *netHost) CycleStart()       { h.aof.CycleStart() }
func (h *netHost) CycleEnd(raw bool) { h.aof.CycleEnd(raw) }
func (h *netHost) CycleDone() {
	h.aof.CycleDone()
	(*Server)(h).runLoopTasks()
}

// Run implements network.Session: argv and the commands complete behind it
// (those the connection read while the client was blocked first: pending,
// goroutine mode) run one by one through process, under one hold of the
// engine lock, until none is left or the batch must stop: CLIENT PAUSE holds
// a command back (event loops), a command blocks, the client is to close, or
// the batch reached maxBatch commands (or, in goroutine mode, maxReplyBatch
// reply bytes). While a script is busy and lent the lock, the batch is
// answered as process answers then (BUSY, or the few commands allowed).
func (cl *client) Run(argv [][]byte, pending *[][][]byte) (r network.Ran) {
	s := cl.srv
	rd := cl.nc.Reader()
	st := s.lockOrBusy()
	// the batch starts once the lock is held: the first command's frozen now
	// and its duration (SLOWLOG, commandstats) leave out the wait for the
	// lock (a snapshot's step, another loop's batch), as Redis's do
	cl.clockUs = s.clock.NowUs()
	batchStart, cmdsBefore := cl.clockUs, cl.cmds
	cl.nc.Touch(cl.clockUs / 1000)
	if st != nil {
		r = cl.busy(argv, st)
		s.eng.Unlock()
		return r
	}
	var ok bool
	for n := 0; ; n++ {
		if n%keyspace.PrefetchMax == 0 && rd.Buffered() > 0 {
			s.prefetch(cl, argv)
		} else if n == 0 && len(argv) >= 5 {
			s.prefetchKeys(cl, argv)
		}
		if !s.dispatch(cl, argv) {
			r.Stop, r.Held = network.StopHeld, argv
			break
		}
		if cl.isBlocked.Load() {
			r.Stop = network.StopBlocked
			break
		}
		if cl.CloseAfterReply || cl.killed() {
			break
		}
		if len(cl.w.Buf) >= resp.SealMin {
			cl.w.Seal() // a reply buffer this long grows by pieces from now on
		}
		if cl.w.Len() >= maxReplyBatch && s.overOutputLimit(cl, cl.w.Len()-cl.w.Referenced()) {
			// over client-output-buffer-limit: nothing more runs, and the
			// write that follows drops the client (Redis's CLOSE_ASAP, set as
			// the reply grows past the limit)
			cl.obufOver = true
			break
		}
		if n >= maxBatch || (pending != nil && cl.w.Len() >= maxReplyBatch) ||
			cl.w.Len()-cl.w.Referenced() >= maxLoopReplyBatch {
			// on an event loop, a batch that built a megabyte of output
			// yields to the loop's other clients before it builds more (the
			// rest of its pipeline runs in the loop's next turn)
			r.Stop = network.StopFull
			break
		}
		if pending != nil && len(*pending) > 0 {
			argv, *pending = (*pending)[0], (*pending)[1:]
			continue
		}
		if argv, ok, r.Err = rd.TryCommand(); !ok || r.Err != nil {
			break
		}
	}
	// the batch's replies wait for the cycle's end only if a unit they
	// depend on is not released yet
	r.Barrier = s.barrier.on && s.replyWaits(cl)
	s.eng.Unlock()
	r.Close = cl.CloseAfterReply || cl.killed()
	r.Cmds, r.Us = cl.cmds-cmdsBefore, cl.clockUs-batchStart
	return r
}

// Busy implements network.Session: the engine lock is held by a busy
// script, on the loop that runs it.
func (cl *client) Busy(argv [][]byte) network.Ran {
	st := cl.srv.scripts.cur.Load()
	if st == nil {
		return network.Ran{}
	}
	cl.clockUs = cl.srv.clock.NowUs()
	return cl.busy(argv, st)
}

// busy answers argv and the commands complete behind it while st is busy:
// process given the script (only allow-busy commands run). Engine lock held
// (lent).
func (cl *client) busy(argv [][]byte, st *scriptState) (r network.Ran) {
	rd := cl.nc.Reader()
	cmdsBefore := cl.cmds
	for {
		cl.srv.process(cl, argv, st)
		var ok bool
		if argv, ok, r.Err = rd.TryCommand(); !ok || r.Err != nil || cl.CloseAfterReply {
			break
		}
	}
	r.Close = cl.CloseAfterReply
	r.Cmds = cl.cmds - cmdsBefore
	return r
}

// Resume implements network.Session: the command CLIENT PAUSE held back runs
// once neither the pause nor a busy script holds it.
func (cl *client) Resume(argv [][]byte) bool {
	s := cl.srv
	if s.pausedFor(cl, s.specFor(argv), argv) || s.scripts.cur.Load() != nil {
		return false
	}
	s.notePaused(cl, false)
	s.eng.Lock()
	cl.clockUs = s.clock.NowUs()
	ran := s.dispatch(cl, argv)
	s.eng.Unlock()
	if !ran { // paused again in between
		s.notePaused(cl, true)
	}
	return ran
}

// Held implements network.Session.
func (cl *client) Held(on bool) { cl.srv.notePaused(cl, on) }

// Blocked implements network.Session.
func (cl *client) Blocked() bool { return cl.isBlocked.Load() }

// Closing implements network.Session: a blocked command ended with an error
// that closes the client (disconnectAllBlocked).
func (cl *client) Closing() bool { return cl.closeAfterBlocked.Load() }

// BeforeWrite implements network.Session: the queued messages join the reply
// buffer, the reply barrier may hold it, and client-output-buffer-limit may
// close the connection.
func (cl *client) BeforeWrite(sent int, wait bool) network.Gate {
	s := cl.srv
	cl.drainPush()
	if s.replyHeld(cl) {
		if !wait {
			if s.holdForBarrier(cl) {
				return network.WriteHold // ReleaseReplies wakes the owner
			}
		} else if !s.waitForBarrier(cl) {
			return network.WriteDrop
		}
		cl.drainPush()
	}
	// the references do not count, as in Redis a reply referring to a
	// string is a pointer's worth of output buffer
	if unsent := cl.w.Len() - sent - cl.w.Referenced(); cl.obufOver || unsent > 0 && s.overOutputLimit(cl, unsent) {
		cl.w.Reset()
		return network.WriteDrop
	}
	return network.WriteNow
}

// AfterWrite implements network.Session.
func (cl *client) AfterWrite() { cl.resetReplyBuf() }

// Publish implements network.Session (clientmem.go).
func (cl *client) Publish(evictionOnly bool) {
	if evictionOnly {
		cl.srv.publishForEviction(cl)
	} else {
		cl.srv.publishMem(cl)
	}
}

// Closed implements network.Session: everything the client holds in the
// execution path goes, and it leaves the registry (CLIENT LIST, tracking
// redirection see it gone) before its socket closes.
func (cl *client) Closed() {
	s := cl.srv
	s.notePaused(cl, false)
	s.eng.Lock()
	s.unwatchAll(cl)
	s.releaseClient(cl)
	s.unsubscribeAll(cl)
	s.dropBlocked(cl)
	s.trk.Disable(cl)
	s.dropReplica(cl)
	s.dropWaiter(cl)
	s.dropMonitor(cl)
	s.eng.Unlock()
	s.mu.Lock()
	delete(s.clients, cl.ID)
	s.mu.Unlock()
}

// prefetch starts loading, from memory into the CPU caches, the keyspace
// entries (and members) of the pipelined commands about to run: argv's and
// those of the complete requests buffered behind it (keyspace.DB.Prefetch).
// Engine lock held.
func (s *Server) prefetch(cl *client, argv [][]byte) {
	s.prefetchFrom(s.ks.DBs[cl.DB], cl.nc.Reader(), argv)
}

// prefetchFrom is prefetch for argv, about to run on db, and the requests
// buffered whole in rd behind it: a client's, or a master's stream on a
// replica. Engine lock held.
func (s *Server) prefetchFrom(db *keyspace.DB, rd *resp.Reader, argv [][]byte) {
	if len(argv) < 2 {
		return
	}
	if !db.PrefetchWorth(argv[1]) {
		return // the data is in the caches anyway
	}
	r := keyspace.PrefetchReq{Key: argv[1], Last: argv[len(argv)-1]}
	if len(argv) > 2 {
		r.Arg2 = argv[2]
	}
	pf := &s.pf
	reqs := append(pf.reqs[:0], r)
	pf.peek = rd.PeekArgs(pf.peek[:0], keyspace.PrefetchMax-len(reqs))
	for _, p := range pf.peek {
		reqs = append(reqs, keyspace.PrefetchReq{Key: p.Arg1, Arg2: p.Arg2, Last: p.Last})
	}
	if len(reqs) > 1 { // one request (nothing complete behind it): nothing to overlap
		db.Prefetch(reqs)
	}
	clear(reqs) // they point into the client's buffer: keep no buffer alive
	clear(pf.peek)
	pf.reqs = reqs[:0]
}

// prefetchKeys is prefetch for one command that names several keys (MSET,
// MGET, DEL, EXISTS, ...; the command table's key positions): without it
// their lookups wait for memory one after the other. Engine lock held.
func (s *Server) prefetchKeys(cl *client, argv [][]byte) {
	db := s.ks.DBs[cl.DB]
	if db.Len() < keyspace.PrefetchMinKeys {
		return // the keys are in the CPU caches anyway
	}
	spec := s.table.Lookup(argv[0])
	if spec == nil {
		return
	}
	first, last, step, ok := spec.KeyRange(len(argv))
	if !ok || last < first+step {
		return // one key (or none): nothing to overlap
	}
	reqs := s.pf.reqs[:0]
	for i := first; i <= last && len(reqs) < keyspace.PrefetchMax; i += step {
		reqs = append(reqs, keyspace.PrefetchReq{Key: argv[i]})
	}
	db.Prefetch(reqs) // two keys or more: the range was checked above
	clear(reqs)       // they point into the client's buffer: keep no buffer alive
	s.pf.reqs = reqs[:0]
}

// prefetchScratch is prefetch's scratch space; engine lock.
type prefetchScratch struct {
	reqs []keyspace.PrefetchReq
	peek []resp.Peeked
}
