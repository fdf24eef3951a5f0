package keyspace

import (
	"fmt"
	"strings"
	"testing"
)

// eventLog records Observer.Expired and every EventObserver call, in order.
type eventLog struct{ ev []string }

func (l *eventLog) add(f string, a ...any)    { l.ev = append(l.ev, fmt.Sprintf(f, a...)) }
func (l *eventLog) Modified(int, []byte)      {}
func (l *eventLog) Flushing(int)              {}
func (l *eventLog) Swapping(int, int)         {}
func (l *eventLog) Expired(db int, k []byte)  { l.add("expired %d %s", db, k) }
func (l *eventLog) KeyAdded(db int, k []byte) { l.add("new %d %s", db, k) }
func (l *eventLog) KeyMiss(db int, k []byte)  { l.add("keymiss %d %s", db, k) }
func (l *eventLog) KeyEvicted(db int, k []byte) {
	l.add("evicted %d %s", db, k)
}
func (l *eventLog) KeyOverwritten(db int, k []byte, typeChanged bool) {
	l.add("overwritten %d %s %v", db, k, typeChanged)
}

func (l *eventLog) take() string {
	s := strings.Join(l.ev, "; ")
	l.ev = l.ev[:0]
	return s
}

// The keyspace announces what Redis's db.c announces: "new" from dbAdd,
// "overwritten"/"type_changed" from setKey, "keymiss" from lookupKeyRead,
// "expired" from lazy and active expiry, "evicted" from eviction.
func TestKeyspaceEvents(t *testing.T) {
	ks := New(2, 1)
	l := &eventLog{}
	ks.Obs, ks.Events = l, l
	ks.SetNow(1000)
	db, db1 := ks.DBs[0], ks.DBs[1]
	k := []byte("k")
	check := func(what, want string) {
		t.Helper()
		if got := l.take(); got != want {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}

	db.SetString(k, []byte("v"), false)
	check("SetString new", "new 0 k")
	db.SetString(k, []byte("w"), false)
	check("SetString over a string", "overwritten 0 k false")
	db.SetObject(k, KindSet, nil)
	check("SetObject over a string", "overwritten 0 k true")
	db.SetObject(k, KindSet, nil)
	check("SetObject over a set", "overwritten 0 k false")
	db.SetString(k, nil, false)
	check("SetString over a set", "overwritten 0 k true")

	// an expired value is not overwritten: it expires, then the key is new
	e := db.Lookup(k)
	db.SetExpire(k, e, 1500)
	ks.SetNow(2000)
	db.SetString(k, []byte("v"), false)
	check("SetString over an expired key", "expired 0 k; new 0 k")
	db.SetExpire(k, db.Lookup(k), 2500)
	ks.SetNow(3000)
	db.SetObject(k, KindHash, NewHash())
	check("SetObject over an expired key", "expired 0 k; new 0 k")

	// read lookups: a miss is a keymiss, after the expiry that caused it
	if db.LookupRead([]byte("nokey"), false) != nil || db.LookupRead(k, false) == nil {
		t.Fatal("LookupRead")
	}
	check("LookupRead", "keymiss 0 nokey")
	db.SetExpire(k, db.Lookup(k), 3500)
	ks.SetNow(4000)
	db.LookupRead(k, true)
	check("LookupRead of an expired key", "expired 0 k; keymiss 0 k")
	db.LookupWrite([]byte("nokey"))
	db.Lookup([]byte("nokey"))
	check("write and plain lookups", "")

	// Rename and Insert add their destination (even over a live key)
	db.SetString([]byte("a"), []byte("1"), false)
	db.SetString([]byte("b"), []byte("2"), false)
	l.take()
	db.Rename([]byte("a"), []byte("b"))
	check("Rename", "new 0 b")
	db1.Insert([]byte("b"), *db.Lookup([]byte("b")), 0)
	check("Insert", "new 1 b")

	// active expiry and eviction
	db.SetExpire([]byte("b"), db.Lookup([]byte("b")), 4500)
	ks.SetNow(5000)
	if _, n := db.ActiveExpireStep(20, func() uint64 { return 0 }); n != 1 {
		t.Fatal("active expiry")
	}
	check("active expiry", "expired 0 b")
	freed, ok := db1.Evict([]byte("b"))
	if _, again := db1.Evict([]byte("b")); !ok || freed <= 0 || again || db1.Exists([]byte("b")) {
		t.Fatal("Evict")
	}
	check("Evict", "evicted 1 b")
}
