package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The torture test: dozens of goroutines fight for one lock with short TTLs;
// a quarter of the holders sleep past their TTL and release late. It checks,
// from the holders' own observations:
//
//  1. mutual exclusion under the TTL assumption: sorted by fence (the server's
//     order of acquisition), each holder obtained the lock only after the
//     previous one's validity ended (its deadline, or the moment it started to
//     release). A holder obtains only when the key is absent, and the previous
//     key cannot vanish before its TTL (server time >= obtain start + ttl >
//     deadline) or its release, unless someone deleted it;
//  2. no release ever deletes another holder's lock: every holder reads the key
//     while it is valid (GET answered before its deadline) and must find its
//     own token; a late release that deleted it would show here;
//  3. a release after the TTL never succeeds (the key has expired), and fences
//     are unique and increasing.
//
// The protected store of the guide (fenced) is fed by every holder, and counts
// the stale writes of the sleepers that it rejected.
func TestTorture(t *testing.T) {
	dur := 700 * time.Millisecond
	if testing.Short() {
		dur = 300 * time.Millisecond
	}
	eachServer(t, func(t *testing.T, s server) {
		r := torture(t, s.locker(), s.c, dur, nil, tortureWorkers, 20*time.Millisecond)
		t.Logf("%s: %d acquisitions by %d goroutines, %d late releases (%d found another owner), %d stale writes rejected by the fenced store",
			s.name, r.acquired, tortureWorkers, r.late, r.lateNotHeld, r.staleRejected)
		for _, v := range r.violations {
			t.Error(v)
		}
		if r.acquired < 10 {
			t.Fatalf("only %d acquisitions: the test proves little", r.acquired)
		}
	})
	// Redlock over three HotKV servers: the same exclusion and fencing checks
	// (the key check needs a single server).
	t.Run("redlock-3-hotkv", func(t *testing.T) {
		l, _ := NewRedlock(clients(threeHotKV(t)...))
		r := torture(t, l, nil, dur, nil, 12, 60*time.Millisecond)
		t.Logf("redlock: 12 goroutines, %d acquisitions, %d late releases (%d found another owner)", r.acquired, r.late, r.lateNotHeld)
		for _, v := range r.violations {
			t.Error(v)
		}
		// 32 simultaneous attempts often split the three votes (everyone
		// releases and retries): fewer acquisitions than on one server.
		if r.acquired < 5 {
			t.Fatalf("only %d acquisitions: the test proves little", r.acquired)
		}
	})
}

// The checks find the bug they are there for: a release by plain DEL (no token
// check) deletes other holders' locks.
func TestTortureCatchesPlainDel(t *testing.T) {
	c := hotkv(t)
	plainDel := func(ctx context.Context, lk *Lock) error {
		lk.finish(ErrReleased)
		return c.Del(ctx, lk.Key()).Err()
	}
	r := torture(t, New(c), c, 700*time.Millisecond, plainDel, tortureWorkers, 20*time.Millisecond)
	var found []string
	for _, v := range r.violations {
		if strings.Contains(v, "while the lock is valid") || strings.Contains(v, "two holders at once") {
			found = append(found, v)
		}
	}
	if len(found) == 0 {
		t.Fatalf("%d acquisitions, %d late releases by DEL, and no deleted lock or overlap found", r.acquired, r.late)
	}
	t.Logf("plain DEL: %d deleted locks or overlaps in %d acquisitions, e.g. %s", len(found), r.acquired, found[0])
}

const tortureWorkers = 32

type tortureResult struct {
	acquired, late, lateNotHeld, staleRejected int
	violations                                 []string
}

type holding struct {
	fence         int64
	acquired, end time.Time // end: min(deadline, start of the release)
}

// fencedStore is the guide's protected resource: it accepts a write only with
// a fence at least as large as any it has seen.
type fencedStore struct {
	mu    sync.Mutex
	fence int64
	value string
}

func (s *fencedStore) Write(fence int64, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fence < s.fence {
		return fmt.Errorf("stale fence %d < %d", fence, s.fence)
	}
	s.fence, s.value = fence, v
	return nil
}

// torture runs workers goroutines for dur, with TTLs in [minTTL, 2.5*minTTL).
func torture(t *testing.T, l *Locker, c *redis.Client, dur time.Duration,
	release func(context.Context, *Lock) error, workers int, minTTL time.Duration) tortureResult {
	t.Helper()
	if release == nil {
		release = func(ctx context.Context, lk *Lock) error { return lk.Release(ctx) }
	}
	const key = "torture"
	var (
		mu    sync.Mutex
		res   tortureResult
		holds []holding
		store fencedStore
	)
	violation := func(format string, args ...any) {
		mu.Lock()
		res.violations = append(res.violations, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// Run for dur, longer (up to 4*dur) on a machine so loaded that fewer than
	// 30 acquisitions happened by then.
	begin := time.Now()
	var count atomic.Int64
	running := func() bool {
		el := time.Since(begin)
		return el < dur || (el < 4*dur && count.Load() < 30)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for running() {
				ttl := minTTL + time.Duration(rng.Int64N(int64(minTTL)*3/2))
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				start := time.Now()
				lk, err := l.Obtain(ctx, key, ttl, &Options{RetryStrategy: ExponentialBackoff(time.Millisecond, 8*time.Millisecond)})
				cancel()
				if errors.Is(err, ErrNotObtained) {
					continue
				}
				if err != nil {
					violation("Obtain: %v", err)
					return
				}
				h := holding{fence: lk.Fence(), acquired: time.Now(), end: lk.Deadline()}
				count.Add(1)
				ctx = context.Background()
				sleeper := rng.IntN(4) == 0
				// Work within the validity, checking the key is still ours.
				work := time.Until(lk.Deadline()) / 4
				if work > 0 {
					work = time.Duration(rng.Int64N(int64(work)))
				}
				for i := 0; i < 2; i++ {
					if c == nil {
						time.Sleep(work / 2)
						continue
					}
					v, gerr := c.Get(ctx, key).Result()
					if time.Now().Before(lk.Deadline()) && (gerr != nil || v != lk.Token()) {
						violation("fence %d: key holds %q (%v) while the lock is valid: someone deleted or took it", lk.Fence(), v, gerr)
					}
					time.Sleep(work / 2)
				}
				if sleeper {
					// A pause (GC, swap, a stopped VM) past the TTL, then the write
					// and the release the holder still believes in.
					time.Sleep(ttl + ttl/2 + time.Duration(rng.IntN(int(ttl))))
				}
				if err := store.Write(lk.Fence(), "by fence"); err != nil {
					mu.Lock()
					res.staleRejected++
					mu.Unlock()
					if !sleeper {
						// A holder that stayed within its validity is never stale...
						// unless the scheduler stalled it past its deadline.
						if time.Now().Before(lk.Deadline()) {
							violation("fence %d rejected within its validity: %v", lk.Fence(), err)
						}
					}
				}
				relStart := time.Now()
				if relStart.Before(h.end) {
					h.end = relStart
				}
				rerr := release(ctx, lk)
				mu.Lock()
				holds = append(holds, h)
				if sleeper {
					res.late++
					if errors.Is(rerr, ErrNotHeld) {
						res.lateNotHeld++
					}
				}
				mu.Unlock()
				if sleeper && rerr == nil && relStart.Sub(start) > ttl+5*time.Millisecond {
					violation("fence %d: released %v after obtaining with TTL %v: the key had not expired", lk.Fence(), relStart.Sub(start), ttl)
				}
				// (A Redlock round may time out on this loaded machine: not a
				// safety matter, the key expires.)
				if rerr != nil && !errors.Is(rerr, ErrExpired) && !errors.Is(rerr, ErrNotHeld) && !errors.Is(rerr, context.DeadlineExceeded) {
					violation("fence %d: Release: %v", lk.Fence(), rerr)
				}
			}
		})
	}
	wg.Wait()
	res.acquired = len(holds)
	slices.SortFunc(holds, func(a, b holding) int { return int(a.fence - b.fence) })
	for i := 1; i < len(holds); i++ {
		p, h := holds[i-1], holds[i]
		if h.fence == p.fence {
			res.violations = append(res.violations, fmt.Sprintf("fence %d granted twice", h.fence))
		}
		if h.acquired.Before(p.end) {
			res.violations = append(res.violations, fmt.Sprintf(
				"fence %d obtained %v before fence %d's validity ended: two holders at once", h.fence, p.end.Sub(h.acquired), p.fence))
		}
	}
	return res
}
