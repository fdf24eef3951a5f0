package keyspace

// Stash is the contents of every database taken out of the keyspace (a
// replica's repl-diskless-load swapdb: the old dataset kept aside while the
// master's snapshot loads into empty databases, put back if the load fails).
type Stash struct {
	dbs []dbContents
}

// dbContents is what Flush replaces in a DB.
type dbContents struct {
	dict     *Dict[Entry]
	expiring expIndex
	hfe      []hfeItem
	idmp     map[*Stream]struct{}
	keysizes Keysizes
	avgTTL   int64
	blessed  map[string]struct{}
}

func (db *DB) contents() dbContents {
	return dbContents{db.dict, db.expiring, db.hfe, db.idmp, db.keysizes, db.avgTTL, db.blessed}
}

func (db *DB) setContents(c dbContents) {
	db.dict, db.expiring, db.hfe, db.idmp = c.dict, c.expiring, c.hfe, c.idmp
	db.keysizes, db.avgTTL, db.blessed = c.keysizes, c.avgTTL, c.blessed
}

// Stash takes every database's contents out, leaving them empty, as a
// flush does for the observers (WATCH, the lock view) and the snapshots in
// progress (they keep what they had); the contents are kept, unchanged,
// in the returned Stash.
func (ks *Keyspace) Stash() *Stash {
	st := &Stash{dbs: make([]dbContents, len(ks.DBs))}
	for i, db := range ks.DBs {
		ks.emptying(db)
		st.dbs[i] = db.contents()
		db.dict = ks.newKeyDict(db.ID)
		db.expiring = expIndex{acct: ks.allocCount()}
		db.hfe, db.idmp, db.keysizes, db.avgTTL, db.blessed = nil, nil, Keysizes{}, 0, nil
	}
	return st
}

// Unstash puts a Stash's contents back in place of what the databases hold
// now, which goes as in a flush.
func (ks *Keyspace) Unstash(st *Stash) {
	for i, db := range ks.DBs {
		ks.emptying(db)
		db.clearHashReg()
		db.setContents(st.dbs[i])
	}
	st.dbs = nil
}

// Keys is the number of keys the Stash holds.
func (st *Stash) Keys() int {
	n := 0
	for _, c := range st.dbs {
		n += c.dict.Len()
	}
	return n
}

// emptying tells the observers and the snapshots that db's contents go.
func (ks *Keyspace) emptying(db *DB) {
	if ks.Obs != nil {
		ks.Obs.Flushing(db.ID)
	}
	if ks.snaps != nil {
		ks.snapFlushing(db)
	}
}
