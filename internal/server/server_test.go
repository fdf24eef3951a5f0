package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

func client(t *testing.T, addr string, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// eachProto runs fn over RESP2 and RESP3, on the event loops and on the portable
// goroutine-per-connection path.
func eachProto(t *testing.T, fn func(t *testing.T, c *redis.Client, srv *hotkvtest.Server)) {
	for _, mode := range []string{"loop", "goroutines"} {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", mode, proto), func(t *testing.T) {
				opts := []hotkvtest.Option{hotkvtest.WithFakeClock(1_700_000_000_000)}
				if mode == "goroutines" {
					opts = append(opts, hotkvtest.WithGoroutinePerConn())
				}
				srv := hotkvtest.Start(t, opts...)
				fn(t, client(t, srv.Addr, proto), srv)
			})
		}
	}
}

// The five-step lock walkthrough of the README, from go-redis.
func TestLockWalkthrough(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		ok, err := c.SetNX(ctx, "lock:billing-run", "tok-a81f", 30*time.Second).Result()
		if err != nil || !ok {
			t.Fatalf("worker A: %v %v", ok, err)
		}
		ok, err = c.SetNX(ctx, "lock:billing-run", "tok-b22c", 30*time.Second).Result()
		if err != nil || ok {
			t.Fatalf("worker B must be turned away: %v %v", ok, err)
		}
		srv.Clock.Advance(873 * time.Millisecond)
		if d, err := c.PTTL(ctx, "lock:billing-run").Result(); err != nil || d != 29127*time.Millisecond {
			t.Fatalf("PTTL: %v %v", d, err)
		}
		if ok, err := c.PExpire(ctx, "lock:billing-run", 30*time.Second).Result(); err != nil || !ok {
			t.Fatalf("PEXPIRE: %v %v", ok, err)
		}
		if n, err := c.Do(ctx, "DELEX", "lock:billing-run", "IFEQ", "tok-stale").Int(); err != nil || n != 0 {
			t.Fatalf("DELEX with a wrong token: %v %v", n, err)
		}
		if v, _ := c.Get(ctx, "lock:billing-run").Result(); v != "tok-a81f" {
			t.Fatalf("a wrong token must leave the lock alone, got %q", v)
		}
		if n, err := c.Do(ctx, "DELEX", "lock:billing-run", "IFEQ", "tok-a81f").Int(); err != nil || n != 1 {
			t.Fatalf("DELEX own lock: %v %v", n, err)
		}
		if _, err := c.Get(ctx, "lock:billing-run").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("lock must be gone: %v", err)
		}
		// a lock left by a crashed holder expires on time
		c.Set(ctx, "lock:x", "tok", 30*time.Second)
		srv.Clock.Advance(29999 * time.Millisecond)
		if n, _ := c.Exists(ctx, "lock:x").Result(); n != 1 {
			t.Fatal("expired early")
		}
		srv.Clock.Advance(time.Millisecond)
		if n, _ := c.Exists(ctx, "lock:x").Result(); n != 0 {
			t.Fatal("did not expire")
		}
		// digest-based release
		c.Set(ctx, "lock:big", strings.Repeat("a", 1<<20), 0)
		d, err := c.Do(ctx, "DIGEST", "lock:big").Text()
		if err != nil || d != "c9b8a70a3f30f7b1" {
			t.Fatalf("DIGEST: %q %v", d, err)
		}
		if n, _ := c.Do(ctx, "DELEX", "lock:big", "IFDEQ", strings.ToUpper(d)).Int(); n != 1 {
			t.Fatal("DELEX IFDEQ")
		}
	})
}

// Typed go-redis calls across the string and generic groups, in both protocols.
func TestGoRedisStringsAndKeys(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(c.Set(ctx, "s", "hello", 0).Err())
		if v, _ := c.Append(ctx, "s", " world").Result(); v != 11 {
			t.Fatal(v)
		}
		if v, _ := c.GetRange(ctx, "s", -5, -1).Result(); v != "world" {
			t.Fatal(v)
		}
		if v, _ := c.Incr(ctx, "n").Result(); v != 1 {
			t.Fatal(v)
		}
		if v, _ := c.IncrByFloat(ctx, "f", 10.5).Result(); v != 10.5 {
			t.Fatal(v)
		}
		if v, _ := c.IncrByFloat(ctx, "f", 0.1).Result(); v != 10.6 {
			t.Fatal(v)
		}
		must(c.MSet(ctx, "a", "1", "b", "2").Err())
		vals, err := c.MGet(ctx, "a", "b", "nope").Result()
		must(err)
		if vals[0] != "1" || vals[1] != "2" || vals[2] != nil {
			t.Fatalf("MGET %v", vals)
		}
		if _, err := c.Get(ctx, "nope").Result(); !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		must(c.Expire(ctx, "a", 100*time.Second).Err())
		if d, _ := c.TTL(ctx, "a").Result(); d != 100*time.Second {
			t.Fatal(d)
		}
		if v, _ := c.Type(ctx, "a").Result(); v != "string" {
			t.Fatal(v)
		}
		if err := c.Incr(ctx, "s").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
			t.Fatal(err)
		}
		must(c.RPush(ctx, "l", "x").Err())
		if err := c.Get(ctx, "l").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			must(c.Set(ctx, fmt.Sprintf("scan:%d", i), "v", 0).Err())
		}
		seen := map[string]bool{}
		iter := c.Scan(ctx, 0, "scan:*", 7).Iterator()
		for iter.Next(ctx) {
			seen[iter.Val()] = true
		}
		must(iter.Err())
		if len(seen) != 100 {
			t.Fatalf("SCAN saw %d keys", len(seen))
		}
		if n, _ := c.DBSize(ctx).Result(); n != 106 {
			t.Fatal(n)
		}
		hello, err := c.Do(ctx, "HELLO").Result()
		must(err)
		if hello == nil {
			t.Fatal("HELLO")
		}
		info, err := c.Info(ctx, "keyspace").Result()
		must(err)
		if !strings.Contains(info, "db0:keys=106,expires=1") {
			t.Fatalf("INFO keyspace: %q", info)
		}
	})
}

// Many concurrent clients: no lost update, and every client sees its own writes.
func TestManyConcurrentClients(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 64})
	defer c.Close()
	ctx := context.Background()
	const workers, per = 64, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := c.Incr(ctx, "counter").Err(); err != nil {
					errs <- err
					return
				}
				k := fmt.Sprintf("w%d", w)
				if err := c.Set(ctx, k, i, 0).Err(); err != nil {
					errs <- err
					return
				}
				if v, err := c.Get(ctx, k).Int(); err != nil || v != i {
					errs <- fmt.Errorf("worker %d read %d, %v", w, v, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v, _ := c.Get(ctx, "counter").Int(); v != workers*per {
		t.Fatalf("counter %d, want %d", v, workers*per)
	}
}

// A go-redis pipeline of many commands gets every reply in order.
func TestPipelineGoRedis(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, _ *hotkvtest.Server) {
		ctx := context.Background()
		p := c.Pipeline()
		for i := 0; i < 5000; i++ {
			p.Set(ctx, fmt.Sprint("p", i), i, 0)
			p.Incr(ctx, fmt.Sprint("p", i))
		}
		cmds, err := p.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5000; i++ {
			if v := cmds[2*i+1].(*redis.IntCmd).Val(); v != int64(i+1) {
				t.Fatalf("reply %d: %d", i, v)
			}
		}
	})
}

// SCAN's guarantee over the wire: every key present for the whole iteration is
// returned, while another client adds and deletes keys (growing and shrinking the
// table) between the SCAN calls.
func TestScanGuaranteeUnderWrites(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctx := context.Background()
	c := client(t, srv.Addr, 2)
	w := client(t, srv.Addr, 2)
	stable := map[string]bool{}
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("stable:%d", i)
		stable[k] = true
		if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var cursor uint64
	churn := 0
	for {
		keys, next, err := c.Scan(ctx, cursor, "", 20).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			seen[k] = true
		}
		// churn: grow by 300 volatile keys, then delete them again, in turns
		p := w.Pipeline()
		for i := 0; i < 300; i++ {
			k := fmt.Sprintf("churn:%d", churn*300+i)
			if churn%2 == 0 {
				p.Set(ctx, k, "x", 0)
			} else {
				p.Del(ctx, fmt.Sprintf("churn:%d", (churn-1)*300+i))
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		churn++
		if next == 0 {
			break
		}
		cursor = next
	}
	for k := range stable {
		if !seen[k] {
			t.Fatalf("SCAN missed %s, present for the whole iteration", k)
		}
	}
}

// go-redis's transaction APIs: TxPipelined (MULTI/EXEC) and Watch (optimistic
// locking), with a concurrent writer breaking the watch.
func TestGoRedisTransactions(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "tx:a", "1", 0)
			p.Incr(ctx, "tx:a")
			p.Get(ctx, "tx:a")
			return nil
		})
		if err != nil || cmds[2].(*redis.StringCmd).Val() != "2" {
			t.Fatalf("TxPipelined: %v %v", cmds, err)
		}
		// an optimistic increment retried until no one else interferes
		other := client(t, srv.Addr, 2)
		interfere := true
		incr := func(tx *redis.Tx) error {
			n, err := tx.Get(ctx, "tx:counter").Int()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			if interfere {
				interfere = false
				other.Set(ctx, "tx:counter", "100", 0) // breaks the WATCH
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "tx:counter", n+1, 0)
				return nil
			})
			return err
		}
		if err := c.Watch(ctx, incr, "tx:counter"); !errors.Is(err, redis.TxFailedErr) {
			t.Fatalf("first attempt must fail on the broken WATCH, got %v", err)
		}
		if err := c.Watch(ctx, incr, "tx:counter"); err != nil {
			t.Fatalf("second attempt: %v", err)
		}
		if v, _ := c.Get(ctx, "tx:counter").Int(); v != 101 {
			t.Fatalf("counter %d, want 101", v)
		}
	})
}
