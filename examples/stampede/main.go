// Command stampede shows the cache-stampede lock: when a popular cache entry is
// missing or stale, one request rebuilds it while the others wait for it (cold
// cache) or serve the stale value at once (stale cache), instead of all of them
// running the expensive query together.
//
//	go run ./cmd/hotkv &
//	go run ./examples/stampede
//
// The recipe: the entry holds its value and a "fresh until" time, and lives
// longer than that (the stale window). A request that finds it fresh serves it.
// One that finds it stale tries the rebuild lock without waiting: the winner
// rebuilds in the background, and everyone serves the stale value. One that
// finds nothing waits for the rebuild lock (Options.WaitForRelease: woken by
// the release when the server publishes keyspace events, polling otherwise),
// then looks again before rebuilding: usually the winner has filled it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"time"

	"github.com/hotkv/hotkv/lock"
	"github.com/redis/go-redis/v9"
)

type config struct {
	addr     string
	requests int           // concurrent requests per round
	fresh    time.Duration // how long a built value is fresh
	rebuild  time.Duration // how long a rebuild takes
}

// round is what one burst of concurrent requests did.
type round struct {
	name                          string
	fresh, stale, waited, rebuilt int // how each request was served
	rebuilds                      int // rebuilds started (counted on the server)
	slowest                       time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:6379", "HotKV (or Redis) address")
	flag.IntVar(&cfg.requests, "requests", 50, "concurrent requests per round")
	flag.DurationVar(&cfg.fresh, "fresh", time.Second, "how long a cached value stays fresh")
	flag.DurationVar(&cfg.rebuild, "rebuild", 300*time.Millisecond, "how long rebuilding the value takes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stampede:", err)
		os.Exit(1)
	}
}

type cache struct {
	c       *redis.Client
	locker  *lock.Locker
	cfg     config
	key     string // the cache entry
	counter string // rebuilds started, for the report
	bg      sync.WaitGroup
}

func run(ctx context.Context, cfg config, out io.Writer) ([]round, error) {
	if conn, err := net.DialTimeout("tcp", cfg.addr, time.Second); err != nil {
		return nil, fmt.Errorf("no server at %s (start one: go run ./cmd/hotkv): %w", cfg.addr, err)
	} else {
		conn.Close()
	}
	c := redis.NewClient(&redis.Options{Addr: cfg.addr, PoolSize: cfg.requests + 10})
	defer c.Close()
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	ch := &cache{c: c, locker: lock.New(c), cfg: cfg, key: "cache:report:" + id, counter: "cache:report:" + id + ":rebuilds"}
	defer ch.locker.Close()

	var rounds []round
	burst := func(name string) error {
		before, _ := c.Get(ctx, ch.counter).Int()
		r := round{name: name}
		var mu sync.Mutex
		var wg sync.WaitGroup
		var firstErr error
		for i := 0; i < cfg.requests; i++ {
			wg.Go(func() {
				start := time.Now()
				_, how, err := ch.get(ctx)
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					return
				}
				r.slowest = max(r.slowest, d)
				switch how {
				case "fresh":
					r.fresh++
				case "stale":
					r.stale++
				case "waited":
					r.waited++
				case "rebuilt":
					r.rebuilt++
				}
			})
		}
		wg.Wait()
		ch.bg.Wait() // background rebuilds of this round
		after, _ := c.Get(ctx, ch.counter).Int()
		r.rebuilds = after - before
		value, _ := c.HGet(ctx, ch.key, "value").Result()
		fmt.Fprintf(out, "%-30s %d requests: %2d fresh, %2d stale, %2d waited, %d rebuilt it inline; rebuilds: %d; slowest %v; now cached: %q\n",
			name, cfg.requests, r.fresh, r.stale, r.waited, r.rebuilt, r.rebuilds, r.slowest.Round(time.Millisecond), value)
		rounds = append(rounds, r)
		return firstErr
	}
	if err := burst("cold cache:"); err != nil {
		return rounds, err
	}
	if err := burst("fresh cache:"); err != nil {
		return rounds, err
	}
	// Wait until the value goes stale.
	until, err := c.HGet(ctx, ch.key, "fresh_until").Int64()
	if err != nil {
		return rounds, err
	}
	time.Sleep(time.Until(time.UnixMilli(until + 1)))
	if err := burst("stale cache:"); err != nil {
		return rounds, err
	}
	if err := burst("after the background rebuild:"); err != nil {
		return rounds, err
	}
	return rounds, nil
}

// get serves one request: the value and how it was served (fresh, stale,
// waited for another request's rebuild, or rebuilt by this one).
func (ch *cache) get(ctx context.Context) (string, string, error) {
	v, fresh, ok, err := ch.read(ctx)
	if err != nil {
		return "", "", err
	}
	if ok && fresh {
		return v, "fresh", nil
	}
	lockKey := ch.key + ":rebuild"
	if ok { // stale: one request rebuilds in the background, nobody waits
		lk, err := ch.locker.Obtain(ctx, lockKey, ch.cfg.rebuild*2, &lock.Options{AutoRefresh: true})
		if err == nil {
			ch.bg.Go(func() {
				defer lk.Release(context.Background())
				_ = ch.build(lk)
			})
		} else if !errors.Is(err, lock.ErrNotObtained) {
			return "", "", err
		}
		return v, "stale", nil
	}
	// Cold: nothing to serve. Wait for the rebuild lock; whoever gets it first
	// rebuilds, the others find the value when their turn comes.
	wctx, cancel := context.WithTimeout(ctx, 10*ch.cfg.rebuild+5*time.Second)
	defer cancel()
	lk, err := ch.locker.Obtain(wctx, lockKey, ch.cfg.rebuild*2, &lock.Options{
		AutoRefresh:    true,
		WaitForRelease: true,
		RetryStrategy:  lock.ExponentialBackoff(5*time.Millisecond, 50*time.Millisecond),
	})
	if err != nil {
		return "", "", err
	}
	defer lk.Release(context.WithoutCancel(ctx))
	if v, _, ok, err := ch.read(ctx); err != nil || ok {
		return v, "waited", err
	}
	if err := ch.build(lk); err != nil {
		return "", "", err
	}
	v, _, _, err = ch.read(ctx)
	return v, "rebuilt", err
}

func (ch *cache) read(ctx context.Context) (value string, fresh, ok bool, err error) {
	m, err := ch.c.HGetAll(ctx, ch.key).Result()
	if err != nil || len(m) == 0 {
		return "", false, false, err
	}
	until, _ := strconv.ParseInt(m["fresh_until"], 10, 64)
	return m["value"], time.Now().UnixMilli() < until, true, nil
}

// build runs the expensive query under the lock's context (canceled if the
// lock is lost) and stores the value: fresh for cfg.fresh, kept 10 times
// longer as the stale fallback.
func (ch *cache) build(lk *lock.Lock) error {
	ctx := lk.Context()
	n, err := ch.c.Incr(ctx, ch.counter).Result()
	if err != nil {
		return err
	}
	select {
	case <-time.After(ch.cfg.rebuild): // the expensive query
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	value := fmt.Sprintf("report v%d", n)
	_, err = ch.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, ch.key, "value", value, "fresh_until", time.Now().Add(ch.cfg.fresh).UnixMilli())
		p.PExpire(ctx, ch.key, 10*ch.cfg.fresh)
		return nil
	})
	return err
}
