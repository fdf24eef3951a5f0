package keyspace

import (
	"runtime"
	"strconv"
	"testing"
)

// Benchmarks of Dict against a Go map with the same semantics (a pointer-stable
// value slot per key: map[string]*V), side by side as sub-benchmarks:
//
//	go test -run '^$' -bench 'Dict' -benchmem ./internal/keyspace/

type benchVal struct {
	n   int64
	exp int64
	p   []byte
}

const benchKeys = 100_000

func benchKeySet() ([][]byte, []string) {
	kb, ks := make([][]byte, benchKeys), make([]string, benchKeys)
	for i := range kb {
		ks[i] = "key:" + strconv.Itoa(i*7919)
		kb[i] = []byte(ks[i])
	}
	return kb, ks
}

func benchFill() (*Dict[benchVal], map[string]*benchVal, [][]byte) {
	kb, ks := benchKeySet()
	d, m := NewDict[benchVal](1), make(map[string]*benchVal)
	for _, k := range ks {
		d.UpsertString(k)
		m[k] = &benchVal{}
	}
	dictFinishRehash(d)
	return d, m, kb
}

func BenchmarkDictGet(b *testing.B) {
	d, m, kb := benchFill()
	miss := make([][]byte, len(kb))
	for i := range miss {
		miss[i] = []byte("nokey:" + strconv.Itoa(i))
	}
	for _, c := range []struct {
		name string
		keys [][]byte
	}{{"hit", kb}, {"miss", miss}} {
		b.Run(c.name+"/dict", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				d.Get(c.keys[i])
				if i++; i == len(c.keys) {
					i = 0
				}
			}
		})
		b.Run(c.name+"/map", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = m[string(c.keys[i])]
				if i++; i == len(c.keys) {
					i = 0
				}
			}
		})
	}
}

func BenchmarkDictUpsertExisting(b *testing.B) {
	d, m, kb := benchFill()
	b.Run("dict", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			v, _ := d.Upsert(kb[i])
			v.n++
			if i++; i == len(kb) {
				i = 0
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			v := m[string(kb[i])]
			if v == nil {
				v = &benchVal{}
				m[string(kb[i])] = v
			}
			v.n++
			if i++; i == len(kb) {
				i = 0
			}
		}
	})
}

// BenchmarkDictInsert inserts new []byte keys, copying each, into a table that
// starts empty and grows (resizes included); per insert.
func BenchmarkDictInsert(b *testing.B) {
	kb, _ := benchKeySet()
	b.Run("dict", func(b *testing.B) {
		b.ReportAllocs()
		d := NewDict[benchVal](1)
		i := 0
		for b.Loop() {
			d.Upsert(kb[i])
			if i++; i == len(kb) {
				i = 0
				d = NewDict[benchVal](1)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		m := make(map[string]*benchVal)
		i := 0
		for b.Loop() {
			if m[string(kb[i])] == nil {
				m[string(kb[i])] = &benchVal{}
			}
			if i++; i == len(kb) {
				i = 0
				m = make(map[string]*benchVal)
			}
		}
	})
}

// BenchmarkDictDelete deletes the keys of a full table one by one (shrinks
// included), refilling it untimed once it is empty.
func BenchmarkDictDelete(b *testing.B) {
	d, m, kb := benchFill()
	_, ks := benchKeySet()
	b.Run("dict", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d.Delete(kb[i])
			if i++; i == len(kb) {
				i = 0
				b.StopTimer()
				for _, k := range ks {
					d.UpsertString(k)
				}
				dictFinishRehash(d)
				b.StartTimer()
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			delete(m, string(kb[i]))
			if i++; i == len(kb) {
				i = 0
				b.StopTimer()
				for _, k := range ks {
					m[k] = &benchVal{}
				}
				b.StartTimer()
			}
		}
	})
}

// BenchmarkDictMemory reports the heap bytes per key of a table of 1M keys whose
// key strings are already allocated (so only the table's own cost is counted):
// Dict[benchVal] against map[string]*benchVal.
func BenchmarkDictMemory(b *testing.B) {
	const n = 1 << 20
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
	}
	measure := func(b *testing.B, fill func() any) {
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			keep := fill()
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(keep)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
		}
	}
	b.Run("dict", func(b *testing.B) {
		measure(b, func() any {
			d := NewDict[benchVal](1)
			for _, k := range keys {
				d.UpsertString(k)
			}
			dictFinishRehash(d)
			return d
		})
	})
	b.Run("map", func(b *testing.B) {
		measure(b, func() any {
			m := make(map[string]*benchVal)
			for _, k := range keys {
				m[k] = &benchVal{}
			}
			return m
		})
	})
}
