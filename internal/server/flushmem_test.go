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

// Freeing a big value (here a limit lowered to 1 MB for the test) hands the
// memory back from the cron, once; a small free does not.
func TestBigFreeReleasesMemory(t *testing.T) {
	defer func(n int64) { bigFreeBytes = n }(bigFreeBytes)
	bigFreeBytes = 1 << 20
	s, cl := newBenchServer(t)
	run(s, cl, args("SET", "small", "v"))
	run(s, cl, args("DEL", "small"))
	s.eng.Lock()
	s.releaseAfterFrees(1_000_000)
	s.eng.Unlock()
	time.Sleep(20 * time.Millisecond)
	if n := s.flushFrees.Load(); n != 0 {
		t.Fatalf("releases after a small DEL: %d", n)
	}
	hset := args("HSET", "h")
	for i := range 20000 {
		hset = append(hset, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
	}
	run(s, cl, hset)
	run(s, cl, args("DEL", "h"))
	s.eng.Lock()
	s.releaseAfterFrees(2_000_000)
	s.releaseAfterFrees(2_000_100) // within 10 s: not again
	s.eng.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for s.flushFrees.Load() != 1 || s.flushFree.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("releases: %d", s.flushFrees.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
