package server

import (
	"sync"

	"github.com/hotkv/hotkv/internal/server/aof"
)

// fackState is a replica's account of the master's stream offset its AOF
// has fsynced: the FACK of REPLCONF ACK (Redis's fsynced_reploff), which a
// master's WAITAOF counts. Applied units are noted with the offset after
// them; an acknowledgement reports the offset of the last noted unit the
// AOF fsynced, or the whole offset when everything is fsynced (PINGs and
// GETACKs move the offset without writing to the AOF). -1 (no FACK) while
// the AOF is off or its first rewrite runs (then the rewrite holds what was
// applied, and the whole offset counts once it is done and fsynced).
type fackState struct {
	mu   sync.Mutex
	pend []fackPair // units applied, not known fsynced yet, oldest first
	off  int64      // the offset acknowledged fsynced so far
	// enabling: the AOF was turned on at stream offset enableOff; its
	// first rewrite holds everything up to there, fsynced when it is done
	// (Redis's fsynced_reploff_pending taken in startAppendOnly)
	enabling  bool
	enableOff int64
	// loaded: a full sync's load ran; the stream it starts (linkUp) is
	// where an AOF turned on at its end stands
	loaded bool
}

type fackPair struct {
	seq uint64 // the unit's number (UnitSeq)
	off int64  // the stream offset after it
}

// fackPendMax bounds fackState.pend: past it the newest pair absorbs the
// next (acknowledged when the later unit is fsynced: later, never early).
const fackPendMax = 4096

// fackNote records the stream offset off after the units a replica just
// applied. Engine lock held.
func (s *Server) fackNote(off int64) {
	f := &s.fack
	seq := s.UnitSeq()
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.aof.State() != aof.On {
		f.pend = f.pend[:0] // the rewrite that turns it on holds them
		return
	}
	if n := len(f.pend); n > 0 && f.pend[n-1].seq == seq {
		return // no unit since (a PING): SyncedAll covers it
	}
	if n := len(f.pend); n >= fackPendMax {
		f.pend[n-1] = fackPair{seq, off}
		return
	}
	f.pend = append(f.pend, fackPair{seq, off})
}

// fackOffset is the FACK to send with an acknowledgement of offset cur, or
// -1 for none. Any goroutine.
func (s *Server) fackOffset(cur int64) int64 {
	f := &s.fack
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.aof.StateNow() != aof.On {
		return -1
	}
	if f.enabling {
		f.off, f.enabling = max(f.off, f.enableOff), false
	}
	synced := s.aof.SyncedSeq()
	i := 0
	for ; i < len(f.pend) && f.pend[i].seq <= synced; i++ {
		f.off = max(f.off, f.pend[i].off)
	}
	f.pend = append(f.pend[:0], f.pend[i:]...)
	if len(f.pend) == 0 && s.aof.SyncedAll() {
		f.off = max(f.off, cur)
	}
	return f.off
}

// fackEnabled records that the AOF was turned on at stream offset off.
// Engine lock held.
func (s *Server) fackEnabled(off int64) {
	f := &s.fack
	f.mu.Lock()
	f.enabling, f.enableOff = true, off
	f.mu.Unlock()
}

// fackLoaded marks a full sync's load (the AOF is turned on again at its
// end, before the stream's offset is known). Engine lock held.
func (s *Server) fackLoaded() {
	f := &s.fack
	f.mu.Lock()
	f.pend, f.off, f.enabling, f.loaded = f.pend[:0], 0, false, true
	f.mu.Unlock()
}

// fackLinkUp: the stream starts at off; after a full sync's load, that is
// where the AOF turned on at its end stands. Engine lock held.
func (s *Server) fackLinkUp(off int64) {
	f := &s.fack
	f.mu.Lock()
	if f.loaded {
		f.loaded = false
		if f.enabling {
			f.enableOff = off
		}
	}
	f.mu.Unlock()
}

// fackOff forgets the account (the AOF was turned off, or the replica
// follows another master: its offsets start again). Engine lock held.
func (s *Server) fackOff() {
	f := &s.fack
	f.mu.Lock()
	f.pend, f.off, f.enabling = f.pend[:0], 0, false
	f.mu.Unlock()
}
