package lock

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/redis/go-redis/v9"
)

// server is a server under test with the Locker options that select its path.
type server struct {
	name string
	c    *redis.Client
	opts []LockerOption
	lua  bool // the Lua path (detected or forced)
}

// hotkv starts an in-process HotKV and returns a go-redis client to it.
func hotkv(t testing.TB) *redis.Client {
	t.Helper()
	srv := hotkvtest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// redis7 starts the redis-server on PATH (Debian's 7.0: no DELEX, no SET IFEQ)
// on a unix socket, or skips.
func redis7(t testing.TB) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH: the Lua path against real Redis is not tested here (CI installs it: apt-get install redis-server)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			break
		}
		if i == 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(25 * time.Millisecond)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// eachServer runs f against HotKV (native commands), HotKV with the Lua scripts
// forced, and redis-server 7.0 (Lua detected) when it is on PATH.
func eachServer(t *testing.T, f func(t *testing.T, s server)) {
	t.Run("hotkv", func(t *testing.T) { f(t, server{name: "hotkv", c: hotkv(t)}) })
	t.Run("hotkv-lua", func(t *testing.T) {
		f(t, server{name: "hotkv-lua", c: hotkv(t), opts: []LockerOption{WithLuaScripts()}, lua: true})
	})
	t.Run("redis7", func(t *testing.T) { f(t, server{name: "redis7", c: redis7(t), lua: true}) })
}

func (s server) locker(opts ...LockerOption) *Locker {
	return New(s.c, append(append([]LockerOption{}, s.opts...), opts...)...)
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// tries runs f up to n times until it returns nil. For checks of timing that a
// starved machine can break without any bug: on the shared 2-core machine this
// was written on, a process sometimes does not run for 100-400ms, so a timer or
// a refresh comes that much late. A real bug fails every attempt.
func tries(t *testing.T, n int, f func() error) {
	t.Helper()
	var errs []string
	for i := 0; i < n; i++ {
		err := f()
		if err == nil {
			if i > 0 {
				t.Logf("passed on attempt %d; earlier: %v", i+1, errs)
			}
			return
		}
		errs = append(errs, err.Error())
	}
	t.Fatalf("%d attempts failed: %v", n, errs)
}
