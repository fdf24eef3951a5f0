package keyspace

import (
	"math/rand/v2"
	"testing"
)

// expIndex against a plain slice with the same swap-removes.
func TestExpIndexModel(t *testing.T) {
	var x expIndex
	var model []int64
	r := rand.New(rand.NewPCG(1, 2))
	for step := range 200_000 {
		if len(model) == 0 || r.IntN(100) < 55-step/4000 { // grow, then shrink
			model = append(model, int64(step))
			if pos := x.push(expItem{at: int64(step)}); int(pos) != len(model) {
				t.Fatalf("push position %d, want %d", pos, len(model))
			}
		} else {
			i := r.IntN(len(model))
			last := len(model) - 1
			model[i] = model[last]
			model = model[:last]
			moved := x.remove(i)
			if (moved == nil) != (i == last) || (moved != nil && moved.at != model[i]) {
				t.Fatalf("step %d: remove(%d) moved %v", step, i, moved)
			}
		}
		if x.len() != len(model) || len(x.chunks) > len(model)/expChunk+2 {
			t.Fatalf("step %d: len %d (model %d), %d chunks", step, x.len(), len(model), len(x.chunks))
		}
	}
	for i, at := range model {
		if x.at(i).at != at {
			t.Fatalf("item %d: %d, want %d", i, x.at(i).at, at)
		}
	}
}

// A database with a few TTL keys holds a few hundred bytes of index, not a
// 16 KiB chunk (Redis's maxmemory tests set the limit 100 KB above
// used_memory); the first chunk doubles up to expChunk, then chunks are added.
func TestExpIndexFirstChunkGrows(t *testing.T) {
	var x expIndex
	for i := range 10 {
		x.push(expItem{at: int64(i)})
	}
	if len(x.chunks) != 1 || len(x.chunks[0]) != expFirst {
		t.Fatalf("10 items: %d chunks, the first of %d", len(x.chunks), len(x.chunks[0]))
	}
	for i := 10; i <= expChunk; i++ {
		x.push(expItem{at: int64(i)})
	}
	if len(x.chunks) != 2 || len(x.chunks[0]) != expChunk || len(x.chunks[1]) != expChunk {
		t.Fatalf("%d items: chunks of %d and %d", x.len(), len(x.chunks[0]), len(x.chunks[1]))
	}
	for i := range x.len() {
		if x.at(i).at != int64(i) {
			t.Fatalf("item %d: %d", i, x.at(i).at)
		}
	}
}
