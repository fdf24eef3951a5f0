package locks

import (
	"strconv"
	"testing"
	"unsafe"
)

// BenchmarkCycle is the lock view's share of a lock cycle on one key: an
// acquisition (its report, the keyspace's change, the count) and a release
// by token, as call and the keyspace's hooks drive the table.
func BenchmarkCycle(b *testing.B) {
	t := New(16)
	key, tok := []byte("lock:billing-run"), []byte("tok-a81f0c2e9d47")
	ent := unsafe.Pointer(new([6]uint64)) // the key's keyspace entry
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		now := int64(i) * 10
		t.Acquire(0, key, tok, 30000, now)
		t.Touch(0, key)
		t.Entry(ent)
		t.Counted()
		t.Release(0, key, ent, now+5)
		t.Touch(0, key)
		t.Counted()
	}
}

// BenchmarkAcquireManyKeys attempts acquisitions over 100,000 held keys at
// random, most of them refused: the table's map and its cache misses.
func BenchmarkAcquireManyKeys(b *testing.B) {
	t := New(16)
	const n = 100000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("lock:" + strconv.Itoa(i))
	}
	tok := []byte("tok-a81f0c2e9d47")
	for i, k := range keys {
		t.Apply(0, &Note{Kind: Acquired, Key: k, Token: tok, Deadline: 30000}, int64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	x := uint64(88172645463325252)
	for i := 0; i < b.N; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		k := keys[x%n]
		kind := Refused // mostly refused: the keys are held
		if i%8 == 0 {
			kind = Acquired
		}
		t.Apply(0, &Note{Kind: kind, Key: k, Token: tok, Deadline: 30000}, int64(i))
	}
}
