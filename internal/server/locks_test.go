package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/hotkv/hotkv/lock"
)

// infoFields parses an INFO section into its fields.
func infoFields(t *testing.T, c *redis.Client, section string) map[string]string {
	t.Helper()
	txt, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(txt, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// The lock view counts exactly what a scripted scenario does: acquisitions
// (plain SET NX PX, inside MULTI, inside a script, by the lock package),
// contention, token releases (DELEX, DELIFEQ, a Lua release, the lock
// package's), stale releases, extensions, a lock that expired under its
// holder, and locks removed otherwise (DEL, an overwrite, FLUSHDB); the hold
// and wait times follow the fake clock to the microsecond.
func TestLockViewCountsAScriptedScenario(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		do := func(want string, args ...any) {
			t.Helper()
			v, err := c.Do(ctx, args...).Result()
			got := fmt.Sprint(v)
			if err == redis.Nil {
				got = "<nil>"
			} else if err != nil {
				got = "err:" + err.Error()
			}
			if got != want {
				t.Fatalf("%v: got %q, want %q", args, got, want)
			}
		}
		// N = 9 acquisitions
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			do("OK", "SET", "lock:"+k, "tok-"+k, "NX", "PX", "60000")
		}
		do("[OK]", "EVAL", "return {redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', 60)}", 1, "lock:g", "tok-g")
		if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SetNX(ctx, "lock:h", "tok-h", time.Minute)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// not locks: no expiry, or no NX
		do("OK", "SET", "plain", "v", "NX")
		do("OK", "SET", "cache", "v", "PX", "1000")
		// M = 4 contended: w1 twice (one wait), w2 once, one inside a script
		srv.Clock.Advance(time.Second)
		do("<nil>", "SET", "lock:a", "w1", "NX", "PX", "60000")
		srv.Clock.Advance(250 * time.Millisecond)
		do("<nil>", "SET", "lock:a", "w1", "NX", "PX", "60000")
		do("<nil>", "SET", "lock:a", "w2", "NX", "PX", "60000")
		do("[]", "EVAL", "local r = redis.call('SET', KEYS[1], 'w3', 'NX', 'PX', 100) if r then return {r} end return {}", 1, "lock:b")
		// releases by token: DELEX (lock:a held 1.5 s), then w1 takes it, having waited 500 ms
		srv.Clock.Advance(250 * time.Millisecond)
		do("1", "DELEX", "lock:a", "IFEQ", "tok-a")
		do("OK", "SET", "lock:a", "w1", "NX", "PX", "60000")
		do("1", "DELIFEQ", "lock:b", "tok-b")
		release := "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
		do("1", "EVAL", release, 1, "lock:c", "tok-c")
		// K = 4 stale releases: a wrong token, a lock that is gone, a wrong digest
		do("0", "DELEX", "lock:d", "IFEQ", "tok-stale")
		do("0", "DELEX", "lock:gone", "IFEQ", "tok-x")
		do("0", "DELIFEQ", "lock:d", "nope")
		do("0", "DELEX", "lock:d", "IFDEQ", "0000000000000000")
		// a Lua release with the wrong token deletes nothing and cannot be told apart from a read
		do("0", "EVAL", release, 1, "lock:d", "tok-stale")
		// not releases: a plain DELEX of a missing key, IFNE
		do("0", "DELEX", "lock:none")
		do("0", "DELEX", "lock:e", "IFNE", "tok-e")
		// extensions: PEXPIRE, SET IFEQ with PX, GETEX; an EXPIRE to the same deadline is none
		do("1", "PEXPIRE", "lock:d", "90000")
		do("OK", "SET", "lock:e", "tok-e", "IFEQ", "tok-e", "PX", "90000")
		do("tok-e", "GETEX", "lock:e", "PX", "95000")
		// removed otherwise: DEL by a client, an overwrite, PERSIST
		do("1", "DEL", "lock:f")
		do("OK", "SET", "lock:g", "someone-else")
		do("1", "PERSIST", "lock:h")
		// J = 1 expired while held
		do("OK", "SET", "lock:exp", "tok-exp", "NX", "PX", "100")
		srv.Clock.Advance(200 * time.Millisecond)
		do("<nil>", "GET", "lock:exp")

		f := infoFields(t, c, "locks")
		want := map[string]string{
			"locks_held": "3", "locks_acquired": "10", "locks_contended": "4",
			"locks_released": "3", "locks_released_stale": "4", "locks_extended": "3",
			"locks_expired_while_held": "1", "locks_removed": "3",
			// hold: lock:a, lock:b and lock:c 1.5 s each; wait: w1 500 ms, nine
			// uncontended; quantiles as Prometheus's histogram_quantile (linear
			// within the 1-2.5 s bucket; the nine exact zeros are known)
			"lock_hold_usec": "count=3,sum=4500000,p50=1750000,p99=2485000,p99.9=2498500",
			"lock_wait_usec": "count=10,sum=500000,p50=0,p99=475000,p99.9=497500",
		}
		for k, v := range want {
			if f[k] != v {
				t.Errorf("INFO locks %s = %q, want %q", k, f[k], v)
			}
		}

		// the list: the locks held now, oldest first, with DIGEST's digest
		ls, err := c.Do(ctx, "HOTKV.LOCKS", "LIST").Slice()
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, e := range ls {
			m := asMap(t, e)
			keys = append(keys, fmt.Sprint(m["key"]))
			dig, _ := c.Do(ctx, "DIGEST", m["key"]).Text()
			if m["token-digest"] != dig {
				t.Errorf("%v: token digest %v, DIGEST %v", m["key"], m["token-digest"], dig)
			}
		}
		if strings.Join(keys, " ") != "lock:d lock:e lock:a" {
			t.Errorf("LIST keys %v", keys)
		}
		m := asMap(t, ls[0])
		if m["age-ms"] != int64(1700) || m["ttl-ms"] != int64(89800) || m["extended"] != int64(1) || m["db"] != int64(0) {
			t.Errorf("lock:d %v", m)
		}
		if m := asMap(t, ls[2]); m["age-ms"] != int64(200) || m["ttl-ms"] != int64(59800) {
			t.Errorf("lock:a %v", m)
		}
		top, err := c.Do(ctx, "HOTKV.LOCKS", "TOP", "COUNT", "1").Slice()
		if err != nil || len(top) != 1 {
			t.Fatal(top, err)
		}
		if m := asMap(t, top[0]); m["key"] != "lock:a" || m["acquired"] != int64(2) || m["contended"] != int64(3) || m["released"] != int64(1) || m["held"] != int64(1) {
			t.Errorf("TOP %v", m)
		}
		do("err:ERR syntax error", "HOTKV.LOCKS", "LIST", "COUNT")
		do("err:ERR count should be greater than or equal to 0", "HOTKV.LOCKS", "TOP", "COUNT", "-1")

		// the lock package, through its scripts and DELEX
		lk, err := lock.New(c).Obtain(ctx, "lock:pkg", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		f = infoFields(t, c, "locks")
		if f["locks_acquired"] != "11" || f["locks_released"] != "4" || f["locks_held"] != "3" {
			t.Errorf("after the lock package: %v", f)
		}
		// FLUSHDB removes the rest; CONFIG RESETSTAT zeroes the counters
		do("OK", "FLUSHDB")
		f = infoFields(t, c, "locks")
		if f["locks_held"] != "0" || f["locks_removed"] != "6" {
			t.Errorf("after FLUSHDB: %v", f)
		}
		do("OK", "CONFIG", "RESETSTAT")
		f = infoFields(t, c, "locks")
		if f["locks_acquired"] != "0" || f["lock_hold_usec"] != "count=0,sum=0,p50=0,p99=0,p99.9=0" {
			t.Errorf("after RESETSTAT: %v", f)
		}
	})
}

// asMap reads a RESP3 map or a RESP2 flat array of pairs.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	out := map[string]any{}
	switch x := v.(type) {
	case map[any]any:
		for k, v := range x {
			out[fmt.Sprint(k)] = v
		}
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			out[fmt.Sprint(x[i])] = x[i+1]
		}
	default:
		t.Fatalf("not a map: %T %v", v, v)
	}
	return out
}

// The lock package reports its waits (WithWaitObserver), and the server times
// the same wait from its side: from the first refused attempt on the key to
// its next acquisition.
func TestLockPackageWaitsSeenByBoth(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	var waits []lock.Wait
	l := lock.New(c, lock.WithWaitObserver(func(w lock.Wait) { waits = append(waits, w) }))
	holder, err := l.Obtain(ctx, "lock:w", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = holder.Release(ctx)
	}()
	waiter, err := l.Obtain(ctx, "lock:w", 10*time.Second, &lock.Options{RetryStrategy: lock.LinearBackoff(10 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Release(ctx)
	if _, err := l.Obtain(ctx, "lock:w", time.Second, nil); err == nil {
		t.Fatal("a third Obtain got a held lock")
	}
	if len(waits) != 3 || !waits[0].Obtained || waits[0].Attempts != 1 || !waits[1].Obtained || waits[1].Attempts < 5 ||
		waits[1].Waited < 190*time.Millisecond || waits[2].Obtained || waits[2].Attempts != 1 {
		t.Fatalf("the client's waits: %+v", waits)
	}
	st, err := c.Do(ctx, "HOTKV.LOCKS", "STATS").Result()
	if err != nil {
		t.Fatal(err)
	}
	wait := asMap(t, asMap(t, st)["wait-usec"])
	serverWait := time.Duration(wait["sum-usec"].(int64)) * time.Microsecond
	if wait["count"] != int64(2) || serverWait > waits[1].Waited || serverWait < waits[1].Waited-100*time.Millisecond {
		t.Errorf("the server's wait %v (%v), the client's %v", serverWait, wait, waits[1].Waited)
	}
}
