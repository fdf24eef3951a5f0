package lock

import (
	"math/rand/v2"
	"time"
)

// RetryStrategy decides how long Obtain waits before its next attempt while the
// lock is held by someone else. Backoff gets the number of failed attempts so far
// (1 after the first) and returns the pause, or a negative duration to give up.
// Strategies are called from many goroutines at once: the ones here are pure
// functions of their arguments. Obtain never waits past its context's deadline:
// when the next pause would end after it, Obtain returns ErrNotObtained at once.
type RetryStrategy interface {
	Backoff(failures int) time.Duration
}

type retryFunc func(int) time.Duration

func (f retryFunc) Backoff(n int) time.Duration { return f(n) }

// NoRetry makes one attempt: Obtain returns ErrNotObtained if the lock is held.
func NoRetry() RetryStrategy {
	return retryFunc(func(int) time.Duration { return -1 })
}

// LinearBackoff retries at a fixed interval (the number of attempts grows linearly
// with the time waited), until the context ends.
func LinearBackoff(interval time.Duration) RetryStrategy {
	return retryFunc(func(int) time.Duration { return interval })
}

// ExponentialBackoff retries after a random pause in [d/2, d], where d doubles
// from min with every failed attempt and is capped at max ("equal jitter": waiters
// that collided once spread out, and nobody waits less than half the current step).
func ExponentialBackoff(min, max time.Duration) RetryStrategy {
	if max < min {
		max = min
	}
	return retryFunc(func(n int) time.Duration {
		d := min
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
		if d > max || d <= 0 {
			d = max
		}
		half := d / 2
		if half <= 0 {
			return d
		}
		return half + time.Duration(rand.Int64N(int64(d-half)+1))
	})
}

// LimitRetry stops s after max retries (max+1 attempts in all).
func LimitRetry(s RetryStrategy, max int) RetryStrategy {
	return retryFunc(func(n int) time.Duration {
		if n > max {
			return -1
		}
		return s.Backoff(n)
	})
}
