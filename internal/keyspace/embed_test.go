package keyspace

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A small string lives in its key's dict entry when that costs no more than
// its own allocation (embedRoom): one allocation per SET of a new key,
// MEMORY USAGE within Redis's bounds for small strings, and the bytes stay
// right through overwrites, APPEND-like growth, RENAME, Insert (COPY, MOVE),
// deletes and collections.
func TestEmbeddedStrings(t *testing.T) {
	ks := New(2, 1)
	db := ks.DBs[0]
	// redis-benchmark's shape: a 16-byte key and a 3-byte value, 64 bytes
	e := db.SetString([]byte("key:000000000001"), []byte("xxx"), false)
	if !e.embedded() || string(e.Bytes()) != "xxx" {
		t.Fatalf("not embedded: %q", e.Bytes())
	}
	if u, _ := db.Usage([]byte("key:000000000001"), 0); u != 64 {
		t.Errorf("usage %d, want 64", u)
	}
	// MEMORY USAGE of strings as Redis's test bounds it (unit/type/string.tcl)
	for _, ks := range []int{1, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257} {
		for _, vs := range []int{1, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257} {
			key, val := strings.Repeat("k", ks), strings.Repeat("v", vs)
			db.SetString([]byte(key), []byte(val), false)
			u, _ := db.Usage([]byte(key), 0)
			lo := int64(16 + ks + vs)
			hi := 2 * lo
			if lo < 32 {
				hi = 64
			}
			if u < lo || u > hi {
				t.Errorf("key %d, value %d: usage %d, want %d..%d", ks, vs, u, lo, hi)
			}
			if got := db.Lookup([]byte(key)).Bytes(); string(got) != val {
				t.Fatalf("key %d, value %d: %q", ks, vs, got)
			}
		}
	}
	// overwrites: in place while it fits, then its own bytes; never damaged
	k := []byte("grow")
	db.SetString(k, []byte("a"), false)
	for i := 1; i <= 200; i++ {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, i)
		e := db.SetString(k, v, false)
		if !bytes.Equal(e.Bytes(), v) {
			t.Fatalf("overwrite %d: %q", i, e.Bytes())
		}
	}
	e = db.Lookup(k)
	if e.embedded() {
		t.Error("a 200-byte value is still in a 4-byte key's entry")
	}
	// growth in place within the room keeps it embedded (APPEND, SETRANGE)
	e = db.SetString([]byte("ap"), []byte("012345678"), false) // 2 + 9 bytes: 1 spare

	b := e.Bytes()
	if cap(b) <= len(b) {
		t.Fatalf("no spare room: len %d cap %d", len(b), cap(b))
	}
	e.SetBytes(append(b, '!'))
	if !e.embedded() || string(e.Bytes()) != "012345678!" {
		t.Fatalf("append in the room: embedded %v %q", e.embedded(), e.Bytes())
	}
	// RENAME and Insert (MOVE, COPY) move the bytes into the new entry
	db.Rename([]byte("ap"), []byte("a-much-longer-key-name-than-before-so-the-entry-differs"))
	e = db.Lookup([]byte("a-much-longer-key-name-than-before-so-the-entry-differs"))
	if string(e.Bytes()) != "012345678!" {
		t.Fatalf("after RENAME: %q", e.Bytes())
	}
	if room := dictRoom(e); e.embedded() && (len(room) == 0 || &room[0] != &e.Bytes()[0]) {
		t.Fatal("after RENAME the bytes are not in the new entry")
	}
	moved := *e
	ks.DBs[1].Insert([]byte("m"), moved, 0)
	db.Delete([]byte("a-much-longer-key-name-than-before-so-the-entry-differs"))
	if e := ks.DBs[1].Lookup([]byte("m")); string(e.Bytes()) != "012345678!" || (e.embedded() && &dictRoom(e)[0] != &e.Bytes()[0]) {
		t.Fatalf("after Insert: %q", e.Bytes())
	}
	// set and delete: the accounting returns to where it was
	added, freed, tables := ks.Added, ks.Freed, dictTableBytes(db.dict)
	for i := range 1000 {
		key := []byte("acct:" + strconv.Itoa(i))
		db.SetString(key, bytes.Repeat([]byte("v"), i%90), false)
		if i%3 == 0 {
			db.SetString(key, bytes.Repeat([]byte("w"), i%200), false)
		}
	}
	for i := range 1000 {
		db.Delete([]byte("acct:" + strconv.Itoa(i)))
	}
	if a, f := ks.Added-added, ks.Freed-freed; a-f != dictTableBytes(db.dict)-tables {
		t.Errorf("1000 keys set and deleted: %d bytes added, %d freed, tables %d -> %d", a, f, tables, dictTableBytes(db.dict))
	}
	// the collector sees the entries' values: many small strings survive GCs
	for i := range 5000 {
		db.SetString([]byte("gc:"+strconv.Itoa(i)), []byte("value-"+strconv.Itoa(i)), false)
	}
	runtime.GC()
	junk := make([][]byte, 0, 10000)
	for i := range 10000 {
		junk = append(junk, bytes.Repeat([]byte{0xEE}, 16+i%64))
	}
	runtime.GC()
	runtime.KeepAlive(junk)
	for i := range 5000 {
		if got := db.Lookup([]byte("gc:" + strconv.Itoa(i))).Bytes(); string(got) != "value-"+strconv.Itoa(i) {
			t.Fatalf("gc:%d = %q", i, got)
		}
	}
}

// SET of a new key with a small value is one allocation: the entry.
func TestEmbeddedStringAllocs(t *testing.T) {
	ks := New(1, 1)
	db := ks.DBs[0]
	db.dict.Expand(4096)
	for db.dict.RehashStep(100) {
	}
	key, val := []byte("key:000000000000"), []byte("xxx")
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		key[15] = byte('0' + i%10)
		key[14] = byte('0' + i/10%10)
		key[13] = byte('0' + i/100%10)
		key[12] = byte('0' + i/1000%10)
		i++
		db.SetString(key, val, false)
	}); a != 1 {
		t.Errorf("SET of a new key: %v allocations, want 1", a)
	}
}

// An overwrite that outgrows the entry's room moves the key to a new entry
// with room for it (reembed, as Redis reallocates the object); a key with a
// TTL keeps it, and the expiring set follows the entry.
func TestReembedKeepsTTL(t *testing.T) {
	ks := New(1, 1)
	db := ks.DBs[0]
	k := []byte("k")
	e := db.SetString(k, []byte("v"), false)
	db.SetExpire(k, e, 1<<40)
	old := dictEntryOf(e)
	e = db.SetString(k, []byte("a value that no longer fits"), true)
	if dictEntryOf(e) == old || !e.embedded() {
		t.Fatalf("not moved to a new entry with room (embedded %v)", e.embedded())
	}
	if u, _ := db.Usage(k, 0); u > 2*(16+1+27)+expItemSize {
		t.Errorf("usage %d", u)
	}
	if at := db.ExpireAt(db.Lookup(k)); at != 1<<40 {
		t.Fatalf("deadline %d after the move", at)
	}
	if it := db.expiring.at(int(e.expIdx) - 1); it.de != dictEntryOf(e) || it.at != 1<<40 {
		t.Fatal("the expiring set refers to the old entry")
	}
	db.SetExpire(k, e, 1)
	ks.now = 2
	if db.Lookup(k) != nil {
		t.Fatal("expired key still visible")
	}
	if db.Len() != 0 || db.Expires() != 0 {
		t.Fatalf("after expiry: %d keys, %d with a TTL", db.Len(), db.Expires())
	}
}
