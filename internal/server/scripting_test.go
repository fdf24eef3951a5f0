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
	"github.com/hotkv/hotkv/internal/rdb"
	"github.com/hotkv/hotkv/internal/script"
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
		tx := hotkvtest.Dial(t, srv.Addr)
		tx.Do("MULTI")
		tx.Do("GET", "k")
		runner.Write(hotkvtest.EncodeCommand("EVAL", "local i = 0 while true do i = i + 1 end", "0"))
		busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
		waitFor(t, func() bool { return other.Do("PING") == busy })
		// an EXEC refused while busy ends its transaction (Redis's execCommandAbort)
		if r := tx.Do("EXEC"); r != "-EXECABORT Transaction discarded because of: "+busy[1:] {
			t.Fatalf("EXEC while busy: %q", r)
		}
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

// TestNoScriptHangsTheServer: the scripts that hung the server or took its
// memory (issue 25) answer with Lua's errors, a script past the memory
// limit (maxmemory) is stopped, and a script looping forever gives way to
// SIGTERM's shutdown; every other client is served throughout.
func TestNoScriptHangsTheServer(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("maxmemory", "100mb"), hotkvtest.WithConfig("busy-reply-threshold", "50"))
	c := hotkvtest.Dial(t, srv.Addr)
	for _, tc := range []struct{ script, want string }{
		{"return {unpack({1,2,3}, -2, 2147483647)}", "-ERR user_script:1: too many results to unpack"},
		{"return string.format('%99999d', 1)", "-ERR user_script:1: invalid format (width or precision too long)"},
		{"return #string.rep('x', 1e12)", "-ERR user_script:1: not enough memory"},
		{"local s = 'x' for i = 1, 64 do s = s .. s end return #s", "-ERR user_script:1: not enough memory"},
		{"local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1e5) .. i end", "-OOM script memory limit reached"},
		{"return #string.gsub(string.rep('a', 1e5), 'a', '%0%0')", ":200000"},
	} {
		if got := c.Do("EVAL", tc.script, "0"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %.200q, want %q...", tc.script, got, tc.want)
		}
		if got := c.Do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING after %s: %q", tc.script, got)
		}
	}

	runner := hotkvtest.Dial(t, srv.Addr)
	runner.Write(hotkvtest.EncodeCommand("EVAL", "while true do end", "0"))
	waitFor(t, func() bool { return strings.HasPrefix(c.Do("PING"), "-BUSY") })
	done := make(chan bool)
	go func() { done <- srv.Srv.ShutdownOnSignal(false) }()
	select {
	case stopped := <-done:
		if !stopped {
			t.Fatal("SIGTERM while a script loops did not stop the server")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM while a script loops: no shutdown within 10 s")
	}
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

// Redisson's RLock scripts (RedissonLock.tryLockInnerAsync, renewExpirationAsync,
// unlockInnerAsync of Redisson 3.2x), run as Redisson sends them: a reentrant
// lock in a hash, and an unlock that publishes to wake waiters.
const (
	redissonLock = "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then " +
		"redis.call('hincrby', KEYS[1], ARGV[2], 1); " +
		"redis.call('pexpire', KEYS[1], ARGV[1]); " +
		"return nil; " +
		"end; " +
		"return redis.call('pttl', KEYS[1]);"
	redissonRenew = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then " +
		"redis.call('pexpire', KEYS[1], ARGV[1]); " +
		"return 1; " +
		"end; " +
		"return 0;"
	redissonUnlock = "local val = redis.call('get', KEYS[3]); " +
		"if val ~= false then " +
		"return tonumber(val);" +
		"end; " +
		"if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then " +
		"return nil;" +
		"end; " +
		"local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); " +
		"if (counter > 0) then " +
		"redis.call('pexpire', KEYS[1], ARGV[2]); " +
		"redis.call('set', KEYS[3], 0, 'px', ARGV[5]); " +
		"return 0; " +
		"else " +
		"redis.call('del', KEYS[1]); " +
		"redis.call(ARGV[4], KEYS[2], ARGV[1]); " +
		"redis.call('set', KEYS[3], 1, 'px', ARGV[5]); " +
		"return 1; " +
		"end; "
)

func TestRedissonRLockScripts(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		const name, owner, other = "billing-run", "8f3c:1", "77aa:5"
		channel := "redisson_lock__channel:{" + name + "}"
		latch := func(id string) string { return "redisson_unlock_latch:{" + name + "}:" + id }
		waiter := c.Subscribe(ctx, channel)
		defer waiter.Close()
		if _, err := waiter.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		lock := func(id string) (int64, error) {
			return c.Eval(ctx, redissonLock, []string{name}, 30000, id).Int64()
		}
		// first acquisition and a reentrant one return nil
		for i := 0; i < 2; i++ {
			if _, err := lock(owner); err != redis.Nil {
				t.Fatalf("acquire %d: want nil, got %v", i, err)
			}
		}
		if n := c.HGet(ctx, name, owner).Val(); n != "2" {
			t.Fatalf("hold count = %q", n)
		}
		// another owner is told the remaining TTL
		if ttl, err := lock(other); err != nil || ttl <= 0 || ttl > 30000 {
			t.Fatalf("competing acquire: %v %v", ttl, err)
		}
		if ok, err := c.Eval(ctx, redissonRenew, []string{name}, 30000, owner).Int(); err != nil || ok != 1 {
			t.Fatalf("renew: %v %v", ok, err)
		}
		if ok, _ := c.Eval(ctx, redissonRenew, []string{name}, 30000, other).Int(); ok != 0 {
			t.Fatal("a foreign renew succeeded")
		}
		unlock := func(id, requestID string) (int64, error) {
			return c.Eval(ctx, redissonUnlock, []string{name, channel, latch(requestID)},
				0, 30000, id, "publish", 13000).Int64()
		}
		if _, err := unlock(other, "r0"); err != redis.Nil {
			t.Fatalf("foreign unlock: want nil, got %v", err)
		}
		if n, err := unlock(owner, "r1"); err != nil || n != 0 {
			t.Fatalf("first unlock (still held once): %v %v", n, err)
		}
		// a retried request id answers from its latch without counting twice
		if n, err := unlock(owner, "r1"); err != nil || n != 0 {
			t.Fatalf("retried unlock: %v %v", n, err)
		}
		if n, err := unlock(owner, "r2"); err != nil || n != 1 {
			t.Fatalf("final unlock: %v %v", n, err)
		}
		msg, err := waiter.ReceiveMessage(ctx)
		if err != nil || msg.Channel != channel || msg.Payload != "0" {
			t.Fatalf("waiter's wake-up: %#v %v", msg, err)
		}
		if c.Exists(ctx, name).Val() != 0 {
			t.Fatal("lock hash still there")
		}
		if _, err := lock(other); err != redis.Nil {
			t.Fatalf("acquire after release: %v", err)
		}
	})
}

// FUNCTION DUMP writes the RDB version DUMP does.
func TestFunctionDumpRDBVersion(t *testing.T) {
	if script.RDBVersion != rdb.Version {
		t.Fatalf("FUNCTION DUMP writes RDB %d, DUMP %d", script.RDBVersion, rdb.Version)
	}
}

// A pattern that backtracks without end (Lua's matcher, like PUC Lua's, has no
// bound: 30 lazy 'a-' against 40 a's) runs no Lua instruction, yet SCRIPT KILL
// stops it, in string.match and in string.gsub, and the server answers
// meanwhile with BUSY.
func TestScriptKillStopsPatternMatching(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("busy-reply-threshold", "50"))
	c := hotkvtest.Dial(t, srv.Addr)
	for _, call := range []string{"string.match", "string.gsub"} {
		runner := hotkvtest.Dial(t, srv.Addr)
		script := "return " + call + "(string.rep('a', 40), string.rep('a-', 30)..'b', 'x')"
		if call == "string.match" {
			script = "return string.match(string.rep('a', 40), string.rep('a-', 30)..'b')"
		}
		runner.Write(hotkvtest.EncodeCommand("EVAL", script, "0"))
		waitFor(t, func() bool { return strings.HasPrefix(c.Do("PING"), "-BUSY") })
		if r := c.Do("SCRIPT", "KILL"); r != "+OK\r\n" {
			t.Fatalf("%s: SCRIPT KILL: %q", call, r)
		}
		if r, err := runner.ReadReply(); err != nil || !strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL") {
			t.Fatalf("%s: the script's reply: %q %v", call, r, err)
		}
		if r := c.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("%s: PING after the kill: %q", call, r)
		}
	}
}
