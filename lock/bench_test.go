package lock

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// BenchmarkObtainRelease: obtain+release cycles per second with this package,
// go-redsync/redsync and bsm/redislock, side by side on the same server (an
// in-process HotKV; redis-server too when on PATH). serial: one goroutine, one
// key (latency-bound); parallel: GOMAXPROCS goroutines, a key each (throughput).
//
//	go test ./lock -run '^$' -bench ObtainRelease -benchtime 2000x
func BenchmarkObtainRelease(b *testing.B) {
	servers := []struct {
		name  string
		start func(testing.TB) *redis.Client
	}{{"hotkv", hotkv}, {"redis7", redis7}}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			c := srv.start(b)
			ctx := context.Background()
			const ttl = 10 * time.Second
			libs := []struct {
				name  string
				cycle func(key string) error
			}{
				{"lock", lockCycle(New(c), ctx, ttl)},
				{"lock-lua", lockCycle(New(c, WithLuaScripts()), ctx, ttl)},
				{"redsync", func() func(string) error {
					rs := redsync.New(goredis.NewPool(c))
					return func(key string) error {
						m := rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
						if err := m.LockContext(ctx); err != nil {
							return err
						}
						_, err := m.UnlockContext(ctx)
						return err
					}
				}()},
				{"redislock", func() func(string) error {
					rl := redislock.New(c)
					return func(key string) error {
						lk, err := rl.Obtain(ctx, key, ttl, nil)
						if err != nil {
							return err
						}
						return lk.Release(ctx)
					}
				}()},
			}
			for _, lib := range libs {
				b.Run(lib.name+"/serial", func(b *testing.B) {
					key := "bench:" + lib.name
					for b.Loop() {
						if err := lib.cycle(key); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
				})
				b.Run(lib.name+"/parallel", func(b *testing.B) {
					var id atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						key := "bench:" + lib.name + ":" + strconv.FormatInt(id.Add(1), 10)
						for pb.Next() {
							if err := lib.cycle(key); err != nil {
								b.Error(err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
				})
			}
		})
	}
}

// BenchmarkSideBySide interleaves the three libraries in rounds of 10 cycles
// on one key, so that the noise of a shared machine falls on all of them alike,
// and reports each one's cycles per second (serial, one goroutine), against an
// in-process HotKV and against redis-server when it is on PATH.
//
//	go test ./lock -run '^$' -bench SideBySide -benchtime 300x
func BenchmarkSideBySide(b *testing.B) {
	b.Run("hotkv", func(b *testing.B) { sideBySide(b, hotkv(b)) })
	b.Run("redis7", func(b *testing.B) { sideBySide(b, redis7(b)) })
}

func sideBySide(b *testing.B, c *redis.Client) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	rs := redsync.New(goredis.NewPool(c))
	rl := redislock.New(c)
	libs := []struct {
		name  string
		cycle func(key string) error
	}{
		{"lock", lockCycle(New(c), ctx, ttl)},
		{"redsync", func(key string) error {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			_, err := m.UnlockContext(ctx)
			return err
		}},
		{"redislock", func(key string) error {
			lk, err := rl.Obtain(ctx, key, ttl, nil)
			if err != nil {
				return err
			}
			return lk.Release(ctx)
		}},
	}
	spent := make([]time.Duration, len(libs))
	cycles := 0
	for b.Loop() { // one round: 10 cycles of each library
		for i, lib := range libs {
			start := time.Now()
			for j := 0; j < 10; j++ {
				if err := lib.cycle("side"); err != nil {
					b.Fatal(err)
				}
			}
			spent[i] += time.Since(start)
		}
		cycles += 10
	}
	for i, lib := range libs {
		b.ReportMetric(float64(cycles)/spent[i].Seconds(), lib.name+"-cycles/s")
	}
}

func lockCycle(l *Locker, ctx context.Context, ttl time.Duration) func(string) error {
	return func(key string) error {
		lk, err := l.Obtain(ctx, key, ttl, nil)
		if err != nil {
			return err
		}
		return lk.Release(ctx)
	}
}
