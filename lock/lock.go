package lock

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Lock is one successful Obtain. Its methods are safe for concurrent use (the
// watchdog calls Refresh from its own goroutine).
//
// A Lock is held until Deadline. Done closes, and Err tells why, at the moment
// it stops being held: Release was called (ErrReleased), a refresh or TTL found
// the key gone (ErrExpired) or taken by another owner (ErrNotHeld), or the
// deadline passed without a successful refresh (ErrExpired). Run the protected
// work under Context() to have it canceled then.
type Lock struct {
	l     *Locker
	key   string
	token string
	fence int64

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	ttl      time.Duration
	deadline time.Time
	timer    *time.Timer
	released bool
}

func newLock(l *Locker, key, token string, fence int64, ttl time.Duration, deadline time.Time, auto bool) *Lock {
	lk := &Lock{l: l, key: key, token: token, fence: fence, ttl: ttl, deadline: deadline}
	lk.ctx, lk.cancel = context.WithCancelCause(context.Background())
	lk.mu.Lock()
	lk.timer = time.AfterFunc(time.Until(deadline), lk.onDeadline)
	lk.mu.Unlock()
	if auto {
		go lk.watchdog()
	}
	return lk
}

func (lk *Lock) curTTL() time.Duration {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.ttl
}

// Key is the lock's name.
func (lk *Lock) Key() string { return lk.key }

// Token is the random value stored at the key while this Lock holds it.
func (lk *Lock) Token() string { return lk.token }

// Fence is the lock's fencing token: it is larger than the fence of every
// earlier Lock of the same name (on the same servers, as long as the fence
// counter key lives). Pass it with every write the lock protects, and have the
// store reject a write whose fence is lower than one it has seen: a holder that
// paused past its validity then cannot overwrite its successor's work.
func (lk *Lock) Fence() int64 { return lk.fence }

// Deadline is the end of the lock's validity as known here: the start of the
// last successful Obtain or Refresh plus its TTL, less the drift allowance.
func (lk *Lock) Deadline() time.Time {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.deadline
}

// Done is closed when the lock stops being held (see Lock).
func (lk *Lock) Done() <-chan struct{} { return lk.ctx.Done() }

// Err is nil while the lock is held, then ErrReleased, ErrExpired or ErrNotHeld.
func (lk *Lock) Err() error {
	if lk.ctx.Err() == nil {
		return nil
	}
	return context.Cause(lk.ctx)
}

// Context is canceled when the lock stops being held; context.Cause gives Err.
func (lk *Lock) Context() context.Context { return lk.ctx }

// finish marks the lock as no longer held (the first cause wins).
func (lk *Lock) finish(cause error) {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.ctx.Err() == nil {
		lk.cancel(cause)
		lk.timer.Stop()
	}
}

func (lk *Lock) onDeadline() {
	lk.mu.Lock()
	if d := time.Until(lk.deadline); d > 0 { // refreshed meanwhile
		lk.timer.Reset(d)
		lk.mu.Unlock()
		return
	}
	lk.mu.Unlock()
	lk.finish(ErrExpired)
}

// Refresh extends the lock to ttl from now (ttl <= 0: the lock's current TTL)
// if it still holds the key: SET key token IFEQ token PX ttl (a Lua script on
// servers before Redis 8.4). It returns Err() if the lock is no longer held,
// ErrExpired or ErrNotHeld if the server says so (the lock is then finished),
// or the transport's error (the lock stays valid until its deadline).
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := lk.Err(); err != nil {
		return err
	}
	lk.mu.Lock()
	if ttl <= 0 {
		ttl = lk.ttl
	}
	lk.mu.Unlock()
	if ttl < time.Millisecond {
		return ErrInvalidTTL
	}
	l := lk.l
	start := time.Now()
	rctx := ctx
	if len(l.nodes) > 1 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, l.roundTimeout(ttl))
		defer cancel()
	}
	ms := ttl.Milliseconds()
	sts, errs := l.each(rctx, func(ctx context.Context, _ int, n *node) (status, error) {
		return n.refresh(ctx, lk.key, lk.token, ms)
	})
	err := l.outcome(sts, errs)
	if errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHeld) {
		lk.finish(err)
		if len(l.nodes) > 1 { // free the minority that still has it
			l.cleanup(ctx, lk.key, lk.token, ttl)
		}
		return err
	}
	if err != nil {
		return err
	}
	deadline := start.Add(ttl - l.drift(ttl))
	lk.mu.Lock()
	if lk.ctx.Err() != nil { // lost (or released) while the refresh was on its way
		lk.mu.Unlock()
		if err := lk.Err(); !errors.Is(err, ErrReleased) {
			l.cleanup(ctx, lk.key, lk.token, ttl)
		}
		return lk.Err()
	}
	if !time.Now().Before(deadline) {
		lk.mu.Unlock()
		lk.finish(ErrExpired)
		return ErrExpired
	}
	lk.ttl = ttl
	lk.deadline = deadline
	lk.timer.Reset(time.Until(deadline))
	lk.mu.Unlock()
	return nil
}

// Release deletes the key if it still holds this lock's token (DELEX key IFEQ
// token; a Lua script before Redis 8.4), so it never deletes another owner's
// lock. It returns nil if it deleted the lock (on a majority of servers): the
// lock was held without interruption until then. ErrExpired: the key was
// already gone; ErrNotHeld: another owner holds it; ErrReleased: Release was
// already called. The Lock is finished in any case, even when the servers could
// not be reached (the key then expires with its TTL).
func (lk *Lock) Release(ctx context.Context) error {
	lk.mu.Lock()
	if lk.released {
		lk.mu.Unlock()
		return ErrReleased
	}
	lk.released = true
	lk.mu.Unlock()
	lk.finish(ErrReleased) // stops the watchdog first
	l := lk.l
	rctx := ctx
	if len(l.nodes) > 1 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, l.roundTimeout(lk.curTTL()))
		defer cancel()
	}
	return l.outcome(l.each(rctx, func(ctx context.Context, _ int, n *node) (status, error) {
		return n.release(ctx, lk.key, lk.token)
	}))
}

// TTL is the lock's remaining time to live on the server (with a Redlock, the
// time a majority of servers will still hold it), or ErrExpired/ErrNotHeld (which
// finish the lock), or ErrReleased. A negative duration means that the key has no TTL (someone
// removed it: the lock would then never expire by itself).
func (lk *Lock) TTL(ctx context.Context) (time.Duration, error) {
	lk.mu.Lock()
	released := lk.released
	lk.mu.Unlock()
	if released {
		return 0, ErrReleased
	}
	l := lk.l
	rctx := ctx
	if len(l.nodes) > 1 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, l.roundTimeout(lk.curTTL()))
		defer cancel()
	}
	ttls := make([]int64, len(l.nodes))
	sts, errs := l.each(rctx, func(ctx context.Context, i int, n *node) (status, error) {
		ms, st, err := n.pttl(ctx, lk.key, lk.token)
		ttls[i] = ms
		return st, err
	})
	if err := l.outcome(sts, errs); err != nil {
		if errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHeld) {
			lk.finish(err)
		}
		return 0, err
	}
	var ours []int64
	for i, st := range sts {
		if errs[i] == nil && st == stOurs {
			if ttls[i] < 0 {
				ttls[i] = 1<<63 - 1 // no TTL: holds forever
			}
			ours = append(ours, ttls[i])
		}
	}
	slices.Sort(ours)
	ms := ours[len(ours)-l.quorum] // a majority holds it at least this long
	if ms == 1<<63-1 {
		return -1, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// watchdog refreshes the lock every ttl/3 until it is finished. A refresh that
// fails on the network is retried sooner, until the deadline passes (the timer
// then finishes the lock with ErrExpired).
func (lk *Lock) watchdog() {
	lk.mu.Lock()
	interval := lk.ttl / 3
	lk.mu.Unlock()
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-lk.ctx.Done():
			return
		case <-t.C:
		}
		lk.mu.Lock()
		ttl, deadline := lk.ttl, lk.deadline
		lk.mu.Unlock()
		// A refresh answered after the deadline would come too late anyway.
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := lk.Refresh(ctx, ttl)
		cancel()
		if lk.ctx.Err() != nil {
			return
		}
		if err != nil {
			t.Reset(max(ttl/9, time.Millisecond))
		} else {
			t.Reset(max(ttl/3, time.Millisecond))
		}
	}
}
