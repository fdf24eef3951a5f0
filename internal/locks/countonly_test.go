//go:build hotkv_lockfloor

package locks

import "testing"

// The floor build counts the events overall and keeps nothing else
// (bench/overhead.sh runs this before measuring with it).
func TestCountOnlyKeepsNoState(t *testing.T) {
	tb := New(16)
	tb.Acquire(0, []byte("lock:1"), []byte("tok"), 1e12, 1)
	tb.Refuse(0, []byte("lock:1"), 2)
	tb.Release(0, []byte("lock:1"), nil, 3)
	tb.Stale(0, []byte("lock:1"), nil, 4)
	if c := tb.C; c.Acquired != 1 || c.Contended != 1 || c.Released != 1 || c.Stale != 1 {
		t.Fatalf("counters %+v, want one of each", c)
	}
	if tb.Len() != 0 || tb.Keys() != 0 || tb.Busy() {
		t.Fatalf("the floor build kept state: %d held, %d keys, busy %v", tb.Len(), tb.Keys(), tb.Busy())
	}
}
