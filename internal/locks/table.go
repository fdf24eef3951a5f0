package locks

import (
	"math/bits"
	"sort"
	"strings"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// Kind is what a command did to a lock, as the command reports it (Note).
type Kind uint8

const (
	None     Kind = iota
	Acquired      // SET NX with an expiry set the key
	Refused       // SET NX with an expiry found the key set: contention
	Released      // a token release (DELEX IFEQ/IFDEQ, DELIFEQ) deleted the key
	Stale         // a token release that did not match: the key gone, or another token's
)

// Note is a lock event as one value, for Apply; the commands call the
// Table's method of each kind (Acquire, Release, Refuse, Stale). Key aliases
// the command's arguments: the Table copies what it keeps.
type Note struct {
	Kind     Kind
	Key      []byte
	Token    []byte // the value taken or offered (Acquired, Refused); aliases too
	Deadline int64  // the expiry, Unix ms (Acquired)
	// Ent is the key's keyspace entry when the command has it (nil: not
	// known), compared by address only: a held lock's state remembers the
	// entry it was taken or last seen with, and finds itself from it without
	// hashing the key (byEnt). An entry is one key's while it lives, and the
	// state's reference keeps it alive, so equal addresses are the same key.
	Ent unsafe.Pointer
}

// Counters are the lock events counted since the start (or Reset).
type Counters struct {
	Acquired    int64 // locks taken
	Contended   int64 // attempts refused because the key was held
	Released    int64 // released by their holder (a token release, or a script's DEL)
	Stale       int64 // token releases that did not match: the holder had lost the lock
	Extended    int64 // expiry changes of a held lock (PEXPIRE, SET IFEQ ... PX, GETEX)
	ExpiredHeld int64 // locks that expired while still held: never released
	Removed     int64 // held locks deleted otherwise: DEL, overwritten, flushed, evicted, persisted
}

// Activity is how busy the counters show a key: what ranks the hottest keys.
func (c *Counters) Activity() int64 { return c.Acquired + c.Contended }

// Held is a lock held now.
type Held struct {
	AcquiredUs int64 // when it was taken (server clock, µs)
	Deadline   int64 // its expiry as last seen (Unix ms)
	Refusals   int64 // attempts refused while this holder held it
	Extends    int64 // times this holder extended it
}

// KeyStats are one key's counters since it was first taken.
type KeyStats struct {
	Counters
	LastUs int64 // its last event
}

// state is everything the Table knows about one key: its counters, and the
// lock held on it now when held is set. A key keeps its state after its lock
// goes (its counters, and no allocation when it is taken again) while fewer
// than MaxKeys keys are not held; past that, a key whose counters say nothing
// more than "taken once, released" gives its state back to a free list,
// buffers and all, and another keeps it in place of the least active of a
// sample: a workload of fresh lock keys allocates nothing for the view.
//
// The fields are laid out by cache line (a state is 256 bytes, and a slab
// of them starts on a line: slabChunk): the first line holds what a refusal
// and a release read and write, the second what the index's lookup compares
// (the database and the key: a key of up to keyInline bytes lives in the
// state itself, so that a lookup among many held locks does not miss the
// cache on a third allocation), so that a refusal found by its key touches
// one 128-byte pair of lines (what the processor fetches together); then
// the key's other counters and the holder's token. TestStateLayout checks
// it.
type state struct {
	// line 0: a lock's hot fields
	ent        unsafe.Pointer // while held: the key's keyspace entry as last reported, or nil
	waitSince  int64          // the first refused attempt since the lock was last taken (0: none)
	AcquiredUs int64          // while held: when it was taken (server clock, µs)
	LastUs     int64          // the key's last event
	Refusals   int64          // while held: attempts refused while this holder held it
	Contended  int64          // attempts refused because the key was held
	Released   int64          // released by their holder
	held       bool
	tokLen     uint8 // the holder's token's length while held, up to maxTok; longTok: longer
	// line 1: what a lookup compares
	db     int
	key    string // aliases keyArr or keyBuf: the index's key while the state is in it
	keyArr [keyInline]byte
	digest uint64 // a longer token's digest while held (xxh3, as DIGEST)
	// line 2: the key's other counters (Counters), its deadline and its hash
	Acquired    int64
	Stale       int64
	Extended    int64
	ExpiredHeld int64
	Removed     int64
	Extends     int64  // while held: times this holder extended it
	Deadline    int64  // while held: its expiry as last seen (Unix ms)
	h           uint64 // hashKey(key): its place in the index
	// line 3
	tok    [maxTok]byte // the holder's token while held (tok[:tokLen])
	keyBuf []byte       // a key longer than keyInline
}

// activity is Counters.Activity of the state's counters.
func (st *state) activity() int64 { return st.Acquired + st.Contended }

// heldView is the Held view of a held lock's fields.
func (st *state) heldView() Held {
	return Held{AcquiredUs: st.AcquiredUs, Deadline: st.Deadline, Refusals: st.Refusals, Extends: st.Extends}
}

// clearHeld zeroes the fields of a lock held (Held's).
func (st *state) clearHeld() { st.AcquiredUs, st.Deadline, st.Refusals, st.Extends = 0, 0, 0, 0 }

// stats is the KeyStats view of the state's counters.
func (st *state) stats() KeyStats {
	return KeyStats{Counters: Counters{Acquired: st.Acquired, Contended: st.Contended, Released: st.Released,
		Stale: st.Stale, Extended: st.Extended, ExpiredHeld: st.ExpiredHeld, Removed: st.Removed}, LastUs: st.LastUs}
}

// keyInline is the longest key kept in the state itself.
const keyInline = 32

// worthKeeping reports whether a key's counters say more than "taken once,
// released": such keys keep their state when their lock goes.
func (st *state) worthKeeping() bool {
	return st.Acquired > 1 || st.Contended > 0 || st.Stale > 0 || st.ExpiredHeld > 0 || st.waitSince != 0
}

// Limits on what the Table remembers beyond the held locks.
const (
	// maxTok is the longest token a held lock keeps a copy of, in its
	// state (an acquisition copies it: cheaper than hashing it; a UUID's
	// text fits); a longer one keeps its digest.
	maxTok = 40
	// longTok in state.tokLen marks a token longer than maxTok.
	longTok = 255
	// MaxKeys is how many keys not held keep their state (their counters):
	// when there are more, a new key replaces the least active of a sample.
	MaxKeys = 1024
	// maxFree is how many states the free list keeps for reuse.
	maxFree = 4096
)

// Table is the lock view. Its zero value is not usable: use New.
type Table struct {
	idx     index  // the states, by database and key
	dbs     int    // the databases
	rnd     uint64 // trim's sampling (xorshift)
	nKeys   int    // states in idx
	n       int    // locks held
	C       Counters
	Hold    Histogram // how long holders held: acquisition to release
	waited  Histogram // the acquisitions that waited (Wait adds those that did not)
	pend    []pendKey // the keys changed since the last Pending while a lock was held (Touch)
	pendBuf []byte    // their bytes
	free    []*state  // states to reuse
	slab    []state   // states not yet used, allocated a chunk at a time
	last    *state    // the state found last: a lock taken again and again on one key
	cur     *state    // the state the running command's acquisition took (Entry)
	// noteKey and noteLen are the address and length of the key of the
	// running command's acquisition or release (Acquire, Release): the keyspace hands
	// Touch the same slice, so that one comparison skips it
	noteKey uintptr
	noteLen int
	// byEnt finds held locks' states by their keyspace entry (state.ent)
	// on a release: a cache, not an index, of pairs of slots that hold the
	// entry's address beside the state, so that a lookup reads no state but
	// the one it finds. A state goes to the free slot of its pair, else over
	// the second (the newest lock wins: it is the likeliest to be released
	// next); a release frees its slot; a state overwritten is a miss, and the
	// key's lookup follows. Twice as many slots as locks held, up to
	// maxEntSlots: a table that stays in the processor's cache. Sized to the
	// locks held, 100,000 of them, its slot's miss on each acquisition and
	// the collector's scans of it cost more than the key's lookups it saved
	// (0.43 µs more a fresh lock among 100,000); small, a lock released soon
	// after it was taken (a lock's life) is found, others by their key.
	byEnt    []entSlot
	entShift uint8 // 64 - log2(len(byEnt))
}

// entSlot is a slot of byEnt: a held lock's entry's address and its state
// (ent 0: free).
type entSlot struct {
	ent uintptr
	st  *state
}

// entPair is the first of ent's pair of slots in byEnt: the address mixed
// (murmur3's finalizer, halved; the product alone, Fibonacci hashing, sends
// entries 48 bytes apart to three slots: 144 is a Fibonacci number), its top
// bits, even.
func (t *Table) entPair(ent uintptr) uint64 {
	h := uint64(ent)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 29
	return h * 0x9e3779b97f4a7c15 >> t.entShift &^ 1
}

// byEntry is the state of the lock held on the key whose keyspace entry is
// ent, or nil when byEnt does not know it (inlined: the hot way to a state).
func (t *Table) byEntry(ent unsafe.Pointer) *state {
	if s := t.entFind(ent); s != nil {
		return s.st
	}
	return nil
}

// entFind is the byEnt slot of the lock held on the key whose keyspace entry
// is ent, or nil.
func (t *Table) entFind(ent unsafe.Pointer) *entSlot {
	if ent == nil || len(t.byEnt) == 0 {
		return nil
	}
	e := uintptr(ent)
	i := t.entPair(e)
	// the state's own entry is checked too (its line is the caller's next
	// read): a slot is freed whenever its state lets its entry go, so this
	// only guards the invariant
	if s := &t.byEnt[i]; s.ent == e && s.st.ent == ent {
		return s
	}
	if s := &t.byEnt[i+1]; s.ent == e && s.st.ent == ent {
		return s
	}
	return nil
}

// setEnt records that st, held, is the lock on the key whose entry is ent.
func (t *Table) setEnt(st *state, ent unsafe.Pointer) {
	if st.ent != ent {
		if st.ent != nil {
			t.dropEnt(st) // its entry moved: the old one's slot goes
		}
		st.ent = ent
	}
	if ent == nil {
		return
	}
	if 2*t.n > len(t.byEnt) && len(t.byEnt) < maxEntSlots {
		t.growEnt()
	}
	t.putEnt(st)
}

// putEnt puts st, held with an entry, in its pair of byEnt's slots.
func (t *Table) putEnt(st *state) {
	e := uintptr(st.ent)
	i := t.entPair(e)
	if s := &t.byEnt[i]; s.ent != 0 && s.ent != e {
		i++
	}
	t.byEnt[i] = entSlot{e, st}
}

// dropEnt frees st's slot in byEnt, if it has one (st.ent: its entry).
func (t *Table) dropEnt(st *state) {
	if st.ent == nil || len(t.byEnt) == 0 {
		return
	}
	e := uintptr(st.ent)
	i := t.entPair(e)
	if s := &t.byEnt[i]; s.ent == e && s.st == st {
		*s = entSlot{}
	} else if s := &t.byEnt[i+1]; s.ent == e && s.st == st {
		*s = entSlot{}
	}
}

// growEnt doubles byEnt and puts its states back, from their slots (the
// entry's address is there: no state is read); a state a collision had
// already pushed out stays out.
func (t *Table) growEnt() {
	size := max(64, 2*len(t.byEnt))
	for size < 2*t.n && size < maxEntSlots {
		size *= 2
	}
	old := t.byEnt
	t.byEnt = make([]entSlot, size)
	t.entShift = uint8(64 - bits.Len(uint(size-1)))
	for _, s := range old {
		if s.ent != 0 {
			i := t.entPair(s.ent)
			if t.byEnt[i].ent != 0 {
				i++
			}
			t.byEnt[i] = s
		}
	}
}

// pendKey is a key Touch recorded: pendBuf[off:off+n] of database db.
type pendKey struct {
	db     int32
	off, n uint32
}

// maxEntSlots bounds byEnt: 8,192 slots, 128 KiB.
const maxEntSlots = 8192

// slabChunk is how many states one allocation makes: two, 512 bytes, the
// largest allocation the runtime makes without a header in front of it (a
// bigger one starts 8 bytes into its span and every state in it would
// straddle cache lines; TestStateLayout).
const slabChunk = 2

// New returns an empty Table for dbs databases.
func New(dbs int) *Table {
	return &Table{dbs: dbs, rnd: 0x9e3779b97f4a7c15}
}

// Len is the number of locks held now.
func (t *Table) Len() int { return t.n }

// Keys is the number of keys the Table keeps counters for.
func (t *Table) Keys() int { return t.nKeys }

// lookup is key's state, nil if none.
func (t *Table) lookup(db int, key []byte) *state {
	st, _ := t.find(db, key)
	return st
}

// lookupOrCreate is key's state, made if there is none (created).
func (t *Table) lookupOrCreate(db int, key []byte) (st *state, created bool) {
	st, h := t.find(db, key)
	if st != nil {
		return st, false
	}
	return t.create(db, key, h), true
}

// find is key's state, the state found last first (a lock taken again and
// again on one key); when there is none, h is the key's hash, for create.
func (t *Table) find(db int, key []byte) (st *state, h uint64) {
	if l := t.last; l != nil && l.db == db && sameKey(l.key, key) {
		return l, 0
	}
	h = hashKey(key)
	if t.idx.n != 0 {
		if st = t.idx.get(db, key, h); st != nil {
			t.last = st
		}
	}
	return st, h
}

// heldState is key's state when it is held.
func (t *Table) heldState(db int, key []byte) *state {
	if t.n == 0 {
		return nil
	}
	if st := t.lookup(db, key); st != nil && st.held {
		return st
	}
	return nil
}

// trim keeps the states of keys not held within MaxKeys: the least active
// of up to 16 sampled keys that are not held goes (the keys that follow a
// slot drawn at random).
func (t *Table) trim() {
	if t.nKeys-t.n <= MaxKeys {
		return
	}
	t.rnd ^= t.rnd << 13
	t.rnd ^= t.rnd >> 7
	t.rnd ^= t.rnd << 17
	slots := t.idx.slots
	mask := uint64(len(slots) - 1)
	var victim *state
	seen := 0
	for i, k := t.rnd&mask, 0; k < len(slots) && seen < 16; i, k = (i+1)&mask, k+1 {
		st := slots[i].st
		if st == nil {
			continue
		}
		if !st.held && (victim == nil || st.activity() < victim.activity()) {
			victim = st
		}
		seen++
	}
	if victim != nil {
		t.forget(victim)
	}
}

// create makes key's state (h: hashKey(key)), from the free list when it can.
func (t *Table) create(db int, key []byte, h uint64) *state {
	var st *state
	if k := len(t.free); k > 0 {
		st, t.free[k-1] = t.free[k-1], nil
		t.free = t.free[:k-1]
	} else {
		if len(t.slab) == 0 {
			t.slab = make([]state, slabChunk)
		}
		st = &t.slab[0]
		t.slab = t.slab[1:]
	}
	st.db = db
	// the key is the state's own memory: no string allocated per lock; it
	// is not written again while the state is in the index
	var b []byte
	if len(key) <= keyInline {
		b = st.keyArr[:copy(st.keyArr[:], key)]
	} else {
		st.keyBuf = append(st.keyBuf[:0], key...)
		b = st.keyBuf
	}
	st.key = ""
	if len(b) > 0 {
		st.key = unsafe.String(unsafe.SliceData(b), len(b))
	}
	st.h = h
	t.idx.put(st)
	t.nKeys++
	t.last = st
	return st
}

// forget removes st from the table and keeps it for reuse.
func (t *Table) forget(st *state) {
	if t.last == st {
		t.last = nil
	}
	t.idx.del(st)
	t.nKeys--
	if len(t.free) < maxFree && cap(st.keyBuf) <= 256 {
		*st = state{keyBuf: st.keyBuf[:0]}
		t.free = append(t.free, st)
	}
}

// release ends st's lock. Past MaxKeys keys not held, st goes if it has
// nothing worth keeping, else the least active of a sample.
func (t *Table) release(st *state) {
	st.held = false
	if st.ent != nil {
		t.dropEnt(st)
		st.ent = nil // the entry may go
	}
	st.clearHeld()
	t.n--
	if t.nKeys-t.n > MaxKeys {
		if st.worthKeeping() {
			t.trim()
		} else {
			t.forget(st)
		}
	}
}

// The commands report their lock events as they make them, one method a
// kind (few arguments: they pass in registers). Key, tok and ent are the
// command's (its arguments, its keyspace entry): the table copies what it
// keeps. An acquisition or a release is reported before the command sets or
// deletes the key: until Counted, Touch skips that key (the same slice),
// which the report explains. db is a valid database: the server's.

// Acquire counts an acquisition of db's key with token tok, expiring at at
// (Unix ms), at nowUs; Entry then gives the key's new entry.
func (t *Table) Acquire(db int, key, tok []byte, at, nowUs int64) {
	t.C.Acquired++
	if countOnly {
		return
	}
	t.noteKey, t.noteLen = uintptr(unsafe.Pointer(unsafe.SliceData(key))), len(key)
	st, _ := t.lookupOrCreate(db, key)
	t.cur = st
	if !st.held {
		st.held = true
		t.n++
	}
	st.AcquiredUs, st.Deadline, st.Refusals, st.Extends = nowUs, at, 0, 0
	if len(tok) > maxTok {
		st.tokLen, st.digest = longTok, xxh3.Hash(tok)
	} else {
		st.tokLen = uint8(copy(st.tok[:], tok))
	}
	st.Acquired++
	st.LastUs = nowUs
	if st.waitSince != 0 {
		t.waited.Add(nowUs - st.waitSince)
		st.waitSince = 0
	}
}

// Entry gives the lock the running command just took its key's keyspace
// entry, once the command has made it.
func (t *Table) Entry(ent unsafe.Pointer) {
	if st := t.cur; st != nil && st.held {
		t.setEnt(st, ent)
	}
}

// Release counts a release of db's key by its holder's token (ent: the
// key's entry, nil if not known) at nowUs.
func (t *Table) Release(db int, key []byte, ent unsafe.Pointer, nowUs int64) {
	t.C.Released++
	if countOnly {
		return
	}
	t.noteKey, t.noteLen = uintptr(unsafe.Pointer(unsafe.SliceData(key))), len(key)
	var st *state
	if s := t.entFind(ent); s != nil {
		// the slot found is the one to free: release need not look again
		st, *s = s.st, entSlot{}
		st.ent = nil
	} else {
		st = t.lookup(db, key)
	}
	if st != nil {
		st.Released++
		st.LastUs = nowUs
		if st.held {
			t.Hold.Add(nowUs - st.AcquiredUs)
			t.release(st)
		}
	}
}

// Refuse counts an acquisition of db's key refused because the key was
// set at nowUs: contention.
func (t *Table) Refuse(db int, key []byte, nowUs int64) {
	t.C.Contended++
	if countOnly {
		return
	}
	// by the key, not by the entry: among many held locks both miss the
	// cache on a slot and on the state, but the key's slot address does not
	// wait for the keyspace's lookup (the entry's does), so its miss
	// overlaps the keyspace's: 0.70 µs a refusal over 100,000 held locks
	// against 0.84 through byEnt (BenchmarkHotPath/SET_NX_PX_100k_keys)
	st, created := t.lookupOrCreate(db, key)
	st.Contended++
	st.LastUs = nowUs
	if st.held {
		st.Refusals++
	}
	if st.waitSince == 0 {
		st.waitSince = nowUs
	}
	if created {
		t.trim()
	}
}

// Stale counts a token release of db's key that did not match (ent: the
// key's entry, nil when the key is gone) at nowUs: its holder had lost it.
func (t *Table) Stale(db int, key []byte, ent unsafe.Pointer, nowUs int64) {
	t.C.Stale++
	if countOnly {
		return
	}
	if st := t.byEntryOrKey(db, key, ent); st != nil {
		st.Stale++
		st.LastUs = nowUs
	}
}

// byEntryOrKey is db's key's state, found from its entry ent (byEnt) or
// else by the key; nil if none.
func (t *Table) byEntryOrKey(db int, key []byte, ent unsafe.Pointer) *state {
	if st := t.byEntry(ent); st != nil {
		return st
	}
	return t.lookup(db, key)
}

// Busy reports whether the running command left the table something to do
// after it (Pending, Counted): a report's key to stop skipping, or a held
// key touched.
func (t *Table) Busy() bool { return t.noteKey != 0 || t.cur != nil || len(t.pend) != 0 }

// Apply counts n about db's key at nowUs, as its kind's method does (an
// acquisition's entry given at once).
func (t *Table) Apply(db int, n *Note, nowUs int64) {
	if uint(db) >= uint(t.dbs) {
		return
	}
	switch n.Kind {
	case Acquired:
		t.Acquire(db, n.Key, n.Token, n.Deadline, nowUs)
		t.Entry(n.Ent)
	case Released:
		t.Release(db, n.Key, n.Ent, nowUs)
	case Refused:
		t.Refuse(db, n.Key, nowUs)
	case Stale:
		t.Stale(db, n.Key, n.Ent, nowUs)
	}
}

// Wait is how long acquisitions waited: the first refused attempt since the
// lock was last taken to this acquisition; 0 for one that found the key
// free (counted from the acquisitions, not one by one).
func (t *Table) Wait() Histogram {
	h := t.waited
	if free := t.C.Acquired - h.Count; free > 0 {
		h.Counts[0] += free
		h.Count += free
		h.Zeros += free
	}
	return h
}

// holds reports whether value is st's holder's token.
func (st *state) holds(value []byte) bool {
	if st.tokLen == longTok {
		return len(value) > maxTok && xxh3.Hash(value) == st.digest
	}
	return string(value) == string(st.tok[:st.tokLen])
}

// tokenDigest is the holder's token's digest (xxh3, as DIGEST).
func (st *state) tokenDigest() uint64 {
	if st.tokLen == longTok {
		return st.digest
	}
	return xxh3.Hash(st.tok[:st.tokLen])
}

// Touch records that db's key changed (the keyspace's Modified) while some
// lock is held: the server judges the key after the command (Pending,
// Check), unless the command's own report explains it. Recording is a copy
// of the key; which keys are held is looked up once, after the command.
func (t *Table) Touch(db int, key []byte) {
	// inlined: a write pays these tests while no lock is held, and the
	// change a report explains (the same slice) costs no more
	if t.n != 0 && (uintptr(unsafe.Pointer(unsafe.SliceData(key))) != t.noteKey || len(key) != t.noteLen) {
		t.touch(db, key)
	}
}

//go:noinline (Touch stays inlinable)
func (t *Table) touch(db int, key []byte) {
	t.pend = append(t.pend, pendKey{int32(db), uint32(len(t.pendBuf)), uint32(len(key))})
	t.pendBuf = append(t.pendBuf, key...)
}

// Counted ends the running command's reports: Touch no longer skips their
// key. The server calls it after each command the table was Busy with.
func (t *Table) Counted() { t.noteKey, t.noteLen, t.cur = 0, 0, nil }

// Pending calls check for each held key touched since the last call and
// forgets them; check reports what the key holds now (see Check). A key a
// report explained and Touch saw through another slice is judged too, and
// found as the report left it.
func (t *Table) Pending(check func(db int, key string)) {
	for _, p := range t.pend {
		key := t.pendBuf[p.off : p.off+p.n]
		if st := t.heldState(int(p.db), key); st != nil {
			check(st.db, st.key)
		}
	}
	t.pend, t.pendBuf = t.pend[:0], t.pendBuf[:0]
}

// HasPending reports whether a key was touched since the last Pending.
func (t *Table) HasPending() bool { return len(t.pend) != 0 }

// Check judges a change to db's key that no command reported, from what the
// key holds now: exists, its value (str: it is a string) and its expiry
// (Unix ms, 0 none). byScript says the change came from a script:
// a script that deletes a lock is a release (the Lua pattern: GET, compare,
// DEL). Gone otherwise, overwritten or made persistent, the lock is removed;
// with a new expiry it was extended. An overwrite is told by the value
// against the holder's token (for a token longer than maxTok, by their
// digests: a value of another token whose 64-bit digest is the same would
// pass for the holder's, as likely as DELEX IFDEQ's).
func (t *Table) Check(db int, key string, nowUs int64, exists, str bool, value []byte, deadline int64, byScript bool) {
	if t.n == 0 || uint(db) >= uint(t.dbs) {
		return
	}
	st := t.heldState(db, unsafe.Slice(unsafe.StringData(key), len(key)))
	if st == nil {
		return
	}
	st.LastUs = nowUs
	switch {
	case !exists && byScript:
		t.C.Released++
		st.Released++
		t.Hold.Add(nowUs - st.AcquiredUs)
		t.release(st)
	case !exists || !str || deadline == 0 || !st.holds(value):
		t.C.Removed++
		st.Removed++
		t.release(st)
	case deadline != st.Deadline:
		t.C.Extended++
		st.Extended++
		st.Extends++
		st.Deadline = deadline
	}
}

// Expired counts a held lock that expired (lazy or active expiry) before its
// holder released it.
func (t *Table) Expired(db int, key []byte, nowUs int64) {
	st := t.heldState(db, key)
	if st == nil {
		return
	}
	t.C.ExpiredHeld++
	st.ExpiredHeld++
	st.LastUs = nowUs
	t.release(st)
}

// Flush removes db's locks (FLUSHDB, FLUSHALL), counted as removed; the
// keys' counters stay.
func (t *Table) Flush(db int) {
	if t.n == 0 || uint(db) >= uint(t.dbs) {
		return
	}
	for _, st := range t.idx.all() { // release may change the index
		if st.db == db && st.held {
			t.C.Removed++
			st.Removed++
			t.release(st)
		}
	}
}

// Swap exchanges databases a and b (SWAPDB): their locks and counters.
func (t *Table) Swap(a, b int) {
	if uint(a) >= uint(t.dbs) || uint(b) >= uint(t.dbs) {
		return
	}
	t.idx.states(func(st *state) { // the hash is the key's alone: no state moves
		switch st.db {
		case a:
			st.db = b
		case b:
			st.db = a
		}
	})
}

// Reset zeroes the counters, the histograms and the keys' counters (CONFIG
// RESETSTAT); the locks held stay.
func (t *Table) Reset() {
	t.C = Counters{}
	t.Hold, t.waited = Histogram{}, Histogram{}
	for _, st := range t.idx.all() { // forget changes the index
		if !st.held {
			t.forget(st)
			continue
		}
		st.Acquired, st.Contended, st.Released, st.Stale = 0, 0, 0, 0
		st.Extended, st.ExpiredHeld, st.Removed, st.LastUs = 0, 0, 0, 0
		st.Refusals, st.Extends, st.waitSince = 0, 0, 0
	}
}

// Lock is one held lock as listed.
type Lock struct {
	DB     int
	Key    string
	Digest uint64 // the holder's token's digest (xxh3: what DIGEST shows)
	Held
}

// Locks returns the locks held now, oldest first (then by database and key).
func (t *Table) Locks() []Lock {
	out := make([]Lock, 0, t.n)
	t.idx.states(func(st *state) {
		if st.held {
			out = append(out, Lock{st.db, strings.Clone(st.key), st.tokenDigest(), st.heldView()})
		}
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.AcquiredUs != b.AcquiredUs {
			return a.AcquiredUs < b.AcquiredUs
		}
		if a.DB != b.DB {
			return a.DB < b.DB
		}
		return a.Key < b.Key
	})
	return out
}

// KeyView is one key's counters as listed.
type KeyView struct {
	DB  int
	Key string
	KeyStats
	Held bool
}

// Top returns up to n keys (n < 0: all) with their counters, the most active
// first (then by database and key).
func (t *Table) Top(n int) []KeyView {
	out := make([]KeyView, 0, t.nKeys)
	t.idx.states(func(st *state) {
		out = append(out, KeyView{st.db, strings.Clone(st.key), st.stats(), st.held})
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Activity() != b.Activity() {
			return a.Activity() > b.Activity()
		}
		if a.DB != b.DB {
			return a.DB < b.DB
		}
		return a.Key < b.Key
	})
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
