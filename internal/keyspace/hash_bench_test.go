package keyspace

import (
	"strconv"
	"testing"
)

// The hashtable encoding's hot paths, on a table of 100k 13-byte fields and
// values (redis-benchmark's and the big-hash measurement's shape).

func benchHashtable(b *testing.B, n int) (*hashObj, [][]byte) {
	o := HashOpts{MaxEntries: 128, MaxValue: 64, Seed: 1}
	h := &hashObj{}
	fields := make([][]byte, n)
	for i := range n {
		fields[i] = []byte("field:" + strconv.Itoa(1000000+i))
		h.Set(fields[i], []byte("value:"+strconv.Itoa(1000000+i)), false, o)
	}
	b.ResetTimer()
	return h, fields
}

func BenchmarkHashtableGet(b *testing.B) {
	h, fields := benchHashtable(b, 100_000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, ok := h.Get(fields[i%len(fields)]); !ok {
			b.Fatal("missing")
		}
	}
}

func BenchmarkHashtableUpdate(b *testing.B) {
	o := HashOpts{MaxEntries: 128, MaxValue: 64, Seed: 1}
	h, fields := benchHashtable(b, 100_000)
	v := []byte("value:2000000")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Set(fields[i%len(fields)], v, false, o)
	}
}

func BenchmarkHashtableInsert(b *testing.B) {
	o := HashOpts{MaxEntries: 128, MaxValue: 64, Seed: 1}
	h, _ := benchHashtable(b, 0)
	f, v := []byte("field:0000000"), []byte("value:0000000")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x := i
		for j := 12; j >= 6; j-- {
			f[j] = byte('0' + x%10)
			x /= 10
		}
		if i%10_000_000 == 0 {
			h = &hashObj{}
		}
		h.Set(f, v, false, o)
	}
}
