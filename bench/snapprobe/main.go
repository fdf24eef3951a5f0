// Command snapprobe measures how long clients wait while a server takes a
// snapshot: with a dataset of -keys keys (DEBUG POPULATE, 32-byte values)
// and -writers clients sending SETs over it, a probe client sends PING every
// -every and times each reply, while the server runs each of -ops in turn
// (-rate paces the writers: that many SETs a second in all, on a schedule
// that does not wait for a slow reply; 0, the default, sends each as soon
// as the last was answered):
//
//	bgsave        BGSAVE, until rdb_bgsave_in_progress is 0
//	bgrewriteaof  BGREWRITEAOF, until aof_rewrite_in_progress is 0
//	appendonly    CONFIG SET appendonly yes (a rewrite, then appends),
//	              until the rewrite is done; then CONFIG SET appendonly no
//	none          nothing for -none (default 10 s): the probe under the write
//	              load alone, the control for the operations' figures (on a
//	              small machine the load generator and the server share the
//	              cores, and the probe waits for a core even without a snapshot)
//
// After populating it sends MEMORY PURGE and waits -settle. For each
// operation it prints the operation's duration, the probe's count, longest
// wait and 99th percentile, and the writes acknowledged meanwhile. The
// longest wait includes the time the command itself took to reply (BGSAVE
// and BGREWRITEAOF reply once the snapshot has started; CONFIG SET
// appendonly yes once the rewrite has).
//
//	go run ./bench/snapprobe -addr 127.0.0.1:6379 -keys 1000000
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	keys := flag.Int("keys", 1_000_000, "dataset size (DEBUG POPULATE)")
	writers := flag.Int("writers", 4, "clients sending SETs during the operations")
	every := flag.Duration("every", 20*time.Millisecond, "probe interval")
	ops := flag.String("ops", "bgsave,bgrewriteaof,appendonly", "operations, in order")
	name := flag.String("name", "", "label for the output lines")
	settle := flag.Duration("settle", 2*time.Second, "pause after MEMORY PURGE, before the operations")
	flag.DurationVar(&noneFor, "none", 10*time.Second, "how long the none operation (the write load alone) runs")
	flag.IntVar(&rate, "rate", 0, "SETs per second the writers send together (0: each as fast as the server answers)")
	flag.Parse()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: *addr, ReadTimeout: -1, WriteTimeout: -1})
	if err := c.FlushAll(ctx).Err(); err != nil {
		fail(err)
	}
	start := time.Now()
	if err := c.Do(ctx, "DEBUG", "POPULATE", *keys, "key", 32).Err(); err != nil {
		fail(err)
	}
	fmt.Printf("# %s: %d keys populated in %v\n", *name, *keys, time.Since(start).Round(time.Millisecond))
	// the load's garbage is collected and handed back before the
	// operations (else the collection lands in the first one's window, on
	// HotKV a full Go GC: BENCHMARKS.md)
	must(c.Do(ctx, "MEMORY", "PURGE").Err())
	time.Sleep(*settle)
	for _, op := range strings.Split(*ops, ",") {
		run(ctx, c, *addr, *name, op, *keys, *writers, *every)
	}
}

// noneFor is how long the none operation runs (-none); rate paces the
// writers (-rate).
var (
	noneFor time.Duration
	rate    int
)

func run(ctx context.Context, c *redis.Client, addr, name, op string, keys, writers int, every time.Duration) {
	stop := make(chan struct{})
	var acked atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: -1})
			defer wc.Close()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			var interval time.Duration // between this writer's SETs, on a schedule
			if rate > 0 {
				interval = time.Duration(writers) * time.Second / time.Duration(rate)
			}
			next := time.Now()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if interval > 0 {
					// open loop: a SET the server was slow to answer does not
					// delay the schedule (those behind it go at once)
					next = next.Add(interval)
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
				}
				if wc.Set(ctx, "key:"+strconv.Itoa(r.IntN(keys)), r.Uint64(), 0).Err() == nil {
					acked.Add(1)
				}
			}
		}()
	}
	var waits []time.Duration
	var at []time.Duration // when each probe was sent, from the operation's start
	var opStart time.Time
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		pc := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: -1, PoolSize: 1})
		defer pc.Close()
		pc.Ping(ctx)
		for {
			select {
			case <-stop:
				return
			default:
			}
			t := time.Now()
			if err := pc.Ping(ctx).Err(); err != nil {
				fail(err)
			}
			waits = append(waits, time.Since(t))
			at = append(at, t.Sub(opStart))
			time.Sleep(every)
		}
	}()
	time.Sleep(300 * time.Millisecond) // the load runs before the operation
	before := acked.Load()
	start := time.Now()
	waits, at, opStart = waits[:0:0], at[:0:0], start
	var field string
	switch op {
	case "bgsave":
		must(c.BgSave(ctx).Err())
		field = "rdb_bgsave_in_progress"
	case "bgrewriteaof":
		must(c.BgRewriteAOF(ctx).Err())
		field = "aof_rewrite_in_progress"
	case "appendonly":
		must(c.ConfigSet(ctx, "appendonly", "yes").Err())
		field = "aof_rewrite_in_progress"
	case "none": // the load alone
		time.Sleep(noneFor)
		field = "aof_rewrite_in_progress"
	default:
		fail(fmt.Errorf("unknown op %q", op))
	}
	for {
		time.Sleep(10 * time.Millisecond)
		info := c.Info(ctx, "persistence").Val()
		if strings.Contains(info, field+":0") && !strings.Contains(info, "aof_rewrite_scheduled:1") {
			break
		}
	}
	took := time.Since(start)
	during := acked.Load() - before
	close(stop)
	wg.Wait()
	<-probeDone
	if op == "appendonly" {
		must(c.ConfigSet(ctx, "appendonly", "no").Err())
	}
	if os.Getenv("SNAPPROBE_TRACE") != "" {
		for i, w := range waits {
			if w > 5*time.Millisecond {
				fmt.Printf("  probe at %v (unix ms %d) waited %v\n", at[i].Round(time.Millisecond), start.Add(at[i]).UnixMilli(), w.Round(10*time.Microsecond))
			}
		}
	}
	slices.Sort(waits)
	var worst, p99 time.Duration
	if n := len(waits); n > 0 {
		worst, p99 = waits[n-1], waits[n*99/100]
	}
	fmt.Printf("%s %-13s took %8v  probes %4d  longest %8v  p99 %8v  writes during %d\n",
		name, op, took.Round(time.Millisecond), len(waits), worst.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), during)
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "snapprobe:", err)
	os.Exit(1)
}
