package locks

import "sort"

// Kind is what a command did to a lock, as the command reports it (Note).
type Kind uint8

const (
	None     Kind = iota
	Acquired      // SET NX with an expiry set the key
	Refused       // SET NX with an expiry found the key set: contention
	Released      // a token release (DELEX IFEQ/IFDEQ, DELIFEQ) deleted the key
	Stale         // a token release that did not match: the key gone, or another token's
)

// Note is what one command reports about a lock. Key aliases the command's
// arguments: the Table copies what it keeps.
type Note struct {
	Kind     Kind
	Key      []byte
	Token    []byte // the value taken or offered (Acquired, Refused); aliases too
	Deadline int64  // the expiry, Unix ms (Acquired)
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
// goes (its counters, and no allocation when it is taken again); the states of
// keys not held are bounded by MaxKeys.
type state struct {
	key  string
	db   int
	held bool
	tok  []byte // the holder's token while held (its buffer kept for the next)
	Held
	KeyStats
}

// Limits on what the Table remembers beyond the held locks.
const (
	// MaxKeys is how many keys not held keep their state (their counters):
	// when there are more, a new key replaces the least active of a sample.
	MaxKeys = 1024
	// MaxWaiters is how many refused attempts are remembered to time the wait
	// of a client that keeps its token across attempts; when full, a sixteenth
	// of them is forgotten.
	MaxWaiters = 65536
)

// Table is the lock view. Its zero value is not usable: use New.
type Table struct {
	keys    []map[string]*state // per database; nil while it has none
	nKeys   int                 // states in keys
	n       int                 // locks held
	C       Counters
	Hold    Histogram        // how long holders held: acquisition to release
	Wait    Histogram        // how long acquisitions waited: first refused attempt (same token) to success; 0 uncontended
	waiters map[string]int64 // first refusal time by waiterKey
	scratch []byte           // waiterKey's buffer
	touched []*state
	last    *state // the state found last: a lock's release follows its acquisition
}

// New returns an empty Table for dbs databases.
func New(dbs int) *Table {
	return &Table{keys: make([]map[string]*state, dbs), waiters: map[string]int64{}}
}

// Len is the number of locks held now.
func (t *Table) Len() int { return t.n }

// Keys is the number of keys the Table keeps counters for.
func (t *Table) Keys() int { return t.nKeys }

func (t *Table) lookup(db int, key []byte) *state {
	if l := t.last; l != nil && l.db == db && l.key == string(key) {
		return l
	}
	if db < 0 || db >= len(t.keys) {
		return nil
	}
	st := t.keys[db][string(key)]
	if st != nil {
		t.last = st
	}
	return st
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

// create makes key's state, first making room when MaxKeys keys are not
// held: the least active of up to 16 sampled keys of db that are not held
// goes.
func (t *Table) create(db int, key []byte) *state {
	if t.nKeys-t.n >= MaxKeys {
		var victim *state
		seen := 0
		for _, st := range t.keys[db] {
			if !st.held && (victim == nil || st.Activity() < victim.Activity()) {
				victim = st
			}
			if seen++; seen == 16 {
				break
			}
		}
		if victim != nil {
			t.forget(victim)
		}
	}
	if t.keys[db] == nil {
		t.keys[db] = map[string]*state{}
	}
	st := &state{key: string(key), db: db}
	t.keys[db][st.key] = st
	t.nKeys++
	t.last = st
	return st
}

func (t *Table) forget(st *state) {
	if t.last == st {
		t.last = nil
	}
	delete(t.keys[st.db], st.key)
	if len(t.keys[st.db]) == 0 {
		t.keys[st.db] = nil
	}
	t.nKeys--
}

// release ends st's lock.
func (t *Table) release(st *state) {
	st.held = false
	st.Held = Held{}
	if cap(st.tok) > 256 {
		st.tok = nil // a big token's buffer is not kept for the next
	}
	st.tok = st.tok[:0]
	t.n--
}

// waiterKey is the waiters map's key for token's attempts on db's key, in
// the scratch buffer (a lookup with string(b) does not allocate).
func (t *Table) waiterKey(db int, key, token []byte) []byte {
	b := append(t.scratch[:0], byte(db>>8), byte(db), byte(len(key)>>24), byte(len(key)>>16), byte(len(key)>>8), byte(len(key)))
	b = append(b, key...)
	t.scratch = append(b, token...)
	return t.scratch
}

// Apply counts what a command reported about db's key at nowUs.
func (t *Table) Apply(db int, n *Note, nowUs int64) {
	if db < 0 || db >= len(t.keys) {
		return
	}
	switch n.Kind {
	case Acquired:
		t.acquire(db, n, nowUs)
	case Refused:
		t.C.Contended++
		st := t.lookup(db, n.Key)
		if st == nil {
			st = t.create(db, n.Key)
		}
		st.Contended++
		st.LastUs = nowUs
		if st.held {
			st.Refusals++
		}
		w := t.waiterKey(db, n.Key, n.Token)
		if _, ok := t.waiters[string(w)]; !ok {
			if len(t.waiters) >= MaxWaiters {
				drop := MaxWaiters / 16
				for w2 := range t.waiters {
					delete(t.waiters, w2)
					if drop--; drop == 0 {
						break
					}
				}
			}
			t.waiters[string(w)] = nowUs
		}
	case Released:
		t.C.Released++
		if st := t.lookup(db, n.Key); st != nil {
			if st.held {
				t.Hold.Add(nowUs - st.AcquiredUs)
				t.release(st)
			}
			st.Released++
			st.LastUs = nowUs
		}
	case Stale:
		t.C.Stale++
		if st := t.lookup(db, n.Key); st != nil {
			st.Stale++
			st.LastUs = nowUs
		}
	}
}

func (t *Table) acquire(db int, n *Note, nowUs int64) {
	t.C.Acquired++
	st := t.lookup(db, n.Key)
	if st == nil {
		st = t.create(db, n.Key)
	}
	if !st.held {
		st.held = true
		t.n++
	}
	st.Held = Held{AcquiredUs: nowUs, Deadline: n.Deadline}
	st.tok = append(st.tok[:0], n.Token...)
	st.Acquired++
	st.LastUs = nowUs
	if len(t.waiters) == 0 {
		t.Wait.Add(0)
		return
	}
	w := t.waiterKey(db, n.Key, n.Token)
	if since, ok := t.waiters[string(w)]; ok {
		t.Wait.Add(nowUs - since)
		delete(t.waiters, string(w))
	} else {
		t.Wait.Add(0)
	}
}

// Touch records that db's key changed (the keyspace's Modified): when it is a
// held lock, the server checks it after the command (Pending, Check).
func (t *Table) Touch(db int, key []byte) {
	if t.n == 0 {
		return
	}
	if st := t.heldState(db, key); st != nil {
		t.touched = append(t.touched, st)
	}
}

// Pending calls check for each held key touched since the last call, and
// forgets them; check reports what the key holds now (see Check).
func (t *Table) Pending(check func(db int, key string)) {
	for i := 0; i < len(t.touched); i++ {
		st := t.touched[i]
		t.touched[i] = nil
		if st.held { // not released by the command in the meantime
			check(st.db, st.key)
		}
	}
	t.touched = t.touched[:0]
}

// HasPending reports whether a key touched since the last Pending is still
// held (the command's own report, a release, usually explains the touch).
func (t *Table) HasPending() bool {
	if len(t.touched) == 0 {
		return false
	}
	for _, st := range t.touched {
		if st.held {
			return true
		}
	}
	clear(t.touched)
	t.touched = t.touched[:0]
	return false
}

// Check judges a change to db's key that no command reported, from what the
// key holds now: exists, its value (str: it is a string) and its expiry
// (Unix ms, 0 none). byScript says the change came from a script:
// a script that deletes a lock is a release (the Lua pattern: GET, compare,
// DEL). Gone otherwise, overwritten or made persistent, the lock is removed;
// with a new expiry it was extended.
func (t *Table) Check(db int, key string, nowUs int64, exists, str bool, value []byte, deadline int64, byScript bool) {
	if t.n == 0 || db < 0 || db >= len(t.keys) {
		return
	}
	st := t.keys[db][key]
	if st == nil || !st.held {
		return
	}
	switch {
	case !exists && byScript:
		t.C.Released++
		st.Released++
		t.Hold.Add(nowUs - st.AcquiredUs)
		t.release(st)
	case !exists || !str || string(value) != string(st.tok) || deadline == 0:
		t.C.Removed++
		st.Removed++
		t.release(st)
	case deadline != st.Deadline:
		t.C.Extended++
		st.Extended++
		st.Extends++
		st.Deadline = deadline
	default:
		return
	}
	st.LastUs = nowUs
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
	if t.n == 0 || db < 0 || db >= len(t.keys) {
		return
	}
	for _, st := range t.keys[db] {
		if st.held {
			t.C.Removed++
			st.Removed++
			t.release(st)
		}
	}
}

// Swap exchanges databases a and b (SWAPDB): their locks and counters.
func (t *Table) Swap(a, b int) {
	if a < 0 || b < 0 || a >= len(t.keys) || b >= len(t.keys) {
		return
	}
	t.keys[a], t.keys[b] = t.keys[b], t.keys[a]
	for _, st := range t.keys[a] {
		st.db = a
	}
	for _, st := range t.keys[b] {
		st.db = b
	}
}

// Reset zeroes the counters, the histograms and the keys' counters (CONFIG
// RESETSTAT); the locks held stay.
func (t *Table) Reset() {
	t.C = Counters{}
	t.Hold, t.Wait = Histogram{}, Histogram{}
	t.waiters = map[string]int64{}
	t.last = nil
	for db, m := range t.keys {
		for _, st := range m {
			if !st.held {
				delete(m, st.key)
				t.nKeys--
				continue
			}
			st.KeyStats = KeyStats{}
			st.Refusals, st.Extends = 0, 0
		}
		if len(m) == 0 {
			t.keys[db] = nil
		}
	}
}

// Lock is one held lock as listed.
type Lock struct {
	DB    int
	Key   string
	Token []byte // the holder's token (a copy)
	Held
}

// Locks returns the locks held now, oldest first (then by database and key).
func (t *Table) Locks() []Lock {
	out := make([]Lock, 0, t.n)
	for _, m := range t.keys {
		for _, st := range m {
			if st.held {
				out = append(out, Lock{st.db, st.key, append([]byte(nil), st.tok...), st.Held})
			}
		}
	}
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
	for _, m := range t.keys {
		for _, st := range m {
			out = append(out, KeyView{st.db, st.key, st.KeyStats, st.held})
		}
	}
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
