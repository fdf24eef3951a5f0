package locks

import (
	"fmt"
	"math/rand"
	"testing"
)

// The index against a Go map, through puts and deletions in random order,
// with hashes drawn from a few values so that probe runs collide, wrap
// around the end of the slots and are shifted back on deletion; it grows
// and shrinks on the way.
func TestIndexAgainstMap(t *testing.T) {
	for _, spread := range []uint64{3, 64, 1 << 40} {
		var x index
		want := map[string]*state{}
		rng := rand.New(rand.NewSource(int64(spread)))
		for step := 0; step < 20000; step++ {
			key := fmt.Sprint("k", rng.Intn(600))
			db := rng.Intn(2)
			id := fmt.Sprint(db, "/", key)
			if st, ok := want[id]; ok && rng.Intn(3) > 0 {
				x.del(st)
				delete(want, id)
			} else if !ok {
				st := &state{key: key, db: db, h: uint64(rng.Int63()) % spread}
				if spread == 1<<40 {
					st.h = hashKey([]byte(key))
				}
				x.put(st)
				want[id] = st
			}
			if step%500 == 0 || step > 19900 {
				if x.n != len(want) {
					t.Fatalf("spread %d step %d: %d entries, want %d", spread, step, x.n, len(want))
				}
				for _, st := range want {
					if got := x.get(st.db, []byte(st.key), st.h); got != st {
						t.Fatalf("spread %d step %d: %d/%q not found", spread, step, st.db, st.key)
					}
				}
				if got := x.get(0, []byte("absent"), 1); got != nil {
					t.Fatalf("absent key found")
				}
				seen := 0
				x.states(func(*state) { seen++ })
				if seen != len(want) {
					t.Fatalf("states %d, want %d", seen, len(want))
				}
			}
		}
		for _, st := range want {
			x.del(st)
		}
		if x.n != 0 || len(x.slots) > 64 {
			t.Fatalf("spread %d: emptied to %d entries in %d slots", spread, x.n, len(x.slots))
		}
	}
}

// hashKey spreads keys that differ in one byte, at every length and
// position, and the index's low bits of similar keys evenly.
func TestHashKeySpreads(t *testing.T) {
	seen := map[uint64]string{}
	for n := 0; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte('a' + i%26)
		}
		add := func(k []byte) {
			h := hashKey(k)
			if prev, ok := seen[h]; ok && prev != string(k) {
				t.Fatalf("hashKey(%q) == hashKey(%q)", k, prev)
			}
			seen[h] = string(k)
		}
		add(base)
		for i := 0; i < n; i++ {
			for _, bit := range []byte{1, 0x80} {
				k := append([]byte(nil), base...)
				k[i] ^= bit
				add(k)
			}
		}
	}
	const keys, buckets = 1 << 18, 1 << 12
	var count [buckets]int
	for i := 0; i < keys; i++ {
		count[hashKey([]byte(fmt.Sprintf("lock:%012d", i)))%buckets]++
	}
	for b, c := range count {
		// 64 expected: a bucket 3x off is a broken hash, not chance
		if c < 64/3 || c > 64*3 {
			t.Fatalf("bucket %d holds %d of %d keys, want about 64", b, c, keys)
		}
	}
}

// sameKey against the runtime's comparison, at every length around its
// word path and every byte position.
func TestSameKey(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i)
		}
		if !sameKey(string(a), a) {
			t.Fatalf("len %d: not equal to itself", n)
		}
		for i := 0; i < n; i++ {
			b := append([]byte(nil), a...)
			b[i] ^= 0x40
			if sameKey(string(a), b) {
				t.Fatalf("len %d: differs at %d, found equal", n, i)
			}
		}
		if sameKey(string(a), append(append([]byte(nil), a...), 'x')) || n > 0 && sameKey(string(a), a[:n-1]) {
			t.Fatalf("len %d: equal to a longer or shorter key", n)
		}
	}
}
