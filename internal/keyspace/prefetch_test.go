package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Prefetch is a hint: whatever it is given, in whatever state the table is,
// it changes nothing (not even a rehash step) and lookups find what they did.
func TestPrefetchChangesNothing(t *testing.T) {
	ks := New(1, 42)
	db := ks.DBs[0]
	db.Prefetch([]PrefetchReq{{Key: []byte("a")}, {}}) // empty table
	db.Prefetch(nil)
	var keys [][]byte
	for i := 0; !db.dict.Rehashing() || i < 40; i++ {
		k := []byte("k:" + strconv.Itoa(i))
		keys = append(keys, k)
		if i%3 == 0 {
			db.SetString(k, []byte("v"+strconv.Itoa(i)), false)
		} else {
			db.SetString(k, nil, false) // no value bytes: a nil pointer
		}
	}
	if !db.dict.Rehashing() {
		t.Fatal("want the table mid-rehash")
	}
	idx, used := db.dict.rehashIdx, db.dict.used
	probe := []PrefetchReq{{Key: []byte("missing")}, {}}
	for _, k := range keys {
		probe = append(probe, PrefetchReq{Key: k, Arg2: k, Last: k})
	}
	for i := 0; i < len(probe); i += 5 {
		db.Prefetch(probe[i:])
	}
	if db.dict.rehashIdx != idx || db.dict.used != used {
		t.Fatalf("Prefetch moved the rehash: idx %d -> %d, used %v -> %v", idx, db.dict.rehashIdx, used, db.dict.used)
	}
	for i, k := range keys {
		e := db.Peek(k)
		if e == nil {
			t.Fatalf("%s lost", k)
		}
		if i%3 == 0 && string(e.Bytes()) != "v"+strconv.Itoa(i) {
			t.Fatalf("%s = %q", k, e.Bytes())
		}
	}
}

// The member pass: hashes, sets and sorted sets in their hashtable encodings,
// with members present, absent, empty or not given, are left as they were.
func TestPrefetchMembersChangesNothing(t *testing.T) {
	ks := New(1, 42)
	db := ks.DBs[0]
	var members [][]byte
	var fields []HashField
	var zents []ZEntry
	for i := range 300 {
		m := []byte("m:" + strconv.Itoa(i))
		members = append(members, m)
		fields = append(fields, HashField{F: m, V: m})
		zents = append(zents, ZEntry{Member: m, Score: float64(i)})
	}
	db.SetObject([]byte("s"), KindSet, ks.NewHashtableSetOf(members))
	db.SetObject([]byte("h"), KindHash, NewHashtableHashOf(fields, HashOpts{Seed: 3}))
	db.SetObject([]byte("z"), KindZSet, ks.NewZSetSorted(zents, ZLimits{Entries: 128, Value: 64}))
	db.SetObject([]byte("small"), KindSet, ks.NewListpackSetOf(members[:3]))
	db.SetString([]byte("str"), []byte("v"), false)
	var reqs []PrefetchReq
	for _, k := range []string{"s", "h", "z", "small", "str", "none"} {
		for _, m := range [][]byte{members[7], []byte("absent"), {}, nil} {
			reqs = append(reqs, PrefetchReq{Key: []byte(k), Arg2: m, Last: m})
		}
	}
	for i := 0; i < len(reqs); i += 3 {
		db.Prefetch(reqs[i:])
	}
	s, h, z := db.Peek([]byte("s")).Obj().(*Set), db.Peek([]byte("h")).Obj().(*Hash), db.Peek([]byte("z")).Obj().(*ZSet)
	if s.SetEnc() != SetHashtable || h.boxed() == nil || h.boxed().enc != encHashtable || z.boxed() == nil {
		t.Fatal("want the hashtable encodings")
	}
	for i, m := range members {
		v, _, ok := h.Get(m)
		sc, zok := z.Score(m)
		if !s.Has(m) || !ok || string(v) != string(m) || !zok || sc != float64(i) {
			t.Fatalf("member %s changed", m)
		}
	}
	if s.Len() != 300 || h.Len() != 300 || z.Len() != 300 || db.Len() != 5 {
		t.Fatal("lengths changed")
	}
}

// slot names the bucket a lookup starts from: every key present before a
// resize began is on the chain of its slot, wherever the rehash has got to.
func TestDictSlotMidRehash(t *testing.T) {
	d := NewDict[int](7)
	var keys []string
	for i := 0; ; i++ {
		k := "key:" + strconv.Itoa(i)
		d.UpsertString(k)
		if d.Rehashing() {
			break // k went to the new table: not one of the keys checked
		}
		keys = append(keys, k)
	}
	for step := 0; d.Rehashing(); step++ {
		for _, k := range keys {
			found := false
			for e := *d.slot(d.hash(k)); e != nil; e = e.next {
				found = found || e.key() == k
			}
			if !found {
				t.Fatalf("step %d: %s not on its slot's chain", step, k)
			}
		}
		d.RehashStep(1)
	}
}

// BenchmarkLookupBatch: 16 lookups of random keys among 1M, as a pipeline of
// 16 GETs makes them, with and without Prefetch first (ns per batch):
//
//	go test -run '^$' -bench LookupBatch -benchmem ./internal/keyspace/
func BenchmarkLookupBatch(b *testing.B) {
	ks := New(1, 1)
	db := ks.DBs[0]
	const n = 1 << 20
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i*7919))
		db.SetString(keys[i], []byte("0123456789abcdef0123456789abcdef"), false)
	}
	for db.dict.RehashStep(1000) {
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	batch := make([]PrefetchReq, PrefetchMax)
	for _, pf := range []bool{false, true} {
		b.Run("prefetch="+strconv.FormatBool(pf), func(b *testing.B) {
			var sum int
			for b.Loop() {
				for j := range batch {
					batch[j].Key = keys[rnd.IntN(n)]
				}
				if pf {
					db.Prefetch(batch)
				}
				for _, r := range batch {
					if e := db.Lookup(r.Key); e != nil {
						sum += int(e.Bytes()[0])
					}
				}
			}
			if sum == 0 {
				b.Fatal("no key found")
			}
		})
	}
}

// PrefetchWorth: yes for a large database or a key holding a large
// collection, no for small data, and no rehash step either way.
func TestPrefetchWorth(t *testing.T) {
	ks := New(1, 42)
	db := ks.DBs[0]
	db.SetString([]byte("str"), []byte("v"), false)
	var members [][]byte
	for i := range PrefetchMinKeys {
		members = append(members, []byte("m:"+strconv.Itoa(i)))
	}
	db.SetObject([]byte("big"), KindSet, ks.NewHashtableSetOf(members))
	db.SetObject([]byte("small"), KindSet, ks.NewHashtableSetOf(members[:200]))
	for k, want := range map[string]bool{"str": false, "big": true, "small": false, "none": false} {
		if got := db.PrefetchWorth([]byte(k)); got != want {
			t.Errorf("PrefetchWorth(%s) = %v with %d keys", k, got, db.Len())
		}
	}
	for i := 0; db.Len() < PrefetchMinKeys; i++ {
		db.SetString([]byte("k:"+strconv.Itoa(i)), nil, false)
	}
	idx := db.dict.rehashIdx
	if !db.PrefetchWorth([]byte("str")) || !db.PrefetchWorth([]byte("none")) {
		t.Errorf("PrefetchWorth false with %d keys", db.Len())
	}
	if db.dict.rehashIdx != idx {
		t.Error("PrefetchWorth took a rehash step")
	}
}
