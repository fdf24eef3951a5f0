package keyspace

import "unsafe"

// PrefetchMax is the most keys one Prefetch call looks at.
const PrefetchMax = 16

// Prefetch is a hint before a batch of pipelined commands runs: it starts the
// memory loads that looking up each key will wait for (the key's bucket, the
// first two entries in it, their key bytes and values), in four passes so that
// the loads of different keys overlap instead of following each other, as
// Redis 8's batch prefetching does. With a keyspace larger than the CPU caches a
// lookup otherwise waits for three or four loads from memory in a row. It changes
// nothing and no result depends on it; keys past PrefetchMax are ignored. Call it
// where a lookup may run (under the engine lock).
func (db *DB) Prefetch(keys [][]byte) {
	d := db.dict
	if d.Len() == 0 {
		return
	}
	n := min(len(keys), PrefetchMax)
	var slots [PrefetchMax]**dictEntry[Entry]
	for j := range n {
		slots[j] = d.slot(d.hash(dictView(keys[j])))
		prefetch(unsafe.Pointer(slots[j]))
	}
	var ents [PrefetchMax]*dictEntry[Entry]
	for j := range n {
		if e := *slots[j]; e != nil {
			ents[j] = e
			prefetch(unsafe.Pointer(e))
			prefetch(unsafe.Pointer(&e.val)) // a 48-byte entry may span two lines
		}
	}
	for j := range n {
		if e := ents[j]; e != nil {
			prefetchKV(e)
			ents[j] = e.next
			if e.next != nil {
				prefetch(unsafe.Pointer(e.next))
				prefetch(unsafe.Pointer(&e.next.val))
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
}

// prefetchKV prefetches e's key bytes and value.
func prefetchKV(e *dictEntry[Entry]) {
	prefetch(unsafe.Pointer(unsafe.StringData(e.key)))
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
