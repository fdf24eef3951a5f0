package keyspace

import (
	"bytes"
	"testing"
	"unsafe"
)

// The entry layout is what memory per key is made of (BENCHMARKS.md "Memory per
// key"): a change of these sizes must be deliberate.
func TestEntryLayoutSizes(t *testing.T) {
	if got := unsafe.Sizeof(Entry{}); got != 24 {
		t.Errorf("sizeof(Entry) = %d", got)
	}
	// a key of up to 12 bytes and its Entry in one 48-byte allocation
	if got := unsafe.Sizeof(dictEntry[Entry]{}); got != 40 {
		t.Errorf("sizeof(dictEntry[Entry]) = %d, want 40", got)
	}
	if got, want := dictEntrySize[Entry](12), int64(48); got != want {
		t.Errorf("entry with a 12-byte key: %d bytes, want %d (a Go size class)", got, want)
	}
	if got, want := dictEntrySize[Entry](13), int64(64); got != want {
		t.Errorf("entry with a 13-byte key: %d bytes, want %d", got, want)
	}
}

func TestEntryBytesAccessors(t *testing.T) {
	var e Entry
	if e.Bytes() != nil {
		t.Fatal("zero entry has bytes")
	}
	b := make([]byte, 3, 10)
	copy(b, "abc")
	e.SetBytes(b)
	if e.Kind != KindString || string(e.Bytes()) != "abc" || cap(e.Bytes()) != 10 {
		t.Fatalf("SetBytes: kind %v %q cap %d", e.Kind, e.Bytes(), cap(e.Bytes()))
	}
	e.Bytes()[0] = 'x' // in place
	e.SetBytes(append(e.Bytes(), "def"...))
	if string(e.Bytes()) != "xbcdef" || unsafe.SliceData(e.Bytes()) != unsafe.SliceData(b) {
		t.Fatal("append within capacity must stay in place")
	}
	e.SetBytes([]byte{})
	if got := e.Bytes(); len(got) != 0 {
		t.Fatalf("empty: %q", got)
	}
	e.SetBytes(nil)
	if len(e.Bytes()) != 0 {
		t.Fatal("nil")
	}

	// the boxed form of values of 4 GiB or more, exercised with a short value
	big := []byte("boxed value")
	e.setBig(big)
	if e.n != bigStr || !bytes.Equal(e.Bytes(), big) {
		t.Fatalf("big: %q", e.Bytes())
	}
	c := e.Clone()
	if !bytes.Equal(c.Bytes(), big) || c.n == bigStr || unsafe.SliceData(c.Bytes()) == unsafe.SliceData(big) {
		t.Fatal("clone of a boxed value")
	}
	e.SetBytes([]byte("short"))
	if e.n == bigStr || string(e.Bytes()) != "short" {
		t.Fatal("back to inline")
	}
}

func TestEntryObjAccessors(t *testing.T) {
	var e Entry
	l, h, s, z := &List{}, &Hash{}, &Set{}, &ZSet{}
	for _, c := range []struct {
		o    any
		kind Kind
	}{{l, KindList}, {h, KindHash}, {s, KindSet}, {z, KindZSet}, {NewStream(DefaultStreamLimits), KindStream}} {
		e.SetObj(c.o)
		want := c.o
		switch c.kind {
		case KindList:
			want = (*List)(&e)
		case KindHash:
			want = (*Hash)(&e) // a handle: the entry itself
		case KindZSet:
			want = (*ZSet)(&e)
		case KindSet:
			want = (*Set)(&e)
		}
		if e.Kind != c.kind || e.Obj() != want || e.Bytes() != nil {
			t.Fatalf("%T: kind %v obj %v", c.o, e.Kind, e.Obj())
		}
	}
	e.SetBytes([]byte("v"))
	if e.Obj() != nil {
		t.Fatal("a string has no object")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SetObj of a foreign type on a set entry must panic")
			}
		}()
		e := Entry{Kind: KindSet}
		e.SetObj("not a set")
	}()
}

func TestSlackCode(t *testing.T) {
	for _, s := range []int{0, 1, 2047, 2048, 2049, 4095, 4096, 1<<20 + 12345, 1<<31 - 1, 1 << 32, 1<<40 + 777} {
		c := slackCode(s)
		d := capSlack(c)
		if d > s || (s < 2048 && d != s) || float64(s-d) > float64(s)/1024 || c >= embedCode {
			t.Errorf("slack %d decodes to %d (code %#x)", s, d, c)
		}
	}
	// past 2 TiB the code is a shorter capacity, never embedCode's exponent
	if c := slackCode(1<<42 + 777); c >= embedCode || capSlack(c) > 1<<42 {
		t.Errorf("slack 4 TiB: code %#x", c)
	}
	// APPEND growth keeps (almost) the capacity append gave it
	var e Entry
	b := make([]byte, 5000, 9000)
	e.SetBytes(b)
	if c := cap(e.Bytes()); c > 9000 || c < 9000-9000/1024 || len(e.Bytes()) != 5000 {
		t.Fatalf("cap %d len %d", c, len(e.Bytes()))
	}
}

// The deadline lives in the expiry index, not in the entry: it must follow the
// key through swap-removes, Rename, Insert and the index's shrinking.
func TestDeadlineInExpiryIndex(t *testing.T) {
	ks := New(2, 1)
	db := ks.DBs[0]
	ks.SetNow(1000)
	const n = 3000
	key := func(i int) []byte {
		return []byte("k" + string(rune('a'+i%26)) + string(rune('0'+i/26%10)) + string(rune('0'+i/260)))
	}
	for i := range n {
		e := db.SetString(key(i), []byte("v"), false)
		db.SetExpire(key(i), e, int64(2000+i))
	}
	for i := 0; i < n; i += 2 {
		db.Persist(key(i), db.Lookup(key(i)))
	}
	for i := range n {
		want := int64(0)
		if i%2 == 1 {
			want = int64(2000 + i)
		}
		if got := db.ExpireAt(db.Lookup(key(i))); got != want {
			t.Fatalf("key %d: deadline %d, want %d", i, got, want)
		}
	}
	if db.Expires() != n/2 {
		t.Fatalf("expires %d", db.Expires())
	}
	for i := 1; i < n-10; i += 2 {
		db.Delete(key(i))
	}
	if c := len(db.expiring.chunks); c > 2 { // one in use, one spare
		t.Fatalf("the index kept %d chunks for %d keys", c, db.expiring.len())
	}
	db.Rename(key(n-1), []byte("renamed"))
	if e := db.Lookup([]byte("renamed")); e == nil || db.ExpireAt(e) != 2000+n-1 {
		t.Fatal("rename keeps the deadline")
	}
	v := db.Lookup([]byte("renamed")).Clone()
	ks.DBs[1].Insert([]byte("copy"), v, 4242)
	if e := ks.DBs[1].Lookup([]byte("copy")); e == nil || ks.DBs[1].ExpireAt(e) != 4242 {
		t.Fatal("insert with a deadline")
	}
	ks.SetNow(2000 + n)
	for i := range n {
		if i%2 == 1 && db.Lookup(key(i)) != nil {
			t.Fatalf("key %d outlived its deadline", i)
		}
	}
	if db.Lookup([]byte("renamed")) != nil || db.Expires() != 0 {
		t.Fatalf("expires %d", db.Expires())
	}
}

// The per-key structs of small collections (their buffers come on top).
func TestCollectionStructSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"listObj", unsafe.Sizeof(listObj{}), 96},
		{"Hash", unsafe.Sizeof(Hash{}), 24}, // the entry itself
		{"hashObj", unsafe.Sizeof(hashObj{}), 48},
		{"Set", unsafe.Sizeof(Set{}), 24},
		{"setObj", unsafe.Sizeof(setObj{}), 48},
		{"ZSet", unsafe.Sizeof(ZSet{}), 24},
		{"zsetObj", unsafe.Sizeof(zsetObj{}), 48},
	} {
		if c.got != c.want {
			t.Errorf("sizeof(%s) = %d, want %d", c.name, c.got, c.want)
		}
	}
}
