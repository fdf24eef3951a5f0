package clock

import (
	"testing"
	"time"
)

// A wall-clock step after start must not move the server clock: only monotonic
// elapsed time does (docs/ARCHITECTURE.md §4.2).
func TestMonotonicIgnoresWallSteps(t *testing.T) {
	wall := time.UnixMilli(1_700_000_000_000)
	var elapsed time.Duration
	c := NewFrom(func() time.Time { return wall.Add(elapsed) }, func() time.Duration { return elapsed })
	if got := c.NowMs(); got != 1_700_000_000_000 {
		t.Fatalf("start: %d", got)
	}
	wall = wall.Add(time.Hour) // the operator steps the clock forward
	elapsed = 1500 * time.Millisecond
	if got := c.NowMs(); got != 1_700_000_001_500 {
		t.Fatalf("after forward step: %d", got)
	}
	wall = wall.Add(-3 * time.Hour) // and back
	elapsed = 3 * time.Second
	if got := c.NowMs(); got != 1_700_000_003_000 {
		t.Fatalf("after backward step: %d", got)
	}
}

// The wall clock's slewing is followed (re-anchored each second), and the
// clock never runs backwards: a wall clock slower than the monotonic one
// holds it still until it catches up.
func TestMonotonicFollowsSlewing(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	var elapsed time.Duration
	rate := 1.005 // the wall clock runs 0.5% fast
	wall := func() time.Time { return start.Add(time.Duration(float64(elapsed) * rate)) }
	c := NewFrom(wall, func() time.Duration { return elapsed })
	for s := 1; s <= 60; s++ {
		elapsed = time.Duration(s) * time.Second
		c.NowMs()
	}
	if got, want := c.NowMs(), wall().UnixMilli(); got != want {
		t.Fatalf("after 60 s of a fast wall clock: %d, the wall clock %d", got, want)
	}
	base, baseElapsed := wall(), elapsed
	rate = 0.995 // now slow: the wall clock falls 0.5% behind
	wall = func() time.Time { return base.Add(time.Duration(float64(elapsed-baseElapsed) * rate)) }
	prev := c.NowUs()
	for ms := 1; ms <= 10_000; ms++ {
		elapsed = baseElapsed + time.Duration(ms)*time.Millisecond
		now := c.NowUs()
		if now < prev {
			t.Fatalf("backwards at %v: %d after %d", elapsed, now, prev)
		}
		prev = now
	}
	if got, want := c.NowMs(), wall().UnixMilli(); got-want > 50 || want-got > 50 {
		t.Fatalf("after 10 s of a slow wall clock: %d, the wall clock %d", got, want)
	}
}

func TestFake(t *testing.T) {
	f := NewFake(1000)
	f.Advance(250 * time.Millisecond)
	if f.NowMs() != 1250 || f.NowUs() != 1_250_000 {
		t.Fatal(f.NowMs())
	}
}
