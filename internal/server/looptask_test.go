package server

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// onEventLoop reports whether the calling goroutine is an event loop's.
func onEventLoop() bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "network.(*eventLoop).run")
}

// TestOnLoop: with event loops a posted task runs on a loop (the snapshot's
// steps hold the engine lock on the thread its clients wait for); in
// goroutine mode, and once the loops have stopped, on the caller at once;
// and a loop that does not come to it (blocked on the engine lock by a
// client's batch here) leaves it to the caller after loopTaskPatience.
func TestOnLoop(t *testing.T) {
	run := func(s *Server) (onLoop bool, took time.Duration) {
		start := time.Now()
		s.onLoop(func() { onLoop = onEventLoop() })
		return onLoop, time.Since(start)
	}
	t.Run("loops", func(t *testing.T) {
		s, addr := startListening(t, false)
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		if err := c.Ping(context.Background()).Err(); err != nil { // the loops run
			t.Fatal(err)
		}
		for range 100 {
			if on, _ := run(s); !on {
				t.Fatal("the task ran off the event loops")
			}
		}
		// a loop blocked in a client's batch (the engine lock is held)
		s.eng.Lock()
		done := make(chan error, 1)
		go func() { done <- c.Set(context.Background(), "k", "v", 0).Err() }()
		time.Sleep(100 * time.Millisecond)
		on, took := run(s)
		s.eng.Unlock()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if on || took < loopTaskPatience || took > 40*loopTaskPatience {
			t.Fatalf("with the loop blocked the task ran on a loop: %v, after %v (patience %v)", on, took, loopTaskPatience)
		}
		if s.tasks.pending.Load() != 0 || len(s.tasks.q) != 0 {
			t.Fatalf("the task the caller ran is still queued: %d", len(s.tasks.q))
		}
		s.net.Stop()
		if on, took := run(s); on || took >= loopTaskPatience {
			t.Fatalf("after the loops stopped: on a loop %v, after %v", on, took)
		}
	})
	t.Run("goroutines", func(t *testing.T) {
		s, _ := startListening(t, true)
		if on, took := run(s); on || took >= loopTaskPatience {
			t.Fatalf("goroutine mode: on a loop %v, after %v", on, took)
		}
	})
}
