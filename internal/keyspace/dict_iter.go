package keyspace

import "math/bits"

// Scan calls fn for every entry in the bucket(s) at cursor and returns the next
// cursor, 0 when the iteration is complete; start with cursor 0. It is Redis's
// dictScan, reverse-binary cursor included, and so gives SCAN's guarantee: an
// entry present from the first call to the last is reported at least once, however
// the dict is modified, grown, shrunk or rehashed between calls. An entry may be
// reported more than once; a full iteration during which the dict is neither
// modified nor rehashed reports every entry exactly once. fn follows the callback
// rules in the Dict documentation.
func (d *Dict[V]) Scan(cursor uint64, fn func(key string, v *V)) uint64 {
	if d.Len() == 0 {
		return 0
	}
	d.pause()
	defer d.resume()
	v := cursor
	if !d.Rehashing() {
		t0 := d.ht[0]
		m0 := uint64(len(t0) - 1)
		dictEmit(t0[v&m0], fn)
		// Set the bits above the mask so that incrementing the reversed cursor
		// carries through the masked bits only.
		v |= ^m0
		return bits.Reverse64(bits.Reverse64(v) + 1)
	}
	// Two tables: visit the cursor's bucket in the smaller one, then every bucket
	// of the larger one that it expands to.
	small, large := d.ht[0], d.ht[1]
	if len(small) > len(large) {
		small, large = large, small
	}
	m0, m1 := uint64(len(small)-1), uint64(len(large)-1)
	dictEmit(small[v&m0], fn)
	for {
		dictEmit(large[v&m1], fn)
		v |= ^m1
		v = bits.Reverse64(bits.Reverse64(v) + 1)
		if v&(m0^m1) == 0 {
			return v
		}
	}
}

// dictEmit calls fn for each entry of a chain, reading the next link first so that
// fn may delete the entry it is given.
func dictEmit[V any](e *dictEntry[V], fn func(key string, v *V)) {
	for e != nil {
		next := e.next
		fn(e.key(), &e.val)
		e = next
	}
}

// Range calls fn for every entry, in table order, until fn returns false. Each
// entry is reported once. fn follows the callback rules in the Dict documentation.
func (d *Dict[V]) Range(fn func(key string, v *V) bool) {
	d.pause()
	defer d.resume()
	for t := range 2 {
		tab, i := d.ht[t], 0
		if t == 0 && d.Rehashing() {
			i = d.rehashIdx
		}
		for ; i < len(tab); i++ {
			for e := tab[i]; e != nil; {
				next := e.next
				if !fn(e.key(), &e.val) {
					return
				}
				e = next
			}
		}
	}
}

// dictFairSamples is GETFAIR_NUM_ENTRIES.
const dictFairSamples = 15

// Random returns a random entry, or ok=false if the dict is empty. It is Redis's
// dictGetFairRandomKey: pick uniformly among up to 15 entries sampled from a
// random stretch of the table, which evens out the bias of chains of different
// lengths; fall back to a random bucket and a random entry of its chain. rnd is the
// caller's seeded source, so that a run is reproducible. Random may advance a
// rehash.
func (d *Dict[V]) Random(rnd func() uint64) (key string, v *V, ok bool) {
	if d.Len() == 0 {
		return "", nil, false
	}
	var buf [dictFairSamples]*dictEntry[V]
	var e *dictEntry[V]
	if n := d.someEntries(buf[:], rnd); n > 0 {
		e = buf[rnd()%uint64(n)]
	} else {
		e = d.randomEntry(rnd)
	}
	return e.key(), &e.val, true
}

// dictSampleStack is how many samples Sample gathers without allocating; Redis caps
// maxmemory-samples at 64.
const dictSampleStack = 64

// Sample calls fn for up to n distinct random entries and returns how many it
// reported (dictGetSomeKeys): it walks a random stretch of the table, so it is much
// cheaper than n calls to Random but the entries are not independent, and it may
// report fewer than n entries even if the dict holds more. It is meant for
// eviction-style sampling with small n; it allocates only if n > 64. Sample may
// advance a rehash. fn follows the callback rules in the Dict documentation.
func (d *Dict[V]) Sample(n int, rnd func() uint64, fn func(key string, v *V)) int {
	n = min(n, d.Len())
	if n <= 0 {
		return 0
	}
	var buf [dictSampleStack]*dictEntry[V]
	des := buf[:min(n, dictSampleStack)]
	if n > dictSampleStack {
		des = make([]*dictEntry[V], n)
	}
	des = des[:d.someEntries(des, rnd)]
	// A random jump can revisit a bucket: drop repeats, keeping the first.
	k := 0
	for i, e := range des {
		dup := false
		for _, f := range des[:k] {
			if f == e {
				dup = true
				break
			}
		}
		if !dup {
			des[k] = des[i]
			k++
		}
	}
	d.pause()
	defer d.resume()
	for _, e := range des[:k] {
		fn(e.key(), &e.val)
	}
	return k
}

// someEntries is dictGetSomeKeys: it fills des with up to len(des) entries found
// from a random bucket onwards, jumping elsewhere after runs of empty buckets, and
// returns how many it stored. Within a chain it keeps a uniform choice by
// reservoir sampling. Entries may repeat.
func (d *Dict[V]) someEntries(des []*dictEntry[V], rnd func() uint64) int {
	count := min(len(des), d.Len())
	if count == 0 {
		return 0
	}
	maxSteps := count * 10
	for j := 0; j < count && d.Rehashing() && d.paused == 0; j++ {
		d.rehash(1) // rehashing work proportional to count
	}
	tables := 1
	mask := len(d.ht[0]) - 1
	if d.Rehashing() {
		tables = 2
		mask = max(mask, len(d.ht[1])-1)
	}
	i := int(rnd() & uint64(mask))
	emptyLen, stored := 0, 0
	for ; stored < count && maxSteps > 0; maxSteps-- {
		for t := range tables {
			// Buckets of ht[0] below rehashIdx are empty; if i is also past the
			// end of ht[1] (shrinking), both tables are empty up to rehashIdx.
			if tables == 2 && t == 0 && i < d.rehashIdx {
				if i < len(d.ht[1]) {
					continue
				}
				i = d.rehashIdx
			}
			if i >= len(d.ht[t]) {
				continue
			}
			e := d.ht[t][i]
			if e == nil {
				if emptyLen++; emptyLen >= 5 && emptyLen > count {
					i = int(rnd() & uint64(mask))
					emptyLen = 0
				}
				continue
			}
			emptyLen = 0
			for ; e != nil; e = e.next {
				if stored < count {
					des[stored] = e
				} else if r := rnd() % uint64(stored+1); r < uint64(count) {
					des[r] = e
				}
				stored++
			}
			if stored >= count {
				return count
			}
		}
		i = (i + 1) & mask
	}
	return min(stored, count)
}

// randomEntry is dictGetRandomKey: a uniformly random non-empty bucket, then a
// uniformly random entry of its chain. The dict must not be empty.
func (d *Dict[V]) randomEntry(rnd func() uint64) *dictEntry[V] {
	if d.Rehashing() && d.paused == 0 {
		d.rehash(1)
	}
	// Bucket indexes lo..n-1 span ht[0] from rehashIdx, then ht[1].
	lo, n := 0, len(d.ht[0])
	if d.Rehashing() {
		lo, n = d.rehashIdx, n+len(d.ht[1])
	}
	at := func(i int) *dictEntry[V] {
		if i >= len(d.ht[0]) {
			return d.ht[1][i-len(d.ht[0])]
		}
		return d.ht[0][i]
	}
	span := uint64(n - lo)
	i := lo + int(rnd()%span)
	for tries := 0; at(i) == nil; tries++ {
		if tries < 1000 {
			i = lo + int(rnd()%span)
		} else {
			i = lo + (i-lo+1)%int(span) // a degenerate rnd: walk to the next bucket
		}
	}
	head, chain := at(i), 0
	for e := head; e != nil; e = e.next {
		chain++
	}
	for k := rnd() % uint64(chain); k > 0; k-- {
		head = head.next
	}
	return head
}
