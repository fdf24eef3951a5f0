package rdb

import (
	"fmt"
	"io"
	"testing"

	"github.com/hotkv/hotkv/internal/keyspace"
)

func BenchmarkStreamStrings(b *testing.B) {
	ks := keyspace.New(1, 1)
	for i := range 100000 {
		ks.DBs[0].SetString(fmt.Appendf(nil, "key:%d", i), fmt.Appendf(nil, "value-value-value-value-%08d", i), false)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := Write(io.Discard, ks, SaveInfo{Compress: true, Checksum: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/key")
}
