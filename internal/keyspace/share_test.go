package keyspace

import (
	"bytes"
	"testing"
	"unsafe"
)

// SetStringOwned keeps the caller's bytes (no copy) and marks them shared;
// the first change in place (Writable) copies them, later ones do not; a
// SET that overwrites a shared value does not write into its bytes.
func TestOwnedAndSharedStrings(t *testing.T) {
	ks := New(1, 1)
	db := ks.DBs[0]
	val := bytes.Repeat([]byte("v"), ShareMin)
	e := db.SetStringOwned([]byte("k"), val, false)
	if unsafe.SliceData(e.Bytes()) != unsafe.SliceData(val) || !e.Shared() {
		t.Fatal("the owned value was copied, or not marked shared")
	}
	w := e.Writable()
	if unsafe.SliceData(w) == unsafe.SliceData(val) || e.Shared() || !bytes.Equal(w, val) {
		t.Fatal("Writable did not copy the shared bytes")
	}
	w[0] = 'x'
	if val[0] != 'v' {
		t.Fatal("a change in place reached the caller's bytes")
	}
	if w2 := e.Writable(); unsafe.SliceData(w2) != unsafe.SliceData(w) {
		t.Fatal("Writable copied bytes that were not shared")
	}
	// a reply refers to the value: a SET of the same size must not reuse it
	e.Share()
	ref := e.Bytes()
	db.SetString([]byte("k"), bytes.Repeat([]byte("z"), ShareMin), false)
	if ref[0] != 'x' || ref[1] != 'v' {
		t.Fatal("SET overwrote bytes a reply refers to")
	}
	if db.Peek([]byte("k")).Shared() {
		t.Fatal("a new value is marked shared")
	}
	// the flag leaves the keysizes bin alone
	e = db.Peek([]byte("k"))
	bin := e.sizeBin()
	e.Share()
	if e.sizeBin() != bin || !e.Shared() {
		t.Fatal("the shared flag and the keysizes bin overlap")
	}
	e.setSizeBin(3)
	if !e.Shared() {
		t.Fatal("setSizeBin cleared the shared flag")
	}
}
