// Command payments shows a per-order lock with fencing: captures and refunds
// of one order arrive at several workers at once (client retries, a refund
// racing its capture) and must never overlap; and a worker that pauses while
// holding the lock (a GC pause, swap, a stopped VM) must not write after its
// lock expired and a successor took over.
//
//	go run ./cmd/hotkv &
//	go run ./examples/payments
//
// The recipe: one lock per order ("lock:order:<id>"); under it, read the order,
// decide, call the payment provider, write the new state. The write goes to a
// store that checks the lock's fence number (Lock.Fence) and rejects a write
// whose fence is older than the last one it accepted: here the store is the
// order's hash in HotKV and the check runs in the same Lua script as the write.
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
	"strings"
	"sync"
	"time"

	"github.com/hotkv/hotkv/lock"
	"github.com/redis/go-redis/v9"
)

type config struct {
	addr    string
	orders  int
	workers int
	ttl     time.Duration // the order lock's TTL
	pause   bool          // run the paused-holder scenario
}

// result is what happened, for the test.
type result struct {
	mu            sync.Mutex
	captures      map[string]int // order -> captures written
	refunded      map[string]int64
	staleRejected int
	violations    []string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:6379", "HotKV (or Redis) address")
	flag.IntVar(&cfg.orders, "orders", 5, "orders")
	flag.IntVar(&cfg.workers, "workers", 4, "workers taking requests")
	flag.DurationVar(&cfg.ttl, "ttl", 500*time.Millisecond, "TTL of an order's lock")
	flag.BoolVar(&cfg.pause, "pause", true, "also show a holder that pauses past its TTL")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "payments:", err)
		os.Exit(1)
	}
}

// The protected store: an order's hash, written only with a fence at least as
// large as the last one written (KEYS: order hash, its ledger; ARGV: fence,
// ledger entry, then field/value pairs).
var fencedWrite = redis.NewScript(`
local last = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) < last then
  return redis.error_reply('STALE fence ' .. ARGV[1] .. ' < ' .. last)
end
local kv = {'fence', ARGV[1]}
for i = 3, #ARGV do kv[#kv + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(kv))
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1`)

type request struct {
	order  string
	op     string // capture | refund
	amount int64  // refund amount (a capture takes the authorized amount)
}

type app struct {
	c      *redis.Client
	locker *lock.Locker
	cfg    config
	out    io.Writer
	outMu  sync.Mutex
	res    *result
	run    string // key prefix of this run
}

func (a *app) say(format string, args ...any) {
	a.outMu.Lock()
	defer a.outMu.Unlock()
	fmt.Fprintf(a.out, format+"\n", args...)
}

func run(ctx context.Context, cfg config, out io.Writer) (*result, error) {
	if conn, err := net.DialTimeout("tcp", cfg.addr, time.Second); err != nil {
		return nil, fmt.Errorf("no server at %s (start one: go run ./cmd/hotkv): %w", cfg.addr, err)
	} else {
		conn.Close()
	}
	c := redis.NewClient(&redis.Options{Addr: cfg.addr})
	defer c.Close()
	a := &app{c: c, locker: lock.New(c), cfg: cfg, out: out,
		res: &result{captures: map[string]int{}, refunded: map[string]int64{}},
		run: "pay:" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	defer a.locker.Close()

	// Orders authorized for 50.00 each; every order gets a capture, the same
	// capture again (a client retry), and two refunds of 10.00 and 15.00, in a
	// random order spread over the workers.
	var reqs []request
	for i := 1; i <= cfg.orders; i++ {
		id := a.run + ":order:" + strconv.Itoa(i)
		if err := c.HSet(ctx, id, "state", "authorized", "amount", 5000, "captured", 0, "refunded", 0).Err(); err != nil {
			return nil, err
		}
		reqs = append(reqs, request{id, "capture", 0}, request{id, "capture", 0},
			request{id, "refund", 1000}, request{id, "refund", 1500})
	}
	rand.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	queue := make(chan request, len(reqs))
	for _, r := range reqs {
		queue <- r
	}
	pending := sync.WaitGroup{}
	pending.Add(len(reqs))
	go func() { pending.Wait(); close(queue) }()
	var wg sync.WaitGroup
	for w := 1; w <= cfg.workers; w++ {
		wg.Go(func() {
			name := "worker-" + strconv.Itoa(w)
			for r := range queue {
				retry, err := a.handle(ctx, name, r)
				if err != nil {
					a.say("%s: %s %s: %v", name, r.op, short(r.order), err)
				}
				if retry { // a refund that came before its capture: later
					time.Sleep(5 * time.Millisecond)
					queue <- r
					continue
				}
				pending.Done()
			}
		})
	}
	wg.Wait()

	if cfg.pause {
		if err := a.pausedHolder(ctx); err != nil {
			return a.res, err
		}
	}
	a.check(ctx)
	a.say("done: %d orders, %d captures written, %d stale write(s) rejected by the store, %d invariant violation(s)",
		cfg.orders+btoi(cfg.pause), sum(a.res.captures), a.res.staleRejected, len(a.res.violations))
	for _, v := range a.res.violations {
		a.say("VIOLATION: %s", v)
	}
	return a.res, nil
}

// handle serves one request under the order's lock. retry: try again later.
func (a *app) handle(ctx context.Context, worker string, r request) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lk, err := a.locker.Obtain(ctx, "lock:"+r.order, a.cfg.ttl, &lock.Options{
		WaitForRelease: true, // wakes on the release if the server publishes keyspace events
		RetryStrategy:  lock.ExponentialBackoff(2*time.Millisecond, 50*time.Millisecond),
	})
	if err != nil {
		return false, err
	}
	defer lk.Release(context.WithoutCancel(ctx))
	o, err := a.c.HGetAll(ctx, r.order).Result()
	if err != nil {
		return false, err
	}
	captured, _ := strconv.ParseInt(o["captured"], 10, 64)
	refunded, _ := strconv.ParseInt(o["refunded"], 10, 64)
	amount, _ := strconv.ParseInt(o["amount"], 10, 64)
	switch r.op {
	case "capture":
		if o["state"] != "authorized" {
			a.say("%-9s %s: capture again: already %s, nothing to do (fence %d)", worker, short(r.order), o["state"], lk.Fence())
			return false, nil
		}
		provider(r.order, "capture", amount)
		err = a.write(ctx, lk, r.order, "capture "+strconv.FormatInt(amount, 10), "state", "captured", "captured", amount)
		if err == nil {
			a.say("%-9s %s: captured %s (fence %d)", worker, short(r.order), money(amount), lk.Fence())
		}
	case "refund":
		if o["state"] == "authorized" {
			return true, nil
		}
		if refunded+r.amount > captured {
			a.say("%-9s %s: refund %s refused: only %s left", worker, short(r.order), money(r.amount), money(captured-refunded))
			return false, nil
		}
		provider(r.order, "refund", r.amount)
		state := "partially refunded"
		if refunded+r.amount == captured {
			state = "refunded"
		}
		err = a.write(ctx, lk, r.order, "refund "+strconv.FormatInt(r.amount, 10), "state", state, "refunded", refunded+r.amount)
		if err == nil {
			a.say("%-9s %s: refunded %s, %s (fence %d)", worker, short(r.order), money(r.amount), state, lk.Fence())
		}
	}
	return false, err
}

// write is the fenced write: the store itself rejects a stale fence.
func (a *app) write(ctx context.Context, lk *lock.Lock, order, entry string, kv ...any) error {
	args := append([]any{lk.Fence(), entry + " fence " + strconv.FormatInt(lk.Fence(), 10)}, kv...)
	err := fencedWrite.Run(ctx, a.c, []string{order, order + ":ledger"}, args...).Err()
	if err != nil && strings.HasPrefix(err.Error(), "STALE") {
		a.res.mu.Lock()
		a.res.staleRejected++
		a.res.mu.Unlock()
	}
	return err
}

// pausedHolder: a worker takes an order's lock, reads it, then stalls past the
// lock's TTL. Another worker takes the expired lock and captures. The stalled
// worker wakes up and writes its capture: the store rejects its stale fence.
func (a *app) pausedHolder(ctx context.Context) error {
	order := a.run + ":order:paused"
	if err := a.c.HSet(ctx, order, "state", "authorized", "amount", 2500, "captured", 0, "refunded", 0).Err(); err != nil {
		return err
	}
	ttl := 100 * time.Millisecond
	slow, err := a.locker.Obtain(ctx, "lock:"+order, ttl, nil)
	if err != nil {
		return err
	}
	state := a.c.HGet(ctx, order, "state").Val()
	a.say("paused holder: worker-slow holds %s's lock (fence %d, TTL %v), reads %q, then stalls for %v (GC, swap...)",
		short(order), slow.Fence(), ttl, state, 3*ttl)

	fastDone := make(chan error, 1)
	go func() {
		fast, err := a.locker.Obtain(ctx, "lock:"+order, time.Second,
			&lock.Options{RetryStrategy: lock.LinearBackoff(10 * time.Millisecond)})
		if err != nil {
			fastDone <- err
			return
		}
		provider(order, "capture", 2500)
		err = a.write(ctx, fast, order, "capture 2500", "state", "captured", "captured", 2500)
		a.say("paused holder: the lock expired; worker-fast took it (fence %d) and captured %s", fast.Fence(), money(2500))
		_ = fast.Release(ctx)
		fastDone <- err
	}()
	time.Sleep(3 * ttl) // the stall
	if err := <-fastDone; err != nil {
		return err
	}
	// worker-slow still believes the order is authorized and captures it.
	err = a.write(ctx, slow, order, "capture 2500", "state", "captured", "captured", 2500)
	if err == nil {
		a.res.mu.Lock()
		a.res.violations = append(a.res.violations, "the stale capture was accepted")
		a.res.mu.Unlock()
		return nil
	}
	a.say("paused holder: worker-slow wakes up and writes its capture: rejected by the store (%v); captured once", err)
	if rerr := slow.Release(ctx); errors.Is(rerr, lock.ErrNotHeld) || errors.Is(rerr, lock.ErrExpired) {
		a.say("paused holder: worker-slow's release: %v (it deleted nothing)", rerr)
	}
	return nil
}

// check reads every order's ledger and checks the invariants.
func (a *app) check(ctx context.Context) {
	keys := a.c.Keys(ctx, a.run+":order:*:ledger").Val()
	a.res.mu.Lock()
	defer a.res.mu.Unlock()
	for _, k := range keys {
		order := strings.TrimSuffix(k, ":ledger")
		var captures int
		var captured, refunded int64
		var lastFence int64
		for _, e := range a.c.LRange(ctx, k, 0, -1).Val() {
			f := strings.Fields(e) // "capture 5000 fence 3"
			n, _ := strconv.ParseInt(f[1], 10, 64)
			fence, _ := strconv.ParseInt(f[3], 10, 64)
			if fence < lastFence {
				a.res.violations = append(a.res.violations, fmt.Sprintf("%s: fence %d written after %d", short(order), fence, lastFence))
			}
			lastFence = fence
			switch f[0] {
			case "capture":
				captures++
				captured += n
			case "refund":
				refunded += n
			}
		}
		a.res.captures[order] = captures
		a.res.refunded[order] = refunded
		if captures != 1 {
			a.res.violations = append(a.res.violations, fmt.Sprintf("%s: captured %d times", short(order), captures))
		}
		if refunded > captured {
			a.res.violations = append(a.res.violations, fmt.Sprintf("%s: refunded %d of %d", short(order), refunded, captured))
		}
	}
}

// provider stands for the payment provider's API (a real one takes an
// idempotency key: the fence protects our store, not their side).
func provider(order, op string, amount int64) {
	time.Sleep(time.Duration(2+rand.IntN(8)) * time.Millisecond)
}

func short(order string) string { return order[strings.Index(order, "order:"):] }

func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
