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
