package keyspace

// expItem is one member of a DB's set of keys that carry a TTL, kept in a dense
// array (expIndex) so that the active expiry cycle can sample it uniformly with a
// seeded source. It holds the key's deadline (Entry has no room for it: 16 bytes per TTL key here
// instead of 8 in every entry) and the dict entry, whose key and value never move.
type expItem struct {
	de *dictEntry[Entry]
	at int64 // absolute Unix ms
}

// DB is one numbered Redis database. It is not safe for concurrent use: every call
// happens under the engine's serialisation point, and time comes from the owning
// Keyspace's frozen now (docs/ARCHITECTURE.md §4).
type DB struct {
	ID       int
	ks       *Keyspace
	dict     *Dict[Entry]
	expiring expIndex             // the keys with a TTL and their deadlines (expindex.go)
	hfe      []hfeItem            // hashes with field deadlines, a min-heap (hfe.go)
	idmp     map[*Stream]struct{} // streams with IDMP records (stream_idmp.go)
	keysizes Keysizes             // INFO keysizes' histogram (keysizes.go)
	avgTTL   int64                // running estimate of the average TTL (ms), as INFO keyspace's avg_ttl
	blessed  map[string]struct{}  // keys protected from eviction (bless.go); nil while none
}

func newDB(ks *Keyspace, id int) *DB {
	return &DB{ID: id, ks: ks, dict: ks.newKeyDict(id), expiring: expIndex{acct: ks.allocCount()}}
}

// Len is the number of keys, including ones that expired but are not yet reclaimed
// (DBSIZE counts them too, as Redis does).
func (db *DB) Len() int { return db.dict.Len() }

// Expand sizes the DB ahead of a load of about keys keys, expires of them
// with a TTL (the RDB file's RESIZEDB hint: Redis's dbExpand and
// dbExpandExpires). It returns the key table's buckets and the TTL index's
// capacity.
func (db *DB) Expand(keys, expires int) (keyBuckets, expireSlots int) {
	db.dict.Expand(keys)
	db.expiring.reserve(expires)
	return db.dict.Buckets(), db.expiring.capacity()
}

// Expires is the number of keys with a TTL.
func (db *DB) Expires() int { return db.expiring.len() }

// AvgTTL is INFO keyspace's avg_ttl estimate in ms.
func (db *DB) AvgTTL() int64 { return db.avgTTL }

func (db *DB) isExpired(e *Entry) bool {
	return e.expIdx != 0 && db.expiring.at(int(e.expIdx)-1).at <= db.ks.now
}

// ExpireAt returns the absolute deadline (Unix ms) of e, an entry of db; 0 when
// it has no TTL.
func (db *DB) ExpireAt(e *Entry) int64 {
	if e.expIdx == 0 {
		return 0
	}
	return db.expiring.at(int(e.expIdx) - 1).at
}

// Lookup returns the live entry for key, or nil. An expired key is deleted on the
// way (lazy expiry) and reported as absent. It touches neither stats nor LRU.
func (db *DB) Lookup(key []byte) *Entry {
	e, ok := db.dict.Get(key)
	if !ok {
		return nil
	}
	if db.isExpired(e) {
		if !db.ks.keepExpired() {
			db.expireKey(key)
		}
		return nil
	}
	return e
}

// Peek returns key's entry even when it has expired, without deleting it or
// touching anything (Redis's dbFind: DEBUG OBJECT, OBJECT).
func (db *DB) Peek(key []byte) *Entry {
	e, _ := db.dict.Get(key)
	return e
}

// LookupRead is Lookup for a command that reads the key: it counts a keyspace hit
// or miss (a miss is also reported to Events.KeyMiss: Redis's "keymiss") and
// updates the access time unless noTouch.
func (db *DB) LookupRead(key []byte, noTouch bool) *Entry {
	e := db.Lookup(key)
	if e == nil {
		db.ks.Stats.KeyspaceMisses++
		if db.ks.Events != nil {
			db.ks.Events.KeyMiss(db.ID, key)
		}
		return nil
	}
	db.ks.Stats.KeyspaceHits++
	if !noTouch {
		db.ks.touch(e)
	}
	return e
}

// LookupWrite is Lookup for a command about to modify the key; it updates the access time.
func (db *DB) LookupWrite(key []byte) *Entry {
	e := db.Lookup(key)
	if e != nil {
		db.dict.snapKey(unsafeView(key)) // a snapshot takes the value before it changes
		db.ks.touch(e)
	}
	return e
}

// Changing tells the snapshots in progress that a command is about to change
// key's value in place after looking it up for reading (LookupRead, Lookup):
// a read that deletes an expired hash field, PFCOUNT caching a cardinality.
// They take the key as it was first (snapshot.go). LookupWrite does it.
func (db *DB) Changing(key []byte) { db.dict.snapKey(unsafeView(key)) }

// Exists reports whether key is live, without touching stats (EXISTS, TOUCH use LookupRead).
func (db *DB) Exists(key []byte) bool { return db.Lookup(key) != nil }

// SetString stores val (copied) under key as a string, replacing any value of any
// kind. The TTL is cleared unless keepTTL. It returns the stored entry.
//
// Events: a new key is reported as added ("new"), the replacement of a live
// key as overwritten ("overwritten", "type_changed" unless it held a string),
// as Redis's setKey does. Callers that update a string in place (INCR, APPEND)
// change the entry instead, as Redis's dbReplaceValue announces nothing.
func (db *DB) SetString(key, val []byte, keepTTL bool) *Entry {
	return db.setString(key, val, keepTTL, false)
}

// SetStringOwned is SetString for a value the keyspace takes over instead of
// copying: a client's big argument, which its reader allocated for it alone
// and never reuses. The bytes stay shared (the command's propagation may still
// read them) until a change in place copies them (Entry.Writable).
func (db *DB) SetStringOwned(key, val []byte, keepTTL bool) *Entry {
	return db.setString(key, val, keepTTL, true)
}

func (db *DB) setString(key, val []byte, keepTTL, owned bool) *Entry {
	room := -1
	if !owned {
		room = embedRoom(len(key), len(val))
	}
	e, existed := db.dict.UpsertRoom(key, room)
	live := existed
	if existed && db.isExpired(e) {
		// the old value is logically gone: it must not lend its TTL to KEEPTTL
		db.ks.Stats.ExpiredKeys++
		db.clearTTL(e)
		db.ks.expired(db.ID, key)
		live = false
	}
	oldKind := e.Kind
	if existed {
		db.dropReg(e)
		db.ksUncount(e)
	}
	if old := e.Bytes(); existed && e.Kind == KindString && !e.Shared() && cap(old) >= len(val) && (cap(old) <= 2*len(val)+64 || e.embedded()) {
		e.SetBytes(append(old[:0], val...))
	} else if !existed && room >= 0 {
		e.embed(val)
	} else if ne := db.reembed(e, val, room); ne != nil {
		e = ne
	} else {
		if existed {
			db.ks.Freed += valueUsage(e, defaultSamples)
		}
		e.meta &^= sharedBit // new bytes: private, unless taken over
		if owned {
			e.SetBytes(val[:len(val):len(val)])
			e.Share()
		} else {
			e.SetBytes(append(make([]byte, 0, len(val)), val...))
		}
		db.ks.Added += allocSize(int64(len(val)))
	}
	if !existed {
		db.ks.Added += dictEntryBytes(e)
	}
	e.Kind = KindString
	e.Enc = StrEncoding(val)
	e.fitKey(key)
	if !live || db.ks.access != AccessLFU {
		// an overwrite keeps the LFU counter (dbSetValue: val->lru = old->lru)
		e.SetAccess(db.ks.newAccess())
	}
	if !keepTTL && e.expIdx != 0 {
		db.clearTTL(e)
	}
	db.ksCount(e)
	db.ks.modified(db.ID, key)
	if live {
		db.ks.overwritten(db.ID, key, oldKind != KindString)
	} else {
		db.ks.added(db.ID, key)
	}
	return e
}

// SetObject stores a non-string value under key, replacing any existing value and
// clearing its TTL. Events as SetString: "new", or "overwritten" (and
// "type_changed" when the old value was of another kind) for a live key.
func (db *DB) SetObject(key []byte, kind Kind, obj any) *Entry {
	e, existed := db.dict.Upsert(key)
	live, oldKind := existed, e.Kind
	if existed {
		if db.isExpired(e) {
			db.ks.Stats.ExpiredKeys++
			db.ks.expired(db.ID, key)
			live = false
		}
		if e.expIdx != 0 {
			db.clearTTL(e)
		}
		db.dropReg(e)
		db.ksUncount(e)
		db.ks.Freed += valueUsage(e, defaultSamples)
	}
	access := db.ks.newAccess()
	if live && db.ks.access == AccessLFU {
		access = e.Access() // an overwrite keeps the LFU counter
	}
	*e = Entry{Kind: kind, meta: access & accessMask}
	if e.SetObj(obj); e.Kind != kind {
		panic("keyspace: SetObject: " + kind.String() + " with a value of another kind")
	}
	db.ks.Added += valueUsage(e, defaultSamples)
	if !existed {
		db.ks.Added += dictEntryBytes(e)
	}
	db.ksCount(e)
	db.ks.modified(db.ID, key)
	if live {
		db.ks.overwritten(db.ID, key, oldKind != kind)
	} else {
		db.ks.added(db.ID, key)
	}
	return e
}

// Delete removes key; it reports whether a live key was removed.
func (db *DB) Delete(key []byte) bool {
	if db.Lookup(key) == nil {
		return false
	}
	db.remove(key)
	db.ks.modified(db.ID, key)
	return true
}

func (db *DB) remove(key []byte) { db.removeString(unsafeView(key)) }

// removeString deletes key from the dict and the expiring set, and counts
// the bytes it held as freed. key may alias caller memory: the dict does not
// keep it.
func (db *DB) removeString(key string) {
	if old, size, ok := db.unlink(key); ok {
		db.ks.Freed += size + valueUsage(&old, defaultSamples)
	}
}

// unlink is removeString without the accounting, for a value that lives on
// under another key (Rename). It returns the removed entry and the bytes of
// its dict entry (with the key, and a string's bytes if embedded).
func (db *DB) unlink(key string) (Entry, int64, bool) {
	de := db.dict.deleteEntry(key)
	if de == nil {
		return Entry{}, 0, false
	}
	old := de.val
	if old.expIdx != 0 {
		db.dropExpiring(old.expIdx)
	}
	db.unbless(key)
	db.dropReg(&old)
	db.ksUncount(&old)
	return old, dictEntryBytes(&de.val), true
}

// SetExpire gives the live entry e of key the absolute deadline at (Unix ms). The
// caller decides whether a deadline in the past deletes the key instead (Redis's
// checkAlreadyExpired), so SetExpire never deletes.
func (db *DB) SetExpire(key []byte, e *Entry, at int64) {
	db.setExpire(key, e, at)
	db.ks.modified(db.ID, key)
}

// setExpire is SetExpire without telling the observer, for callers that
// report the whole change themselves (RENAME reports the source, then the
// destination, as Redis's signalModifiedKey calls do).
func (db *DB) setExpire(key []byte, e *Entry, at int64) {
	db.dict.snapKey(unsafeView(key))
	if e.expIdx == 0 {
		de := db.dict.entryOf(key)
		if de == nil || &de.val != e {
			panic("keyspace: setExpire of an entry that is not key's")
		}
		e.expIdx = db.expiring.push(expItem{de: de, at: at})
	} else {
		db.expiring.at(int(e.expIdx) - 1).at = at
	}
	if ttl := at - db.ks.now; ttl > 0 {
		if db.avgTTL == 0 {
			db.avgTTL = ttl
		} else {
			db.avgTTL = (db.avgTTL*49 + ttl) / 50
		}
	}
}

// Persist removes e's TTL; it reports whether there was one.
func (db *DB) Persist(key []byte, e *Entry) bool {
	if e.expIdx == 0 {
		return false
	}
	db.dict.snapKey(unsafeView(key))
	db.clearTTL(e)
	db.ks.modified(db.ID, key)
	return true
}

func (db *DB) clearTTL(e *Entry) {
	if e.expIdx != 0 {
		db.dropExpiring(e.expIdx)
		e.expIdx = 0
	}
}

// dropExpiring removes the 1-based slot idx from the expiring set (swap-remove).
func (db *DB) dropExpiring(idx int32) {
	if moved := db.expiring.remove(int(idx) - 1); moved != nil {
		moved.de.val.expIdx = idx
	}
}

// reembed stores val, which does not fit where e's string is, embedded in
// a new dict entry for e's key with room for it (room >= 0: embedRoom's
// verdict), as Redis reallocates an object whose embedded value outgrew it;
// it returns the new entry, or nil when val is better in its own allocation
// or the dict cannot move entries now. The old entry and its value are
// counted as freed.
func (db *DB) reembed(e *Entry, val []byte, room int) *Entry {
	if room < 0 {
		return nil
	}
	size, vsize := dictEntryBytes(e), valueUsage(e, defaultSamples)
	ne := db.dict.reallocRoom(e, room)
	if ne == nil {
		return nil
	}
	if ne.expIdx != 0 {
		db.expiring.at(int(ne.expIdx) - 1).de = dictEntryOf(ne)
	}
	db.ks.Freed += size + vsize
	db.ks.Added += dictEntryBytes(ne)
	ne.meta &^= sharedBit
	ne.embed(val)
	return ne
}

// place stores v under key, which must be absent, in a new entry, and
// returns it: a string's bytes are embedded in the entry when setString
// would embed them (copied: v's own bytes are let go), and an embedded
// string that does not fit the new entry gets its own copy (its bytes were
// in the entry of the key it came from). It counts the new allocations.
func (db *DB) place(key []byte, v Entry) *Entry {
	room := -1
	if v.Kind == KindString && v.n != bigStr && !v.Shared() {
		room = embedRoom(len(key), int(v.n))
	}
	ne, _ := db.dict.UpsertRoom(key, room)
	*ne = v
	switch {
	case room >= 0:
		ne.embed(v.Bytes())
	case v.Kind == KindString && v.embedded():
		ne.SetBytes(append([]byte(nil), v.Bytes()...))
		db.ks.Added += allocSize(int64(v.n))
	}
	db.ks.Added += dictEntryBytes(ne)
	return ne
}

// expireKey deletes an expired key: the one deletion path shared by lazy and active
// expiry, so that the observer (propagation, notifications) sees both the same way.
func (db *DB) expireKey(key []byte) { db.expireKeyString(unsafeView(key)) }

func (db *DB) expireKeyString(key string) {
	db.removeString(key)
	db.ks.Stats.ExpiredKeys++
	kb := []byte(key) // observers get bytes; only reached when a key really expires
	db.ks.expired(db.ID, kb)
	db.ks.modified(db.ID, kb)
}

// ExpireIfDue deletes key when it has expired, whatever pauses expiry
// (a writable replica's own keys: Redis's expireSlaveKeys), and reports
// whether it did; keep reports whether the key still has a TTL to watch.
func (db *DB) ExpireIfDue(key []byte) (expired, keep bool) {
	e, ok := db.dict.Get(key)
	if !ok || e.expIdx == 0 {
		return false, false
	}
	if !db.isExpired(e) {
		return false, true
	}
	db.expireKey(key)
	return true, false
}

// ActiveExpireStep samples up to n keys with a TTL using rnd and deletes the expired
// ones. It returns how many it sampled and how many it deleted (Redis's
// activeExpireCycle inner loop).
func (db *DB) ActiveExpireStep(n int, rnd func() uint64) (sampled, expired int) {
	for ; sampled < n && db.expiring.len() > 0; sampled++ {
		it := *db.expiring.at(int(rnd() % uint64(db.expiring.len())))
		if it.at <= db.ks.now {
			db.expireKeyString(it.de.key())
			db.ks.Stats.ExpiredKeysActive++
			expired++
		}
	}
	return sampled, expired
}

// Random returns a random live key using rnd, or "" and false if there is none.
// Like Redis, it gives up on expired samples after a bounded number of tries.
func (db *DB) Random(rnd func() uint64) (string, bool) {
	for tries := 0; db.dict.Len() > 0; tries++ {
		k, e, ok := db.dict.Random(rnd)
		if !ok {
			return "", false
		}
		if !db.isExpired(e) {
			return k, true
		}
		if tries >= 100 && db.dict.Len() == db.expiring.len() {
			// every key has a TTL and we keep hitting expired ones: return one anyway,
			// as Redis does, rather than looping forever
			return k, true
		}
		if !db.ks.keepExpired() {
			db.expireKeyString(k)
		}
	}
	return "", false
}

// Scan runs one SCAN step over the keys from cursor; fn sees every key in the visited
// buckets, expired or not (the caller filters with Lookup). It returns the next cursor.
func (db *DB) Scan(cursor uint64, fn func(key string, e *Entry)) uint64 {
	return db.dict.Scan(cursor, fn)
}

// Range calls fn for every live key until fn returns false. fn must not modify the DB.
func (db *DB) Range(fn func(key string, e *Entry) bool) {
	db.dict.Range(func(k string, e *Entry) bool {
		if db.isExpired(e) {
			return true
		}
		return fn(k, e)
	})
}

// RangeAll is Range including the keys whose deadline has passed but that
// are not yet reclaimed, as Redis's rdbSaveDb writes them (a master loading
// the file skips them, a replica keeps them until the master's DEL).
func (db *DB) RangeAll(fn func(key string, e *Entry) bool) {
	db.dict.Range(fn)
}

// Flush removes every key.
func (db *DB) Flush() {
	if db.ks.Obs != nil {
		db.ks.Obs.Flushing(db.ID)
	}
	if db.ks.snaps != nil {
		db.ks.snapFlushing(db)
	}
	db.dict = db.ks.newKeyDict(db.ID)
	db.expiring = expIndex{acct: db.ks.allocCount()}
	db.clearHashReg()
	db.idmp = nil
	db.keysizes = Keysizes{}
	db.avgTTL = 0
	db.blessed = nil
}

// Rename moves the live entry of src to dst (replacing dst). It keeps the TTL.
// As Redis's RENAME (dbDelete, then dbAdd), dst is reported as added ("new")
// even when it replaced a key: the command announces "overwritten" itself,
// after its own events.
func (db *DB) Rename(src, dst []byte) {
	e := db.Lookup(src)
	moved, at := *e, db.ExpireAt(e)
	moved.expIdx = 0
	blessed := db.IsBlessed(unsafeView(src)) // the protection moves with the key
	if _, size, ok := db.unlink(unsafeView(src)); ok {
		db.ks.Freed += size // the value moves (an embedded string's bytes too)
	}
	if d := db.Lookup(dst); d != nil {
		db.remove(dst)
	}
	ne := db.place(dst, moved)
	ne.fitKey(dst)
	db.ksCount(ne)
	if at != 0 {
		db.setExpire(dst, ne, at)
	}
	if blessed {
		db.Bless(dst)
	}
	db.trackValue(dst, ne)
	db.ks.added(db.ID, dst)
	db.ks.modified(db.ID, src)
	db.ks.modified(db.ID, dst)
}

// Insert stores entry content v under key in db, replacing any value, with the
// deadline at (Unix ms, 0 for none; used by COPY and MOVE). v's value must be
// owned by db from now on (see Entry.Clone); v's own deadline is ignored.
// The key is reported as added ("new"), as Redis's dbDelete then dbAdd; COPY
// REPLACE announces "overwritten" itself, after "copy_to".
func (db *DB) Insert(key []byte, v Entry, at int64) *Entry {
	blessed := false
	if db.Lookup(key) != nil {
		// a value replaced (RESTORE REPLACE, COPY REPLACE) keeps the key's
		// protection
		blessed = db.IsBlessed(unsafeView(key))
		db.remove(key)
	}
	if blessed {
		defer db.Bless(key)
	}
	v.expIdx = 0
	ne := db.place(key, v)
	ne.fitKey(key)
	db.ksCount(ne)
	if at != 0 {
		db.setExpire(key, ne, at)
	}
	db.trackValue(key, ne)
	db.ks.added(db.ID, key)
	db.ks.modified(db.ID, key)
	return ne
}

// Evict removes key on behalf of the eviction policy and reports it to
// Events.KeyEvicted ("evicted", Redis's deleteEvictedKeyAndPropagate) and to
// the observer (WATCH, tracking). It returns the estimated bytes freed (see
// Usage), and false when key was not in the table.
func (db *DB) Evict(key []byte) (int64, bool) {
	if _, ok := db.dict.Get(key); !ok {
		return 0, false
	}
	before := db.ks.Freed
	db.remove(key)
	db.ks.Stats.EvictedKeys++
	if db.ks.Events != nil {
		db.ks.Events.KeyEvicted(db.ID, key)
	}
	db.ks.modified(db.ID, key)
	return db.ks.Freed - before, true
}

// Touch signals that the value of key was modified in place (Redis's
// signalModifiedKey): commands that change an entry through its pointer call it.
func (db *DB) Touch(key []byte) {
	if e, ok := db.dict.Get(key); ok {
		db.ksResized(e) // the value may have grown or shrunk (keysizes.go)
	}
	db.ks.modified(db.ID, key)
}

// RehashFor spends up to us microseconds finishing an incremental rehash of the
// key table (Redis's activerehashing cron step); nowUs is the time source for the
// budget. It reports whether a rehash is still in progress.
func (db *DB) RehashFor(us int64, nowUs func() int64) bool {
	if !db.dict.Rehashing() {
		return false
	}
	db.dict.RehashMicroseconds(us, nowUs)
	return db.dict.Rehashing()
}

// Rehashing reports whether the key table is between two sizes.
func (db *DB) Rehashing() bool { return db.dict.Rehashing() }

// Present reports whether key is in the table and whether its deadline has
// passed, without the side effects of Lookup (no lazy deletion, no stats).
func (db *DB) Present(key []byte) (present, expired bool) {
	e, ok := db.dict.Get(key)
	if !ok {
		return false, false
	}
	return true, db.isExpired(e)
}

// hashtableMaxLoadFactor is HASHTABLE_MAX_LOAD_FACTOR: a key table this full
// doubles whatever maxmemory says.
const hashtableMaxLoadFactor = 1.618

// newKeyDict is the key table of database id, whose growth asks
// dictExpandAllowed.
func (ks *Keyspace) newKeyDict(id int) *Dict[Entry] {
	d := NewDict[Entry](ks.seed + uint64(id))
	d.expandAllowed = ks.dictExpandAllowed
	d.acct = ks.allocCount()
	return d
}

// dictExpandAllowed is Redis's: below the maximum load factor a key table
// grows only if its new bucket array fits under maxmemory.
func (ks *Keyspace) dictExpandAllowed(moreMem int, usedRatio float64) bool {
	if usedRatio > hashtableMaxLoadFactor || ks.OverMaxmemoryAfterAlloc == nil {
		return true
	}
	return !ks.OverMaxmemoryAfterAlloc(moreMem)
}
