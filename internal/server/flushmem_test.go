package server

import (
	"strconv"
	"testing"
	"time"
)

// A big FLUSHALL hands the freed memory back at once (flushmem.go); a small one
// leaves it to the runtime.
func TestFlushReleasesMemory(t *testing.T) {
	defer func(n int) { flushFreeKeys = n }(flushFreeKeys)
	flushFreeKeys = 100
	s, cl := newBenchServer(t)
	for i := range 99 {
		run(s, cl, args("SET", "k"+strconv.Itoa(i), "v"))
	}
	run(s, cl, args("FLUSHALL"))
	for i := range 100 {
		run(s, cl, args("SET", "k"+strconv.Itoa(i), "v"))
	}
	run(s, cl, args("FLUSHDB"))
	deadline := time.Now().Add(10 * time.Second)
	for s.flushFrees.Load() != 1 || s.flushFree.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("releases: %d", s.flushFrees.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if n := s.flushFrees.Load(); n != 1 {
		t.Fatalf("releases: %d, want 1 (99 keys are under the threshold)", n)
	}
}
