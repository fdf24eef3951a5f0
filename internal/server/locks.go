package server

import (
	"unsafe"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/locks"
)

// The lock view (internal/locks, docs/ARCHITECTURE.md "The lock view"): the
// commands report their lock events to the table as they act (Ctx.LockAcquired...,
// counted at once); call then has it judge the held locks the command changed
// without saying so (Modified → Touch); expiry, flushes and SWAPDB reach it
// through the keyspace's observer hooks (multi.go). Nothing here runs for a
// command that touches no held lock.

// noteLocks is call's step for the lock view, after the handler ran, when the
// table is Busy. Engine lock held. A command applied without a connection
// (fromApply: the AOF at startup, a master's stream) reports nothing (its Ctx
// has no Locks): the view counts what clients do here, and a replayed SET ...
// PXAT is no acquisition; what it changes of a held key is judged.
func (s *Server) noteLocks(o origin, nowUs int64) {
	t := s.locks
	if t.HasPending() {
		s.checkLocks(nowUs, o == fromScript)
	}
	t.Counted()
}

// checkLocks judges the held locks changed since the last check from what
// their keys hold now.
func (s *Server) checkLocks(nowUs int64, byScript bool) {
	s.locks.Pending(func(db int, key string) {
		d := s.ks.DBs[db]
		e := d.Peek(unsafe.Slice(unsafe.StringData(key), len(key))) // read only: no copy
		if e == nil {
			s.locks.Check(db, key, nowUs, false, false, nil, 0, byScript)
			return
		}
		str := e.Kind == keyspace.KindString
		var val []byte
		if str {
			val = e.Bytes()
		}
		s.locks.Check(db, key, nowUs, true, str, val, d.ExpireAt(e), byScript)
	})
}

// lockView is the table a command's Ctx reports its lock events to: none in
// a build without the operator's view (observing).
func (s *Server) lockView() *locks.Table {
	if !observing {
		return nil
	}
	return s.locks
}

// Locks is the lock view, for HOTKV.LOCKS and INFO locks (command.Server).
// Engine lock held.
func (s *Server) Locks() *locks.Table { return s.locks }
