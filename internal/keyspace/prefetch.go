package keyspace

import "unsafe"

// PrefetchMax is the most requests one Prefetch call looks at.
const PrefetchMax = 16

// PrefetchMinKeys is the size (keys in the database, or members in the
// collection a request's key holds) from which Prefetch pays: below it the
// data sits in the CPU caches and the look-ahead only costs (about 7% of a
// pipelined SET+DELEX lock cycle on 800 keys).
const PrefetchMinKeys = 8192

// PrefetchWorth reports whether Prefetch is worth calling for a batch whose
// first request names key: the database is large, or key holds a large hash,
// set or sorted set. It changes nothing (no rehash step).
func (db *DB) PrefetchWorth(key []byte) bool {
	if db.dict.Len() >= PrefetchMinKeys {
		return true
	}
	e := db.dict.entryOf(key)
	if e == nil || e.val.p == nil {
		return false
	}
	switch v := &e.val; v.Kind {
	case KindSet:
		s := (*Set)(v).boxed()
		return s != nil && s.enc == SetHashtable && s.ht.Len() >= PrefetchMinKeys
	case KindHash:
		h := (*Hash)(v).boxed()
		return h != nil && h.enc == encHashtable && h.t.d.Len() >= PrefetchMinKeys
	case KindZSet:
		z := (*ZSet)(v).boxed()
		return z != nil && z.big != nil && z.big.dict.Len() >= PrefetchMinKeys
	}
	return false
}

// PrefetchReq names what one request is likely to look up: its first key
// (argv[1]) and, for a member inside a large hash, set or sorted set, argv[2]
// (HSET, HGET, SADD, SISMEMBER) or the last argument (ZADD, ZSCORE, ZINCRBY).
type PrefetchReq struct{ Key, Arg2, Last []byte }

// Prefetch is a hint before a batch of pipelined commands runs: it starts the
// memory loads that looking up each request's key will wait for (the key's
// bucket, the first two entries in it, their key bytes and values), in passes
// so that the loads of different requests overlap instead of following each
// other, as Redis 8's batch prefetching does; then, where the key holds a
// hash, set or sorted set in its hashtable encoding, the same for the member
// in that table. With data larger than the CPU caches a lookup otherwise
// waits for three or four loads from memory in a row. It changes nothing and
// no result depends on it; requests past PrefetchMax are ignored. Call it
// where a lookup may run (under the engine lock).
func (db *DB) Prefetch(reqs []PrefetchReq) {
	d := db.dict
	if d.Len() == 0 {
		return
	}
	n := min(len(reqs), PrefetchMax)
	var slots [PrefetchMax]unsafe.Pointer
	for j := range n {
		slots[j] = unsafe.Pointer(d.slot(d.hash(dictView(reqs[j].Key))))
		prefetch(slots[j])
	}
	var first, ents [PrefetchMax]*dictEntry[Entry]
	for j := range n {
		if e := *(**dictEntry[Entry])(slots[j]); e != nil {
			first[j], ents[j] = e, e
			prefetchEntry(unsafe.Pointer(e))
			prefetch(unsafe.Pointer(&e.klen)) // a 48-byte entry may span two lines
		}
	}
	for j := range n {
		if e := ents[j]; e != nil {
			prefetchKV(e)
			ents[j] = e.next
			if e.next != nil {
				prefetch(unsafe.Pointer(&e.next.klen))
			}
		}
	}
	// the bucket's second entry: at the load factors the table keeps (0.5 to
	// 1), one successful lookup in four to three goes past the first
	for j := range n {
		if e := ents[j]; e != nil {
			prefetchKV(e)
		}
	}
	// members: the key's entry and value have arrived by now
	inner := 0
	for j := range n {
		slots[j] = nil
		e := first[j]
		if e != nil && e.key() != dictView(reqs[j].Key) {
			e = e.next
		}
		if e == nil || e.key() != dictView(reqs[j].Key) || e.val.p == nil {
			continue
		}
		if s := memberSlot(&e.val, reqs[j]); s != nil {
			slots[j] = s
			prefetch(s)
			inner++
		}
	}
	if inner == 0 {
		return
	}
	for j := range n {
		if slots[j] != nil {
			slots[j] = *(*unsafe.Pointer)(slots[j]) // the bucket's first entry
			prefetchEntry(slots[j])
		}
	}
	for j := range n {
		if p := slots[j]; p != nil {
			// every dictEntry starts with next; its key is inline
			e := (*dictEntry[struct{}])(p)
			prefetchEntry(unsafe.Pointer(e.next))
		}
	}
}

// memberSlot returns the bucket of the member req names in the table of v, a
// hash, set or sorted set in its hashtable encoding, or nil.
func memberSlot(v *Entry, req PrefetchReq) unsafe.Pointer {
	switch v.Kind {
	case KindSet:
		if s := (*Set)(v).boxed(); s != nil && s.enc == SetHashtable && len(req.Arg2) > 0 && s.ht.Len() > 0 {
			return unsafe.Pointer(s.ht.slot(s.ht.hash(dictView(req.Arg2))))
		}
	case KindHash:
		if h := (*Hash)(v).boxed(); h != nil && h.enc == encHashtable && len(req.Arg2) > 0 && h.t.d.Len() > 0 {
			return unsafe.Pointer(h.t.d.slot(h.t.d.hash(dictView(req.Arg2))))
		}
	case KindZSet:
		if z := (*ZSet)(v).boxed(); z != nil && z.big != nil && len(req.Last) > 0 && z.big.dict.Len() > 0 {
			return unsafe.Pointer(z.big.dict.slot(z.big.dict.hash(dictView(req.Last))))
		}
	}
	return nil
}

// prefetchEntry prefetches the dict entry at p (nil: nothing).
func prefetchEntry(p unsafe.Pointer) {
	if p != nil {
		prefetch(p)
	}
}

// prefetchKV prefetches e's value, and its key's bytes when they are not inline
// (an inline key is on the entry's lines, which the caller prefetched).
func prefetchKV(e *dictEntry[Entry]) {
	if e.klen == keyExt {
		prefetch(unsafe.Pointer(unsafe.StringData(e.key())))
	}
	if e.val.p != nil {
		prefetch(e.val.p)
	}
}

// slot returns the bucket a key with hash h is in (or would be inserted into),
// in whichever table holds it while rehashing.
func (d *Dict[V]) slot(h uint64) **dictEntry[V] {
	tab := d.ht[0]
	if i := int(h & uint64(len(tab)-1)); !d.Rehashing() || i >= d.rehashIdx {
		return &tab[i]
	}
	tab = d.ht[1]
	return &tab[h&uint64(len(tab)-1)]
}
