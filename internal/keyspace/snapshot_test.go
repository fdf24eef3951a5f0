package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// snapVal is what a snapshot should hold for one key.
type snapVal struct {
	val string
	at  int64
}

// render is a key's value as a comparable string.
func render(e *Entry) string {
	switch e.Kind {
	case KindString:
		return "s:" + string(e.Bytes())
	case KindList:
		return "l:" + strings.Join(listElems(e.Obj().(*List)), ",")
	}
	return "?"
}

// contents is every key of ks (expired ones too), by "db/key".
func contents(ks *Keyspace) map[string]snapVal {
	out := map[string]snapVal{}
	for _, db := range ks.DBs {
		db.RangeAll(func(k string, e *Entry) bool {
			out[fmt.Sprintf("%d/%s", db.ID, k)] = snapVal{render(e), db.ExpireAt(e)}
			return true
		})
	}
	return out
}

// TestSnapshotUnderWrites takes snapshots while random writes run between
// its steps (inserts that grow the tables, deletes that shrink them, value
// changes in place, deadlines, renames, flushes and swaps), and checks that
// each holds exactly the keyspace of its start.
func TestSnapshotUnderWrites(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { snapshotRun(t, seed) })
	}
}

func snapshotRun(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	ks := New(3, seed)
	ks.PanicOnSnapshotGap = true
	ks.SetNow(1_000_000)
	key := func() []byte { return fmt.Appendf(nil, "k%d", r.IntN(3000)) }
	write := func() {
		db := ks.DBs[r.IntN(len(ks.DBs))]
		k := key()
		switch op := r.IntN(100); {
		case op < 40:
			db.SetString(k, fmt.Appendf(nil, "v%d", r.Int()), r.IntN(2) == 0)
		case op < 55:
			db.Delete(k)
		case op < 65:
			if e := db.LookupWrite(k); e != nil && e.Kind == KindList {
				e.Obj().(*List).Push(fmt.Appendf(nil, "x%d", r.IntN(9)), r.IntN(2) == 0)
				db.Touch(k)
			} else if e == nil {
				l := ks.NewList()
				l.Push([]byte("first"), true)
				db.SetObject(k, KindList, l)
			}
		case op < 75:
			if e := db.Lookup(k); e != nil {
				db.SetExpire(k, e, ks.now+int64(r.IntN(100000)))
			}
		case op < 80:
			if e := db.Lookup(k); e != nil {
				db.Persist(k, e)
			}
		case op < 88:
			if db.Lookup(k) != nil {
				db.Rename(k, key())
			}
		case op < 93:
			ks.SetNow(ks.now + int64(r.IntN(2000))) // lazy expiry deletes
			db.Lookup(k)
		case op < 94:
			if r.IntN(4) == 0 {
				db.Flush()
			}
		case op < 95:
			ks.Swap(r.IntN(3), r.IntN(3))
		default:
			db.RehashFor(1, func() int64 { return 0 })
		}
	}
	for range 4000 {
		write()
	}
	for round := range 6 {
		want := contents(ks)
		got := map[string]snapVal{}
		snaps := 0
		var s *Snapshot
		s = ks.StartSnapshot(func(db int, key string, e *Entry, at int64) {
			k := fmt.Sprintf("%d/%s", db, key)
			if _, dup := got[k]; dup {
				t.Fatalf("round %d: %s emitted twice", round, k)
			}
			got[k] = snapVal{render(e), at}
		})
		// a second snapshot, started later, runs alongside
		var s2 *Snapshot
		var want2 map[string]snapVal
		got2 := map[string]snapVal{}
		for !s.Step(1 + r.IntN(40)) {
			for range r.IntN(60) {
				write()
			}
			if s2 == nil && r.IntN(20) == 0 {
				want2, got2 = contents(ks), map[string]snapVal{}
				s2 = ks.StartSnapshot(func(db int, key string, e *Entry, at int64) {
					k := fmt.Sprintf("%d/%s", db, key)
					if _, dup := got2[k]; dup {
						t.Fatalf("round %d: %s emitted twice by the second snapshot", round, k)
					}
					got2[fmt.Sprintf("%d/%s", db, key)] = snapVal{render(e), at}
				})
			}
			if s2 != nil && s2.Step(r.IntN(30)) {
				s2.Close()
				snapCompare(t, "second", want2, got2)
				s2, snaps = nil, snaps+1
			}
		}
		s.Close()
		if s2 != nil {
			for !s2.Step(100) {
			}
			s2.Close()
			snapCompare(t, "second", want2, got2)
		}
		if s.Broken || ks.snaps != nil {
			t.Fatalf("round %d: broken %v, still registered %d", round, s.Broken, len(ks.snaps))
		}
		snapCompare(t, fmt.Sprint("round ", round), want, got)
	}
}

func snapCompare(t *testing.T, what string, want, got map[string]snapVal) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: snapshot holds %d keys, the keyspace had %d", what, len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if g != w {
			t.Errorf("%s: %s = %+v, want %+v", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s was not there at the start", what, k)
		}
	}
}

// TestSnapshotGapPanics: a value changed in place without a hook (here: an
// entry reached by Lookup, not LookupWrite) is caught by Modified.
func TestSnapshotGapPanics(t *testing.T) {
	ks := New(1, 1)
	ks.PanicOnSnapshotGap = true
	db := ks.DBs[0]
	for i := range 100 {
		db.SetString(fmt.Appendf(nil, "k%d", i), []byte("v"), false)
	}
	s := ks.StartSnapshot(func(int, string, *Entry, int64) {})
	defer s.Close()
	e := db.Lookup([]byte("k7"))
	e.SetBytes([]byte("changed"))
	defer func() {
		if recover() == nil {
			t.Fatal("a change without a hook went unnoticed")
		}
	}()
	db.Touch([]byte("k7"))
}
