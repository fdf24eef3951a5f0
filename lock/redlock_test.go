package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func threeHotKV(t *testing.T) []*redis.Client {
	return []*redis.Client{hotkv(t), hotkv(t), hotkv(t)}
}

func clients(cs ...*redis.Client) []Client {
	out := make([]Client, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

func TestRedlockObtainRelease(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	l, err := NewRedlock(clients(cs...))
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.Obtain(ctx, "job", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if v := c.Get(ctx, "job").Val(); v != lk.Token() {
			t.Fatalf("server %d holds %q", i, v)
		}
	}
	if lk.Fence() != 1 {
		t.Fatalf("fence %d", lk.Fence())
	}
	if _, err := l.Obtain(ctx, "job", time.Second, nil); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("second Obtain: %v", err)
	}
	for i, c := range cs { // the failed attempt took nothing
		if v := c.Get(ctx, "job").Val(); v != lk.Token() {
			t.Fatalf("server %d holds %q after the failed attempt", i, v)
		}
	}
	if err := lk.Refresh(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if d, err := lk.TTL(ctx); err != nil || d < 4900*time.Millisecond {
		t.Fatalf("TTL %v %v", d, err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if c.Exists(ctx, "job").Val() != 0 {
			t.Fatalf("server %d still holds the lock", i)
		}
	}
	lk, err = l.Obtain(ctx, "job", time.Second, nil)
	if err != nil || lk.Fence() != 2 {
		t.Fatalf("again: %v fence %d", err, lk.Fence())
	}
}

// HotKV, HotKV and redis-server 7.0: each server gets its own path.
func TestRedlockMixedServers(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := []*redis.Client{hotkv(t), hotkv(t), redis7(t)}
	l, _ := NewRedlock(clients(cs...))
	for i := 0; i < 3; i++ {
		lk, err := l.Obtain(ctx, "mixed", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Refresh(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if l.nodes[0].delex.Load() != capNative || l.nodes[2].delex.Load() != capLua || l.nodes[2].setIfeq.Load() != capLua {
		t.Fatal("per-server capabilities not detected")
	}
}

func TestRedlockMinorityDown(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	down := &fake{} // every command fails
	l, _ := NewRedlock([]Client{cs[0], down, cs[2]})
	lk, err := l.Obtain(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatalf("2 of 3 up: %v", err)
	}
	if err := lk.Refresh(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := lk.TTL(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A majority down: failed attempts (retried: servers come back), and the
	// servers' errors with ErrNotObtained.
	down = &fake{}
	l, _ = NewRedlock([]Client{cs[0], down, &fake{}})
	_, err = l.Obtain(ctx, "k", time.Second, &Options{RetryStrategy: LimitRetry(LinearBackoff(time.Millisecond), 2)})
	if !errors.Is(err, ErrNotObtained) || !errors.Is(err, errNet) || !strings.Contains(err.Error(), "no majority") {
		t.Fatalf("1 of 3 up: %v", err)
	}
	if down.count("evalsha") != 3 {
		t.Fatalf("%d attempts, want 3", down.count("evalsha"))
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = l.Obtain(cctx, "k", time.Second, &Options{RetryStrategy: LinearBackoff(time.Millisecond)})
	if !errors.Is(err, ErrNotObtained) || !errors.Is(err, errNet) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("1 of 3 up, until the deadline: %v", err)
	}
	if cs[0].Exists(ctx, "k").Val() != 0 {
		t.Fatal("the one server up kept the failed attempt's lock")
	}
}

// Another owner on a majority: not obtained, and what the attempt took on the
// minority is released at once.
func TestRedlockSplit(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	l, _ := NewRedlock(clients(cs...))
	cs[0].Set(ctx, "k", "other", time.Minute)
	cs[1].Set(ctx, "k", "other", time.Minute)
	if _, err := l.Obtain(ctx, "k", time.Second, nil); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("got %v", err)
	}
	if cs[2].Exists(ctx, "k").Val() != 0 {
		t.Fatal("the minority's lock was kept")
	}
	// Another owner on a minority only: obtained.
	cs[1].Del(ctx, "k")
	lk, err := l.Obtain(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Get(ctx, "k").Val() != "other" {
		t.Fatal("the other owner's key was touched")
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if cs[0].Get(ctx, "k").Val() != "other" {
		t.Fatal("Release deleted the other owner's key")
	}
}

// An attempt that takes longer than the TTL (less drift) is no lock, and is
// released everywhere; a server that hangs is cut off by the round timeout.
func TestRedlockValidityAndTimeout(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	slow := &fake{next: cs[2]}
	slow.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		if cmdIs(args, "evalsha") {
			v, err := cs[2].Do(context.WithoutCancel(ctx), args...).Result()
			time.Sleep(80 * time.Millisecond)
			return true, v, err
		}
		return false, nil, nil
	})
	l, _ := NewRedlock([]Client{cs[0], cs[1], slow}, WithNodeTimeout(time.Second))
	if _, err := l.Obtain(ctx, "v", 50*time.Millisecond, nil); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("got %v", err)
	}
	for i, c := range cs {
		if c.Exists(ctx, "v").Val() != 0 {
			t.Fatalf("server %d kept the too-slow lock", i)
		}
	}

	hang := &fake{hook: func(ctx context.Context, args []any) (bool, any, error) {
		<-ctx.Done()
		return true, nil, ctx.Err()
	}}
	l, _ = NewRedlock([]Client{cs[0], cs[1], hang}, WithNodeTimeout(30*time.Millisecond))
	start := time.Now()
	lk, err := l.Obtain(ctx, "h", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("a hanging server held the attempt up for %v", d)
	}
	if v := time.Until(lk.Deadline()); v < 9*time.Second {
		t.Fatalf("validity %v", v)
	}
}

// Fence numbers stay increasing across majorities: the counters of the servers
// that saw a lock are raised to its number, so the next majority (which shares a
// server with this one) counts from there.
func TestRedlockFenceCatchUp(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	fk := DefaultFenceKey("f")
	cs[0].Set(ctx, fk, 100, 0) // server 0 has seen many locks, 1 and 2 few
	l, _ := NewRedlock(clients(cs...))
	lk, err := l.Obtain(ctx, "f", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lk.Fence() != 101 {
		t.Fatalf("fence %d, want 101", lk.Fence())
	}
	for i, c := range cs {
		if n, _ := c.Get(ctx, fk).Int64(); n < 101 {
			t.Fatalf("server %d counter %d after the catch-up", i, n)
		}
	}
	_ = lk.Release(ctx)
	// Server 0 gone: servers 1 and 2 alone still count above 101.
	l, _ = NewRedlock([]Client{&fake{}, cs[1], cs[2]})
	lk, err = l.Obtain(ctx, "f", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lk.Fence() <= 101 {
		t.Fatalf("fence %d after 101: a stale holder's writes would be accepted", lk.Fence())
	}
}

func TestRedlockLoss(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	cs := threeHotKV(t)
	l, _ := NewRedlock(clients(cs...))

	lk, _ := l.Obtain(ctx, "a", time.Second, nil)
	cs[0].Del(ctx, "a")
	cs[1].Del(ctx, "a")
	if err := lk.Refresh(ctx, time.Second); !errors.Is(err, ErrExpired) {
		t.Fatalf("Refresh: %v", err)
	}
	if cs[2].Exists(ctx, "a").Val() != 0 {
		t.Fatal("the minority's key kept after the loss")
	}

	lk, _ = l.Obtain(ctx, "b", time.Second, nil)
	cs[0].Set(ctx, "b", "other", 0)
	cs[1].Del(ctx, "b")
	if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release: %v", err)
	}
	if cs[0].Get(ctx, "b").Val() != "other" {
		t.Fatal("Release deleted another owner's key")
	}

	lk, _ = l.Obtain(ctx, "c", time.Second, nil)
	cs[0].Del(ctx, "c")
	cs[1].Del(ctx, "c")
	if _, err := lk.TTL(ctx); !errors.Is(err, ErrExpired) {
		t.Fatalf("TTL: %v", err)
	}

	// TTL: a majority holds it at least as long as the second-longest TTL.
	lk, _ = l.Obtain(ctx, "d", time.Minute, nil)
	cs[0].PExpire(ctx, "d", time.Second)
	cs[1].PExpire(ctx, "d", 5*time.Second)
	cs[2].PExpire(ctx, "d", 10*time.Second)
	if d, err := lk.TTL(ctx); err != nil || d < 4900*time.Millisecond || d > 5*time.Second {
		t.Fatalf("TTL %v %v, want about 5s", d, err)
	}
	// A majority unreachable: the errors, not a guess.
	f1, f2 := &fake{next: cs[1]}, &fake{next: cs[2]}
	l, _ = NewRedlock([]Client{cs[0], f1, f2})
	lk, err := l.Obtain(ctx, "e", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(context.Context, []any) (bool, any, error) { return true, nil, errNet }
	f1.setHook(fail)
	f2.setHook(fail)
	if err := lk.Refresh(ctx, time.Second); !errors.Is(err, errNet) || errors.Is(err, ErrExpired) {
		t.Fatalf("Refresh: %v", err)
	}
	if lk.Err() != nil {
		t.Fatalf("unreachable servers finished the lock: %v", lk.Err())
	}
	if err := lk.Release(ctx); !errors.Is(err, errNet) {
		t.Fatalf("Release: %v", err)
	}
}
