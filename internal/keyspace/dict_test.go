package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dictCheck verifies the structural invariants of d: power-of-two tables of at
// least 4 buckets, every entry in the bucket its hash selects, counts that match,
// an empty migrated prefix of the old table, and unique keys.
func dictCheck[V any](t testing.TB, d *Dict[V]) {
	t.Helper()
	if d.ht[0] == nil && (d.ht[1] != nil || d.Len() != 0) {
		t.Fatalf("no main table but ht[1]=%v len=%d", d.ht[1] != nil, d.Len())
	}
	if !d.Rehashing() && d.rehashIdx != 0 {
		t.Fatalf("rehashIdx=%d while not rehashing", d.rehashIdx)
	}
	seen := make(map[string]bool, d.Len())
	for ti, tab := range d.ht {
		if tab == nil {
			continue
		}
		if n := len(tab); n < dictMinSize || n&(n-1) != 0 {
			t.Fatalf("ht[%d] has %d buckets", ti, n)
		}
		count := 0
		for i, e := range tab {
			if ti == 0 && d.Rehashing() && i < d.rehashIdx && e != nil {
				t.Fatalf("migrated bucket %d of ht[0] is not empty (rehashIdx %d)", i, d.rehashIdx)
			}
			for ; e != nil; e = e.next {
				if want := int(d.hash(e.key()) & uint64(len(tab)-1)); want != i {
					t.Fatalf("key %q in ht[%d] bucket %d, hashes to %d", e.key(), ti, i, want)
				}
				if seen[e.key()] {
					t.Fatalf("key %q stored twice", e.key())
				}
				seen[e.key()] = true
				count++
			}
		}
		if count != d.used[ti] {
			t.Fatalf("ht[%d] holds %d entries, used says %d", ti, count, d.used[ti])
		}
	}
}

// dictContents returns d's entries via Range, failing on a repeat.
func dictContents(t testing.TB, d *Dict[int]) map[string]int {
	t.Helper()
	m := map[string]int{}
	d.Range(func(k string, v *int) bool {
		if _, dup := m[k]; dup {
			t.Fatalf("Range reported %q twice", k)
		}
		m[k] = *v
		return true
	})
	return m
}

func dictFinishRehash[V any](d *Dict[V]) {
	for d.RehashStep(100) {
	}
}

func TestDictBasic(t *testing.T) {
	d := NewDict[int](42)
	if _, ok := d.Get([]byte("a")); ok || d.Len() != 0 {
		t.Fatal("empty dict has a")
	}
	if _, ok := d.Delete([]byte("a")); ok {
		t.Fatal("deleted from empty dict")
	}
	v, existed := d.Upsert([]byte("a"))
	if existed || *v != 0 {
		t.Fatalf("first Upsert: existed=%v v=%d", existed, *v)
	}
	*v = 1
	v2, existed := d.UpsertString("a")
	if !existed || v2 != v || *v2 != 1 {
		t.Fatal("second Upsert did not return the same slot")
	}
	if got, ok := d.GetString("a"); !ok || got != v {
		t.Fatal("GetString")
	}
	if _, ok := d.Upsert(nil); ok {
		t.Fatal("empty key existed")
	}
	if _, ok := d.GetString(""); !ok || d.Len() != 2 {
		t.Fatal("empty key is a key like any other")
	}
	// Upsert must copy a []byte key: mutating the caller's buffer changes nothing.
	buf := []byte("key")
	*must(d.Upsert(buf)) = 7
	buf[0] = 'X'
	if k, ok := d.KeyOf([]byte("key")); !ok || k != "key" {
		t.Fatalf("KeyOf = %q, %v", k, ok)
	}
	if _, ok := d.Get(buf); ok {
		t.Fatal("found the mutated key")
	}
	if old, ok := d.Delete([]byte("key")); !ok || old != 7 {
		t.Fatalf("Delete = %d, %v", old, ok)
	}
	if old, ok := d.DeleteString("a"); !ok || old != 1 || d.Len() != 1 {
		t.Fatalf("DeleteString = %d, %v; len %d", old, ok, d.Len())
	}
	d.Clear()
	if d.Len() != 0 || d.Buckets() != 0 {
		t.Fatal("Clear")
	}
	var zero Dict[string] // the zero value works
	*must(zero.UpsertString("x")) = "y"
	if v, ok := zero.GetString("x"); !ok || *v != "y" {
		t.Fatal("zero Dict")
	}
}

func must[V any](v *V, _ bool) *V { return v }

// TestDictVersusMap runs long random operation sequences against a Go map, with
// phases that grow the dict to thousands of keys and shrink it back, so that every
// operation also runs mid-rehash in both directions.
func TestDictVersusMap(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			d := NewDict[int](rng.Uint64())
			m := map[string]int{}
			var live []string // m's keys, for picking keys to delete
			pos := map[string]int{}
			track := func(key string) {
				if _, ok := pos[key]; !ok {
					pos[key] = len(live)
					live = append(live, key)
				}
			}
			untrack := func(key string) {
				if i, ok := pos[key]; ok {
					last := live[len(live)-1]
					live[i], pos[last] = last, i
					live = live[:len(live)-1]
					delete(pos, key)
				}
			}
			var growing, shrinking int
			for step := range 90000 {
				target := []int{20, 3000, 50, 8000, 0, 400}[step/15000]
				key := "k" + strconv.Itoa(rng.IntN(target+10))
				insert := len(m) < target
				if !insert && len(live) > 0 && rng.IntN(10) != 0 {
					key = live[rng.IntN(len(live))]
				}
				switch op := rng.IntN(100); {
				case op < 35 && insert, op < 10:
					v, existed := d.Upsert([]byte(key))
					_, inMap := m[key]
					if existed != inMap {
						t.Fatalf("Upsert(%q) existed=%v, map has it %v", key, existed, inMap)
					}
					if existed && *v != m[key] {
						t.Fatalf("Upsert(%q) = %d, want %d", key, *v, m[key])
					}
					*v = step
					m[key] = step
					track(key)
				case op < 45:
					v, existed := d.UpsertString(key)
					if _, inMap := m[key]; existed != inMap {
						t.Fatalf("UpsertString(%q) existed=%v", key, existed)
					}
					*v = step
					m[key] = step
					track(key)
				case op < 65:
					v, ok := d.Get([]byte(key))
					want, inMap := m[key]
					if ok != inMap || ok && *v != want {
						t.Fatalf("Get(%q) = %v", key, ok)
					}
				case op < 95:
					old, ok := d.Delete([]byte(key))
					want, inMap := m[key]
					if ok != inMap || ok && old != want {
						t.Fatalf("Delete(%q) = %d, %v; want %d, %v", key, old, ok, want, inMap)
					}
					delete(m, key)
					untrack(key)
				case op < 97:
					d.RehashStep(1 + rng.IntN(3))
				case op < 99:
					if k, v, ok := d.Random(rng.Uint64); ok != (len(m) > 0) || ok && m[k] != *v {
						t.Fatalf("Random = %q, %v", k, ok)
					}
				default:
					d.Sample(5, rng.Uint64, func(k string, v *int) {
						if m[k] != *v {
							t.Fatalf("Sample reported %q=%d, map has %d", k, *v, m[k])
						}
					})
				}
				if d.Len() != len(m) {
					t.Fatalf("step %d: Len = %d, map has %d", step, d.Len(), len(m))
				}
				if d.Rehashing() && len(d.ht[1]) > len(d.ht[0]) {
					growing++
				} else if d.Rehashing() {
					shrinking++
				}
				if step%997 == 0 {
					dictCheck(t, d)
					if got := dictContents(t, d); !mapsEqual(got, m) {
						t.Fatalf("step %d: contents differ from map", step)
					}
				}
			}
			if growing == 0 || shrinking == 0 {
				t.Fatalf("sequence too tame: %d steps mid-grow, %d mid-shrink", growing, shrinking)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestDictResizePolicy(t *testing.T) {
	d := NewDict[int](1)
	for i := range 4 {
		d.UpsertString(strconv.Itoa(i))
	}
	if d.Buckets() != 4 || d.Rehashing() {
		t.Fatalf("4 keys: %d buckets, rehashing %v", d.Buckets(), d.Rehashing())
	}
	d.UpsertString("4") // used == buckets: grow on this insert
	if !d.Rehashing() || len(d.ht[1]) != 8 {
		t.Fatalf("5th key did not start a rehash to 8 buckets")
	}
	// Updating existing keys never grows the table.
	d2 := NewDict[int](1)
	for i := range 8 {
		d2.UpsertString(strconv.Itoa(i))
	}
	dictFinishRehash(d2)
	b := d2.Buckets()
	for range 3 {
		d2.UpsertString("3")
	}
	if d2.Buckets() != b || d2.Rehashing() {
		t.Fatal("an update resized the table")
	}
	// n keys fit in the smallest power of two >= n.
	d = NewDict[int](1)
	for i := range 1024 {
		d.UpsertString(strconv.Itoa(i))
	}
	dictFinishRehash(d)
	if d.Buckets() != 1024 {
		t.Fatalf("1024 keys: %d buckets", d.Buckets())
	}
	// Shrink when used*8 <= buckets, to the smallest power of two >= used.
	for i := 1023; i >= 129; i-- {
		d.DeleteString(strconv.Itoa(i))
		dictFinishRehash(d)
	}
	if d.Buckets() != 1024 {
		t.Fatalf("129 keys: %d buckets, want still 1024", d.Buckets())
	}
	d.DeleteString("128")
	if !d.Rehashing() || len(d.ht[1]) != 128 {
		t.Fatalf("128 keys: want a rehash to 128 buckets")
	}
	dictFinishRehash(d)
	for i := range 128 {
		d.DeleteString(strconv.Itoa(i))
		dictFinishRehash(d)
	}
	if d.Len() != 0 || d.Buckets() != dictMinSize {
		t.Fatalf("empty: %d buckets, want %d", d.Buckets(), dictMinSize)
	}
	// Expand pre-sizes.
	d = NewDict[int](1)
	if !d.Expand(1000) || d.Buckets() != 1024 {
		t.Fatalf("Expand(1000): %d buckets", d.Buckets())
	}
	if d.Expand(10) {
		t.Fatal("Expand shrank")
	}
}

func TestDictRehashMicroseconds(t *testing.T) {
	d := NewDict[int](3)
	for i := range 100000 {
		d.UpsertString(strconv.Itoa(i))
	}
	if !d.Rehashing() {
		d.UpsertString("x") // 100000 keys: a rehash is running or about to
	}
	now := int64(0)
	clock := func() int64 { now += 10; return now } // every reading advances 10µs
	steps := d.RehashMicroseconds(25, clock)
	if steps != 300 {
		t.Fatalf("25µs budget with 10µs per batch: %d steps, want 300", steps)
	}
	for d.RehashMicroseconds(1000, clock) > 0 {
	}
	if d.Rehashing() {
		t.Fatal("still rehashing")
	}
	dictCheck(t, d)
}

// TestDictScanGuarantee checks SCAN's guarantee hard: keys present for the whole
// iteration are all reported, while between calls other keys are inserted and
// deleted in bursts that grow the table many times over and shrink it back, and
// rehashing is advanced by lookups, by RehashStep, or not at all.
func TestDictScanGuarantee(t *testing.T) {
	var calls, growing, shrinking int
	seeds := uint64(150)
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 7))
		d := NewDict[int](rng.Uint64())
		stable := make([]string, rng.IntN(300))
		for i := range stable {
			stable[i] = "s" + strconv.Itoa(i)
			d.UpsertString(stable[i])
		}
		ever := map[string]bool{}
		var volatile []string
		next := 0
		insert := func(n int) {
			for range n {
				k := "v" + strconv.Itoa(next)
				next++
				d.UpsertString(k)
				ever[k] = true
				volatile = append(volatile, k)
			}
		}
		remove := func(n int) {
			for ; n > 0 && len(volatile) > 0; n-- {
				i := rng.IntN(len(volatile))
				d.DeleteString(volatile[i])
				volatile[i] = volatile[len(volatile)-1]
				volatile = volatile[:len(volatile)-1]
			}
		}
		insert(rng.IntN(500))
		dictFinishRehash(d)
		deleteInCallback := seed%3 == 0
		seen := map[string]bool{}
		cursor := uint64(0)
		for first := true; first || cursor != 0; first = false {
			calls++
			if d.Rehashing() {
				if len(d.ht[1]) > len(d.ht[0]) {
					growing++
				} else {
					shrinking++
				}
			}
			cursor = d.Scan(cursor, func(k string, v *int) {
				if k[0] == 's' {
					seen[k] = true
				} else if !ever[k] {
					t.Fatalf("Scan reported %q, never inserted", k)
				} else if deleteInCallback && rng.IntN(4) == 0 {
					d.DeleteString(k) // active-expire style: delete the visited entry
					d.GetString(k)    // and look it up: no rehash while paused
				}
			})
			switch rng.IntN(10) {
			case 0, 1: // burst of inserts: the table grows
				insert(min(rng.IntN(4*(d.Len()+8)), 3000-d.Len()))
			case 2, 3: // burst of deletes: the table shrinks
				remove(len(volatile) - rng.IntN(len(volatile)/8+1))
			case 4:
				insert(rng.IntN(20))
				remove(rng.IntN(20))
			case 5:
				d.RehashStep(rng.IntN(50))
			case 6: // lookups drive the rehash
				for range rng.IntN(100) {
					d.GetString("s" + strconv.Itoa(rng.IntN(len(stable)+1)))
				}
			default: // leave the dict alone
			}
		}
		for _, k := range stable {
			if !seen[k] {
				t.Fatalf("seed %d: Scan missed %q", seed, k)
			}
		}
		dictCheck(t, d)
	}
	if growing == 0 || shrinking == 0 {
		t.Fatalf("no Scan call saw a rehash in both directions (grow %d, shrink %d, calls %d)", growing, shrinking, calls)
	}
	t.Logf("%d Scan calls, %d while growing, %d while shrinking", calls, growing, shrinking)
}

// TestDictScanExactlyOnce: with no modification between calls a full scan reports
// every entry exactly once, whether or not the dict is mid-rehash.
func TestDictScanExactlyOnce(t *testing.T) {
	for _, n := range []int{0, 1, 3, 100, 1000, 5000} {
		for _, mode := range []string{"stable", "growing", "shrinking"} {
			d := NewDict[int](uint64(n))
			for i := range n {
				d.UpsertString(strconv.Itoa(i))
			}
			dictFinishRehash(d)
			switch mode {
			case "growing":
				d.Expand(4 * n)
			case "shrinking":
				d = NewDict[int](uint64(n))
				d.Expand(16 * n)
				for i := range n {
					d.UpsertString(strconv.Itoa(i))
				}
				d.resize(n)
			}
			for range 3 {
				d.RehashStep(1)
			}
			if mode != "stable" && n < 100 {
				continue
			}
			if mode != "stable" && !d.Rehashing() {
				t.Fatalf("n=%d %s: not rehashing", n, mode)
			}
			count := map[string]int{}
			cursor := uint64(0)
			for first := true; first || cursor != 0; first = false {
				cursor = d.Scan(cursor, func(k string, _ *int) { count[k]++ })
			}
			if len(count) != d.Len() {
				t.Fatalf("n=%d %s: scanned %d keys of %d", n, mode, len(count), d.Len())
			}
			for k, c := range count {
				if c != 1 {
					t.Fatalf("n=%d %s: %q reported %d times", n, mode, k, c)
				}
			}
		}
	}
}

func TestDictPointerStability(t *testing.T) {
	d := NewDict[[2]int](5)
	ptrs := map[string]*[2]int{}
	for i := range 1000 {
		k := "p" + strconv.Itoa(i)
		v, _ := d.UpsertString(k)
		*v = [2]int{i, -i}
		ptrs[k] = v
	}
	for i := range 20000 { // grow several times, partly rehashed by these inserts
		d.UpsertString("q" + strconv.Itoa(i))
	}
	for i := range 20000 { // and shrink back
		d.DeleteString("q" + strconv.Itoa(i))
	}
	dictFinishRehash(d)
	if d.Buckets() >= dictMinFill*d.Len() {
		t.Fatalf("did not shrink: %d buckets", d.Buckets())
	}
	for k, p := range ptrs {
		v, ok := d.GetString(k)
		if !ok || v != p {
			t.Fatalf("%q moved: %p -> %p", k, p, v)
		}
		if i, _ := strconv.Atoi(k[1:]); *v != [2]int{i, -i} {
			t.Fatalf("%q = %v", k, *v)
		}
	}
}

func TestDictRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := NewDict[int](9)
	if _, _, ok := d.Random(rng.Uint64); ok {
		t.Fatal("Random on empty dict")
	}
	d.UpsertString("only")
	if k, _, ok := d.Random(rng.Uint64); !ok || k != "only" {
		t.Fatal("Random on one key")
	}
	d.DeleteString("only")
	if _, _, ok := d.Random(rng.Uint64); ok {
		t.Fatal("Random after deleting the only key")
	}
	const n, draws = 200, 200000
	for i := range n {
		*must(d.UpsertString(strconv.Itoa(i))) = i
	}
	for _, rehash := range []bool{false, true} {
		if rehash {
			d.Expand(4096)
			d.RehashStep(5)
		}
		hits := make([]int, n)
		for range draws {
			k, v, ok := d.Random(rng.Uint64)
			if !ok || strconv.Itoa(*v) != k {
				t.Fatalf("Random = %q, %d", k, *v)
			}
			hits[*v]++
		}
		// dictGetFairRandomKey is only roughly fair: entries just after a run of
		// empty buckets are likelier picks. Check for gross skew only.
		lo, hi := slices.Min(hits), slices.Max(hits)
		if lo < draws/n/3 || hi > draws/n*3 {
			t.Fatalf("rehash=%v: skewed: least %d, most %d, mean %d", rehash, lo, hi, draws/n)
		}
		t.Logf("rehash=%v: least picked %d, most %d, mean %d", rehash, lo, hi, draws/n)
	}
	// A degenerate source still terminates with a valid entry.
	zero := func() uint64 { return 0 }
	for range 10 {
		if k, v, ok := d.Random(zero); !ok || strconv.Itoa(*v) != k {
			t.Fatal("Random with a constant source")
		}
	}
	d2 := NewDict[int](9)
	d2.Expand(1 << 14)
	d2.UpsertString("needle")
	if k, _, _ := d2.Random(zero); k != "needle" {
		t.Fatal("Random with a constant source in a sparse table")
	}
}

func TestDictSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := NewDict[int](11)
	if d.Sample(5, rng.Uint64, func(string, *int) { t.Fatal("sampled an empty dict") }) != 0 {
		t.Fatal("Sample on empty dict")
	}
	const n = 1000
	for i := range n {
		*must(d.UpsertString(strconv.Itoa(i))) = i
	}
	hits := make([]int, n)
	for _, want := range []int{1, 5, 16, 64, 200} {
		for range 2000 {
			got := map[string]bool{}
			c := d.Sample(want, rng.Uint64, func(k string, v *int) {
				if got[k] || strconv.Itoa(*v) != k {
					t.Fatalf("Sample reported %q (value %d) twice or wrong", k, *v)
				}
				got[k] = true
				hits[*v]++
			})
			if c != len(got) || c > want || c == 0 {
				t.Fatalf("Sample(%d) = %d, reported %d", want, c, len(got))
			}
		}
	}
	if slices.Min(hits) == 0 {
		t.Fatal("some key was never sampled")
	}
	// Small dict: asking for more than Len gives every entry once.
	small := NewDict[int](1)
	for i := range 3 {
		small.UpsertString(strconv.Itoa(i))
	}
	if c := small.Sample(10, rng.Uint64, func(string, *int) {}); c != 3 {
		t.Fatalf("Sample(10) of 3 = %d", c)
	}
	// Deleting the sampled entry in the callback (eviction) is allowed.
	for d.Len() > 0 {
		d.Sample(7, rng.Uint64, func(k string, _ *int) {
			if _, ok := d.DeleteString(k); !ok {
				t.Fatalf("sampled %q was not there", k)
			}
		})
	}
	dictCheck(t, d)
}

func TestDictRangeDelete(t *testing.T) {
	d := NewDict[int](2)
	for i := range 3000 {
		d.UpsertString(strconv.Itoa(i))
	}
	d.RehashStep(3) // mid-rehash
	n := 0
	d.Range(func(k string, _ *int) bool {
		n++
		d.DeleteString(k) // deleting the current entry is allowed
		return true
	})
	if n != 3000 || d.Len() != 0 {
		t.Fatalf("visited %d, left %d", n, d.Len())
	}
	dictCheck(t, d)
	dictFinishRehash(d)
	// The table emptied while growing: the cron shrinks it.
	for d.RehashMicroseconds(1000, func() int64 { return 0 }) > 0 {
	}
	if d.Buckets() != dictMinSize {
		t.Fatalf("%d buckets after emptying", d.Buckets())
	}
	d.UpsertString("a")
	d.UpsertString("b")
	n = 0
	d.Range(func(string, *int) bool { n++; return false })
	if n != 1 {
		t.Fatal("Range did not stop")
	}
}

func TestDictNoAlloc(t *testing.T) {
	d := NewDict[int](7)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
		d.Upsert(keys[i])
	}
	d.Expand(4096)
	d.RehashStep(10) // measure mid-rehash too: rehash steps must not allocate
	rng := rand.New(rand.NewPCG(1, 1))
	miss := []byte("absent")
	n := 0
	cursor := uint64(0)
	fn := func(string, *int) { n++ }
	allocs := testing.AllocsPerRun(200, func() {
		for _, k := range keys[:100] {
			if v, ok := d.Get(k); ok {
				*v++
			}
			*must(d.Upsert(k)) += 1
			d.KeyOf(k)
		}
		d.GetString("key:5")
		d.Get(miss)
		d.Delete(miss)
		cursor = d.Scan(cursor, fn)
		d.Random(rng.Uint64)
		d.Sample(16, rng.Uint64, fn)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
}

// FuzzDict interprets its input as a sequence of operations on a small key space
// and checks them against a Go map.
func FuzzDict(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 1, 4, 0})
	f.Add([]byte("\x00a\x00b\x00c\x00d\x00e\x00f\x01a\x02b\x03\x00\x05x\x06\x07"))
	f.Add([]byte{2, 55, 5, 55, 0, 55, 2, 40, 5, 40, 1, 56, 6, 3, 3, 200, 5, 55}) // long keys
	f.Fuzz(func(t *testing.T, ops []byte) {
		d := NewDict[int](uint64(len(ops)))
		m := map[string]int{}
		rng := rand.New(rand.NewPCG(uint64(len(ops)), 0))
		cursor, scanning := uint64(0), false
		present := map[string]bool{} // keys present since the scan began
		seen := map[string]bool{}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%9, ops[i+1]
			// 0 to 299 bytes: entries of every tail length, and keys
			// too long to be inline
			key := strconv.Itoa(int(arg)) + strings.Repeat("k", int(arg)*5%300)
			switch op {
			case 0, 1: // insert a run of keys, to grow
				for j := range int(arg%64) + 1 {
					k := key + "." + strconv.Itoa(j)
					*must(d.UpsertString(k)) = i
					m[k] = i
				}
			case 2:
				v, existed := d.Upsert([]byte(key))
				if _, ok := m[key]; ok != existed {
					t.Fatalf("Upsert(%q) existed=%v", key, existed)
				}
				*v = i
				m[key] = i
			case 3, 4: // delete a run of keys, to shrink
				for k := range m {
					if arg == 0 {
						break
					}
					arg--
					if _, ok := d.DeleteString(k); !ok {
						t.Fatalf("Delete(%q) missed", k)
					}
					delete(m, k)
					delete(present, k)
				}
			case 5:
				v, ok := d.GetString(key)
				if w, in := m[key]; ok != in || ok && *v != w {
					t.Fatalf("Get(%q)", key)
				}
			case 6:
				d.RehashStep(int(arg % 8))
			case 7:
				if !scanning {
					scanning, cursor = true, 0
					clear(present)
					clear(seen)
					for k := range m {
						present[k] = true
					}
				}
				cursor = d.Scan(cursor, func(k string, _ *int) { seen[k] = true })
				if cursor == 0 {
					scanning = false
					for k := range present {
						if !seen[k] {
							t.Fatalf("Scan missed %q", k)
						}
					}
				}
			case 8:
				if k, v, ok := d.Random(rng.Uint64); ok != (len(m) > 0) || ok && *v != m[k] {
					t.Fatalf("Random = %q", k)
				}
			}
			if d.Len() != len(m) {
				t.Fatalf("Len = %d, want %d", d.Len(), len(m))
			}
		}
		dictCheck(t, d)
		if got := dictContents(t, d); !mapsEqual(got, m) {
			t.Fatal("contents differ from map")
		}
	})
}

// A database's key table asks before it doubles (dictExpandAllowed): while
// the new table would take used memory over maxmemory it stays, until it
// holds more than 1.618 keys a bucket.
func TestKeyTableExpandAllowed(t *testing.T) {
	ks := New(1, 1)
	db := ks.DBs[0]
	var asked []int
	// over maxmemory from a 64 KiB allocation on: the 8192-bucket table
	ks.OverMaxmemoryAfterAlloc = func(more int) bool { asked = append(asked, more); return more >= 64<<10 }
	for i := range 5000 { // 1.22 keys a bucket of 4096
		db.SetString(fmt.Appendf(nil, "k%d", i), []byte("v"), false)
	}
	if n0, n1 := len(db.dict.ht[0]), len(db.dict.ht[1]); max(n0, n1) != 4096 {
		t.Fatalf("5000 keys over maxmemory: tables of %d and %d buckets, want 4096 at most", n0, n1)
	}
	if len(asked) == 0 || asked[len(asked)-1] != 8192*8 {
		t.Fatalf("asked %v, want the 8192-bucket table's 65536 bytes last", asked)
	}
	for i := 5000; i < 6700; i++ { // past 1.618 keys a bucket it grows anyway
		db.SetString(fmt.Appendf(nil, "k%d", i), []byte("v"), false)
	}
	if n0, n1 := len(db.dict.ht[0]), len(db.dict.ht[1]); max(n0, n1) < 8192 {
		t.Fatalf("6700 keys: tables of %d and %d buckets, want one doubled past the load factor", n0, n1)
	}
	// a table under the limit grows as usual
	ks2 := New(1, 1)
	ks2.OverMaxmemoryAfterAlloc = func(int) bool { return false }
	for i := range 5000 {
		ks2.DBs[0].SetString(fmt.Appendf(nil, "k%d", i), []byte("v"), false)
	}
	if d := ks2.DBs[0].dict; max(len(d.ht[0]), len(d.ht[1])) < 8192 {
		t.Fatalf("under maxmemory: tables of %d and %d buckets after 5000 keys", len(d.ht[0]), len(d.ht[1]))
	}
}

// A collection's table ends a rehash within an eighth of the inserts that
// doubled it (collectionRehash), where a key table, rehashed by the cron,
// moves one bucket per operation; both keep every key.
func TestDictInsertRehash(t *testing.T) {
	for _, c := range []struct {
		steps   int
		wantEnd bool
	}{{collectionRehash, true}, {0, false}} {
		d := &Dict[int]{seed: 7, insertRehash: c.steps}
		key := func(i int) []byte { return []byte("field:" + strconv.Itoa(i)) }
		const n = 1 << 14
		for i := range n {
			*must(d.Upsert(key(i))) = i
		}
		if d.Rehashing() {
			t.Fatalf("steps %d: rehashing at %d keys", c.steps, n)
		}
		*must(d.Upsert(key(n))) = n // doubles the table
		if !d.Rehashing() {
			t.Fatalf("steps %d: no rehash after the table filled", c.steps)
		}
		for i := n + 1; i <= n+n/8+1; i++ {
			*must(d.Upsert(key(i))) = i
		}
		if d.Rehashing() == c.wantEnd {
			t.Errorf("steps %d: rehashing %v an eighth of the way on", c.steps, d.Rehashing())
		}
		for i := 0; i <= n+n/8+1; i++ {
			if v, ok := d.Get(key(i)); !ok || *v != i {
				t.Fatalf("steps %d: key %d lost", c.steps, i)
			}
		}
	}
}
