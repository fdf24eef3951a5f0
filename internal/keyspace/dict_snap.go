package keyspace

import "unsafe"

// A dict's part of a snapshot (snapshot.go), after Dragonfly's versioned,
// bucket-at-a-time serialisation: the snapshot remembers the bucket arrays the
// dict had when it started, each with a bitmap of the buckets it has emitted.
// Before any operation changes what a bucket of a remembered array holds (an
// insert, a delete, an entry replaced, a rehash moving the bucket out or
// entries in, a value or TTL about to change), the dict emits that bucket if it
// was not yet: so every entry is emitted as it was at the start, exactly once,
// and no entry created later is. An array the dict allocated after the start
// (a resize) is never walked: an entry gets there either as a new key, which
// the snapshot must not hold, or moved from a remembered bucket, which was
// emitted before the move.
//
// The hooks cost one nil check while no snapshot runs.

// dictSnap is one snapshot's view of one dict.
type dictSnap[V any] struct {
	next *dictSnap[V] // the dict's other snapshots
	tabs [2]snapTab[V]
	emit func(e *dictEntry[V])
	full func() bool // ends step early (Snapshot.Full); nil: never
}

// snapTab is a bucket array remembered at the start and the buckets emitted.
type snapTab[V any] struct {
	tab  []*dictEntry[V] // nil once the dict let it go (all of it was emitted)
	done []uint64        // bit i: bucket i was emitted
	pos  int             // the walk's next bucket (Step)
}

// covers reports whether tab is the remembered array.
func (t *snapTab[V]) covers(tab []*dictEntry[V]) bool {
	return t.tab != nil && len(tab) == len(t.tab) && unsafe.SliceData(tab) == unsafe.SliceData(t.tab)
}

// bucket emits bucket i of t unless it was emitted, and marks it. It returns
// the entries emitted.
func (s *dictSnap[V]) bucket(t *snapTab[V], i int) int {
	w, bit := i>>6, uint64(1)<<(i&63)
	if t.done[w]&bit != 0 {
		return 0
	}
	t.done[w] |= bit
	n := 0
	for e := t.tab[i]; e != nil; e = e.next {
		s.emit(e)
		n++
	}
	return n
}

// pending reports whether entry e is in a bucket of t not yet emitted.
func (s *dictSnap[V]) pending(t *snapTab[V], h uint64, e *dictEntry[V]) bool {
	if t.tab == nil {
		return false
	}
	i := int(h & uint64(len(t.tab)-1))
	if t.done[i>>6]&(1<<(i&63)) != 0 {
		return false
	}
	for x := t.tab[i]; x != nil; x = x.next {
		if x == e {
			return true
		}
	}
	return false
}

// step emits the next buckets not yet emitted, until about max entries were
// (an empty bucket counts 1/16) or full says so. It reports whether every
// bucket was.
func (s *dictSnap[V]) step(max int) (emitted int, done bool) {
	budget := max * 16
	for k := range s.tabs {
		t := &s.tabs[k]
		for t.tab != nil && t.pos < len(t.tab) {
			if budget <= 0 {
				return emitted, false
			}
			if w := t.pos >> 6; t.pos&63 == 0 && t.done[w] == ^uint64(0) {
				t.pos += 64 // a word of emitted buckets
				budget--
				continue
			}
			n := s.bucket(t, t.pos)
			emitted += n
			budget -= 1 + 16*n
			t.pos++
			if n > 0 && s.full != nil && s.full() {
				budget = 0
			}
		}
	}
	return emitted, true
}

// startSnap makes a snapshot of d whose entries go to emit, and hooks it.
func (d *Dict[V]) startSnap(emit func(e *dictEntry[V])) *dictSnap[V] {
	s := &dictSnap[V]{emit: emit, next: d.snap}
	for k, tab := range d.ht {
		if tab != nil {
			s.tabs[k] = snapTab[V]{tab: tab, done: make([]uint64, (len(tab)+63)/64)}
		}
	}
	d.snap = s
	return s
}

// endSnap unhooks s (finished or abandoned).
func (d *Dict[V]) endSnap(s *dictSnap[V]) {
	for link := &d.snap; *link != nil; link = &(*link).next {
		if *link == s {
			*link = s.next
			s.next = nil
			return
		}
	}
}

// snapHash emits, for every snapshot, the buckets hash h falls in (in each
// remembered array) before an operation on that key.
func (d *Dict[V]) snapHash(h uint64) {
	for s := d.snap; s != nil; s = s.next {
		for k := range s.tabs {
			if t := &s.tabs[k]; t.tab != nil {
				s.bucket(t, int(h&uint64(len(t.tab)-1)))
			}
		}
	}
}

// snapKey emits key's bucket for every snapshot of d, before its value or
// TTL changes in place (a no-op while no snapshot runs).
func (d *Dict[V]) snapKey(key string) {
	if d.snap != nil {
		d.snapHash(d.hash(key))
	}
}

// snapIn emits bucket i of tab, one of d's arrays, for every snapshot that
// remembers tab.
func (d *Dict[V]) snapIn(tab []*dictEntry[V], i int) {
	for s := d.snap; s != nil; s = s.next {
		for k := range s.tabs {
			if t := &s.tabs[k]; t.covers(tab) {
				s.bucket(t, i)
			}
		}
	}
}

// snapMove emits, before moveBucket relinks old-table bucket i, that bucket
// and every bucket of the new table its entries go to (all of them before
// any entry moves: a destination emitted later would hold moved entries).
func (d *Dict[V]) snapMove(i int) {
	t0, t1 := d.ht[0], d.ht[1]
	d.snapIn(t0, i)
	mask := uint64(len(t1) - 1)
	for e := t0[i]; e != nil; e = e.next {
		j := uint64(i) & mask
		if len(t1) > len(t0) {
			j = d.hash(e.key()) & mask
		}
		d.snapIn(t1, int(j))
	}
}

// snapRetire forgets tab, an array the dict lets go of: its entries were all
// moved (each bucket emitted before it moved) or it is empty.
func (d *Dict[V]) snapRetire(tab []*dictEntry[V]) {
	for s := d.snap; s != nil; s = s.next {
		for k := range s.tabs {
			if t := &s.tabs[k]; t.covers(tab) {
				*t = snapTab[V]{}
			}
		}
	}
}

// snapAll emits everything not yet emitted, for every snapshot (before Clear).
func (d *Dict[V]) snapAll() {
	for s := d.snap; s != nil; s = s.next {
		for {
			if _, done := s.step(1 << 30); done {
				break
			}
		}
	}
}
