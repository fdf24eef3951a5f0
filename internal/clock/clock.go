// Package clock is HotKV's server clock: Unix milliseconds that advance on the
// monotonic clock and follow the wall clock's slewing, so a step of the
// system's wall clock (NTP, an operator) neither expires nor extends any TTL
// (docs/ARCHITECTURE.md §4.2).
//
// Core packages never call time.Now: they receive a Clock (or a frozen now) as input.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock returns the server time in Unix milliseconds (and microseconds). It is safe
// for concurrent use.
type Clock interface {
	NowMs() int64
	NowUs() int64
}

// Monotonic is the live server clock: Unix time that advances on the
// monotonic clock from an anchor on the wall clock, re-anchored once a
// second while the wall clock stays within StepThreshold of it. So it
// follows the wall clock's slewing (NTP's gradual corrections: a virtual
// machine's wall clock was measured running 0.5% faster than its monotonic
// clock, 43 s a day apart at NTP's usual 500 ppm) and ignores its steps (an
// operator or NTP setting the time: no TTL expires or extends by a jump).
// It never runs backwards: a re-anchor that would move it back holds it
// still until it catches up (the anchor's floor; no shared write per read).
type Monotonic struct {
	a       atomic.Pointer[anchor]
	mono    func() time.Duration
	wall    func() time.Time // read at each re-anchor
	syncing atomic.Bool
}

// anchor is a wall-clock reading and the monotonic reading it was taken at;
// floorUs is the clock's time when it was taken, below which it never
// reads (every earlier reading was at most that).
type anchor struct {
	wallUs  int64
	mono    time.Duration
	floorUs int64
}

// Re-anchoring: how often, and the largest difference from the wall clock
// still taken for slewing (a bigger one is a step, ignored).
const (
	resyncEvery   = time.Second
	StepThreshold = 100 * time.Millisecond
)

// New returns the live clock, anchored to the wall clock now.
func New() *Monotonic {
	start := time.Now() // carries a monotonic reading
	return NewFrom(time.Now, func() time.Duration { return time.Since(start) })
}

// NewFrom builds a Monotonic clock from explicit sources: wall is read for
// the anchor now and at each re-anchor, mono must be a monotonic
// elapsed-time source. Tests use it to show that wall-clock steps have no
// effect and slewing is followed.
func NewFrom(wall func() time.Time, mono func() time.Duration) *Monotonic {
	c := &Monotonic{mono: mono, wall: wall}
	c.a.Store(&anchor{wallUs: wall().UnixMicro(), mono: mono()})
	return c
}

// NowMs returns the server time in Unix milliseconds.
func (c *Monotonic) NowMs() int64 { return c.NowUs() / 1000 }

// NowUs returns the server time in Unix microseconds.
func (c *Monotonic) NowUs() int64 {
	m := c.mono()
	a := c.a.Load()
	if m-a.mono >= resyncEvery {
		a = c.resync(m)
	}
	return max(a.floorUs, a.wallUs+(m-a.mono).Microseconds())
}

// resync re-anchors at monotonic reading m: on the wall clock when it is
// within StepThreshold of the clock's time, else on the clock's own time.
// One caller does it; the others go on with the anchor they read.
func (c *Monotonic) resync(m time.Duration) *anchor {
	a := c.a.Load()
	if !c.syncing.CompareAndSwap(false, true) {
		return a
	}
	defer c.syncing.Store(false)
	if m-a.mono < resyncEvery {
		return c.a.Load()
	}
	est := max(a.floorUs, a.wallUs+(m-a.mono).Microseconds())
	wall := c.wall().UnixMicro()
	next := &anchor{wallUs: est, mono: m, floorUs: est}
	if d := time.Duration(wall-est) * time.Microsecond; d < StepThreshold && d > -StepThreshold {
		next.wallUs = wall
	}
	c.a.Store(next)
	return next
}

// Fake is a manually advanced clock for tests. Safe for concurrent use.
type Fake struct{ us atomic.Int64 }

// NewFake returns a fake clock set to ms Unix milliseconds.
func NewFake(ms int64) *Fake {
	f := &Fake{}
	f.us.Store(ms * 1000)
	return f
}

// NowMs returns the fake time in milliseconds.
func (f *Fake) NowMs() int64 { return f.us.Load() / 1000 }

// NowUs returns the fake time in microseconds.
func (f *Fake) NowUs() int64 { return f.us.Load() }

// Advance moves the fake clock forward by d.
func (f *Fake) Advance(d time.Duration) { f.us.Add(d.Microseconds()) }

// Set sets the fake clock to ms Unix milliseconds.
func (f *Fake) Set(ms int64) { f.us.Store(ms * 1000) }
