package lzf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestReusedTableCompressesAsAFreshOne: the table kept between calls gives
// the bytes a zeroed table gives, call after call, across a wrap of its
// base, and they decompress to the input.
func TestReusedTableCompressesAsAFreshOne(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	reused := new(table)
	for i := range 3000 {
		if i == 1500 {
			reused.base = math.MaxUint32 - 100 // the next calls wrap
		}
		in := make([]byte, 1+r.IntN(600))
		alphabet := 1 + r.IntN(20) // repetitive inputs compress
		for j := range in {
			in[j] = byte('a' + r.IntN(alphabet))
		}
		got := compress(reused, make([]byte, 0, 1000), in, len(in)-1)
		want := compress(new(table), nil, in, len(in)-1)
		if !bytes.Equal(got, want) {
			t.Fatalf("call %d: %q compressed to %x with the reused table, %x with a fresh one", i, in, got, want)
		}
		if got == nil {
			continue
		}
		out, err := Decompress(got, len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("call %d: round trip %q -> %q (%v)", i, in, out, err)
		}
	}
}

func BenchmarkCompress32(b *testing.B) {
	in := []byte("value:000000000000000000000042xx")
	b.ReportAllocs()
	for b.Loop() {
		Compress(in, len(in)-1)
	}
}
