package server

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBatchClockStartsUnderTheLock: a batch that waited for the engine lock
// (held here by the test, as a snapshot's step or another loop's batch
// holds it) starts when it gets it: its command's frozen now (SET PX's
// deadline) is not the time of the wait's start, and SLOWLOG and
// commandstats count the command's run, not the wait. Event loops and
// goroutine mode.
func TestBatchClockStartsUnderTheLock(t *testing.T) {
	const held = 300 * time.Millisecond
	for _, goroutines := range []bool{false, true} {
		name := map[bool]string{false: "loops", true: "goroutines"}[goroutines]
		t.Run(name, func(t *testing.T) {
			s, addr := startListening(t, goroutines, "--slowlog-log-slower-than", "100000")
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
			defer c.Close()
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			s.eng.Lock()
			done := make(chan error, 1)
			go func() { done <- c.Do(ctx, "SET", "k", "v", "PX", "1000").Err() }()
			time.Sleep(held)
			released := time.Now().UnixMilli()
			s.eng.Unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			at, err := c.Do(ctx, "PEXPIRETIME", "k").Int64()
			if err != nil {
				t.Fatal(err)
			}
			// the deadline counts from when the SET ran (1 ms of slack for
			// the clocks' rounding), not from its arrival 300 ms before
			if at < released+1000-1 {
				t.Errorf("PEXPIRETIME %d: the deadline counts from %d ms before the lock was released", at, released+1000-at)
			}
			if n, err := c.Do(ctx, "SLOWLOG", "LEN").Int64(); err != nil || n != 0 {
				log, _ := c.Do(ctx, "SLOWLOG", "GET").Result()
				t.Errorf("SLOWLOG LEN = %d, %v (%v): the wait for the lock counted as the SET's run", n, err, log)
			}
		})
	}
}
