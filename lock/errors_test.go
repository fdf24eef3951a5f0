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

// srvErr is an error reply from a server (go-redis's redis.Error).
type srvErr string

func (e srvErr) Error() string { return string(e) }
func (srvErr) RedisError()     {}

var errNet = errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer")

// fake is a Client that records commands and lets a hook answer them; what the
// hook does not handle goes to next (a real server), if any.
type fake struct {
	next Client
	mu   sync.Mutex
	cmds []string
	hook func(ctx context.Context, args []any) (handled bool, v any, err error)
}

func (f *fake) Do(ctx context.Context, args ...any) *redis.Cmd {
	f.mu.Lock()
	f.cmds = append(f.cmds, strings.ToLower(fmt.Sprint(args[0])))
	hook := f.hook
	f.mu.Unlock()
	cmd := redis.NewCmd(ctx, args...)
	if hook != nil {
		if ok, v, err := hook(ctx, args); ok {
			if err != nil {
				cmd.SetErr(err)
			} else {
				cmd.SetVal(v)
			}
			return cmd
		}
	}
	if f.next == nil {
		cmd.SetErr(errNet)
		return cmd
	}
	return f.next.Do(ctx, args...)
}

func (f *fake) setHook(h func(ctx context.Context, args []any) (bool, any, error)) {
	f.mu.Lock()
	f.hook = h
	f.mu.Unlock()
}

func (f *fake) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.cmds {
		if c == name {
			n++
		}
	}
	return n
}

func cmdIs(args []any, name string) bool {
	return strings.EqualFold(fmt.Sprint(args[0]), name)
}

func TestObtainTransportError(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	f := &fake{}
	l := New(f)
	_, err := l.Obtain(ctx, "k", time.Second, &Options{RetryStrategy: LinearBackoff(time.Millisecond)})
	if !errors.Is(err, errNet) || errors.Is(err, ErrNotObtained) {
		t.Fatalf("got %v, want the transport error", err)
	}
	if f.count("delex") != 1 {
		t.Fatalf("no clean-up release after the failed attempt (commands %v)", f.cmds)
	}
}

// The obtain script ran but its reply was lost: the clean-up release frees the
// key at once instead of leaving it locked for a whole TTL.
func TestObtainLostReplyIsReleased(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	f := &fake{next: real}
	f.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		if cmdIs(args, "evalsha") {
			_ = real.Do(ctx, args...).Err()
			return true, nil, errNet
		}
		return false, nil, nil
	})
	if _, err := New(f).Obtain(ctx, "k", 10*time.Second, nil); !errors.Is(err, errNet) {
		t.Fatalf("got %v", err)
	}
	if real.Exists(ctx, "k").Val() != 0 {
		t.Fatal("the lost lock stays until its TTL")
	}
}

// The same token again (a client library retrying a command whose reply was
// lost) finds its own lock: obtained, with the same fence, not "held".
func TestObtainScriptIsIdempotent(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 5*time.Second)
		n := s.locker().nodes[0]
		ok1, f1, _, err1 := n.obtain(ctx, "k", "{k}:fence", "tok", 1000)
		ok2, f2, _, err2 := n.obtain(ctx, "k", "{k}:fence", "tok", 5000)
		ok3, _, pttl, err3 := n.obtain(ctx, "k", "{k}:fence", "other", 1000)
		if err1 != nil || err2 != nil || err3 != nil || !ok1 || !ok2 || ok3 || f1 != 1 || f2 != 1 {
			t.Fatalf("%v %v %v / %v %v %v / %v %v", ok1, f1, err1, ok2, f2, err2, ok3, err3)
		}
		if pttl <= 4000 || pttl > 5000 {
			t.Fatalf("holder's PTTL %d, want the refreshed 5000", pttl)
		}
	})
}

// A reply that comes back after the TTL (less the drift) is no lock: the
// attempt releases the key and counts as failed.
func TestObtainTooSlow(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	f := &fake{next: real}
	f.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		if cmdIs(args, "evalsha") {
			v, err := real.Do(ctx, args...).Result()
			time.Sleep(60 * time.Millisecond)
			return true, v, err
		}
		return false, nil, nil
	})
	_, err := New(f).Obtain(ctx, "slow", 50*time.Millisecond, nil)
	if !errors.Is(err, ErrNotObtained) {
		t.Fatalf("got %v, want ErrNotObtained", err)
	}
	if f.count("delex") != 1 {
		t.Fatal("no release after the too-late reply")
	}
}

func TestWrongTypes(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 5*time.Second)
		l := s.locker()
		s.c.HSet(ctx, "h", "f", "v")
		_, err := l.Obtain(ctx, "h", time.Second, nil)
		if err == nil || errors.Is(err, ErrNotObtained) || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("lock key of the wrong type: %v", err)
		}
		// A fence counter that is not an integer fails before the lock is set.
		s.c.Set(ctx, DefaultFenceKey("k"), "not a number", 0)
		if _, err := l.Obtain(ctx, "k", time.Second, nil); err == nil || errors.Is(err, ErrNotObtained) {
			t.Fatalf("bad fence counter: %v", err)
		}
		if s.c.Exists(ctx, "k").Val() != 0 {
			t.Fatal("lock key written although the fence failed")
		}
		// The lock key turned into a hash while held: Refresh, Release, TTL report
		// the server's error and do not pretend anything.
		s.c.Del(ctx, DefaultFenceKey("k"))
		lk, err := l.Obtain(ctx, "k", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.c.Del(ctx, "k")
		s.c.HSet(ctx, "k", "f", "v")
		if err := lk.Refresh(ctx, time.Second); err == nil || errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHeld) {
			t.Fatalf("Refresh: %v", err)
		}
		if _, err := lk.TTL(ctx); err == nil || errors.Is(err, ErrExpired) {
			t.Fatalf("TTL: %v", err)
		}
		if lk.Err() != nil {
			t.Fatalf("a server error finished the lock: %v", lk.Err())
		}
		if err := lk.Release(ctx); err == nil || errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHeld) {
			t.Fatalf("Release: %v", err)
		}
		if s.c.HGet(ctx, "k", "f").Val() != "v" {
			t.Fatal("the hash was touched")
		}
		// The capabilities are not mistaken for an old server.
		if n := l.nodes[0]; !s.lua && (n.setIfeq.Load() == capLua || n.delex.Load() == capLua) {
			t.Fatal("WRONGTYPE-like errors switched to the Lua path")
		}
	})
}

// The script cache flushed (a restart, a failover, SCRIPT FLUSH): EVALSHA's
// NOSCRIPT falls back to EVAL.
func TestNoScript(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := ctxT(t, 5*time.Second)
		f := &fake{next: s.c}
		l := New(f, s.opts...)
		for i := 0; i < 3; i++ {
			s.c.ScriptFlush(ctx)
			lk, err := l.Obtain(ctx, "ns", time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lk.TTL(ctx); err != nil {
				t.Fatal(err)
			}
			s.c.ScriptFlush(ctx)
			if err := lk.Refresh(ctx, time.Second); err != nil {
				t.Fatal(err)
			}
			s.c.ScriptFlush(ctx)
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if f.count("eval") < 3 {
			t.Fatalf("EVAL used %d times", f.count("eval"))
		}
	})
}

// A server that rejects DELEX and SET IFEQ as Redis 7 does gets the scripts,
// once: the native command is not tried again.
func TestDetectOldServer(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	f := &fake{next: real}
	f.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		switch {
		case cmdIs(args, "delex"):
			return true, nil, srvErr("ERR unknown command 'DELEX', with args beginning with: 'k' 'IFEQ' 'x' ")
		case cmdIs(args, "set") && len(args) > 3 && strings.EqualFold(fmt.Sprint(args[3]), "ifeq"):
			return true, nil, srvErr("ERR syntax error")
		}
		return false, nil, nil
	})
	l := New(f)
	for i := 0; i < 3; i++ {
		lk, err := l.Obtain(ctx, "k", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Refresh(ctx, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if p := real.PTTL(ctx, "k").Val(); p < 1900*time.Millisecond {
			t.Fatalf("Lua refresh: PTTL %v", p)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if real.Exists(ctx, "k").Val() != 0 {
			t.Fatal("Lua release left the key")
		}
	}
	if f.count("delex") != 1 || f.count("set") != 1 {
		t.Fatalf("native commands tried %d (DELEX) and %d (SET) times, want once each", f.count("delex"), f.count("set"))
	}
}

// Other errors of the native commands are returned, and do not switch to Lua.
func TestNativeErrorsDoNotSwitch(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	f := &fake{next: real}
	l := New(f)
	lk, err := l.Obtain(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		if cmdIs(args, "delex") || cmdIs(args, "set") {
			return true, nil, errNet
		}
		return false, nil, nil
	})
	if err := lk.Refresh(ctx, time.Second); !errors.Is(err, errNet) {
		t.Fatalf("Refresh: %v", err)
	}
	if lk.Err() != nil {
		t.Fatalf("a transport error finished the lock: %v", lk.Err())
	}
	if err := lk.Release(ctx); !errors.Is(err, errNet) {
		t.Fatalf("Release: %v", err)
	}
	if !errors.Is(lk.Err(), ErrReleased) {
		t.Fatalf("Err after a failed Release: %v", lk.Err())
	}
	if err := lk.Release(ctx); !errors.Is(err, ErrReleased) {
		t.Fatalf("second Release: %v", err)
	}
	if n := l.nodes[0]; n.setIfeq.Load() == capLua || n.delex.Load() == capLua {
		t.Fatal("switched to Lua on a transport error")
	}
}

func TestUnexpectedReplies(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	f := &fake{next: real}
	l := New(f, WithLuaScripts())
	lk, err := l.Obtain(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.setHook(func(ctx context.Context, args []any) (bool, any, error) {
		if cmdIs(args, "evalsha") {
			return true, "surprise", nil
		}
		return false, nil, nil
	})
	if _, err := l.Obtain(ctx, "k2", time.Second, nil); err == nil || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("Obtain: %v", err)
	}
	if err := lk.Refresh(ctx, time.Second); err == nil || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("Refresh: %v", err)
	}
	if _, err := lk.TTL(ctx); err == nil || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("TTL: %v", err)
	}
	if err := lk.Release(ctx); err == nil || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("Release: %v", err)
	}
}

// The watchdog cannot reach the server: the loss is reported when the validity
// ends, not before and not much after.
func TestWatchdogUnreachable(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	real := hotkv(t)
	tries(t, 3, func() error {
		f := &fake{next: real}
		lk, err := New(f).Obtain(ctx, "k", slow*90*time.Millisecond, &Options{AutoRefresh: true})
		if err != nil {
			return err
		}
		time.Sleep(slow * 100 * time.Millisecond) // refreshed a few times
		if lk.Err() != nil {
			return fmt.Errorf("lost while reachable: %v", lk.Err())
		}
		f.setHook(func(context.Context, []any) (bool, any, error) { return true, nil, errNet })
		dl := lk.Deadline()
		select {
		case <-lk.Done():
		case <-time.After(2 * time.Second):
			return errors.New("loss never reported")
		}
		if d := time.Since(dl); d < 0 || d > slow*40*time.Millisecond {
			return fmt.Errorf("loss reported %v after the deadline", d)
		}
		if !errors.Is(lk.Err(), ErrExpired) {
			return fmt.Errorf("Err %v", lk.Err())
		}
		if n := f.count("set"); n < 3 {
			return fmt.Errorf("watchdog tried %d refreshes", n)
		}
		real.Del(ctx, "k")
		return nil
	})
}

// Waiting for a release without keyspace notifications falls back to the retry
// strategy: a client without Subscribe, or CONFIG refused.
func TestWaitFallbacks(t *testing.T) {
	ctx := ctxT(t, 5*time.Second)
	real := hotkv(t)
	real.ConfigSet(ctx, "notify-keyspace-events", "KA")
	for name, c := range map[string]Client{
		"no Subscribe": &fake{next: real},
		"CONFIG refused": subscriberFake{&fake{next: real, hook: func(_ context.Context, args []any) (bool, any, error) {
			if cmdIs(args, "config") {
				return true, nil, srvErr("NOPERM User has no permissions to run the 'config|get' command")
			}
			return false, nil, nil
		}}, real},
	} {
		t.Run(name, func(t *testing.T) {
			l := New(c, EnableKeyspaceNotifications())
			defer l.Close()
			holder, err := l.Obtain(ctx, name, 10*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Obtain(ctx, name, time.Second, &Options{WaitForRelease: true}); !errors.Is(err, ErrNotObtained) {
				t.Fatalf("NoRetry fallback: %v", err)
			}
			time.AfterFunc(50*time.Millisecond, func() { _ = holder.Release(context.Background()) })
			if _, err := l.Obtain(ctx, name, time.Second, &Options{WaitForRelease: true, RetryStrategy: LinearBackoff(5 * time.Millisecond)}); err != nil {
				t.Fatalf("polling fallback: %v", err)
			}
			if l.nodes[0].watch != nil {
				t.Fatal("subscribed although notifications are unusable")
			}
		})
	}
}

type subscriberFake struct {
	*fake
	s Subscriber
}

func (s subscriberFake) Subscribe(ctx context.Context, ch ...string) *redis.PubSub {
	return s.s.Subscribe(ctx, ch...)
}

func TestConfigHelpers(t *testing.T) {
	for f, ok := range map[string]bool{"": false, "KA": true, "AK": true, "Kgx": true, "Kg": false, "Egx": false, "KEA": true, "Kg$x": true} {
		if notifyFlagsOK(f) != ok {
			t.Errorf("notifyFlagsOK(%q) = %v", f, !ok)
		}
	}
	for f, want := range map[string]string{"": "Kgxe", "E$": "E$Kgxe", "A": "AK", "Kx": "Kxge"} {
		if got := withNotifyFlags(f); got != want {
			t.Errorf("withNotifyFlags(%q) = %q, want %q", f, got, want)
		}
	}
	if v, ok := configValue(map[any]any{"notify-keyspace-events": "KA"}, "notify-keyspace-events"); !ok || v != "KA" {
		t.Error("RESP3 map")
	}
	if v, ok := configValue([]any{"notify-keyspace-events", "Kx"}, "notify-keyspace-events"); !ok || v != "Kx" {
		t.Error("RESP2 array")
	}
	if _, ok := configValue([]any{}, "notify-keyspace-events"); ok {
		t.Error("empty reply")
	}
}

func TestRetryStrategies(t *testing.T) {
	if NoRetry().Backoff(1) >= 0 {
		t.Error("NoRetry retries")
	}
	if d := LinearBackoff(7 * time.Millisecond).Backoff(100); d != 7*time.Millisecond {
		t.Errorf("LinearBackoff: %v", d)
	}
	e := ExponentialBackoff(10*time.Millisecond, 80*time.Millisecond)
	for n, step := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 80, 5: 80, 60: 80, 1000: 80} {
		step *= time.Millisecond
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d := e.Backoff(n)
			if d < step/2 || d > step {
				t.Fatalf("failure %d: %v outside [%v, %v]", n, d, step/2, step)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("failure %d: no jitter (%d distinct pauses)", n, len(seen))
		}
	}
	l := LimitRetry(LinearBackoff(time.Millisecond), 2)
	if l.Backoff(1) != time.Millisecond || l.Backoff(2) != time.Millisecond || l.Backoff(3) >= 0 {
		t.Error("LimitRetry")
	}
}

func TestNewRedlockNeedsClients(t *testing.T) {
	if _, err := NewRedlock(nil); err == nil {
		t.Fatal("no error")
	}
}
