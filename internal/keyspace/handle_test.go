package keyspace

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

// A listpack hash and sorted set live in their entry until they convert, and
// their handle is the entry itself.
func TestInlineCollectionsLiveInTheEntry(t *testing.T) {
	ks := New(1, 1)
	db := ks.DBs[0]
	o := HashOpts{MaxEntries: 4, MaxValue: 64, Seed: 1}
	h := db.SetObject([]byte("h"), KindHash, (*Hash)(nil)).Obj().(*Hash)
	if (*Entry)(h) != db.Lookup([]byte("h")) {
		t.Fatal("the handle is not the stored entry")
	}
	for i := range 4 {
		h.Set(fmt.Appendf(nil, "f%d", i), []byte("v"), false, o)
	}
	if h.Enc != compactInline || h.Len() != 4 || h.c != 4 || h.Encoding() != "listpack" {
		t.Fatalf("4 fields: enc %d len %d c %d %s", h.Enc, h.Len(), h.c, h.Encoding())
	}
	h.Set([]byte("f4"), []byte("v"), false, o)
	if h.Enc != compactBoxed || h.Len() != 5 || h.Encoding() != "hashtable" {
		t.Fatalf("5 fields: enc %d len %d %s", h.Enc, h.Len(), h.Encoding())
	}

	lim := ZLimits{Entries: 3, Value: 64, Seed: 7}
	z := db.SetObject([]byte("z"), KindZSet, (*ZSet)(nil)).Obj().(*ZSet)
	for i := range 3 {
		z.Add(fmt.Appendf(nil, "m%d", i), float64(i), 0, lim)
	}
	if z.Enc != compactInline || z.Len() != 3 || !z.IsCompact() {
		t.Fatalf("3 members: enc %d len %d", z.Enc, z.Len())
	}
	z.Add([]byte("m3"), 3, 0, lim)
	if z.Enc != compactBoxed || z.Len() != 4 || z.boxed().seed != 7 {
		t.Fatalf("4 members: enc %d len %d", z.Enc, z.Len())
	}
	checkTree(t, z)
}

// A count too large for Entry.c is taken by walking the listpack.
func TestInlineCountSaturated(t *testing.T) {
	o := HashOpts{MaxEntries: 128, MaxValue: 64}
	h := NewHash()
	for i := range 3 {
		h.Set(fmt.Appendf(nil, "f%d", i), []byte("v"), false, o)
	}
	h.c = countSaturated // as if it held 65535 or more
	if h.Len() != 3 {
		t.Fatalf("saturated hash Len %d", h.Len())
	}
	h.Set([]byte("f9"), []byte("v"), false, o)
	if h.c != 4 || h.Len() != 4 {
		t.Fatalf("after a set: c %d Len %d", h.c, h.Len())
	}
	z := New(1, 1).NewZSet(0, 0, ZLimits{Entries: 128, Value: 64})
	z.Add([]byte("a"), 1, 0, ZLimits{Entries: 128, Value: 64})
	z.Add([]byte("b"), 2, 0, ZLimits{Entries: 128, Value: 64})
	z.c = countSaturated
	if z.Len() != 2 {
		t.Fatalf("saturated zset Len %d", z.Len())
	}
}

// storeCompact never records more capacity than the buffer has, keeps a
// reservation while the buffer is empty, and a reserved new value is filled
// with no further allocation.
func TestStoreCompactCapacity(t *testing.T) {
	var e Entry
	e.storeCompact(make([]byte, 5, 5), 1) // cap 5 < its size class 8: copied
	if b := e.compactBytes(); len(b) != 5 || cap(b) != 8 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	e.storeCompact(make([]byte, 0, 100), 0)
	if b := e.compactBytes(); len(b) != 0 || cap(b) != 100 {
		t.Fatalf("reservation: len %d cap %d", len(b), cap(b))
	}
	if raceOn {
		t.Log("allocation counts not checked under the race detector")
		return
	}
	ks := New(1, 1)
	db := ks.DBs[0]
	o := ks.HashOpts()
	pairs := [][]byte{[]byte("field1"), []byte("value:1"), []byte("field2"), []byte("value:2"), []byte("field3"), []byte("value:3")}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		h := db.SetObject(fmt.Appendf(nil, "k%d", i), KindHash, (*Hash)(nil)).Obj().(*Hash)
		h.SetPairs(pairs, o)
	})
	// the key name (Appendf), the dict entry and key copy, the listpack:
	// nothing for the hash itself
	if allocs > 4 {
		t.Fatalf("a new 3-field hash took %.1f allocations, want <= 4", allocs)
	}
	scores := []float64{1, 2, 3}
	zpairs := [][]byte{[]byte("1"), []byte("a"), []byte("2"), []byte("b"), []byte("3"), []byte("c")}
	allocs = testing.AllocsPerRun(100, func() {
		i++
		z := db.SetObject(fmt.Appendf(nil, "z%d", i), KindZSet, (*ZSet)(nil)).Obj().(*ZSet)
		z.Presize(3, 1, ks.ZLimits())
		z.Reserve(zpairs, scores)
		z.AddAll(zpairs, scores, 0, ks.ZLimits(), func(_, _ int, _ float64) bool { return true })
	})
	if allocs > 4 {
		t.Fatalf("a new 3-member zset took %.1f allocations, want <= 4", allocs)
	}
}

// sizeClass (and allocSize, which uses it) is the smallest class that holds
// n bytes, and what the runtime really allocates; a recorded capacity is the
// largest size class the buffer really has.
func TestSizeClassAndCapacityBits(t *testing.T) {
	for n := 1; n <= 32768; n++ {
		want := int64(0)
		for _, c := range goSizeClasses {
			if c >= int64(n) {
				want = c
				break
			}
		}
		if got := goSizeClasses[sizeClass(n)]; got != want || allocSize(int64(n)) != want {
			t.Fatalf("size %d: class %d, allocSize %d, want %d", n, got, allocSize(int64(n)), want)
		}
		if n%97 == 0 {
			if c := cap(slices.Grow([]byte(nil), n)); int64(c) != want {
				t.Fatalf("size %d: the runtime gives %d bytes, the table says %d", n, c, want)
			}
		}
	}
	for _, c := range []struct{ n, capacity, want int }{
		{10, 16, 16}, {10, 100, 96}, {4, 32, 32}, {100, 8192, 2688}, {1000, 32768, 21760}, {40000, 50000, 40000},
	} {
		var e Entry
		e.storeCompact(make([]byte, c.n, c.capacity), 1)
		if got := cap(e.compactBytes()); got != c.want {
			t.Errorf("len %d cap %d: recorded %d, want %d", c.n, c.capacity, got, c.want)
		}
	}
}

// A compact value that shrinks keeps its buffer's room for the next growth:
// SPOP then SADD, HDEL then HSET allocate nothing.
func TestInlineShrinkKeepsCapacity(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts not checked under the race detector")
	}
	ks := New(1, 1)
	db := ks.DBs[0]
	o := ks.HashOpts()
	h := db.SetObject([]byte("h"), KindHash, (*Hash)(nil)).Obj().(*Hash)
	long, short := []byte("a-field-name-of-some-length"), []byte("f")
	h.SetPairs([][]byte{long, []byte("v"), short, []byte("v")}, o)
	if n := testing.AllocsPerRun(100, func() {
		h.Del(long)
		h.Set(long, []byte("v"), false, o)
	}); n != 0 {
		t.Fatalf("HDEL+HSET: %.1f allocations", n)
	}
	s := db.SetObject([]byte("s"), KindSet, (*Set)(nil)).Obj().(*Set)
	s.AddAll(ks, [][]byte{long, short})
	if n := testing.AllocsPerRun(100, func() {
		s.Remove(long)
		s.Add(ks, long)
	}); n != 0 {
		t.Fatalf("SREM+SADD: %.1f allocations", n)
	}
}

// A listpack list lives in its entry, its node behind the inline header; it is
// boxed as a quicklist and comes back inline when it shrinks back.
func TestInlineListLivesInTheEntry(t *testing.T) {
	ks := listKS(4)
	db := ks.DBs[0]
	l := db.SetObject([]byte("l"), KindList, (*List)(nil)).Obj().(*List)
	if (*Entry)(l) != db.Lookup([]byte("l")) {
		t.Fatal("the handle is not the stored entry")
	}
	for i := range 4 {
		l.TryGrow(ks, 2, 1)
		l.Push(fmt.Appendf(nil, "e%d", i), i%2 == 0)
	}
	if l.Enc != compactInline || l.Len() != 4 || l.c != 4 || l.Encoding() != "listpack" {
		t.Fatalf("4 elements: enc %d len %d c %d %s", l.Enc, l.Len(), l.c, l.Encoding())
	}
	// e2 e0 e1 e3: Redis's listpack of 4 two-byte strings is 7 + 4*4 bytes
	if b := l.e().compactBytes(); binary.LittleEndian.Uint32(b) != 23 {
		t.Fatalf("header sz %d, want 23", binary.LittleEndian.Uint32(b))
	}
	checkList(t, l, []string{"e2", "e0", "e1", "e3"}, "inline")
	l.TryGrow(ks, 2, 1)
	l.Push([]byte("e4"), false)
	if l.Enc != compactBoxed || !l.Quicklist() || l.boxed().ks != ks {
		t.Fatalf("5 elements with fill 4: enc %d %s", l.Enc, l.Encoding())
	}
	checkList(t, l, []string{"e2", "e0", "e1", "e3", "e4"}, "boxed")
	l.DelRange(0, 4)
	l.TryShrink()
	if l.Enc != compactInline || l.Encoding() != "listpack" {
		t.Fatalf("1 element: enc %d %s", l.Enc, l.Encoding())
	}
	checkList(t, l, []string{"e4"}, "back inline")
	if l.Pop(true); l.Len() != 0 || l.p != nil {
		t.Fatalf("emptied: len %d", l.Len())
	}
}

// A small list's pushes and pops at either end allocate nothing once its
// buffer has room, and a new list of several elements (PushAll) takes one
// allocation besides its key's.
func TestInlineListAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts not checked under the race detector")
	}
	ks := New(1, 1)
	db := ks.DBs[0]
	l := db.SetObject([]byte("l"), KindList, (*List)(nil)).Obj().(*List)
	v := []byte("element:1")
	for range 4 {
		l.TryGrow(ks, len(v), 1)
		l.Push(v, false)
	}
	if n := testing.AllocsPerRun(100, func() {
		l.TryGrow(ks, len(v), 1)
		l.Push(v, true)
		l.Pop(false)
		l.TryGrow(ks, len(v), 1)
		l.Push(v, false)
		l.Pop(true)
	}); n != 0 {
		t.Fatalf("LPUSH+RPOP+RPUSH+LPOP: %.1f allocations", n)
	}
	i := 0
	vals := [][]byte{v, v, v, v, v}
	if n := testing.AllocsPerRun(100, func() {
		i++
		l := db.SetObject(fmt.Appendf(nil, "k%d", i), KindList, (*List)(nil)).Obj().(*List)
		l.PushAll(ks, vals, i%2 == 0)
	}); n > 4 {
		t.Fatalf("a new 5-element list took %.1f allocations, want <= 4", n)
	}
}
