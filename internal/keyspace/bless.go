package keyspace

// Blessed keys (Redis 8.12's BLESS, decision 0044): keys protected from
// eviction under every maxmemory-policy. A database keeps its blessed keys'
// names in a set, nil while it has none, so that a key costs nothing more
// until it is blessed and eviction pays one map lookup per sampled key only
// while some key is. The protection belongs to the key: it goes when the key
// is deleted (DEL, expiry, FLUSHDB, eviction cannot happen), stays when the
// value is replaced (SET, RESTORE REPLACE, COPY REPLACE onto it) and moves
// with RENAME.

// Bless protects key, which must exist; added is false when it already was.
func (db *DB) Bless(key []byte) (added bool) {
	if _, ok := db.blessed[string(key)]; ok {
		return false
	}
	if db.blessed == nil {
		db.blessed = map[string]struct{}{}
	}
	db.blessed[string(key)] = struct{}{}
	return true
}

// Unbless removes key's protection; removed is false when it had none.
func (db *DB) Unbless(key []byte) (removed bool) {
	if _, ok := db.blessed[string(key)]; !ok {
		return false
	}
	delete(db.blessed, string(key))
	if len(db.blessed) == 0 {
		db.blessed = nil
	}
	return true
}

// IsBlessed reports whether key is protected from eviction.
func (db *DB) IsBlessed(key string) bool {
	if db.blessed == nil {
		return false
	}
	_, ok := db.blessed[key]
	return ok
}

// Blessed is the number of blessed keys.
func (db *DB) Blessed() int { return len(db.blessed) }

// ScanBlessed is BLESS SCAN's step: it visits about count buckets of the
// key table from cursor (SCAN's reverse-binary cursor, with its guarantees)
// and calls fn with the blessed keys among them; it returns the next
// cursor. With no blessed key it ends at once.
func (db *DB) ScanBlessed(cursor uint64, count int, fn func(key string)) uint64 {
	if len(db.blessed) == 0 {
		return 0
	}
	for visited := 0; ; {
		cursor = db.dict.Scan(cursor, func(key string, _ *Entry) {
			visited++
			if _, ok := db.blessed[key]; ok {
				fn(key)
			}
		})
		if cursor == 0 || visited >= count {
			return cursor
		}
	}
}

// RangeBlessed calls fn with every blessed key.
func (db *DB) RangeBlessed(fn func(key string)) {
	for k := range db.blessed {
		fn(k)
	}
}

// unbless drops a deleted key's protection (unlink).
func (db *DB) unbless(key string) {
	if db.blessed != nil {
		delete(db.blessed, key)
		if len(db.blessed) == 0 {
			db.blessed = nil
		}
	}
}
