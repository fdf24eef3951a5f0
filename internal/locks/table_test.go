package locks

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/zeebo/xxh3"
)

func TestHistogramQuantile(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 {
		t.Fatal("empty histogram")
	}
	for i := 0; i < 100; i++ {
		h.Add(int64(i) * 10_000) // 0 .. 990 ms
	}
	h.Add(-5) // counts as 0
	h.Add(1e12)
	if h.Count != 102 || h.Counts[0] != 2 || h.Counts[len(Bounds)] != 1 {
		t.Fatalf("counts %v", h.Counts)
	}
	// p50: rank 51 in (250 ms, 500 ms], linear
	if q := h.Quantile(0.5); q < 250e3 || q > 500e3 {
		t.Fatalf("p50 %v", q)
	}
	if q := h.Quantile(1); q != float64(Bounds[len(Bounds)-1]) {
		t.Fatalf("p100 %v", q)
	}
	// exact zeros (uncontended waits) are known: a rank among them is 0,
	// the rest of the first bucket interpolates over (0, 100 µs]
	var w Histogram
	for i := 0; i < 9; i++ {
		w.Add(0)
	}
	w.Add(50)
	if w.Quantile(0.5) != 0 || w.Quantile(0.9) != 0 || w.Quantile(1) != 100 || w.Zeros != 9 {
		t.Fatalf("zeros: p50 %v p90 %v p100 %v", w.Quantile(0.5), w.Quantile(0.9), w.Quantile(1))
	}
}

func TestTableLifecycle(t *testing.T) {
	tb := New(2)
	note := func(k Kind, key string, tok string) *Note {
		return &Note{Kind: k, Key: []byte(key), Token: []byte(tok), Deadline: 5000}
	}
	tb.Apply(0, note(Acquired, "a", "t1"), 1000)
	tb.Apply(1, note(Acquired, "a", "t2"), 1000)
	tb.Apply(0, note(Refused, "a", "t9"), 2000)
	tb.Apply(0, note(Refused, "a", "t9"), 3000) // same waiter: the first refusal counts
	if tb.Len() != 2 || tb.C.Contended != 2 {
		t.Fatalf("len %d %+v", tb.Len(), tb.C)
	}
	tb.Touch(0, []byte("a"))
	tb.Touch(0, []byte("nope"))
	if !tb.HasPending() {
		t.Fatal("a held key touched")
	}
	n := 0
	tb.Pending(func(db int, key string) {
		n++
		tb.Check(db, key, 3500, true, true, []byte("t1"), 7000, false) // a new deadline: extended
	})
	if n != 1 || tb.C.Extended != 1 || tb.HasPending() {
		t.Fatalf("pending %d %+v", n, tb.C)
	}
	tb.Apply(0, note(Released, "a", ""), 4000)
	tb.Apply(0, note(Acquired, "a", "t9"), 4500)
	if tb.Hold.Count != 1 || tb.Hold.SumUs != 3000 || tb.Wait().SumUs != 2500 || tb.Wait().Count != 3 {
		t.Fatalf("hold %+v wait %+v", tb.Hold, tb.Wait())
	}
	tb.Swap(0, 1)
	if l := tb.Locks(); len(l) != 2 || l[0].DB != 0 || l[0].Digest != xxh3.HashString("t2") || l[1].Digest != xxh3.HashString("t9") || l[1].DB != 1 {
		t.Fatalf("after SWAPDB %+v", l)
	}
	tb.Expired(0, []byte("a"), 6000) // db 0 now holds token 2's lock
	tb.Flush(1)
	if tb.Len() != 0 || tb.C.ExpiredHeld != 1 || tb.C.Removed != 1 {
		t.Fatalf("len %d %+v", tb.Len(), tb.C)
	}
	tb.Reset()
	if tb.C != (Counters{}) || tb.Keys() != 0 || tb.Hold.Count != 0 {
		t.Fatal("reset")
	}
}

// The table's memory is bounded: per-key counters by MaxKeys (the busiest
// stay); fresh keys taken once and released reuse the states of the ones
// before (the free list), without growing the table.
func TestTableBounds(t *testing.T) {
	tb := New(1)
	hot := &Note{Kind: Acquired, Key: []byte("hot"), Deadline: 1}
	for i := 0; i < 50; i++ {
		tb.Apply(0, hot, int64(i))
		tb.Apply(0, &Note{Kind: Released, Key: []byte("hot")}, int64(i))
	}
	for i := 0; i < 5*MaxKeys; i++ {
		tb.Apply(0, &Note{Kind: Refused, Key: []byte(fmt.Sprint("k", i)), Token: []byte(fmt.Sprint(i))}, int64(i))
	}
	if tb.Keys() > MaxKeys {
		t.Fatalf("%d keys", tb.Keys())
	}
	if top := tb.Top(1); len(top) != 1 || top[0].Key != "hot" || top[0].Acquired != 50 {
		t.Fatalf("top %+v", top)
	}
	// 10,000 fresh keys, each taken once and released: past MaxKeys their
	// states are reused, the table does not grow
	for i := 0; i < 10000; i++ {
		k := []byte(fmt.Sprint("fresh:", i))
		tb.Apply(0, &Note{Kind: Acquired, Key: k, Token: []byte("t"), Deadline: 1}, 0)
		tb.Apply(0, &Note{Kind: Released, Key: k}, 0)
	}
	if tb.Keys() > MaxKeys || tb.Len() != 0 || len(tb.free) == 0 {
		t.Fatalf("%d keys, %d held, %d free", tb.Keys(), tb.Len(), len(tb.free))
	}
	if top := tb.Top(1); top[0].Key != "hot" || top[0].Acquired != 50 {
		t.Fatalf("top after fresh keys %+v", top)
	}
	// the notes are the command's (its arguments, its entry): made once
	acq := &Note{Kind: Acquired, Key: []byte("fresh:x"), Token: []byte("t"), Deadline: 1}
	rel := &Note{Kind: Released, Key: []byte("fresh:x")}
	allocs := testing.AllocsPerRun(100, func() {
		tb.Apply(0, acq, 0)
		tb.Apply(0, rel, 0)
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per fresh key's lock", allocs)
	}
}

// States are reused for keys of other lengths and holders of other tokens:
// the listing shows each lock's own key and its token's digest.
func TestTableKeysAndTokens(t *testing.T) {
	tb := New(1)
	want := map[string]string{}
	for i := 0; i < 3*MaxKeys; i++ {
		k := fmt.Sprint("key:", i, ":", string(make([]byte, i%70)))
		tok := fmt.Sprint("tok-", i, string(make([]byte, (i*7)%90)))
		tb.Apply(0, &Note{Kind: Acquired, Key: []byte(k), Token: []byte(tok), Deadline: 1}, int64(i))
		if i%3 == 0 { // re-taken with a longer token, then a shorter one
			tb.Apply(0, &Note{Kind: Acquired, Key: []byte(k), Token: []byte(tok + tok + tok), Deadline: 1}, int64(i))
			tb.Apply(0, &Note{Kind: Acquired, Key: []byte(k), Token: []byte("s"), Deadline: 1}, int64(i))
			tok = "s"
		}
		if i%2 == 0 { // released: past MaxKeys its state goes back for reuse
			tb.Apply(0, &Note{Kind: Released, Key: []byte(k)}, int64(i))
			continue
		}
		want[k] = tok
	}
	got := tb.Locks()
	if len(got) != len(want) {
		t.Fatalf("%d locks, want %d", len(got), len(want))
	}
	for _, l := range got {
		if w, ok := want[l.Key]; !ok || l.Digest != xxh3.HashString(w) {
			t.Fatalf("lock %q digest %x, want that of %q (%v)", l.Key, l.Digest, w, ok)
		}
	}
}

// Pending judges the touched keys that are held; Touch skips the key of the
// acquisition or release the running command reported before changing it,
// by its slice, until Counted.
func TestTablePendingSkipsTheReport(t *testing.T) {
	tb := New(1)
	for _, k := range []string{"a", "b", "c"} {
		tb.Apply(0, &Note{Kind: Acquired, Key: []byte(k), Token: []byte("t"), Deadline: 1}, 0)
	}
	tb.Counted()
	judged := func() (keys []string) {
		tb.Pending(func(db int, key string) { keys = append(keys, key) })
		return keys
	}
	tb.Touch(0, []byte("a"))
	tb.Touch(0, []byte("b"))
	tb.Touch(0, []byte("other")) // not held
	if got := judged(); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("judged %v, want [a b]", got)
	}
	if tb.HasPending() || tb.Busy() {
		t.Fatal("pending after Pending")
	}
	key := []byte("a")
	tb.Release(0, key, nil, 10) // counted at once
	if tb.Len() != 2 || tb.C.Released != 1 || !tb.Busy() {
		t.Fatalf("%d held, %+v, busy %v after a release", tb.Len(), tb.C, tb.Busy())
	}
	tb.Touch(0, key) // the report's own slice: skipped
	tb.Touch(0, []byte("b"))
	if got := judged(); fmt.Sprint(got) != "[b]" {
		t.Fatalf("judged %v with a report, want [b]", got)
	}
	tb.Counted()
	if tb.Busy() {
		t.Fatal("busy after Counted")
	}
	tb.Refuse(0, []byte("c"), 20) // a refusal changes nothing: no key skipped
	tb.Touch(0, []byte("c"))
	if got := judged(); fmt.Sprint(got) != "[c]" {
		t.Fatalf("judged %v after the report, want [c]", got)
	}
}

// A change no report explains is judged against the holder's token: kept
// as a copy up to maxTok bytes, as a digest beyond; the same value with a
// new expiry is an extension, another value an overwrite.
func TestTableJudgesTokens(t *testing.T) {
	for _, tok := range []string{"t", "0123456789012345678901234567890123456789", strings.Repeat("long-token:", 9)} {
		tb := New(1)
		acquire := func(key string) {
			tb.Apply(0, &Note{Kind: Acquired, Key: []byte(key), Token: []byte(tok), Deadline: 5000}, 0)
		}
		acquire("a")
		tb.Check(0, "a", 10, true, true, []byte(tok), 6000, false)
		if tb.C.Extended != 1 || tb.Len() != 1 {
			t.Fatalf("token %q: same value, new deadline: %+v", tok, tb.C)
		}
		for i, other := range []string{tok + "x", tok[:len(tok)-1], strings.Repeat("z", len(tok))} {
			acquire("a")
			tb.Check(0, "a", 20, true, true, []byte(other), 6000, false)
			if tb.C.Removed != int64(i+1) || tb.Len() != 0 {
				t.Fatalf("token %q overwritten by %q: %+v", tok, other, tb.C)
			}
		}
		acquire("b")
		if l := tb.Locks(); len(l) != 1 || l[0].Digest != xxh3.HashString(tok) {
			t.Fatalf("token %q: listed %+v", tok, l)
		}
	}
}

// Wait counts the acquisitions that found the key free as waits of 0,
// from the acquisitions: Reset starts both again.
func TestTableWaitCountsFreeAcquisitions(t *testing.T) {
	tb := New(1)
	for i := 0; i < 5; i++ {
		tb.Apply(0, &Note{Kind: Acquired, Key: []byte(fmt.Sprint("k", i)), Token: []byte("t")}, 100)
	}
	tb.Apply(0, &Note{Kind: Refused, Key: []byte("k0")}, 200)
	tb.Apply(0, &Note{Kind: Released, Key: []byte("k0")}, 300)
	tb.Apply(0, &Note{Kind: Acquired, Key: []byte("k0"), Token: []byte("t")}, 700) // waited 500 µs
	w := tb.Wait()
	if w.Count != 6 || w.Zeros != 5 || w.Counts[0] != 5 || w.SumUs != 500 || w.Counts[2] != 1 {
		t.Fatalf("wait %+v", w)
	}
	tb.Reset()
	tb.Apply(0, &Note{Kind: Acquired, Key: []byte("k9"), Token: []byte("t")}, 800)
	if w := tb.Wait(); w.Count != 1 || w.Zeros != 1 || w.SumUs != 0 {
		t.Fatalf("wait after Reset %+v", w)
	}
}

// A held lock's state is found from its keyspace entry (byEnt) without the
// key's lookup, through the table's growth; an entry the table does not
// know (a moved entry, a released lock's, a collision) falls back to the
// key, and a released lock's entry no longer finds its state.
func TestTableFindsHeldLocksByEntry(t *testing.T) {
	tb := New(2)
	const n = 1000
	ents := make([]*int64, n) // stand-ins for keyspace entries: distinct live addresses
	for i := range ents {
		ents[i] = new(int64)
		tb.Apply(i%2, &Note{Kind: Acquired, Key: []byte(fmt.Sprint("k", i)), Token: []byte("t"), Deadline: 1, Ent: unsafe.Pointer(ents[i])}, 0)
	}
	if len(tb.byEnt) < 2*n {
		t.Fatalf("byEnt has %d slots for %d locks", len(tb.byEnt), n)
	}
	found := 0
	for i, e := range ents {
		st := tb.byEntry(unsafe.Pointer(e))
		if st != nil {
			found++
			if st.key != fmt.Sprint("k", i) || st.db != i%2 || !st.held {
				t.Fatalf("entry %d found %d/%q held %v", i, st.db, st.key, st.held)
			}
		}
	}
	if found < n/2 { // a slot holds the last state put there: collisions miss
		t.Fatalf("found %d of %d locks by entry", found, n)
	}
	// a refusal and a release by entry count on the key's state
	tb.Apply(0, &Note{Kind: Refused, Key: []byte("k0"), Ent: unsafe.Pointer(ents[0])}, 10)
	moved := new(int64) // k2's entry moved (a value re-embedded): found by its key
	tb.Apply(0, &Note{Kind: Released, Key: []byte("k2"), Ent: unsafe.Pointer(moved)}, 20)
	tb.Apply(0, &Note{Kind: Released, Key: []byte("k0"), Ent: unsafe.Pointer(ents[0])}, 30)
	if tb.C.Contended != 1 || tb.C.Released != 2 || tb.Len() != n-2 {
		t.Fatalf("counters %+v, %d held", tb.C, tb.Len())
	}
	for _, k := range []string{"k0", "k2"} {
		if st := tb.lookup(0, []byte(k)); st == nil || st.held || st.ent != nil || st.Released != 1 {
			t.Fatalf("%s after release: %+v", k, st)
		}
	}
	if st := tb.byEntry(unsafe.Pointer(ents[0])); st != nil {
		t.Fatalf("a released lock's entry finds %q", st.key)
	}
	// taken again with a new entry: the old one finds nothing
	fresh := new(int64)
	tb.Apply(0, &Note{Kind: Acquired, Key: []byte("k0"), Token: []byte("t"), Deadline: 1, Ent: unsafe.Pointer(fresh)}, 40)
	if st := tb.byEntry(unsafe.Pointer(fresh)); st == nil || st.key != "k0" || st.Acquired != 2 {
		t.Fatalf("k0 taken again: %+v", st)
	}
}

// Keyspace entries of one size class lie a fixed stride apart (48 bytes for
// a lock key's): byEnt spreads them; Fibonacci hashing alone sent 16 of
// them to three slots (144, three strides, is a Fibonacci number).
func TestTableByEntrySpreadsStridedEntries(t *testing.T) {
	for _, stride := range []int{32, 48, 64, 80, 144} {
		tb := New(1)
		mem := make([]byte, 16*stride+8)
		for i := 0; i < 16; i++ {
			ent := unsafe.Pointer(&mem[i*stride])
			tb.Apply(0, &Note{Kind: Acquired, Key: []byte(fmt.Sprint("k", i)), Token: []byte("t"), Deadline: 1, Ent: ent}, 0)
		}
		found := 0
		for i := 0; i < 16; i++ {
			if tb.byEntry(unsafe.Pointer(&mem[i*stride])) != nil {
				found++
			}
		}
		if found < 11 { // 14 expected of a random spread
			t.Errorf("stride %d: %d of 16 held locks found by entry", stride, found)
		}
	}
}

// A state is four cache lines: the hot fields in the first, what a lookup
// compares in the second (one 128-byte pair), and the slabs start on a line.
func TestStateLayout(t *testing.T) {
	var st state
	if s := unsafe.Sizeof(st); s != 256 {
		t.Fatalf("state is %d bytes, want 256", s)
	}
	for name, off := range map[string]uintptr{"ent": unsafe.Offsetof(st.ent), "held": unsafe.Offsetof(st.held),
		"tokLen": unsafe.Offsetof(st.tokLen), "Contended": unsafe.Offsetof(st.Contended), "Released": unsafe.Offsetof(st.Released),
		"LastUs": unsafe.Offsetof(st.LastUs), "Refusals": unsafe.Offsetof(st.Refusals), "waitSince": unsafe.Offsetof(st.waitSince)} {
		if off >= 64 {
			t.Errorf("%s at %d: not in the first line", name, off)
		}
	}
	if a, b := unsafe.Offsetof(st.db), unsafe.Offsetof(st.keyArr)+keyInline; a/64 != 1 || (b-1)/64 != 1 {
		t.Errorf("db and the key in bytes %d..%d: not in the second line", a, b)
	}
	tb := New(1)
	for i := 0; i < 3; i++ {
		tb.Apply(0, &Note{Kind: Acquired, Key: []byte(fmt.Sprint("k", i)), Token: []byte("t")}, 0)
		if p := uintptr(unsafe.Pointer(tb.lookup(0, []byte(fmt.Sprint("k", i))))); p%128 != 0 {
			t.Errorf("state %d at %#x: not on a pair of lines", i, p)
		}
	}
}

// Rounds of many locks taken and released: past the free list states are
// let go, the table keeps what it may, and a released lock's entry left in
// byEnt finds nothing.
func TestTableLetsStatesGo(t *testing.T) {
	tb := New(1)
	const n = 3 * maxFree
	ents := make([]*int64, n)
	for round := 0; round < 3; round++ {
		for i := 0; i < n; i++ {
			ents[i] = new(int64)
			tb.Apply(0, &Note{Kind: Acquired, Key: []byte(fmt.Sprint(round, ":", i)), Token: []byte("t"), Deadline: 1, Ent: unsafe.Pointer(ents[i])}, 0)
		}
		if tb.Len() != n || len(tb.Locks()) != n {
			t.Fatalf("round %d: %d held, %d listed", round, tb.Len(), len(tb.Locks()))
		}
		for i := 0; i < n; i++ {
			tb.Apply(0, &Note{Kind: Released, Key: []byte(fmt.Sprint(round, ":", i)), Ent: unsafe.Pointer(ents[i])}, 0)
		}
		if tb.Len() != 0 || tb.Keys() > MaxKeys || len(tb.free) != maxFree {
			t.Fatalf("round %d: %d held, %d keys, %d free", round, tb.Len(), tb.Keys(), len(tb.free))
		}
		for _, e := range ents {
			if st := tb.byEntry(unsafe.Pointer(e)); st != nil {
				t.Fatalf("round %d: a released lock's entry finds %q", round, st.key)
			}
		}
	}
	if tb.C.Acquired != 3*n || tb.C.Released != 3*n {
		t.Fatalf("counters %+v", tb.C)
	}
}
