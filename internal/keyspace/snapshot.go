package keyspace

// Snapshot is a consistent view of the keyspace as it was when StartSnapshot
// ran, handed out key by key while commands go on changing it: BGSAVE,
// BGREWRITEAOF and a replica's full sync take one instead of stopping the
// server to encode everything (docs/ARCHITECTURE.md, "Snapshots without
// stopping the world"). The owner calls Step now and then under the engine's
// serialisation point; in between, every change to a key the snapshot has not
// handed out yet first hands that key out as it was (dict_snap.go), so each
// key present at the start is emitted exactly once, with its value and
// deadline of that moment, and no key created later is.
//
// The hooks are in the DB's write paths: the dict's inserts, deletes and
// rehashing; LookupWrite (the command is about to change the value);
// SetExpire and Persist; the active expiry of hash fields. Modified (every
// change ends with it, for WATCH) checks that the key was handed out: a write
// path that changed a value without a hook is a bug, which breaks the
// snapshot (Broken) instead of giving a file that mixes two moments, and
// panics under Keyspace.PanicOnSnapshotGap (the tests). The IDMP records of streams do
// not expire while a snapshot runs (ActiveExpireIdmp waits): their registry
// knows streams, not keys.
//
// Several snapshots may run at once, each with its own progress.
type Snapshot struct {
	ks   *Keyspace
	srcs []*snapSource
	cur  int // the source Step is at
	emit SnapshotEmit
	// Broken is set when a key changed before the snapshot handed it out
	// (a write path without a hook): what was emitted mixes two moments.
	Broken bool
	// Emitted counts the keys handed out.
	Emitted int
	// Full, when set, ends a Step early once it reports true (checked after
	// each bucket that handed out keys): the owner's bound on a step's
	// bytes, whatever its keys hold.
	Full  func() bool
	probe bool // ProbeSnapshots' (it emits nothing and delays nothing)
}

// SnapshotEmit receives one key as it was at the snapshot's start: its
// database then, its key and value, and its deadline (Unix ms, 0 for none).
// It must only read e (encode it): it runs inside the write that is about
// to change the key.
type SnapshotEmit func(db int, key string, e *Entry, expireAt int64)

// snapSource is one database's key table as it was at the start.
type snapSource struct {
	db      int // its id at the start (SWAPDB may move the table since)
	dict    *Dict[Entry]
	ds      *dictSnap[Entry]
	exp     *expIndex // the deadlines of dict's entries: its database's, or a flushed table's own
	keys    int       // at the start (RDB's RESIZEDB)
	expires int
}

// StartSnapshot begins a snapshot of every database as it is now; emit gets
// its keys. Close it when done (or abandoned).
func (ks *Keyspace) StartSnapshot(emit SnapshotEmit) *Snapshot {
	s := &Snapshot{ks: ks, emit: emit}
	for _, db := range ks.DBs {
		if db.Len() == 0 {
			continue
		}
		src := &snapSource{db: db.ID, dict: db.dict, exp: &db.expiring, keys: db.Len(), expires: db.Expires()}
		src.ds = db.dict.startSnap(func(de *dictEntry[Entry]) {
			at := int64(0)
			if de.val.expIdx != 0 {
				at = src.exp.at(int(de.val.expIdx) - 1).at
			}
			s.Emitted++
			s.emit(src.db, de.key(), &de.val, at)
		})
		src.ds.full = func() bool { return s.Full != nil && s.Full() }
		s.srcs = append(s.srcs, src)
	}
	ks.snaps = append(ks.snaps, s)
	return s
}

// SnapshotDB is a database's size when a snapshot started.
type SnapshotDB struct{ ID, Keys, Expires int }

// DBs lists the databases that had keys at the start, in id order, with
// their key and deadline counts then.
func (s *Snapshot) DBs() []SnapshotDB {
	out := make([]SnapshotDB, len(s.srcs))
	for i, src := range s.srcs {
		out[i] = SnapshotDB{ID: src.db, Keys: src.keys, Expires: src.expires}
	}
	return out
}

// Step hands out about max more keys, database by database in table order
// (keys that writes handed out early are skipped), fewer when Full says
// so. It reports whether every key has been handed out. Engine lock.
func (s *Snapshot) Step(max int) (done bool) {
	for s.cur < len(s.srcs) {
		n, fin := s.srcs[s.cur].ds.step(max)
		if !fin {
			return false
		}
		s.cur++
		if max -= n; max <= 0 || (s.Full != nil && s.Full()) {
			return s.cur == len(s.srcs)
		}
	}
	return true
}

// Close unhooks the snapshot (after the last Step, or to abandon it).
func (s *Snapshot) Close() {
	for _, src := range s.srcs {
		src.dict.endSnap(src.ds)
	}
	s.srcs, s.cur = nil, 0
	for i, x := range s.ks.snaps {
		if x == s {
			s.ks.snaps = append(s.ks.snaps[:i], s.ks.snaps[i+1:]...)
			break
		}
	}
	if len(s.ks.snaps) == 0 {
		s.ks.snaps = nil
	}
}

// Snapshotting reports whether a snapshot is in progress (ProbeSnapshots'
// do not count).
func (ks *Keyspace) Snapshotting() bool {
	for _, s := range ks.snaps {
		if !s.probe {
			return true
		}
	}
	return false
}

// reprobe ends the last execution unit's probe snapshot and starts one for
// the next (ProbeSnapshots).
func (ks *Keyspace) reprobe() {
	if ks.probe != nil {
		ks.probe.Close()
	}
	ks.probe = ks.StartSnapshot(func(int, string, *Entry, int64) {})
	ks.probe.probe = true
}

// snapFlushing is told that db's key table and deadlines are being replaced
// (FLUSHDB): a snapshot keeps walking the old table, which nothing changes
// any more, with a copy of its deadlines.
func (ks *Keyspace) snapFlushing(db *DB) {
	for _, s := range ks.snaps {
		for _, src := range s.srcs {
			if src.exp == &db.expiring {
				old := db.expiring
				src.exp = &old
			}
		}
	}
}

// snapSwapping is told that databases a and b exchange their tables
// (SWAPDB): the deadlines of a table move with it.
func (ks *Keyspace) snapSwapping(a, b *DB) {
	for _, s := range ks.snaps {
		for _, src := range s.srcs {
			switch src.exp {
			case &a.expiring:
				src.exp = &b.expiring
			case &b.expiring:
				src.exp = &a.expiring
			}
		}
	}
}

// snapCheck is Modified's check that no snapshot still holds key unemitted
// after it changed (see Snapshot).
func (ks *Keyspace) snapCheck(db int, key []byte) {
	d := ks.DBs[db].dict
	if d.snap == nil {
		return
	}
	k := unsafeView(key)
	h := d.hash(k)
	e := d.lookup(k, h)
	if e == nil {
		return
	}
	for _, s := range ks.snaps {
		for _, src := range s.srcs {
			if src.dict != d {
				continue
			}
			for t := range src.ds.tabs {
				if src.ds.pending(&src.ds.tabs[t], h, e) {
					if ks.PanicOnSnapshotGap {
						panic("keyspace: key " + k + " changed before the snapshot emitted it (a write path without a snapshot hook)")
					}
					s.Broken = true
				}
			}
		}
	}
}
