// Package keyspace holds HotKV's data: numbered databases of keys, their values,
// TTLs and the expiry index. It does no I/O, reads no clock and starts no
// goroutines: the engine sets the frozen now before each execution unit and
// serialises every call (docs/ARCHITECTURE.md §4).
package keyspace

import "unsafe"

// unsafeView views b as a string without copying, for lookups that do not keep it.
func unsafeView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Stats are the keyspace counters INFO reports.
type Stats struct {
	KeyspaceHits   int64
	KeyspaceMisses int64
	ExpiredKeys    int64
	ExpiredSubkeys int64 // hash fields deleted because their deadline passed
	// the part of ExpiredKeys and ExpiredSubkeys the active expiry cycle
	// deleted (INFO expired_keys_active, expired_subkeys_active)
	ExpiredKeysActive    int64
	ExpiredSubkeysActive int64
	EvictedKeys          int64 // keys removed by the maxmemory policy (Evict)
	// LazyFreed counts what Redis would have freed in the background
	// (INFO lazyfreed_objects: FreeAsync, asynchronous flushes)
	LazyFreed int64
}

// Observer learns of key changes. Calls happen under the engine's serialisation
// point; implementations must not call back into the keyspace.
type Observer interface {
	// Modified is called after any change to key (Redis's signalModifiedKey): WATCH
	// and client-side caching invalidate on it.
	Modified(db int, key []byte)
	// Expired is called when an expired key is deleted (lazy or active expiry):
	// propagation logs it as a DEL, notifications send "expired".
	Expired(db int, key []byte)
	// Flushing is called before every key of db is removed (FLUSHDB, FLUSHALL).
	Flushing(db int)
	// Swapping is called before databases a and b exchange contents (SWAPDB).
	Swapping(a, b int)
}

// EventObserver hears of the key events that Redis announces from its
// keyspace layer (db.c) rather than from the commands: the creation of a key
// (dbAdd: "new"), the replacement of a live key's value by a set (setKey:
// "overwritten", then "type_changed" when the kind differs), a read lookup
// that finds no key (lookupKey: "keymiss") and an eviction ("evicted"). The
// DB methods below are the one place these happen, so no command can forget
// them. Calls happen under the engine's serialisation point, at the moment of
// the change (before the command announces its own event, as in Redis);
// implementations must not call back into the keyspace.
type EventObserver interface {
	// KeyAdded: key was created (SetString, SetObject, Insert, Rename).
	KeyAdded(db int, key []byte)
	// KeyOverwritten: SetString or SetObject replaced the value of a live key;
	// typeChanged reports that the new value is of another kind.
	KeyOverwritten(db int, key []byte, typeChanged bool)
	// KeyMiss: LookupRead found no live key.
	KeyMiss(db int, key []byte)
	// KeyEvicted: Evict removed key.
	KeyEvicted(db int, key []byte)
}

// Keyspace is the set of databases.
type Keyspace struct {
	DBs   []*DB
	Stats Stats
	// Obs, when set, is told of every modification and expiry.
	Obs Observer
	// Events, when set, is told of key creation, overwrites, read misses and
	// evictions (keyspace notifications).
	Events EventObserver
	// Limits are the compact-encoding thresholds (never nil).
	Limits *EncodingLimits
	// ListPackedThreshold is DEBUG QUICKLIST-PACKED-THRESHOLD: when nonzero, a
	// list element of at least this many bytes gets a plain quicklist node
	// (quicklist.c's packed_threshold, a test-suite knob; 0 is Redis's default).
	ListPackedThreshold uint64
	// LFULogFactor and LFUDecayTime read lfu-log-factor and lfu-decay-time
	// (nil: Redis's defaults 10 and 1).
	LFULogFactor, LFUDecayTime func() int64
	// OverMaxmemoryAfterAlloc, when set, reports whether allocating more
	// bytes would take used memory over maxmemory (Redis's
	// overMaxmemoryAfterAlloc): a database's key table then doubles only
	// once it holds more than 1.618 keys a bucket (dictExpandAllowed), so
	// that a resize does not make the server evict.
	OverMaxmemoryAfterAlloc func(more int) bool
	// Rand is the execution unit's seeded source (LFU counter increments);
	// nil: a sequence keyed by the seed.
	Rand func() uint64
	// Freed is the running total of the estimated bytes (Usage) of the
	// values and keys the keyspace has let go of: deleted, expired, evicted
	// and overwritten keys. The server's used-memory estimate subtracts what
	// was freed since the last garbage collection (decision 0022).
	Freed int64
	// Added is the running total of the estimated bytes of the keys and
	// values SetString and SetObject stored (new keys, and new values that
	// needed new memory). The runtime's allocation counter learns of small
	// objects only when a span cache is refilled (a few KB per size class
	// late); the server's estimate takes the larger of the two (decision 0022).
	Added int64

	// ProbeSnapshots (tests) checks that every write path hands a key to
	// the snapshots before changing it: each execution unit (SetNow)
	// starts a snapshot that never advances, so any key changed without a
	// hook is caught by Modified's check (see Snapshot).
	ProbeSnapshots bool
	// PanicOnSnapshotGap (tests) makes a change to a key that a snapshot
	// has not handed out yet panic instead of only breaking the snapshot.
	PanicOnSnapshotGap bool

	// ProtectLocks is protect-locks-from-eviction: a SET with NX and an expiry
	// blesses its key (eviction never takes a held lock).
	ProtectLocks bool

	// KeepExpired makes lazy expiry report expired keys as absent without
	// deleting them (Redis's EXPIRE_AVOID_DELETE_EXPIRED): the server sets it
	// while SCAN or RANDOMKEY runs inside MULTI or a script with
	// lazyexpire-nested-arbitrary-keys off.
	KeepExpired bool
	// ExpiryPaused, when set and true, suspends expiry as CLIENT PAUSE does
	// (Redis's PAUSE_ACTION_EXPIRE): lazy expiry reports expired keys as
	// absent without deleting them, and the active cycle does not run.
	ExpiryPaused func() bool

	snaps  []*Snapshot // in progress (snapshot.go)
	probe  *Snapshot   // ProbeSnapshots' snapshot of the execution unit
	now    int64
	seed   uint64
	access AccessPolicy
	rnd    uint64
}

// New returns a keyspace of n empty databases; seed keys the hash tables.
func New(n int, seed uint64) *Keyspace {
	ks := &Keyspace{seed: seed, Limits: DefaultEncodingLimits()}
	ks.DBs = make([]*DB, n)
	for i := range ks.DBs {
		ks.DBs[i] = newDB(ks, i)
	}
	return ks
}

// SetNow freezes the time (Unix ms) that every following call sees, until the next
// SetNow. The engine calls it once per execution unit.
func (ks *Keyspace) SetNow(ms int64) {
	ks.now = ms
	if ks.ProbeSnapshots {
		ks.reprobe()
	}
}

// Now is the frozen time.
func (ks *Keyspace) Now() int64 { return ks.now }

// lruClock is Redis's LRU clock: seconds, wrapping at 24 bits.
func (ks *Keyspace) lruClock() uint32 { return uint32(ks.now/1000) & (1<<24 - 1) }

// IdleSeconds is OBJECT IDLETIME for an entry.
func (ks *Keyspace) IdleSeconds(e *Entry) int64 {
	now := ks.lruClock()
	if now >= e.Access() {
		return int64(now - e.Access())
	}
	return int64(now + (1<<24 - e.Access()))
}

func (ks *Keyspace) modified(db int, key []byte) {
	if ks.snaps != nil {
		ks.snapCheck(db, key)
	}
	if ks.access == AccessLRM {
		ks.touchModified(db, key)
	}
	if ks.Obs != nil {
		ks.Obs.Modified(db, key)
	}
}

func (ks *Keyspace) expired(db int, key []byte) {
	if ks.Obs != nil {
		ks.Obs.Expired(db, key)
	}
}

func (ks *Keyspace) added(db int, key []byte) {
	if ks.Events != nil {
		ks.Events.KeyAdded(db, key)
	}
}

func (ks *Keyspace) overwritten(db int, key []byte, typeChanged bool) {
	if ks.Events != nil {
		ks.Events.KeyOverwritten(db, key, typeChanged)
	}
}

// Swap exchanges the contents of databases a and b (SWAPDB). Clients keep their
// database numbers, so they see the other data afterwards, as in Redis.
func (ks *Keyspace) Swap(a, b int) {
	if ks.Obs != nil {
		ks.Obs.Swapping(a, b)
	}
	da, dbb := ks.DBs[a], ks.DBs[b]
	if ks.snaps != nil {
		ks.snapSwapping(da, dbb)
	}
	da.dict, dbb.dict = dbb.dict, da.dict
	da.expiring, dbb.expiring = dbb.expiring, da.expiring
	da.hfe, dbb.hfe = dbb.hfe, da.hfe
	da.idmp, dbb.idmp = dbb.idmp, da.idmp
	da.keysizes, dbb.keysizes = dbb.keysizes, da.keysizes
	da.avgTTL, dbb.avgTTL = dbb.avgTTL, da.avgTTL
	da.blessed, dbb.blessed = dbb.blessed, da.blessed
}

// FlushAll empties every database.
func (ks *Keyspace) FlushAll() {
	for _, db := range ks.DBs {
		db.Flush()
	}
}

// Keys is the total number of keys over all databases.
func (ks *Keyspace) Keys() int {
	n := 0
	for _, db := range ks.DBs {
		n += db.Len()
	}
	return n
}

// keepExpired reports whether lazy expiry must leave an expired key in place
// (KeepExpired, or expiry paused). Only expired keys ask.
func (ks *Keyspace) keepExpired() bool {
	return ks.KeepExpired || (ks.ExpiryPaused != nil && ks.ExpiryPaused())
}
