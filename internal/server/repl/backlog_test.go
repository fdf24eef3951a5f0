package repl

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The backlog against a plain copy of the whole stream: every offset it
// claims to hold gives the stream's bytes from there.
func TestBacklogHoldsTheStreamTail(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{16, 100, 4096} {
		b := NewBacklog(size, 1000)
		var all []byte // the stream from offset 1001
		for i := 0; i < 500; i++ {
			p := make([]byte, r.IntN(size*2))
			for j := range p {
				p[j] = byte(r.Uint32())
			}
			b.Append(p)
			all = append(all, p...)
			if b.end != 1000+int64(len(all)) || b.Histlen() != min(len(all), size) {
				t.Fatalf("end %d histlen %d after %d bytes", b.end, b.Histlen(), len(all))
			}
			for _, off := range []int64{b.First(), b.First() + int64(r.IntN(b.Histlen()+1)), b.end + 1} {
				got, ok := b.From(off)
				if !ok || !bytes.Equal(got, all[off-1001:]) {
					t.Fatalf("size %d: From(%d) = %v, %d bytes", size, off, ok, len(got))
				}
			}
			if _, ok := b.From(b.First() - 1); ok && b.First() > 1001 {
				t.Fatal("an offset before the backlog was served")
			}
			if _, ok := b.From(b.end + 2); ok {
				t.Fatal("an offset past the end was served")
			}
		}
		b.Resize(size / 2)
		got, _ := b.From(b.First())
		if b.Histlen() != min(len(all), max(size/2, 16)) || !bytes.Equal(got, all[len(all)-b.Histlen():]) {
			t.Fatalf("after Resize: histlen %d", b.Histlen())
		}
	}
}
