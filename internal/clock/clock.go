// Package clock is HotKV's server clock: Unix milliseconds that advance on the
// monotonic clock, so a step of the system's wall clock (NTP, an operator) neither
// expires nor extends any TTL (docs/ARCHITECTURE.md §4.2).
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

// Monotonic is the live server clock: now = wallAtStart + monotonicElapsed.
type Monotonic struct {
	wallStartUs int64
	mono        func() time.Duration
}

// New returns the live clock, anchored to the wall clock once, at creation.
func New() *Monotonic {
	start := time.Now() // carries a monotonic reading
	return NewFrom(func() time.Time { return start }, func() time.Duration { return time.Since(start) })
}

// NewFrom builds a Monotonic clock from explicit sources: wall is read exactly once
// (the anchor), mono must be a monotonic elapsed-time source. Tests use it to show
// that wall-clock steps after the anchor have no effect.
func NewFrom(wall func() time.Time, mono func() time.Duration) *Monotonic {
	return &Monotonic{wallStartUs: wall().UnixMicro(), mono: mono}
}

// NowMs returns the server time in Unix milliseconds.
func (c *Monotonic) NowMs() int64 { return c.NowUs() / 1000 }

// NowUs returns the server time in Unix microseconds.
func (c *Monotonic) NowUs() int64 { return c.wallStartUs + c.mono().Microseconds() }

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
