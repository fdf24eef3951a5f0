//go:build hotkv_noobserve

package server

import "testing"

// The build without the operator's view keeps no lock view: a lock taken
// reports nothing (bench/overhead.sh runs this before measuring against
// it, so that its base is what it claims to be).
func TestNoObserveReportsNoLocks(t *testing.T) {
	s, cl := newBenchServer(t)
	run(s, cl, args("SET", "lock:1", "tok", "NX", "PX", "30000"))
	run(s, cl, args("SET", "lock:1", "tok", "NX", "PX", "30000"))
	run(s, cl, args("DELEX", "lock:1", "IFEQ", "tok"))
	if c := s.locks.C; c.Acquired != 0 || c.Contended != 0 || c.Released != 0 || s.locks.Len() != 0 {
		t.Fatalf("the noobserve build counted locks: %+v, %d held", c, s.locks.Len())
	}
}
