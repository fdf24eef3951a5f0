package server

import (
	"runtime"
	"runtime/metrics"
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
	defer func(n int64, f func(*retainedGauge) bool) { bigFreeBytes, retainedFree = n, f }(bigFreeBytes, retainedFree)
	bigFreeBytes = 1 << 20
	retainedFree = func(*retainedGauge) bool { return false }
	runtime.GC() // the rule compares with the process's heap: not the garbage of the tests before
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
	for i := range 60000 { // 4 MB: over the test's 1 MB and a quarter of the heap
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

// Free pages the runtime keeps start a release too (retainedFree, read at most
// once a second), no sooner than 10 s after the last one nor than 100 times
// its duration.
func TestRetainedFreeReleasesMemory(t *testing.T) {
	defer func(f func(*retainedGauge) bool) { retainedFree = f }(retainedFree)
	reads := 0
	retainedFree = func(*retainedGauge) bool { reads++; return true }
	s, _ := newBenchServer(t)
	wait := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.flushFrees.Load() != want || s.flushFree.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("releases: %d, want %d", s.flushFrees.Load(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	s.eng.Lock()
	s.releaseAfterFrees(1_000_000)
	s.eng.Unlock()
	wait(1)
	s.releaseDurMs.Store(500) // a slow collection: 50 s before the next
	s.eng.Lock()
	s.releaseAfterFrees(1_020_000)
	s.eng.Unlock()
	time.Sleep(20 * time.Millisecond)
	if n := s.flushFrees.Load(); n != 1 || reads != 1 {
		t.Fatalf("20 s after a 500 ms release: %d releases, %d reads", n, reads)
	}
	s.eng.Lock()
	s.releaseAfterFrees(1_050_000)
	s.releaseAfterFrees(1_050_100)
	s.eng.Unlock()
	wait(2)
	if reads != 2 {
		t.Fatalf("reads: %d, want 2", reads)
	}
}

// retainedFree's rule: enough to hand back (garbage and free pages, 32 MB and
// an eighth of the live heap), after two quiet seconds (allocations under a
// sixty-fourth of it in each).
func TestRetainedGauge(t *testing.T) {
	const mb = 1 << 20
	g := newRetainedGauge()
	steps := []struct {
		obj, free, live, allocs int64
		want                    bool
		why                     string
	}{
		{300 * mb, 10 * mb, 200 * mb, 1000 * mb, false, "first check: the allocations before it are not a second's"},
		{310 * mb, 10 * mb, 200 * mb, 1010 * mb, false, "10 MB in a second is not quiet for 120 MB"},
		{310 * mb, 10 * mb, 200 * mb, 1011 * mb, false, "one quiet second"},
		{310 * mb, 10 * mb, 200 * mb, 1012 * mb, true, "two quiet seconds, 120 MB to hand back"},
		{230 * mb, 0, 210 * mb, 1012 * mb, false, "20 MB: under 32 MB"},
		{230 * mb, 30 * mb, 400 * mb, 1012 * mb, false, "30 MB of free pages: under 32 MB"},
		{500 * mb, 40 * mb, 400 * mb, 1012 * mb, true, "140 MB, over an eighth of 400"},
		{1300 * mb, 40 * mb, 1200 * mb, 1012 * mb, false, "140 MB, under an eighth of 1200"},
	}
	for i, c := range steps {
		if got := g.verdict(c.obj, c.free, c.live, c.allocs); got != c.want {
			t.Fatalf("step %d (%s): %v", i, c.why, got)
		}
	}
	// the runtime has every counter the gauge names, as a uint64
	real := newRetainedGauge()
	retainedFree(&real)
	for _, smp := range real.samples {
		if smp.Value.Kind() != metrics.KindUint64 {
			t.Errorf("%s: kind %v", smp.Name, smp.Value.Kind())
		}
	}
	if real.lastAllocs <= 0 {
		t.Errorf("allocations read: %d", real.lastAllocs)
	}
}
