package server

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// Transactions: MULTI queues (admit and process), EXEC runs the queue as one execution
// unit, WATCH is optimistic locking on keys. Everything here runs under the
// engine lock.

type watchKey struct {
	db  int
	key string
}

type watchedKey struct {
	watchKey
	expired bool // already expired when watched (Redis's watchedKey.expired)
}

// multiState is a client's transaction state.
type multiState struct {
	queue      []queuedCmd // the queued commands, copied (queueArgv)
	argBuf     []byte      // the queued arguments' bytes, reused by the next MULTI
	argHdrs    [][]byte    // the queued commands' argv slices, reused likewise
	argLen     int64       // the queued arguments' bytes (CLIENT LIST's multi-mem)
	watchedLen int64       // the watched keys' bytes, likewise
	flags      command.Flag
	dirty      bool // a command failed to queue: EXEC aborts
	watched    []watchedKey
	touched    bool // a watched key changed: EXEC fails
}

var _ keyspace.Observer = (*Server)(nil)

// Modified marks the clients watching key (Redis's touchWatchedKey). A key that
// was already expired when watched and is now gone (deleted by lazy or active
// expiry) is no logical change: the watch just forgets it was expired.
func (s *Server) Modified(db int, key []byte) {
	s.keyChanged(db, key)
	if s.barrier.on {
		s.markDirty(db, key)
	}
	if observing {
		s.locks.Touch(db, key)
	}
	s.trk.Modified(db, key)
	if len(s.watchers) == 0 {
		return
	}
	wk := watchKey{db, string(key)}
	for cl := range s.watchers[wk] {
		if w := cl.watchedEntry(wk); w != nil && w.expired {
			if present, _ := s.ks.DBs[db].Present(key); !present {
				w.expired = false
				continue
			}
		}
		cl.multi.touched = true
	}
}

// Expired publishes "expired" (class x) for a key deleted by lazy or active
// expiry. WATCH needs nothing here: the keyspace calls Modified for the same
// deletion right after (touching twice would undo the stale-key rule above).
// Tracking sees the deletion here, as one no client caused.
func (s *Server) Expired(db int, key []byte) {
	s.Notify(db, 'x', "expired", key)
	if s.locks.Len() > 0 {
		s.locks.Expired(db, key, s.clock.NowUs())
	}
	s.trk.Expired(db, key)
	s.propDeletion(db, key, "lazyfree-lazy-expire")
}

// Flushing touches the watched keys of db that exist.
func (s *Server) Flushing(db int) {
	if s.ks.DBs[db].Len() > 0 {
		s.mem.forceGC = true // the used-memory estimate re-anchors on a GC (maxmemory.go)
	}
	s.releaseAfterFlush(s.ks.DBs[db].Len())
	s.markAllDirty()
	s.locks.Flush(db)
	s.trk.Flushing()
	s.touchAllInDB(db, -1)
	s.readyDeletedKeys(db)
}

// Swapping touches the watched keys of a and b that exist in either database,
// and readies every key that clients blocked in a or b wait on (Redis's
// scanDatabaseForReadyKeys on both after SWAPDB): serveReady, at the end of
// the command, serves those whose key exists after the swap with the type
// they wait for.
func (s *Server) Swapping(a, b int) {
	s.markAllDirty()
	s.locks.Swap(a, b)
	s.touchAllInDB(a, b)
	s.touchAllInDB(b, a)
	if s.blocked.count > 0 {
		var keys []blockKey
		for bk, cls := range s.blocked.waiting {
			if len(cls) > 0 && (bk.db == a || bk.db == b) {
				keys = append(keys, bk)
			}
		}
		// a fixed order (the map's is random): by db, then key
		slices.SortFunc(keys, func(x, y blockKey) int {
			if x.db != y.db {
				return cmp.Compare(x.db, y.db)
			}
			return strings.Compare(x.key, y.key)
		})
		for _, bk := range keys {
			s.keyChanged(bk.db, []byte(bk.key))
		}
	}
}

// touchAllInDB is Redis's touchAllWatchedKeysInDb: the keys watched in emptied
// are touched when they exist there or in replacedWith (-1: none), except where
// nothing changes logically: a stale key deleted or replaced by another stale
// key, or a missing key replaced by a stale one.
func (s *Server) touchAllInDB(emptied, replacedWith int) {
	for wk, cls := range s.watchers {
		if wk.db != emptied {
			continue
		}
		k := []byte(wk.key)
		inEmptied, _ := s.ks.DBs[emptied].Present(k)
		inRepl, replExpired := false, false
		if replacedWith >= 0 {
			inRepl, replExpired = s.ks.DBs[replacedWith].Present(k)
		}
		if !inEmptied && !inRepl {
			continue
		}
		for cl := range cls {
			w := cl.watchedEntry(wk)
			if w == nil {
				continue
			}
			if w.expired {
				if !inRepl {
					w.expired = false // the stale key is gone: no logical change
					continue
				}
				if replExpired {
					continue // a stale key stays stale
				}
			} else if !inEmptied && replExpired {
				w.expired = true // a missing key replaced with a stale one
				continue
			}
			cl.multi.touched = true
		}
	}
}

// watchedEntry finds cl's watch of wk.
func (cl *client) watchedEntry(wk watchKey) *watchedKey {
	for i := range cl.multi.watched {
		if cl.multi.watched[i].watchKey == wk {
			return &cl.multi.watched[i]
		}
	}
	return nil
}

// clientOf finds the server's client for a command.Client.
func (s *Server) clientOf(c *command.Client) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[c.ID]
}

// Watch implements WATCH.
func (s *Server) Watch(c *command.Client, db *keyspace.DB, keys [][]byte) {
	cl := s.clientOf(c)
	if cl == nil {
		return
	}
	for _, k := range keys {
		wk := watchKey{db.ID, string(k)}
		if cl.watching(wk) {
			continue
		}
		_, expired := db.Present(k)
		cl.multi.watched = append(cl.multi.watched, watchedKey{wk, expired})
		cl.multi.watchedLen += int64(len(k))
		set := s.watchers[wk]
		if set == nil {
			set = map[*client]struct{}{}
			s.watchers[wk] = set
		}
		set[cl] = struct{}{}
	}
}

func (cl *client) watching(wk watchKey) bool { return cl.watchedEntry(wk) != nil }

// Unwatch implements UNWATCH (and the unwatch of EXEC, DISCARD and RESET).
func (s *Server) Unwatch(c *command.Client) {
	if cl := s.clientOf(c); cl != nil {
		s.unwatchAll(cl)
	}
}

func (s *Server) unwatchAll(cl *client) {
	for _, w := range cl.multi.watched {
		if set := s.watchers[w.watchKey]; set != nil {
			delete(set, cl)
			if len(set) == 0 {
				delete(s.watchers, w.watchKey)
			}
		}
	}
	cl.multi.watched, cl.multi.watchedLen = nil, 0
	cl.multi.touched = false
}

// DiscardMulti leaves MULTI, dropping the queue.
func (s *Server) DiscardMulti(c *command.Client) {
	if cl := s.clientOf(c); cl != nil {
		discardQueue(cl)
	}
}

// queuedCmd is one command queued by MULTI, with the spec dispatch found.
type queuedCmd struct {
	spec *command.Spec
	argv [][]byte
}

// multiBufMax bounds the queue buffers a client keeps between transactions.
const multiBufMax = 64 << 10

func discardQueue(cl *client) {
	m := &cl.multi
	clear(m.queue) // drop the references; the next MULTI reuses the slices
	m.queue = m.queue[:0]
	clear(m.argHdrs)
	m.argHdrs = m.argHdrs[:0]
	m.argBuf = m.argBuf[:0]
	m.argLen = 0
	if cap(m.argBuf) > multiBufMax || cap(m.argHdrs) > multiBufMax/16 || cap(m.queue) > multiBufMax/16 {
		m.queue, m.argBuf, m.argHdrs = nil, nil, nil
	}
	m.flags = 0
	m.dirty = false
	cl.Multi = -1
}

// queue appends a copy of argv to the transaction (process calls it for a
// command admit queued inside MULTI, with the flags admit judged it by).
func (cl *client) queue(spec *command.Spec, argv [][]byte, flags command.Flag) {
	cl.multi.queue = append(cl.multi.queue, queuedCmd{spec, cl.multi.queueArgv(argv)})
	cl.multi.flags |= flags // admission's flags (a script's follow the script)
	cl.Multi++
}

// queueArgv copies argv into the queue's buffers: no allocation per queued
// command once the buffers have grown. A buffer that is full is replaced by a
// bigger one, never grown in place, so the commands already queued keep
// pointing at their bytes; discardQueue makes the buffers reusable (EXEC takes
// the queue and the argv slices away from it while they run).
func (m *multiState) queueArgv(argv [][]byte) [][]byte {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	if cap(m.argBuf)-len(m.argBuf) < n {
		m.argBuf = make([]byte, 0, max(2*cap(m.argBuf), n, 512))
	}
	if cap(m.argHdrs)-len(m.argHdrs) < len(argv) {
		m.argHdrs = make([][]byte, 0, max(2*cap(m.argHdrs), len(argv), 32))
	}
	m.argLen += int64(n)
	start := len(m.argHdrs)
	for _, a := range argv {
		off := len(m.argBuf)
		m.argBuf = append(m.argBuf, a...)
		m.argHdrs = append(m.argHdrs, m.argBuf[off:len(m.argBuf):len(m.argBuf)])
	}
	return m.argHdrs[start:len(m.argHdrs):len(m.argHdrs)]
}

// watchedKeyExpired reports whether a watched key expired since it was watched
// (Redis's isWatchedKeyExpired).
func (s *Server) watchedKeyExpired(cl *client) bool {
	for _, w := range cl.multi.watched {
		if w.expired {
			continue
		}
		if present, expired := s.ks.DBs[w.db].Present([]byte(w.key)); present && expired {
			return true
		}
	}
	return false
}

// Exec implements EXEC: abort after a queuing error, fail (null) when a watched
// key changed, else run every queued command as one execution unit (one frozen
// now), each reply an element of the array, an error in one not stopping the rest.
func (s *Server) Exec(c *command.Ctx) {
	cl := s.clientOf(c.Client)
	if cl == nil {
		return
	}
	defer s.unwatchAll(cl)
	if cl.multi.dirty {
		discardQueue(cl)
		c.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if cl.multi.touched || s.watchedKeyExpired(cl) {
		discardQueue(cl)
		c.W.NullArray()
		return
	}
	// the queue and its argv slices leave the client (discardQueue must not
	// clear them, a command run here cannot reach them) and come back empty,
	// for the next MULTI to reuse, when they have run; the argument bytes stay
	// in argBuf, which nothing appends to before EXEC returns
	queue, hdrs := cl.multi.queue, cl.multi.argHdrs
	cl.multi.queue, cl.multi.argHdrs = nil, nil
	discardQueue(cl)
	c.W.ArrayLen(len(queue))
	now, execSpec, execArgv := c.Now, c.Spec, c.Argv
	c.Client.DenyBlocking = true // blocking commands answer at once inside EXEC
	for _, q := range queue {
		if u := cl.User; u != nil && !u.AllPerms() {
			if e := s.aclExecDenied(cl, q.spec, q.argv); e != "" {
				c.W.Error(e) // ACL rules changed since MULTI
				s.countError("NOPERM")
				continue
			}
		}
		c.Argv, c.DB, c.Now = q.argv, s.ks.DBs[cl.DB], now // one frozen now for the whole EXEC
		cl.clockUs = s.call(fromExec, c, q.spec, cl.clockUs)
	}
	c.Client.DenyBlocking = false
	clear(queue)
	clear(hdrs)
	if cl.multi.queue == nil && cap(queue) <= multiBufMax/16 {
		cl.multi.queue = queue[:0]
	}
	if cl.multi.argHdrs == nil && cap(hdrs) <= multiBufMax/16 {
		cl.multi.argHdrs = hdrs[:0]
	}
	// back to EXEC's own context: it succeeded, its commands' errors were counted
	c.Spec, c.Argv, c.ErrCode, c.Now, c.Dirty, c.FailedNoStats = execSpec, execArgv, "", now, 0, false
	s.eng.BeginAt(now)
}

// aclExecDenied checks a queued command again at EXEC, as Redis's
// execCommand: the user's rules may have changed since it was queued. A
// denied command is logged; the error answers in its place.
func (s *Server) aclExecDenied(cl *client, spec *command.Spec, argv [][]byte) string {
	r, _ := s.aclDeny(cl, spec, argv, acl.CtxMulti)
	if r == acl.OK {
		return ""
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
		"This command is no longer allowed for the following reason: " + aclExecReason(r)
}

// watchStats is INFO clients' watching_clients and total_watched_keys.
func (s *Server) watchStats() (clients, keys int) {
	seen := map[*client]bool{}
	for _, set := range s.watchers {
		keys++
		for cl := range set {
			seen[cl] = true
		}
	}
	return len(seen), keys
}
