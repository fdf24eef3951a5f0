package lock

import (
	"errors"
	"testing"
	"time"
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
