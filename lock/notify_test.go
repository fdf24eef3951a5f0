package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Waiting for a release by keyspace notifications, against redis-server 7.0
// (which publishes them) and against HotKV once it does.
func TestWaitForReleaseRedis(t *testing.T) {
	c := redis7(t)
	testWaitForRelease(t, c, func(db int) *redis.Client {
		o := *c.Options()
		o.DB = db
		return redis.NewClient(&o)
	})
}

func TestWaitForReleaseHotKV(t *testing.T) {
	c := hotkv(t)
	if !deliversKeyspaceEvents(t, c) {
		t.Skip("HotKV did not deliver a keyspace event within 500ms (keyspace notifications are not implemented in this build): " +
			"the notification wait is tested against redis-server (TestWaitForReleaseRedis); this test runs once HotKV publishes them")
	}
	testWaitForRelease(t, c, func(db int) *redis.Client {
		o := *c.Options()
		o.DB = db
		return redis.NewClient(&o)
	})
}

// A server whose configuration says that it publishes keyspace events but that
// does not deliver them (HotKV before notifications; a cluster node other than
// the subscribed one): the strategy's pauses bound each sleep, so a waiter is
// not stuck until the holder's TTL.
func TestWaitForReleaseStrategyBoundsSleep(t *testing.T) {
	c := hotkv(t)
	ctx := ctxT(t, 10*time.Second)
	c.ConfigSet(ctx, "notify-keyspace-events", "KA")
	l := New(c)
	defer l.Close()
	c.Set(ctx, "k", "another-owner", 10*time.Second)
	time.AfterFunc(100*time.Millisecond, func() { c.Del(context.Background(), "k") })
	start := time.Now()
	if _, err := l.Obtain(ctx, "k", time.Second, &Options{WaitForRelease: true, RetryStrategy: LinearBackoff(10 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > slow*500*time.Millisecond {
		t.Fatalf("obtained after %v: slept past the strategy's 10ms pauses", d)
	}
}

// deliversKeyspaceEvents turns notifications on, deletes a key and waits half a
// second for the event; it restores the setting.
func deliversKeyspaceEvents(t *testing.T, c *redis.Client) bool {
	ctx := ctxT(t, 5*time.Second)
	old := c.ConfigGet(ctx, "notify-keyspace-events").Val()["notify-keyspace-events"]
	defer c.ConfigSet(ctx, "notify-keyspace-events", old)
	if err := c.ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		return false
	}
	ps := c.Subscribe(ctx, "__keyspace@0__:probe")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return false
	}
	c.Set(ctx, "probe", "1", 0)
	c.Del(ctx, "probe")
	for {
		m, err := ps.ReceiveTimeout(ctx, 500*time.Millisecond)
		if err != nil {
			return false
		}
		if msg, ok := m.(*redis.Message); ok && msg.Payload == "del" {
			return true
		}
	}
}

func evalCalls(t *testing.T, c *redis.Client) int {
	ctx := ctxT(t, 5*time.Second)
	info := c.Info(ctx, "commandstats").Val()
	for _, ln := range strings.Split(info, "\n") {
		if strings.HasPrefix(ln, "cmdstat_evalsha:calls=") {
			var n int
			for _, ch := range strings.TrimPrefix(ln, "cmdstat_evalsha:calls=") {
				if ch < '0' || ch > '9' {
					break
				}
				n = n*10 + int(ch-'0')
			}
			return n
		}
	}
	return 0
}

func testWaitForRelease(t *testing.T, c *redis.Client, dbClient func(db int) *redis.Client) {
	ctx := ctxT(t, 30*time.Second)
	setFlags := func(f string) {
		t.Helper()
		if err := c.ConfigSet(ctx, "notify-keyspace-events", f).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flags := func() string { return c.ConfigGet(ctx, "notify-keyspace-events").Val()["notify-keyspace-events"] }

	t.Run("off: falls back to the retry strategy, config untouched", func(t *testing.T) {
		setFlags("")
		l := New(c)
		defer l.Close()
		holder, err := l.Obtain(ctx, "off", 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Release(ctx)
		start := time.Now()
		_, err = l.Obtain(ctx, "off", time.Second, &Options{WaitForRelease: true}) // NoRetry fallback
		if !errors.Is(err, ErrNotObtained) || time.Since(start) > 500*time.Millisecond {
			t.Fatalf("got %v after %v, want ErrNotObtained at once", err, time.Since(start))
		}
		if f := flags(); f != "" {
			t.Fatalf("notify-keyspace-events changed to %q", f)
		}
		// Partial classes (no K, or no x) count as off too.
		for _, f := range []string{"Eg", "Kg", "Kx"} {
			setFlags(f)
			l := New(c)
			if _, err := l.Obtain(ctx, "off", time.Second, &Options{WaitForRelease: true}); !errors.Is(err, ErrNotObtained) {
				t.Fatalf("flags %q: %v", f, err)
			}
			if got := flags(); got != f && !sameFlags(got, f) {
				t.Fatalf("flags changed from %q to %q", f, got)
			}
			l.Close()
		}
	})

	t.Run("on: woken by the release, no polling", func(t *testing.T) {
		setFlags("Kgx")
		l := New(c)
		defer l.Close()
		tries(t, 3, func() error {
			c.Set(ctx, "on", "another-owner", 10*time.Second) // held by a process we only see as a key
			before := evalCalls(t, c)
			got := make(chan *Lock, 1)
			errc := make(chan error, 1)
			go func() {
				lk, err := l.Obtain(ctx, "on", time.Second, &Options{WaitForRelease: true})
				errc <- err
				got <- lk
			}()
			time.Sleep(300 * time.Millisecond)
			released := time.Now()
			c.Del(ctx, "on")
			if err := <-errc; err != nil {
				return err
			}
			lk := <-got
			defer lk.Release(ctx)
			// The holder's TTL is 10s and the fallback timer a second: only the
			// event explains a quick wake-up.
			if d := time.Since(released); d > slow*300*time.Millisecond {
				return fmt.Errorf("waiter obtained %v after the release", d)
			}
			// Three attempts: the first, the one after subscribing, the one
			// after the event.
			if n := evalCalls(t, c) - before; n != 3 {
				return fmt.Errorf("%d attempts while waiting 300ms, want 3 (polling?)", n)
			}
			return nil
		})
	})

	t.Run("on: woken by the expiry", func(t *testing.T) {
		setFlags("KA")
		l := New(c)
		defer l.Close()
		if _, err := l.Obtain(ctx, "exp", 200*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		lk, err := l.Obtain(ctx, "exp", time.Second, &Options{WaitForRelease: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > slow*700*time.Millisecond {
			t.Fatalf("obtained after %v; the holder's TTL was 200ms", d)
		}
		_ = lk.Release(ctx)
	})

	t.Run("enable option turns notifications on", func(t *testing.T) {
		setFlags("E$")
		l := New(c, EnableKeyspaceNotifications())
		defer l.Close()
		holder, err := l.Obtain(ctx, "en", 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(200*time.Millisecond, func() { _ = holder.Release(context.Background()) })
		start := time.Now()
		lk, err := l.Obtain(ctx, "en", time.Second, &Options{WaitForRelease: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > slow*600*time.Millisecond {
			t.Fatalf("obtained after %v", d)
		}
		_ = lk.Release(ctx)
		if f := flags(); !sameFlags(f, "E$Kgxe") {
			t.Fatalf("flags %q, want the old E$ plus K, g, x, e", f)
		}
	})

	t.Run("many waiters share one subscription", func(t *testing.T) {
		setFlags("KA")
		l := New(c)
		defer l.Close()
		holder, err := l.Obtain(ctx, "many", 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		const n = 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		var fences []int64
		for i := 0; i < n; i++ {
			wg.Go(func() {
				lk, err := l.Obtain(ctx, "many", time.Second, &Options{WaitForRelease: true})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fences = append(fences, lk.Fence())
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				if err := lk.Release(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		ch := keyspaceChannel(0, "many")
		waitFor(t, func() bool { return c.PubSubNumSub(ctx, ch).Val()[ch] == 1 })
		start := time.Now()
		_ = holder.Release(ctx)
		wg.Wait()
		if len(fences) != n {
			t.Fatalf("%d of %d waiters got the lock", len(fences), n)
		}
		// Each release wakes the others: ten hand-overs, no TTL waits.
		if d := time.Since(start); d > slow*2*time.Second {
			t.Fatalf("ten hand-overs took %v", d)
		}
		waitFor(t, func() bool { return c.PubSubNumSub(ctx, ch).Val()[ch] == 0 })
	})

	t.Run("resubscribes after the connection drops", func(t *testing.T) {
		setFlags("KA")
		l := New(c)
		defer l.Close()
		ch := keyspaceChannel(0, "drop")
		tries(t, 3, func() error {
			c.Set(ctx, "drop", "another-owner", 10*time.Second)
			got := make(chan error, 1)
			go func() {
				lk, err := l.Obtain(ctx, "drop", time.Second, &Options{WaitForRelease: true})
				if err == nil {
					defer lk.Release(ctx)
				}
				got <- err
			}()
			waitFor(t, func() bool { return c.PubSubNumSub(ctx, ch).Val()[ch] == 1 })
			if err := c.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
				return err
			}
			waitFor(t, func() bool { return c.PubSubNumSub(ctx, ch).Val()[ch] == 1 }) // back
			time.Sleep(1100 * time.Millisecond)                                       // past the wake-up the drop caused
			released := time.Now()
			c.Del(ctx, "drop")
			if err := <-got; err != nil {
				return err
			}
			if d := time.Since(released); d > slow*300*time.Millisecond {
				return fmt.Errorf("obtained %v after the release: not resubscribed?", d)
			}
			return nil
		})
	})

	t.Run("a strategy still paces and limits the attempts", func(t *testing.T) {
		setFlags("KA")
		l := New(c)
		defer l.Close()
		c.Set(ctx, "paced", "another-owner", 10*time.Second)
		before := evalCalls(t, c)
		start := time.Now()
		_, err := l.Obtain(ctx, "paced", time.Second, &Options{WaitForRelease: true,
			RetryStrategy: LimitRetry(LinearBackoff(30*time.Millisecond), 3)})
		if !errors.Is(err, ErrNotObtained) {
			t.Fatalf("got %v", err)
		}
		// 4 attempts: the first, after subscribing, then 2 more after 30ms pauses.
		// The count is the server's EVAL calls, so a straggler of an earlier
		// subtest on a loaded machine can add one; unlimited retries would add
		// many more.
		if n := evalCalls(t, c) - before; n < 4 || n > 5 {
			t.Fatalf("%d attempts, want 4", n)
		}
		if d := time.Since(start); d < 60*time.Millisecond || d > time.Second {
			t.Fatalf("gave up after %v", d)
		}
	})

	t.Run("channel of the client's database", func(t *testing.T) {
		setFlags("KA")
		c3 := dbClient(3)
		defer c3.Close()
		l := New(c3)
		defer l.Close()
		holder, err := l.Obtain(ctx, "db", 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(200*time.Millisecond, func() { _ = holder.Release(context.Background()) })
		start := time.Now()
		if _, err := l.Obtain(ctx, "db", time.Second, &Options{WaitForRelease: true}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > slow*600*time.Millisecond {
			t.Fatalf("obtained after %v: listening on the wrong database?", d)
		}
	})
	setFlags("")
}

func sameFlags(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, ch := range b {
		if !strings.ContainsRune(a, ch) {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 2s")
}
