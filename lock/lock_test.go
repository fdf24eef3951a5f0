package lock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestObtainRelease(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		lk, err := l.Obtain(ctx, "job", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := s.c.Get(ctx, "job").Val(); v != lk.Token() || len(v) < 20 {
			t.Fatalf("key holds %q, token %q", v, lk.Token())
		}
		if p := s.c.PTTL(ctx, "job").Val(); p <= 900*time.Millisecond || p > time.Second {
			t.Fatalf("PTTL %v, want about 1s", p)
		}
		if lk.Fence() != 1 {
			t.Fatalf("first fence %d, want 1", lk.Fence())
		}
		if d := time.Until(lk.Deadline()); d <= 900*time.Millisecond || d > time.Second {
			t.Fatalf("deadline in %v", d)
		}
		// Held: a second Obtain fails at once (NoRetry).
		if _, err := l.Obtain(ctx, "job", time.Second, nil); !errors.Is(err, ErrNotObtained) {
			t.Fatalf("second Obtain: %v, want ErrNotObtained", err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if n := s.c.Exists(ctx, "job").Val(); n != 0 {
			t.Fatal("key still there after Release")
		}
		if !errors.Is(lk.Err(), ErrReleased) {
			t.Fatalf("Err after Release: %v", lk.Err())
		}
		select {
		case <-lk.Done():
		default:
			t.Fatal("Done not closed after Release")
		}
		if err := lk.Release(ctx); !errors.Is(err, ErrReleased) {
			t.Fatalf("second Release: %v", err)
		}
		lk2, err := l.Obtain(ctx, "job", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lk2.Fence() != 2 || lk2.Token() == lk.Token() {
			t.Fatalf("second lock: fence %d token %q (first %q)", lk2.Fence(), lk2.Token(), lk.Token())
		}
		if v := s.c.Get(ctx, DefaultFenceKey("job")).Val(); v != "2" {
			t.Fatalf("fence counter %q", v)
		}
	})
}

func TestRefresh(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		lk, err := l.Obtain(ctx, "r", 200*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		d0 := lk.Deadline()
		if err := lk.Refresh(ctx, 5*time.Second); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
		if p := s.c.PTTL(ctx, "r").Val(); p < 4900*time.Millisecond {
			t.Fatalf("PTTL after Refresh %v, want about 5s", p)
		}
		if !lk.Deadline().After(d0.Add(4 * time.Second)) {
			t.Fatalf("deadline not moved: %v -> %v", d0, lk.Deadline())
		}
		// ttl 0: the lock's current TTL (5s now).
		if err := lk.Refresh(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if p := s.c.PTTL(ctx, "r").Val(); p < 4900*time.Millisecond {
			t.Fatalf("PTTL after Refresh(0) %v", p)
		}
		// Someone else's lock: Refresh must not touch it.
		s.c.Set(ctx, "r", "other", time.Minute)
		if err := lk.Refresh(ctx, time.Second); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Refresh of a taken lock: %v, want ErrNotHeld", err)
		}
		if v, p := s.c.Get(ctx, "r").Val(), s.c.PTTL(ctx, "r").Val(); v != "other" || p < 59*time.Second {
			t.Fatalf("the other owner's key was changed: %q PTTL %v", v, p)
		}
		if !errors.Is(lk.Err(), ErrNotHeld) {
			t.Fatalf("Err %v, want ErrNotHeld", lk.Err())
		}
		// A finished lock does not refresh, even if the key came back.
		if err := lk.Refresh(ctx, time.Second); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Refresh after loss: %v", err)
		}

		lk2, err := l.Obtain(ctx, "r2", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.c.Del(ctx, "r2")
		if err := lk2.Refresh(ctx, time.Second); !errors.Is(err, ErrExpired) {
			t.Fatalf("Refresh of a deleted lock: %v, want ErrExpired", err)
		}
		if n := s.c.Exists(ctx, "r2").Val(); n != 0 {
			t.Fatal("Refresh recreated the key")
		}
		if err := lk2.Refresh(ctx, -time.Second); !errors.Is(err, ErrExpired) {
			t.Fatalf("Refresh of a finished lock: %v", err)
		}
	})
}

func TestReleaseNeverDeletesAnotherOwner(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		lk, err := l.Obtain(ctx, "k", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.c.Set(ctx, "k", "successor", time.Minute) // our TTL ran out and someone took it
		if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Release: %v, want ErrNotHeld", err)
		}
		if v := s.c.Get(ctx, "k").Val(); v != "successor" {
			t.Fatalf("Release deleted the successor's lock (key holds %q)", v)
		}

		lk, err = l.Obtain(ctx, "gone", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.c.Del(ctx, "gone")
		if err := lk.Release(ctx); !errors.Is(err, ErrExpired) {
			t.Fatalf("Release of a deleted lock: %v, want ErrExpired", err)
		}

		// A lock whose TTL ran out on the server.
		lk, err = l.Obtain(ctx, "short", 30*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		<-lk.Done()
		if !errors.Is(lk.Err(), ErrExpired) {
			t.Fatalf("Err after the deadline: %v", lk.Err())
		}
		time.Sleep(20 * time.Millisecond) // past the server's TTL too (the drift allowance)
		if err := lk.Release(ctx); !errors.Is(err, ErrExpired) {
			t.Fatalf("Release after the TTL: %v, want ErrExpired", err)
		}
	})
}

func TestTTL(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		lk, err := l.Obtain(ctx, "t", 3*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lk.TTL(ctx)
		if err != nil || d <= 2900*time.Millisecond || d > 3*time.Second {
			t.Fatalf("TTL %v %v", d, err)
		}
		s.c.Persist(ctx, "t")
		if d, err := lk.TTL(ctx); err != nil || d >= 0 {
			t.Fatalf("TTL of a persisted key: %v %v, want negative", d, err)
		}
		s.c.Set(ctx, "t", "x", 0)
		if _, err := lk.TTL(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("TTL of a taken lock: %v", err)
		}
		lk, err = l.Obtain(ctx, "t2", 3*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.c.Del(ctx, "t2")
		if _, err := lk.TTL(ctx); !errors.Is(err, ErrExpired) {
			t.Fatalf("TTL of a deleted lock: %v", err)
		}
		if !errors.Is(lk.Err(), ErrExpired) {
			t.Fatalf("Err %v", lk.Err())
		}
	})
}

// The server's capabilities are found from the first reply: HotKV (8.4) answers
// SET IFEQ and DELEX, redis-server 7.0 does not and gets the scripts from then on.
func TestCapabilityDetection(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		n := l.nodes[0]
		want := capNative
		if s.lua {
			want = capLua
		}
		if s.name == "redis7" && (n.setIfeq.Load() != capUnknown || n.delex.Load() != capUnknown) {
			t.Fatal("capabilities known before any command")
		}
		for i := 0; i < 2; i++ {
			lk, err := l.Obtain(ctx, "cap", time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Refresh(ctx, time.Second); err != nil {
				t.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if n.setIfeq.Load() != want || n.delex.Load() != want {
				t.Fatalf("capabilities SET IFEQ %d DELEX %d, want %d", n.setIfeq.Load(), n.delex.Load(), want)
			}
		}
	})
}

func TestRetryUntilReleased(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		holder, err := l.Obtain(ctx, "q", 150*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range []RetryStrategy{LinearBackoff(5 * time.Millisecond), ExponentialBackoff(time.Millisecond, 20*time.Millisecond)} {
			start := time.Now()
			lk, err := l.Obtain(ctx, "q", time.Second, &Options{RetryStrategy: rs})
			if err != nil {
				t.Fatal(err)
			}
			if lk.Fence() <= holder.Fence() {
				t.Fatalf("fence %d not above the holder's %d", lk.Fence(), holder.Fence())
			}
			if el := time.Since(start); el > time.Second {
				t.Fatalf("waited %v", el)
			}
			holder = lk
			go func() {
				time.Sleep(100 * time.Millisecond)
				_ = lk.Release(ctx)
			}()
		}
	})
}

func TestObtainGivesUp(t *testing.T) {
	s := server{c: hotkv(t)}
	ctx := ctxT(t, 10*time.Second)
	l := s.locker()
	if _, err := l.Obtain(ctx, "held", 10*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	// The strategy stops.
	start := time.Now()
	_, err := l.Obtain(ctx, "held", time.Second, &Options{RetryStrategy: LimitRetry(LinearBackoff(10*time.Millisecond), 3)})
	if !errors.Is(err, ErrNotObtained) {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(start); el < 30*time.Millisecond || el > 2*time.Second {
		t.Fatalf("3 retries at 10ms took %v", el)
	}
	// The context ends while waiting.
	for _, opt := range []*Options{{RetryStrategy: LinearBackoff(5 * time.Millisecond)}, {WaitForRelease: true, RetryStrategy: LinearBackoff(5 * time.Millisecond)}} {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err = l.Obtain(cctx, "held", time.Second, opt)
		cancel()
		if !errors.Is(err, ErrNotObtained) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want ErrNotObtained wrapping DeadlineExceeded", err)
		}
		cctx, cancel = context.WithCancel(ctx)
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err = l.Obtain(cctx, "held", time.Second, opt)
		if !errors.Is(err, ErrNotObtained) || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want ErrNotObtained wrapping Canceled", err)
		}
	}
	// The next pause would end after the deadline: give up at once.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = l.Obtain(cctx, "held", time.Second, &Options{RetryStrategy: LinearBackoff(time.Second)})
	if !errors.Is(err, ErrNotObtained) || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > slow*40*time.Millisecond {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
	// A context already canceled: no attempt.
	cctx, cancel = context.WithCancel(ctx)
	cancel()
	if _, err := l.Obtain(cctx, "free", time.Second, nil); !errors.Is(err, ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
	if s.c.Exists(ctx, "free").Val() != 0 {
		t.Fatal("a canceled Obtain took the lock")
	}
	// Bad TTLs.
	for _, ttl := range []time.Duration{0, -time.Second, 999 * time.Microsecond} {
		if _, err := l.Obtain(ctx, "free", ttl, nil); !errors.Is(err, ErrInvalidTTL) {
			t.Fatalf("ttl %v: %v", ttl, err)
		}
	}
}

// A plain lock (no watchdog) reports its loss at its deadline; Refresh pushes
// the deadline.
func TestDoneAtDeadline(t *testing.T) {
	s := server{c: hotkv(t)}
	ctx := ctxT(t, 20*time.Second)
	l := s.locker()
	tries(t, 3, func() error {
		lk, err := l.Obtain(ctx, "d", 80*time.Millisecond, nil)
		if err != nil {
			return err
		}
		defer lk.Release(ctx)
		time.Sleep(40 * time.Millisecond)
		if err := lk.Refresh(ctx, 80*time.Millisecond); err != nil {
			return fmt.Errorf("Refresh: %w", err)
		}
		dl := lk.Deadline()
		select {
		case <-lk.Done():
		case <-time.After(2 * time.Second):
			return errors.New("Done never closed")
		}
		if late := time.Since(dl); late < 0 || late > slow*50*time.Millisecond {
			return fmt.Errorf("Done closed %v after the deadline", late)
		}
		if !errors.Is(lk.Err(), ErrExpired) || !errors.Is(context.Cause(lk.Context()), ErrExpired) {
			return fmt.Errorf("Err %v", lk.Err())
		}
		if err := lk.Refresh(ctx, time.Second); !errors.Is(err, ErrExpired) {
			return fmt.Errorf("Refresh after the deadline: %v", err)
		}
		return nil
	})
}

func TestWatchdog(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		// A refresh every 100ms: room for a loaded machine under -race.
		const ttl = slow * 300 * time.Millisecond
		var lk *Lock
		tries(t, 3, func() error {
			var err error
			lk, err = l.Obtain(ctx, "w", ttl, &Options{AutoRefresh: true})
			if err != nil {
				return err
			}
			time.Sleep(2 * ttl)
			if d := time.Until(lk.Deadline()); d < ttl/2 {
				_ = lk.Release(ctx)
				return fmt.Errorf("deadline in %v after five refreshes (%v)", d, lk.Err())
			}
			if lk.Err() != nil || s.c.Get(ctx, "w").Val() != lk.Token() {
				_ = lk.Release(ctx)
				return fmt.Errorf("watchdog did not keep the lock: %v", lk.Err())
			}
			return nil
		})
		// Taken behind its back: the next refresh reports it.
		s.c.Set(ctx, "w", "thief", time.Minute)
		start := time.Now()
		select {
		case <-lk.Done():
		case <-time.After(time.Second):
			t.Fatal("loss not reported")
		}
		if el := time.Since(start); el > ttl {
			t.Fatalf("loss reported after %v (refresh every %v)", el, ttl/3)
		}
		if !errors.Is(lk.Err(), ErrNotHeld) {
			t.Fatalf("Err %v, want ErrNotHeld", lk.Err())
		}
		if s.c.Get(ctx, "w").Val() != "thief" {
			t.Fatal("watchdog touched the new owner's key")
		}

		lk, err := l.Obtain(ctx, "w2", ttl, &Options{AutoRefresh: true})
		if err != nil {
			t.Fatal(err)
		}
		s.c.Del(ctx, "w2")
		select {
		case <-lk.Done():
		case <-time.After(time.Second):
			t.Fatal("loss not reported")
		}
		if !errors.Is(lk.Err(), ErrExpired) {
			t.Fatalf("Err %v, want ErrExpired", lk.Err())
		}

		// Released: the watchdog stops and never recreates the key.
		lk, err = l.Obtain(ctx, "w3", ttl, &Options{AutoRefresh: true})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(ttl / 2)
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(ttl / 2)
		if s.c.Exists(ctx, "w3").Val() != 0 {
			t.Fatal("key back after Release")
		}
	})
}

func TestFencesIncrease(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 10*time.Second)
		l := s.locker()
		last := int64(0)
		for i := 0; i < 20; i++ {
			lk, err := l.Obtain(ctx, "f", time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if lk.Fence() <= last {
				t.Fatalf("fence %d after %d", lk.Fence(), last)
			}
			last = lk.Fence()
			if i%2 == 0 {
				_ = lk.Release(ctx)
			} else {
				s.c.Del(ctx, "f") // as if it expired
			}
		}
		// Another lock name has its own counter.
		lk, err := l.Obtain(ctx, "g", time.Second, nil)
		if err != nil || lk.Fence() != 1 {
			t.Fatalf("other name: fence %d %v", lk.Fence(), err)
		}
	})
}

func TestDefaultFenceKey(t *testing.T) {
	for key, want := range map[string]string{
		"job":          "{job}:fence",
		"lock:{order}": "lock:{order}:fence",
		"{a}b":         "{a}b:fence",
		"a{}b":         "{a{}b}:fence",
		"a{b":          "{a{b}:fence",
	} {
		if got := DefaultFenceKey(key); got != want {
			t.Errorf("DefaultFenceKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestLockerOptions(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	c := hotkv(t)
	if n := New(c).nodes[0]; n.db != 0 || n.sub == nil {
		t.Fatalf("db %d, subscriber %v", n.db, n.sub != nil)
	}
	c3 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: 3})
	defer c3.Close()
	if n := New(c3).nodes[0]; n.db != 3 {
		t.Fatalf("db from the client's options: %d", n.db)
	}
	if n := New(c3, WithDB(5)).nodes[0]; n.db != 5 {
		t.Fatalf("WithDB: %d", n.db)
	}
	if n := New(&fake{}).nodes[0]; n.db != 0 || n.sub != nil {
		t.Fatal("a plain Client: db 0, no subscriber")
	}

	start := time.Now()
	lk, err := New(c, WithDriftFactor(0.5)).Obtain(ctx, "drift", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// (the lock's clock starts a moment after start: allow a millisecond or two)
	if d := lk.Deadline().Sub(start); d > 500*time.Millisecond || d < 400*time.Millisecond {
		t.Fatalf("validity %v with drift factor 0.5, want 1s - 500ms - 2ms", d)
	}
	_ = lk.Release(ctx)
	if _, err := lk.TTL(ctx); !errors.Is(err, ErrReleased) {
		t.Fatalf("TTL after Release: %v", err)
	}

	l := New(c, WithFenceKey(func(k string) string { return "fences:" + k }))
	for i := int64(1); i <= 2; i++ {
		lk, err := l.Obtain(ctx, "fk", time.Second, nil)
		if err != nil || lk.Fence() != i {
			t.Fatalf("fence %d %v", lk.Fence(), err)
		}
		_ = lk.Release(ctx)
	}
	if v := c.Get(ctx, "fences:fk").Val(); v != "2" {
		t.Fatalf("custom fence key holds %q", v)
	}
}
