// Command cron shows the cron lock: several instances of a service run the same
// schedule, and for each tick of the billing run exactly one of them does the
// work, even when an instance is late or the run takes longer than expected.
//
//	go run ./cmd/hotkv &
//	go run ./examples/cron                      # 3 instances in this process
//	go run ./examples/cron -instances 1 -name a # or one per terminal: a, b, c...
//
// The recipe: every instance wakes at each tick and tries the job's lock
// without waiting (lock.NoRetry). The winner checks the tick's done-marker,
// runs the job under the lock's context (the watchdog keeps the lock while it
// runs and cancels the context if it is lost), writes the marker and releases.
// The others skip the tick. The marker, not the lock, makes a tick run once: a
// late instance that gets the lock after the run finds the marker and skips.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
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
	addr      string
	name      string        // instance name prefix
	instances int           // instances run by this process
	ticks     int           // ticks to run
	every     time.Duration // schedule period
	work      time.Duration // duration of one billing run
	ttl       time.Duration // the lock's TTL (the watchdog extends it during a longer run)
	skew      time.Duration // instances wake up to this late (clock skew, GC, scheduling)
}

// report counts, per tick (Unix ms), the runs this process saw.
type report struct {
	mu   sync.Mutex
	runs map[int64][]string // tick -> instances that ran it
	skip map[int64]int      // tick -> instances that skipped it
	lost int                // runs stopped because the lock was lost
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:6379", "HotKV (or Redis) address")
	flag.StringVar(&cfg.name, "name", "instance", "instance name prefix")
	flag.IntVar(&cfg.instances, "instances", 3, "instances to run in this process")
	flag.IntVar(&cfg.ticks, "ticks", 5, "ticks to run")
	flag.DurationVar(&cfg.every, "every", time.Second, "schedule period")
	flag.DurationVar(&cfg.work, "work", 300*time.Millisecond, "duration of one billing run")
	flag.DurationVar(&cfg.ttl, "ttl", 200*time.Millisecond, "the lock's TTL (shorter than -work shows the watchdog at work)")
	flag.DurationVar(&cfg.skew, "skew", 100*time.Millisecond, "maximum lateness of an instance at a tick")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cron:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	if conn, err := net.DialTimeout("tcp", cfg.addr, time.Second); err != nil {
		return nil, fmt.Errorf("no server at %s (start one: go run ./cmd/hotkv): %w", cfg.addr, err)
	} else {
		conn.Close()
	}
	rep := &report{runs: map[int64][]string{}, skip: map[int64]int{}}
	var printMu sync.Mutex
	say := func(format string, args ...any) {
		printMu.Lock()
		defer printMu.Unlock()
		fmt.Fprintf(out, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
	}
	// The first tick all instances agree on: the next period boundary.
	first := time.Now().Truncate(cfg.every).Add(cfg.every)
	var wg sync.WaitGroup
	errs := make(chan error, cfg.instances)
	for i := 0; i < cfg.instances; i++ {
		name := cfg.name + "-" + strconv.Itoa(i+1)
		wg.Go(func() {
			// Each instance has its own connection and Locker, as separate
			// processes would.
			c := redis.NewClient(&redis.Options{Addr: cfg.addr})
			defer c.Close()
			in := &instance{name: name, c: c, locker: lock.New(c), cfg: cfg, say: say, rep: rep}
			if err := in.loop(ctx, first); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return rep, err
	}
	// What all processes did: the runs counted on the server (after the last
	// run had time to finish).
	time.Sleep(cfg.work + cfg.skew)
	c := redis.NewClient(&redis.Options{Addr: cfg.addr})
	defer c.Close()
	rep.mu.Lock()
	defer rep.mu.Unlock()
	for k := 0; k < cfg.ticks; k++ {
		tick := first.Add(time.Duration(k) * cfg.every).UnixMilli()
		n, _ := c.HGet(ctx, "cron:billing-run:runs", strconv.FormatInt(tick, 10)).Int()
		say("summary: tick %d ran %d time(s) in all processes; here: run by %v, skipped by %d instance(s)", k+1, n, rep.runs[tick], rep.skip[tick])
	}
	return rep, nil
}

type instance struct {
	name   string
	c      *redis.Client
	locker *lock.Locker
	cfg    config
	say    func(string, ...any)
	rep    *report
}

func (in *instance) loop(ctx context.Context, first time.Time) error {
	for k := 0; k < in.cfg.ticks; k++ {
		tick := first.Add(time.Duration(k) * in.cfg.every)
		late := time.Duration(rand.Int64N(int64(in.cfg.skew) + 1))
		select {
		case <-time.After(time.Until(tick) + late):
		case <-ctx.Done():
			return nil
		}
		if err := in.onTick(ctx, k+1, tick); err != nil {
			return err
		}
	}
	return nil
}

func (in *instance) onTick(ctx context.Context, k int, at time.Time) error {
	tick := at.UnixMilli()
	label := fmt.Sprintf("tick %d (%s)", k, at.Format("15:04:05.000"))
	// The lock protects the job, whatever the tick: two billing runs never
	// overlap. The watchdog (AutoRefresh) extends it every ttl/3 while the run
	// lasts; if it is lost anyway, lk.Context() is canceled and the run stops.
	lk, err := in.locker.Obtain(ctx, "cron:billing-run", in.cfg.ttl, &lock.Options{AutoRefresh: true})
	if errors.Is(err, lock.ErrNotObtained) {
		in.skipped(tick, label, "another instance holds the billing-run lock")
		return nil
	}
	if err != nil {
		return err
	}
	defer lk.Release(context.WithoutCancel(ctx))
	done := "cron:billing-run:done:" + strconv.FormatInt(tick, 10)
	if n, err := in.c.Exists(ctx, done).Result(); err != nil {
		return err
	} else if n > 0 {
		in.skipped(tick, label, "its run is already done")
		return nil
	}
	in.say("%s runs the billing run for %s (lock fence %d)", in.name, label, lk.Fence())
	if err := billingRun(lk.Context(), in.cfg.work); err != nil {
		in.say("%s: billing run for %s stopped, the lock was lost: %v", in.name, label, context.Cause(lk.Context()))
		in.rep.mu.Lock()
		in.rep.lost++
		in.rep.mu.Unlock()
		return nil
	}
	// The marker outlives the lock: a late instance will find it.
	if err := in.c.Set(ctx, done, in.name, 10*in.cfg.every+time.Minute).Err(); err != nil {
		return err
	}
	in.c.HIncrBy(ctx, "cron:billing-run:runs", strconv.FormatInt(tick, 10), 1)
	in.rep.mu.Lock()
	in.rep.runs[tick] = append(in.rep.runs[tick], in.name)
	in.rep.mu.Unlock()
	return nil
}

func (in *instance) skipped(tick int64, label, why string) {
	in.say("%s skips %s: %s", in.name, label, why)
	in.rep.mu.Lock()
	in.rep.skip[tick]++
	in.rep.mu.Unlock()
}

// billingRun stands for the real job; it stops if ctx (the lock's context) ends.
func billingRun(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
