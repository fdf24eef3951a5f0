package server

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// Client memory (CLIENT LIST's qbuf ... tot-mem, INFO's client_recent_max_*,
// MEMORY STATS' clients.normal) and client eviction (maxmemory-clients, Redis's
// evictClients).
//
// A connection's buffers belong to the goroutine that serves it, so that
// goroutine publishes their figures (publishMem) after it reads and after it
// runs commands, and anyone reads the published ones. The server keeps their
// sum for the clients that may be evicted (normal and Pub/Sub clients without
// CLIENT NO-EVICT), and when it reaches maxmemory-clients the biggest of them
// are disconnected until it is below, as Redis does.

// clientMem is a client's published memory figures.
type clientMem struct {
	qbuf     atomic.Int64 // request bytes read and not yet run
	qbufFree atomic.Int64 // the query buffers' free room
	multi    atomic.Int64 // MULTI's queued commands and WATCH's keys
	obl      atomic.Int64 // reply bytes not yet written
	oll      atomic.Int64 // Pub/Sub output queued behind the replies (0 or 1 block)
	omem     atomic.Int64 // output memory beyond the reply buffer's first 16 KiB
	tot      atomic.Int64 // all of it with the client's own structure (tot-mem)
	counted  atomic.Int64 // what of tot is in Server.clientsMem (0 once evicted or closed)
	evicted  atomic.Int64 // tot when client eviction took it, until it is closed (Server.evictedMem)
	push     atomic.Int64 // the queued messages' part of tot (notePush)
	rbs      atomic.Int64 // the reply buffer's size
}

// replyChunk is Redis's PROTO_REPLY_CHUNK_BYTES: the reply buffer every client
// has; what output takes beyond it is omem.
const replyChunk = 16 << 10

// clientEvictionMin is the least maxmemory-clients Redis applies (a smaller
// setting would disconnect every client, the one changing it too).
const clientEvictionMin = 128 << 10

// clientStructBytes is a client's own structure.
var clientStructBytes = int64(unsafe.Sizeof(client{}))

// publishMem computes cl's memory figures and publishes them, then evicts
// clients if their sum reached maxmemory-clients. Only the goroutine that
// serves cl calls it.
func (s *Server) publishMem(cl *client) {
	var qbuf, qmem int64
	obl := int64(cl.w.Held())
	if cl.nc != nil {
		rd := cl.nc.Reader()
		qbuf, qmem = int64(rd.Buffered()), rd.Mem()
		obl -= int64(cl.nc.Sent())
	}
	out := int64(cl.w.Cap())
	var push int64
	if cl.push.pending.Load() || cap(cl.push.self) > 0 || cl.push.counts[0].Load()+cl.push.counts[1].Load()+cl.push.counts[2].Load() > 0 {
		cl.push.mu.Lock()
		push = int64(cap(cl.push.buf) + cap(cl.push.self))
		cl.push.mu.Unlock()
	}
	m := &cl.mem
	multi := cl.multiMem()
	tot := clientStructBytes + qmem + out + push + multi
	oll := int64(0)
	if push > 0 {
		oll = 1
	}
	// a store only when a figure changed: the line stays shared for readers
	// and the common request (same buffers as the last) costs loads only
	setIf(&m.qbuf, qbuf)
	setIf(&m.qbufFree, max(qmem-qbuf, 0))
	setIf(&m.multi, multi)
	setIf(&m.obl, max(obl, 0))
	setIf(&m.oll, oll)
	setIf(&m.omem, max(out-replyChunk, 0)+push)
	setIf(&m.rbs, min(out, replyChunk))
	setIf(&m.push, push)
	setIf(&m.tot, tot)
	if cl.killed() || !cl.evictable() {
		s.uncount(cl)
	} else if old := m.counted.Load(); old != tot && m.counted.CompareAndSwap(old, tot) && !cl.killed() {
		s.clientsMem.Add(tot - old)
	}
	// checked after every client's commands, so that CONFIG SET
	// maxmemory-clients and CLIENT NO-EVICT off take effect at once
	if lim := s.clientEvictionLimit(); lim > 0 && s.clientsMem.Load() >= lim {
		s.evictClients(lim)
	}
}

// evictClientsFirst is processCommand's evictClients step, before key
// eviction: with client eviction on, cl's figures are published afresh (the
// replies of the commands before this one in its batch, not yet written, are
// in them) and the biggest clients disconnected while the sum is at the limit.
// Without it a batch of pipelined commands (MGETs of a big key by clients
// that do not read) grew the clients' memory past the limit unseen until the
// batch ended, and key eviction took keys for it first. Reports whether cl
// itself was evicted (Redis then aborts the command). Runs on cl's serving
// goroutine, engine lock held.
func (s *Server) evictClientsFirst(cl *client) bool {
	return s.publishForEviction(cl) && cl.killed()
}

// publishForEviction publishes cl's figures now, and so evicts clients at
// the limit, when client eviction is on; it reports whether it did. Only
// cl's serving goroutine calls it.
func (s *Server) publishForEviction(cl *client) bool {
	if s.clientEvictionLimit() == 0 {
		return false
	}
	s.publishMem(cl)
	return true
}

// notePush counts the growth of cl's queued messages from the sender's side,
// as they are queued: the owner publishes only when it writes (at the end of
// its cycle, or never while it is blocked in a write in goroutine mode), and
// the next command's evictClientsFirst must see a subscriber that does not
// read growing. It adds to the figures the owner published (the owner's next
// publish computes them afresh; the CAS keeps the sum exact) and evicts
// nothing itself: the sender may hold locks evictClients takes. push is
// cap(push.buf) + cap(push.self). Engine lock held.
func (s *Server) notePush(cl *client, push int64) {
	m := &cl.mem
	d := push - m.push.Load()
	if d <= 0 || s.clientEvictionLimit() == 0 {
		return // the owner's publish records shrinking
	}
	m.push.Add(d)
	m.tot.Add(d)
	for {
		old := m.counted.Load()
		if old == 0 || cl.killed() {
			return // not in the sum: not evictable, evicted or closed
		}
		if m.counted.CompareAndSwap(old, old+d) {
			s.clientsMem.Add(d)
			return
		}
	}
}

func setIf(a *atomic.Int64, v int64) {
	if a.Load() != v {
		a.Store(v)
	}
}

// uncount takes cl out of the evictable clients' sum (closed, evicted, or no
// longer evictable).
func (s *Server) uncount(cl *client) {
	if n := cl.mem.counted.Swap(0); n != 0 {
		s.clientsMem.Add(-n)
	}
}

// evictable reports whether client eviction may disconnect cl: a normal or
// Pub/Sub client without CLIENT NO-EVICT (replicas never are).
func (cl *client) evictable() bool {
	return !cl.NoEvict && cl.replica == nil
}

// multiMem is what MULTI and WATCH hold for cl (Redis's multiStateMemOverhead).
func (cl *client) multiMem() int64 {
	m := &cl.multi
	n := max(m.argLen, int64(cap(m.argBuf))) + int64(cap(m.argHdrs))*int64(unsafe.Sizeof([]byte(nil))) +
		int64(cap(m.queue))*int64(unsafe.Sizeof(queuedCmd{}))
	return n + int64(cap(m.watched))*int64(unsafe.Sizeof(watchedKey{})) + m.watchedLen
}

// clientEvictionLimit is Redis's getClientEvictionLimit: maxmemory-clients in
// bytes, or its percentage of maxmemory; 0 when client eviction is off; never
// below 128 KiB.
func (s *Server) clientEvictionLimit() int64 {
	v := s.hot.memClients.Load()
	var lim int64
	switch {
	case v > 0:
		lim = v
	case v < 0:
		mm := s.maxmemory()
		if mm == 0 {
			return 0
		}
		f := float64(mm) * float64(-v) / 100
		lim = math.MaxInt64
		if f < math.MaxInt64 {
			lim = int64(f)
		}
	default:
		return 0
	}
	return max(lim, clientEvictionMin)
}

// evictClients is Redis's evictClients: while the evictable clients' memory
// is at or above limit, it disconnects the biggest of them (the caller's own
// connection too, if it is the biggest), counting each in evicted_clients.
func (s *Server) evictClients(limit int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.clientsMem.Load() >= limit {
		var victim *client
		var most int64
		for _, c := range s.clients {
			if t := c.mem.counted.Load(); t > most && !c.killed() {
				victim, most = c, t
			}
		}
		if victim == nil {
			s.log.Warn("over client maxmemory after evicting all evictable clients")
			return
		}
		victim.kill()
		s.uncount(victim)
		// its buffers are freed when its owner closes it (releaseClient),
		// maybe a batch later: used memory counts them as freed now, as
		// Redis's freeClient frees them at once, or key eviction would go on
		// taking keys for the memory that this eviction gave back
		victim.mem.evicted.Store(most)
		s.evictedMem.Add(most)
		s.stats.evictedClients.Add(1)
		s.log.Info("evicting client", "client", victim.Addr, "tot-mem", most)
	}
}
