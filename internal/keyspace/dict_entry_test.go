package keyspace

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The tail types are the base entry and their array with nothing between or
// after, so that dictEntrySize is the size of what newDictEntry allocates, and
// the key starts in the base entry's end padding.
func TestDictEntryTailTypes(t *testing.T) {
	checkTails[Entry](t)
	checkTails[float64](t)
	checkTails[struct{}](t)
	checkTails[hval](t)
}

func checkTails[V any](t *testing.T) {
	t.Helper()
	base := unsafe.Sizeof(dictEntry[V]{})
	if off := dictKeyOff[V](); off > base || base-off >= 8 {
		t.Errorf("%T: key at %d, entry of %d bytes", *new(V), off, base)
	}
	for _, c := range []struct{ got, words uintptr }{
		{unsafe.Sizeof(dictEntryT1[V]{}), 1},
		{unsafe.Sizeof(dictEntryT7[V]{}), 7},
		{unsafe.Sizeof(dictEntryT16[V]{}), 16},
		{unsafe.Sizeof(dictEntryT18[V]{}), 18},
		{unsafe.Sizeof(dictEntryT32[V]{}), 32},
	} {
		if c.got != base+8*c.words {
			t.Errorf("%T: a tail of %d words makes %d bytes, want %d", *new(V), c.words, c.got, base+8*c.words)
		}
	}
	words := map[int]bool{}
	pad := dictKeyPad[V]()
	for n := pad + 1; n <= pad+dictInlineMax; n++ {
		w := dictTail[V](n)
		if w*8 < n-pad {
			t.Fatalf("%d bytes in %d words", n-pad, w)
		}
		words[w] = true
		_ = newDictEntryT[V](w) // panics for a missing type
	}
	if len(words) != 24 {
		t.Errorf("%d tail types in use, want 24", len(words))
	}
}

func TestDictEntrySizes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64
	}{
		{0, 48}, {4, 48}, {10, 48}, {12, 48}, // key:000001 and its Entry: 48 bytes
		{13, 64}, {28, 64}, {29, 80}, {44, 80}, {45, 96},
		{4 + dictInlineMax, allocSize(40 + dictInlineMax)},
		{5 + dictInlineMax, 64 + allocSize(5+dictInlineMax)}, // its own string
	} {
		if got := dictEntrySize[Entry](c.n); got != c.want {
			t.Errorf("entry with a %d-byte key: %d bytes, want %d", c.n, got, c.want)
		}
	}
	// a sorted set's member and score; a set's member
	if got := dictEntrySize[float64](12); got != 32 {
		t.Errorf("float64 entry, 12-byte key: %d", got)
	}
	if got := dictEntrySize[struct{}](4); got != 16 {
		t.Errorf("struct{} entry, 4-byte key: %d", got)
	}
}

// Keys of every length come back byte for byte, next to values that point
// into the heap, after collections that would have reused the memory of
// anything the collector did not see: the tail types' pointer maps are right.
func TestDictEntryKeysAndValuesSurviveGC(t *testing.T) {
	type val struct {
		a   uint32
		p   *[64]byte
		tag byte
	}
	const n = 700
	es := make([]*dictEntry[val], n)
	keys := make([]string, n)
	for i := range n {
		keys[i] = strings.Repeat(string(rune('a'+i%26)), i)
		b := []byte(keys[i]) // a view that is reused below, as a request's buffer is
		e := newDictEntry[val](dictView(b), true)
		for j := range b {
			b[j] = '#'
		}
		v := new([64]byte)
		for j := range v {
			v[j] = byte(i)
		}
		e.val = val{a: uint32(i), p: v, tag: byte(i)}
		es[i] = e
	}
	for range 3 {
		runtime.GC()
		junk := make([][]byte, 0, 4096)
		for j := range 4096 {
			junk = append(junk, make([]byte, 64+j%200))
			for k := range junk[j] {
				junk[j][k] = 0xEE
			}
		}
		runtime.KeepAlive(junk)
	}
	for i, e := range es {
		if got := e.key(); got != keys[i] {
			t.Fatalf("key %d: %q", i, got)
		}
		if e.val.a != uint32(i) || e.val.tag != byte(i) || e.val.p[0] != byte(i) || e.val.p[63] != byte(i) {
			t.Fatalf("value %d: %d %d %v", i, e.val.a, e.val.tag, e.val.p[:4])
		}
		if long := i > dictKeyPad[val]()+dictInlineMax; long != (e.klen == keyExt) {
			t.Fatalf("key of %d bytes: klen %d", i, e.klen)
		}
	}
}

// A long key is kept, not copied, unless the caller asks for a copy; an
// insert is one allocation (no resize): the entry with its key.
func TestDictEntryLongKeyAndAllocs(t *testing.T) {
	long := strings.Repeat("k", dictInlineMax+100)
	if e := newDictEntry[Entry](long, false); unsafe.StringData(e.key()) != unsafe.StringData(long) {
		t.Error("a long key was copied")
	}
	if e := newDictEntry[Entry](long, true); unsafe.StringData(e.key()) == unsafe.StringData(long) || e.key() != long {
		t.Error("a long key was not copied")
	}
	d := NewDict[int](1)
	d.Expand(1024)
	for d.RehashStep(100) {
	}
	key := []byte("key:000000")
	i := 0
	if a := testing.AllocsPerRun(500, func() {
		key[9] = byte('0' + i%10)
		key[8] = byte('0' + i/10%10)
		key[7] = byte('0' + i/100%10)
		i++
		d.Upsert(key)
	}); a != 1 {
		t.Errorf("Upsert of a new key: %v allocations, want 1", a)
	}
}

// An entry made with room has at least that room after its key, up to the end
// of its allocation and no further (the race detector's checkptr checks the
// slices), filled to its size class; writing all of it leaves the key and the
// value intact through collections; and dictEntryBytes is its allocation.
func TestDictEntryRoom(t *testing.T) {
	type val struct{ p *[8]byte }
	pad := dictKeyPad[val]()
	var kept []*dictEntry[val]
	for klen := 0; klen <= pad+dictInlineMax+2; klen += 3 {
		for _, room := range []int{0, 1, 7, 14, 27, 60, 200, dictInlineMax} {
			key := strings.Repeat("k", klen)
			e := newDictEntryRoom[val](key, room)
			e.val.p = new([8]byte)
			e.val.p[7] = byte(klen)
			got := dictRoom(&e.val)
			fits := dictTail[val](klen+room) >= 0
			if fits && len(got) < room {
				t.Fatalf("key %d, room %d: %d bytes of room", klen, room, len(got))
			}
			if !fits && len(got) != 0 && klen > pad {
				t.Fatalf("key %d, room %d over the inline limit: %d bytes of room", klen, room, len(got))
			}
			size := dictEntryBytes(&e.val)
			if e.klen != keyExt {
				if end := int(dictKeyOff[val]()) + klen + len(got); int64(end) > size || (fits && klen+room > pad && size-int64(end) >= 8 && size <= int64(unsafe.Sizeof(dictEntryT16[val]{}))) {
					t.Fatalf("key %d, room %d: room ends at %d of a %d-byte allocation", klen, room, end, size)
				}
			}
			for i := range got {
				got[i] = 0xEE
			}
			kept = append(kept, e)
		}
	}
	runtime.GC()
	for _, e := range kept {
		k := e.key()
		if strings.Trim(k, "k") != "" || e.val.p[7] != byte(len(k)) {
			t.Fatalf("entry with a %d-byte key damaged: %q", len(k), k[:min(len(k), 20)])
		}
	}
}
