package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Redis's maxmemory unit, "is the memory limit honoured?", against a server
// in its own process (in-process, the test's own allocations would count in
// used_memory): with maxmemory 100 KB above used_memory, SETEX keys until
// INFO's used_memory is within 4 KB of the limit (it must get there, and
// soon: the garbage of INFO's own text once kept it some KB under, for
// minutes), then as many keys again: used_memory stays under limit + 4 KB
// (it once went over by a few KB, from small allocations the runtime's
// counter had not seen yet).
func TestMaxmemoryLimitHonoured(t *testing.T) {
	cmd, _, conn := startServerProcess(t)
	conn.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	port := cmd.Args[2] // --port N
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	used := func() int64 {
		for _, line := range strings.Split(c.Info(ctx, "memory").Val(), "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatal("no used_memory")
		return 0
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "volatile-lfu", "volatile-ttl"} {
		c.FlushAll(ctx)
		limit := used() + 100<<10
		c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10))
		c.ConfigSet(ctx, "maxmemory-policy", policy)
		n := 0
		for {
			if err := c.SetEx(ctx, "key:"+strconv.Itoa(rng.IntN(1e9)), "x", 10000e9).Err(); err != nil {
				t.Fatalf("%s: SETEX: %v", policy, err)
			}
			n++
			if used()+4096 > limit {
				break
			}
			if n == 20_000 { // 100 KB is about 1,000 keys
				t.Fatalf("%s: used_memory still more than 4 KB under maxmemory after %d keys", policy, n)
			}
		}
		for range n {
			c.SetEx(ctx, "key:"+strconv.Itoa(rng.IntN(1e9)), "x", 10000e9)
		}
		if u := used(); u >= limit+4096 {
			t.Fatalf("%s: used_memory %d, maxmemory %d (+4 KB)", policy, u, limit)
		}
	}
	c.ConfigSet(ctx, "maxmemory", "0")
}
