package keyspace

import (
	"bytes"
	"testing"
	"unsafe"
)

// The entry layout is what memory per key is made of (BENCHMARKS.md "Memory per
// key"): a change of these sizes must be deliberate.
func TestEntryLayoutSizes(t *testing.T) {
	if got := unsafe.Sizeof(Entry{}); got != 40 {
		t.Errorf("sizeof(Entry) = %d", got)
	}
	if got := unsafe.Sizeof(dictEntry[Entry]{}); got != 64 {
		t.Errorf("sizeof(dictEntry[Entry]) = %d, want 64 (a Go size class)", got)
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
	}{{l, KindList}, {h, KindHash}, {s, KindSet}, {z, KindZSet}} {
		e.SetObj(c.o)
		if e.Kind != c.kind || e.Obj() != c.o || e.Bytes() != nil {
			t.Fatalf("%T: kind %v obj %v", c.o, e.Kind, e.Obj())
		}
	}
	e.SetBytes([]byte("v"))
	if e.Obj() != nil {
		t.Fatal("a string has no object")
	}
	// another kind keeps any value, boxed
	e = Entry{Kind: KindStream}
	e.SetObj("stream value")
	if e.Obj() != "stream value" || e.Kind != KindStream {
		t.Fatalf("boxed: %v", e.Obj())
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
