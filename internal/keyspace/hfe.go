package keyspace

// Hash field expiry (HFE) registry: every DB keeps the hashes that have fields
// with a deadline in a min-heap on their earliest field deadline (Redis keeps them
// in db->hexpires, an ebuckets). The active expiry cycle pops the hashes that are
// due (ActiveExpireHashFields) instead of sampling; commands keep the registry in
// step by calling HashFieldTTLChanged after they change a hash's field deadlines
// or delete fields. Deleting, overwriting, renaming, moving, copying, swapping and
// flushing keys maintain it inside DB.

// FieldExpiryObserver is implemented by a Keyspace.Obs that wants to hear of hash
// fields removed by the active expiry cycle (Redis notifies "hexpired", then "del"
// when the hash became empty and was deleted, and propagates HDELs). It is
// optional: an observer without it still gets Modified for the key.
type FieldExpiryObserver interface {
	// FieldsExpired is called after the sweeper deleted the expired fields of
	// the hash at key (fields: copies, in deletion order), before the key
	// itself is deleted when keyDeleted.
	FieldsExpired(db int, key []byte, fields [][]byte, keyDeleted bool)
}

// hfeItem is one registered hash: its key (the dict's own string) and the
// deadline it is filed under (its earliest field deadline when last synced; it
// may be earlier than the real one, never later).
type hfeItem struct {
	key string
	h   *hashObj
	at  int64
}

// HashFieldTTLChanged files the hash h stored at key under its earliest field
// deadline, or takes it out of the registry if no field has one. Commands call
// it after they set, change or remove field deadlines or delete fields of h.
func (db *DB) HashFieldTTLChanged(key []byte, hh *Hash) {
	h := hh.boxed()
	if h == nil {
		return // a plain listpack: no deadlines, never registered
	}
	db.hashFieldTTLChanged(key, h)
}

func (db *DB) hashFieldTTLChanged(key []byte, h *hashObj) {
	at := h.MinExpire()
	switch {
	case at == 0:
		if h.reg != 0 {
			db.hfeRemove(int(h.reg) - 1)
		}
	case h.reg == 0:
		k, ok := db.dict.KeyOf(key)
		if !ok {
			return
		}
		db.hfe = append(db.hfe, hfeItem{k, h, at})
		h.reg = int32(len(db.hfe))
		db.hfeUp(len(db.hfe) - 1)
	default:
		i := int(h.reg) - 1
		db.hfe[i].at = at
		db.hfeUp(i)
		db.hfeDown(int(h.reg) - 1)
	}
}

// HashesWithFieldTTL is the number of hashes in the registry (INFO keyspace's
// subexpiry).
func (db *DB) HashesWithFieldTTL() int { return len(db.hfe) }

// ActiveExpireHashFields deletes up to max expired hash fields of db, visiting the
// hashes in the order of their earliest deadline (Redis's hashTypeDbActiveExpire).
// A hash left empty is deleted. Every deletion counts in Stats.ExpiredSubkeys and
// is reported to the observer (FieldExpiryObserver, then Modified). It returns the
// number of fields deleted. The engine calls it from its active expiry cycle,
// with the lock held and now frozen.
func (db *DB) ActiveExpireHashFields(max int) (expired int) {
	now := db.ks.now
	for len(db.hfe) > 0 && expired < max {
		it := db.hfe[0]
		if it.at > now {
			break
		}
		e, ok := db.dict.GetString(it.key)
		if !ok || e.Kind != KindHash || (*Hash)(e).boxed() != it.h {
			db.hfeRemove(0) // cannot happen: deletions unregister
			continue
		}
		if db.isExpired(e) {
			db.expireKeyString(it.key) // the key itself is due first
			db.ks.Stats.ExpiredKeysActive++
			continue
		}
		fo, _ := db.ks.Obs.(FieldExpiryObserver)
		var fields [][]byte
		var collect func(f []byte)
		if fo != nil {
			collect = func(f []byte) { fields = append(fields, append([]byte(nil), f...)) }
		}
		db.dict.snapKey(it.key)
		n := it.h.ExpireFields(now, max-expired, collect)
		expired += n
		if n > 0 {
			db.ks.Stats.ExpiredSubkeys += int64(n)
			db.ks.Stats.ExpiredSubkeysActive += int64(n)
			kb := []byte(it.key)
			empty := it.h.Len() == 0
			if fo != nil {
				fo.FieldsExpired(db.ID, kb, fields, empty)
			}
			if empty {
				db.removeString(it.key)
			} else {
				db.ksResized(e)
			}
			db.ks.modified(db.ID, kb)
			if empty {
				continue
			}
		}
		if next := it.h.MinExpire(); next != 0 && next <= now {
			break // quota reached inside this hash
		}
		db.hashFieldTTLChanged(viewString(it.key), it.h)
	}
	return expired
}

// dropReg takes the value of e out of the registries (hash field expiry,
// IDMP) it is in (e is being deleted or overwritten).
func (db *DB) dropReg(e *Entry) {
	if e.Kind == KindStream {
		if s, ok := e.Obj().(*Stream); ok && s != nil {
			delete(db.idmp, s)
		}
		return
	}
	if e.Kind != KindHash {
		return
	}
	if h := (*Hash)(e).boxed(); h != nil && h.reg != 0 {
		db.hfeRemove(int(h.reg) - 1)
	}
}

// trackValue registers the value stored at key if it is a hash with field
// deadlines or a stream with IDMP records (after RENAME, MOVE, COPY, RESTORE).
func (db *DB) trackValue(key []byte, e *Entry) {
	if e.Kind == KindStream {
		if s, ok := e.Obj().(*Stream); ok && s != nil {
			db.idmpTrack(s)
		}
		return
	}
	if e.Kind != KindHash {
		return
	}
	if h := (*Hash)(e).boxed(); h != nil && h.ttls > 0 {
		db.hashFieldTTLChanged(key, h)
	}
}

// clearHashReg empties the registry (FLUSHDB).
func (db *DB) clearHashReg() {
	for _, it := range db.hfe {
		it.h.reg = 0
	}
	db.hfe = nil
}

func (db *DB) hfeLess(i, j int) bool { return db.hfe[i].at < db.hfe[j].at }

func (db *DB) hfeSwap(i, j int) {
	db.hfe[i], db.hfe[j] = db.hfe[j], db.hfe[i]
	db.hfe[i].h.reg = int32(i + 1)
	db.hfe[j].h.reg = int32(j + 1)
}

func (db *DB) hfeUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !db.hfeLess(i, p) {
			return
		}
		db.hfeSwap(i, p)
		i = p
	}
}

func (db *DB) hfeDown(i int) {
	n := len(db.hfe)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && db.hfeLess(r, l) {
			m = r
		}
		if !db.hfeLess(m, i) {
			return
		}
		db.hfeSwap(i, m)
		i = m
	}
}

func (db *DB) hfeRemove(i int) {
	last := len(db.hfe) - 1
	db.hfe[i].h.reg = 0
	if i != last {
		db.hfe[i] = db.hfe[last]
		db.hfe[i].h.reg = int32(i + 1)
	}
	db.hfe[last] = hfeItem{}
	db.hfe = db.hfe[:last]
	if i != last {
		h := db.hfe[i].h
		db.hfeUp(i)
		db.hfeDown(int(h.reg) - 1)
	}
}
