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
	c := NewFrom(func() time.Time { return wall }, func() time.Duration { return elapsed })
	if got := c.NowMs(); got != 1_700_000_000_000 {
		t.Fatalf("start: %d", got)
	}
	wall = wall.Add(time.Hour) // the operator steps the clock forward
	elapsed = 1500 * time.Millisecond
	if got := c.NowMs(); got != 1_700_000_001_500 {
		t.Fatalf("after forward step: %d", got)
	}
	wall = wall.Add(-3 * time.Hour) // and back
	elapsed = 2 * time.Second
	if got := c.NowMs(); got != 1_700_000_002_000 {
		t.Fatalf("after backward step: %d", got)
	}
}

func TestFake(t *testing.T) {
	f := NewFake(1000)
	f.Advance(250 * time.Millisecond)
	if f.NowMs() != 1250 || f.NowUs() != 1_250_000 {
		t.Fatal(f.NowMs())
	}
}
