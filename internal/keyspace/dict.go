package keyspace

import (
	"math/bits"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// Dict is a hash table from string keys to values of type V, modelled on Redis's
// dict.c so that it offers what a Go map cannot: SCAN's guarantee across resizes
// and seeded random sampling (RANDOMKEY, eviction).
//
// Buckets are singly linked chains in a power-of-two table of at least 4 buckets.
// The table grows when it holds as many entries as buckets and shrinks when it is
// at most 1/8 full (Redis 7.4+). A resize allocates a second table and migrates
// incrementally: each lookup, insert and delete moves one bucket (the one the key
// hashes to if it is still in the old table, else the next one, visiting at most
// 10 empty buckets), and RehashStep / RehashMicroseconds let an idle-time cron
// finish the job, as databasesCron does.
//
// Entries never move in memory: rehashing relinks them. A *V returned by any
// method stays valid until its entry is deleted (Delete, Clear).
//
// The callbacks of Scan, Range and Sample run with rehashing and resizing held
// back, so they may look keys up, update values through their pointers, and
// delete the entry they were given. They must not delete any other entry (the
// walk may hold it as its next step) nor call Clear; keys they insert may or may
// not be visited.
//
// Lookups, updates of existing keys and deletes do not allocate; an insert
// allocates its entry, which holds the key's bytes (dict_entry.go; a key over
// dictInlineMax bytes given as []byte is also copied into a string), and a
// resize allocates the new bucket array. The zero Dict is an empty dict with seed 0.
// A Dict is not safe for concurrent use.
type Dict[V any] struct {
	ht        [2][]*dictEntry[V] // ht[1] != nil while rehashing from ht[0] into it
	used      [2]int
	rehashIdx int    // while rehashing: ht[0] buckets below it are empty
	paused    int    // > 0 while Scan, Range or Sample call back: no rehash, no resize
	seed      uint64 // hash seed
	// expandAllowed, when set, is asked before the table doubles (Redis's
	// dictType.expandAllowed): moreMem is the new table's bytes, usedRatio
	// the entries per bucket now.
	expandAllowed func(moreMem int, usedRatio float64) bool
	// acct counts the bucket arrays as they are allocated and let go (set
	// for the key tables)
	acct allocCount
	// insertRehash is how many more buckets an insert moves while rehashing,
	// beyond the one every operation moves (collectionRehash for a hash's or
	// a set's table: see there; 0 for the key tables, which the cron rehashes)
	insertRehash int
	// snap lists the snapshots in progress over this dict (dict_snap.go)
	snap *dictSnap[V]
}

// collectionRehash is the insertRehash of a collection's table. Nothing but
// operations on it rehashes a collection (Redis's active rehashing is for the
// key tables only), so at one bucket per operation a table that doubled while
// being filled kept its old half until it doubled again: a 5M-field hash held
// a 32 MB table it no longer used. Moving 8 more buckets per insert ends a
// rehash within an eighth of the inserts that doubled the table; each bucket
// still moves once, so the total work is the same.
const collectionRehash = 8

// dictEntry is one key and its value. The value is inline, and so is the key
// (dict_entry.go): an entry is one allocation of 12 bytes plus the size of V
// and the key's length, rounded up (dictEntrySize).
type dictEntry[V any] struct {
	next *dictEntry[V]
	val  V
	klen uint32 // the key's length, or keyExt; its bytes follow (key())
}

const (
	dictMinSize     = 4  // DICT_HT_INITIAL_SIZE
	dictMinFill     = 8  // HASHTABLE_MIN_FILL: shrink when used*8 <= buckets
	dictEmptyVisits = 10 // empty buckets a rehash step may skip per bucket of work
)

// NewDict returns an empty dict whose hash function is keyed by seed.
func NewDict[V any](seed uint64) *Dict[V] { return &Dict[V]{seed: seed} }

// Len returns the number of entries.
func (d *Dict[V]) Len() int { return d.used[0] + d.used[1] }

// Buckets returns the number of buckets in both tables (dictBuckets).
func (d *Dict[V]) Buckets() int { return len(d.ht[0]) + len(d.ht[1]) }

// Rehashing reports whether an incremental rehash is in progress.
func (d *Dict[V]) Rehashing() bool { return d.ht[1] != nil }

// Get returns the value slot of key. It does not allocate.
func (d *Dict[V]) Get(key []byte) (*V, bool) { return d.GetString(dictView(key)) }

// GetString returns the value slot of key. It does not allocate.
func (d *Dict[V]) GetString(key string) (*V, bool) {
	if e := d.find(key); e != nil {
		return &e.val, true
	}
	return nil, false
}

// KeyOf returns the key string stored in the dict for key, so that callers can
// keep a canonical key without allocating their own copy.
func (d *Dict[V]) KeyOf(key []byte) (string, bool) {
	if e := d.find(dictView(key)); e != nil {
		return e.key(), true
	}
	return "", false
}

// findEntry returns the entry of key, or nil (as Get, with its rehash step).
func (d *Dict[V]) findEntry(key []byte) *dictEntry[V] { return d.find(dictView(key)) }

// entryOf returns the entry of key, or nil, without a rehash step: for the
// keyspace's own index of entries (entries never move in memory).
func (d *Dict[V]) entryOf(key []byte) *dictEntry[V] {
	if d.Len() == 0 {
		return nil
	}
	k := dictView(key)
	return d.lookup(k, d.hash(k))
}

// Upsert returns the value slot of key, inserting a zero V under a copy of key if
// it is absent. Updating an existing key does not allocate.
func (d *Dict[V]) Upsert(key []byte) (v *V, existed bool) { return d.upsert(dictView(key), true) }

// UpsertString is Upsert for a string key. A new entry copies key into itself,
// unless it is longer than an entry holds inline: then it keeps key (no copy).
func (d *Dict[V]) UpsertString(key string) (v *V, existed bool) { return d.upsert(key, false) }

// Delete removes key and returns its value. It does not allocate.
func (d *Dict[V]) Delete(key []byte) (old V, ok bool) { return d.DeleteString(dictView(key)) }

// DeleteString removes key and returns its value.
func (d *Dict[V]) DeleteString(key string) (old V, ok bool) {
	if e := d.deleteEntry(key); e != nil {
		return e.val, true
	}
	return old, false
}

// deleteEntry removes key and returns its entry (nil if absent), whose value
// and size (dictEntryBytes) the caller may still read.
func (d *Dict[V]) deleteEntry(key string) *dictEntry[V] {
	if d.Len() == 0 {
		return nil
	}
	h := d.hash(key)
	d.rehashStepFor(h)
	if d.snap != nil {
		d.snapHash(h)
	}
	for t := range 2 {
		tab := d.ht[t]
		if tab == nil {
			break
		}
		i := int(h & uint64(len(tab)-1))
		if t == 0 && d.Rehashing() && i < d.rehashIdx {
			continue // already migrated
		}
		for link := &tab[i]; *link != nil; link = &(*link).next {
			if e := *link; e.key() == key {
				*link = e.next
				e.next = nil
				d.used[t]--
				d.shrinkIfNeeded()
				return e
			}
		}
	}
	return nil
}

// Clear removes every entry. Callbacks of Scan, Range and Sample must not call it.
func (d *Dict[V]) Clear() {
	if d.snap != nil {
		d.snapAll()
	}
	*d = Dict[V]{seed: d.seed, paused: d.paused, insertRehash: d.insertRehash, snap: d.snap}
}

// Expand grows the table ahead of inserting about n entries in total (dictExpand),
// so that a bulk load does not resize repeatedly. It reports whether it started a
// resize; it never shrinks, and does nothing while rehashing. As in Redis, a
// delete or the cron shrinks the table back while it is at most 1/8 full.
func (d *Dict[V]) Expand(n int) bool {
	if d.paused > 0 || n <= len(d.ht[0]) {
		return false
	}
	return d.resize(n)
}

// RehashStep performs up to n steps of incremental rehashing (dictRehash): each
// moves one bucket, skipping at most 10 empty ones. It reports whether rehashing
// is still in progress.
func (d *Dict[V]) RehashStep(n int) bool {
	if d.paused > 0 {
		return d.Rehashing()
	}
	return d.rehash(n)
}

// RehashMicroseconds is the idle-time cron's entry point, Redis's databasesCron
// work for one dict: first start any resize the table is due (tryResizeHashTables;
// e.g. a table emptied while it was growing), then rehash in batches of 100 steps
// until done or until us microseconds have passed by nowUs
// (dictRehashMicroseconds; the caller supplies the clock). It returns the number
// of steps performed, a multiple of 100.
func (d *Dict[V]) RehashMicroseconds(us int64, nowUs func() int64) int {
	if d.paused > 0 {
		return 0
	}
	if !d.Rehashing() {
		if d.resizeIfNeeded(); !d.Rehashing() {
			return 0
		}
	}
	start, steps := nowUs(), 0
	for d.rehash(100) {
		steps += 100
		if nowUs()-start >= us {
			break
		}
	}
	return steps
}

func (d *Dict[V]) hash(key string) uint64 { return xxh3.HashStringSeed(key, d.seed) }

// dictView returns b's bytes as a string without copying. The result is only for
// hashing and comparing during the call that received b: it must never be stored.
func dictView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// find returns the entry of key, or nil, after a rehash step (dictFind).
func (d *Dict[V]) find(key string) *dictEntry[V] {
	if d.Len() == 0 {
		return nil
	}
	h := d.hash(key)
	d.rehashStepFor(h)
	return d.lookup(key, h)
}

// lookup searches both tables for key with hash h, without rehashing.
func (d *Dict[V]) lookup(key string, h uint64) *dictEntry[V] {
	for t := range 2 {
		tab := d.ht[t]
		if tab == nil {
			break
		}
		i := int(h & uint64(len(tab)-1))
		if t == 0 && d.Rehashing() && i < d.rehashIdx {
			continue
		}
		for e := tab[i]; e != nil; e = e.next {
			if e.key() == key {
				return e
			}
		}
	}
	return nil
}

func (d *Dict[V]) upsert(key string, copyKey bool) (*V, bool) {
	e, existed := d.upsertEntry(key, copyKey)
	return &e.val, existed
}

// UpsertRoom is Upsert for a dict whose values keep bytes in their entries: a
// new entry has at least room bytes after its key (more if its size class
// leaves them), none if key and room are longer than an entry holds inline.
// dictRoom returns them. An existing entry keeps what it has.
func (d *Dict[V]) UpsertRoom(key []byte, room int) (v *V, existed bool) {
	e, existed := d.upsertEntryRoom(dictView(key), true, room)
	return &e.val, existed
}

// reallocRoom moves the entry whose value slot is v to a new entry with the
// same key and value and room bytes of room (newDictEntryRoom), relinked in
// its place, and returns the new value slot; nil, and nothing moves, while a
// Scan, Range or Sample calls back (paused). It is the one exception to
// "entries never move": the caller must update what refers to the old entry
// (the keyspace's expiring set).
func (d *Dict[V]) reallocRoom(v *V, room int) *V {
	if d.paused > 0 {
		return nil
	}
	old := dictEntryOf(v)
	key := old.key()
	h := d.hash(key)
	if d.snap != nil {
		d.snapHash(h)
	}
	for t := range 2 {
		tab := d.ht[t]
		if tab == nil {
			break
		}
		i := int(h & uint64(len(tab)-1))
		for link := &tab[i]; *link != nil; link = &(*link).next {
			if *link == old {
				ne := newDictEntryRoom[V](key, room)
				ne.val, ne.next = old.val, old.next
				*link = ne
				old.next = nil
				return &ne.val
			}
		}
	}
	panic("keyspace: reallocRoom of an entry that is not in the dict")
}

// upsertEntry is upsert returning the entry, whose key() is the stored key.
func (d *Dict[V]) upsertEntry(key string, copyKey bool) (*dictEntry[V], bool) {
	return d.upsertEntryRoom(key, copyKey, -1)
}

// upsertEntryRoom is upsertEntry with room for a new entry (-1: none, and the
// key may be kept rather than copied).
func (d *Dict[V]) upsertEntryRoom(key string, copyKey bool, room int) (*dictEntry[V], bool) {
	h := d.hash(key)
	d.rehashStepFor(h)
	if d.snap != nil {
		d.snapHash(h) // an insert or a value about to change
	}
	if e := d.lookup(key, h); e != nil {
		return e, true
	}
	if d.insertRehash > 0 && d.Rehashing() && d.paused == 0 {
		d.rehash(d.insertRehash)
	}
	// Unlike dictAddRaw, grow only when actually inserting: updates never resize.
	d.growIfNeeded()
	t := 0
	if d.Rehashing() {
		t = 1 // new keys go to the new table
	}
	tab := d.ht[t]
	i := h & uint64(len(tab)-1)
	var e *dictEntry[V]
	if room < 0 {
		e = newDictEntry[V](key, copyKey)
	} else {
		e = newDictEntryRoom[V](key, room)
	}
	e.next = tab[i]
	tab[i] = e
	d.used[t]++
	return e, false
}

// rehashStepFor is _dictRehashStepIfNeeded: the per-operation rehash step for an
// operation on a key with hash h. Moving that key's own bucket, if it is still in
// the old table, is the cache-friendly choice; otherwise it is one regular step.
func (d *Dict[V]) rehashStepFor(h uint64) {
	if !d.Rehashing() || d.paused > 0 {
		return
	}
	if i := int(h & uint64(len(d.ht[0])-1)); i >= d.rehashIdx && d.ht[0][i] != nil {
		d.moveBucket(i)
		d.rehashDone()
		return
	}
	d.rehash(1)
}

// rehash is dictRehash: up to n bucket moves, visiting at most n*10 empty buckets.
// It reports whether rehashing is still in progress.
func (d *Dict[V]) rehash(n int) bool {
	if !d.Rehashing() {
		return false
	}
	emptyVisits := n * dictEmptyVisits
	t0 := d.ht[0]
	for ; n > 0 && d.used[0] != 0; n-- {
		for t0[d.rehashIdx] == nil { // in range: ht[0] still has entries at or above
			d.rehashIdx++
			if emptyVisits--; emptyVisits == 0 {
				return true
			}
		}
		d.moveBucket(d.rehashIdx)
		d.rehashIdx++
	}
	d.rehashDone()
	return d.Rehashing()
}

// moveBucket relinks every entry of old-table bucket i into the new table.
func (d *Dict[V]) moveBucket(i int) {
	if d.snap != nil {
		d.snapMove(i)
	}
	t0, t1 := d.ht[0], d.ht[1]
	mask := uint64(len(t1) - 1)
	grow := len(t1) > len(t0)
	n := 0
	for e := t0[i]; e != nil; n++ {
		next := e.next
		j := uint64(i) & mask // shrinking: the new index is the old one, masked
		if grow {
			j = d.hash(e.key()) & mask
		}
		e.next = t1[j]
		t1[j] = e
		e = next
	}
	t0[i] = nil
	d.used[0] -= n
	d.used[1] += n
}

// rehashDone ends the rehash if the old table is empty. Inserts made during a
// shrink may have filled the new table already: then it starts growing at once.
// (It does not shrink here: that would undo an Expand ahead of a bulk load.)
func (d *Dict[V]) rehashDone() {
	if d.used[0] != 0 {
		return
	}
	d.tableFreed(d.ht[0])
	if d.snap != nil {
		d.snapRetire(d.ht[0])
	}
	d.ht[0], d.ht[1] = d.ht[1], nil
	d.used[0], d.used[1] = d.used[1], 0
	d.rehashIdx = 0
	d.growIfNeeded()
}

// growIfNeeded is _dictExpandIfNeeded: it creates the first table, or doubles the
// table once it holds as many entries as buckets.
func (d *Dict[V]) growIfNeeded() {
	switch {
	case d.ht[0] == nil:
		d.resize(dictMinSize)
	case d.paused == 0 && !d.Rehashing() && d.used[0] >= len(d.ht[0]) && d.mayExpand():
		d.resize(d.used[0] + 1)
	}
}

// mayExpand is dictTypeExpandAllowed.
func (d *Dict[V]) mayExpand() bool {
	if d.expandAllowed == nil {
		return true
	}
	next := dictTableSize(d.used[0] + 1) // what resize would make
	return d.expandAllowed(next*int(unsafe.Sizeof((*dictEntry[V])(nil))), float64(d.used[0])/float64(len(d.ht[0])))
}

// dictTableSize is the buckets of a table for size entries (_dictNextExp):
// the smallest power of two >= max(size, 4).
func dictTableSize(size int) int {
	if size <= dictMinSize {
		return dictMinSize
	}
	return 1 << bits.Len(uint(size-1))
}

// shrinkIfNeeded is dictShrinkIfNeeded: it shrinks a table at most 1/8 full.
func (d *Dict[V]) shrinkIfNeeded() {
	if d.paused == 0 && !d.Rehashing() && len(d.ht[0]) > dictMinSize &&
		d.used[0]*dictMinFill <= len(d.ht[0]) {
		d.resize(d.used[0])
	}
}

// resize is _dictResize: it starts rehashing into a table of the smallest power of
// two >= max(size, 4), or installs that table at once if the dict has no entries.
func (d *Dict[V]) resize(size int) bool {
	if d.Rehashing() || d.used[0] > size {
		return false
	}
	n := dictTableSize(size)
	if n == len(d.ht[0]) {
		return false
	}
	tab := make([]*dictEntry[V], n)
	d.acct.alloc(allocSize(int64(n) * ptrSize))
	if d.used[0] == 0 {
		d.tableFreed(d.ht[0])
		if d.snap != nil {
			d.snapRetire(d.ht[0])
		}
		d.ht[0] = tab
		return true
	}
	d.ht[1] = tab
	d.rehashIdx = 0
	return true
}

// tableFreed counts a bucket array the dict lets go of.
func (d *Dict[V]) tableFreed(t []*dictEntry[V]) {
	if t != nil {
		d.acct.free(allocSize(int64(len(t)) * ptrSize))
	}
}

// pause stops rehashing and resizing while a callback runs, so that the bucket
// chains being walked stay where they are (dictPauseRehashing).
func (d *Dict[V]) pause() { d.paused++ }

// resume undoes pause and applies any resize that was held back meanwhile.
func (d *Dict[V]) resume() {
	if d.paused--; d.paused == 0 {
		d.resizeIfNeeded()
	}
}

// resizeIfNeeded grows or shrinks a table that has left the load bounds while it
// could not be resized.
func (d *Dict[V]) resizeIfNeeded() {
	if d.ht[0] != nil && d.used[0] >= len(d.ht[0]) {
		d.growIfNeeded()
	} else {
		d.shrinkIfNeeded()
	}
}
