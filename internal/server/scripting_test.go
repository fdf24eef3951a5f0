package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// The real redsync library (Lua scripts by EVALSHA with the NOSCRIPT fallback
// to EVAL) takes, extends and releases a lock, and a second mutex on the same
// name is turned away while the first holds it.
func TestRedsyncAgainstHotKV(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		rs := redsync.New(goredis.NewPool(c))
		m := rs.NewMutex("lock:billing-run", redsync.WithExpiry(30*time.Second), redsync.WithTries(1))
		if err := m.LockContext(ctx); err != nil {
			t.Fatalf("Lock: %v", err)
		}
		// the first EVALSHA found no script: redsync fell back to EVAL, which cached it
		if n, err := c.Do(ctx, "INFO", "stats").Text(); err != nil || !strings.Contains(n, "total_commands_processed") {
			t.Fatalf("INFO: %v", err)
		}
		other := rs.NewMutex("lock:billing-run", redsync.WithTries(1))
		if err := other.LockContext(ctx); err == nil {
			t.Fatal("a second mutex took a held lock")
		}
		ok, err := m.ExtendContext(ctx)
		if err != nil || !ok {
			t.Fatalf("Extend: %v %v", ok, err)
		}
		if ttl := c.PTTL(ctx, "lock:billing-run").Val(); ttl < 29*time.Second {
			t.Fatalf("PTTL after extend = %v", ttl)
		}
		// a mutex that does not hold the lock cannot release it
		if ok, err := other.UnlockContext(ctx); ok || err == nil {
			t.Fatalf("foreign Unlock = %v, %v", ok, err)
		}
		ok, err = m.UnlockContext(ctx)
		if err != nil || !ok {
			t.Fatalf("Unlock: %v %v", ok, err)
		}
		if n := c.Exists(ctx, "lock:billing-run").Val(); n != 0 {
			t.Fatal("lock still there after Unlock")
		}
		// with the scripts now cached, EVALSHA hits directly
		if err := other.LockContext(ctx); err != nil {
			t.Fatalf("Lock after release: %v", err)
		}
	})
}

// bsm/redislock: Obtain, TTL, Refresh, Release, and ErrNotObtained for a
// competitor; Release after expiry reports ErrLockNotHeld.
func TestRedislockAgainstHotKV(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		lc := redislock.New(c)
		l, err := lc.Obtain(ctx, "lock:payments", 10*time.Second, nil)
		if err != nil {
			t.Fatalf("Obtain: %v", err)
		}
		if _, err := lc.Obtain(ctx, "lock:payments", time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
			t.Fatalf("competing Obtain: %v", err)
		}
		ttl, err := l.TTL(ctx)
		if err != nil || ttl <= 0 || ttl > 10*time.Second {
			t.Fatalf("TTL = %v, %v", ttl, err)
		}
		if err := l.Refresh(ctx, 20*time.Second, nil); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
		if ttl, _ := l.TTL(ctx); ttl <= 10*time.Second {
			t.Fatalf("TTL after Refresh = %v", ttl)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := l.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
			t.Fatalf("second Release: %v", err)
		}
		// a lock that expired is not held any more
		l2, err := lc.Obtain(ctx, "lock:payments", 50*time.Millisecond, nil)
		if err != nil {
			t.Fatalf("Obtain: %v", err)
		}
		srv.Clock.Advance(100 * time.Millisecond)
		if err := l2.Refresh(ctx, time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
			t.Fatalf("Refresh after expiry: %v", err)
		}
		if err := l2.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
			t.Fatalf("Release after expiry: %v", err)
		}
	})
}

// A script past busy-reply-threshold: other clients get BUSY (on the script's
// own event loop too), SCRIPT KILL stops a read-only script, a script that
// wrote is UNKILLABLE, and the server serves everyone once it ends.
func TestBusyScript(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, append(opts, hotkvtest.WithConfig("busy-reply-threshold", "50"))...)
		runner := hotkvtest.Dial(t, srv.Addr)
		other := hotkvtest.Dial(t, srv.Addr)
		if r := other.Do("SCRIPT", "KILL"); r != "-NOTBUSY No scripts in execution right now.\r\n" {
			t.Fatalf("SCRIPT KILL with no script: %q", r)
		}
		runner.Write(hotkvtest.EncodeCommand("EVAL", "local i = 0 while true do i = i + 1 end", "0"))
		busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
		waitFor(t, func() bool { return other.Do("PING") == busy })
		if r := other.Do("SET", "k", "v"); r != busy {
			t.Fatalf("SET while busy: %q", r)
		}
		if r := other.Do("SHUTDOWN"); r != busy {
			t.Fatalf("SHUTDOWN (saving) while busy: %q", r)
		}
		if r := other.Do("SCRIPT", "KILL"); r != "+OK\r\n" {
			t.Fatalf("SCRIPT KILL: %q", r)
		}
		r, err := runner.ReadReply()
		if err != nil || !strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL... script: ") {
			t.Fatalf("killed script's reply: %q %v", r, err)
		}
		if r := other.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING after the kill: %q", r)
		}

		// a script that wrote cannot be killed; it ends on its own
		// TIME is frozen inside a script: the live clock is INFO's server_time_usec
		runner.Write(hotkvtest.EncodeCommand("EVAL", `redis.call('set','w','1')
local function us() return tonumber(string.match(redis.call('info','server'), 'server_time_usec:(%d+)')) end
local start = us()
while us() - start < 500000 do end
return 30000000`, "0"))
		waitFor(t, func() bool { return other.Do("PING") == busy })
		if r := other.Do("SCRIPT", "KILL"); !strings.HasPrefix(r, "-UNKILLABLE Sorry the script already executed write commands") {
			t.Fatalf("SCRIPT KILL of a writer: %q", r)
		}
		if r, err := runner.ReadReply(); err != nil || r != ":30000000\r\n" {
			t.Fatalf("writer's reply: %q %v", r, err)
		}
		if r := other.Do("GET", "w"); r != "$1\r\n1\r\n" {
			t.Fatalf("GET w: %q", r)
		}
	})
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
