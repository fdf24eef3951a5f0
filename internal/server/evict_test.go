package server_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Eviction tests (redis.io/docs/latest/develop/reference/eviction): each
// starts a server with a fake clock, anchors used_memory with MEMORY PURGE,
// sets maxmemory a few MB above it and writes more than fits. The server runs
// in the test's process, so used_memory includes what the test's client
// holds: requests go in pipelines of at most a few hundred commands.

const evictHeadroom = 4 << 20

type evictEnv struct {
	t     *testing.T
	srv   *hotkvtest.Server
	c     *redis.Client
	limit int64
}

func startEvict(t *testing.T, policy string, opts ...hotkvtest.Option) *evictEnv {
	t.Helper()
	opts = append([]hotkvtest.Option{hotkvtest.WithFakeClock(1_700_000_000_000),
		hotkvtest.WithConfig("maxmemory-policy", policy), hotkvtest.WithConfig("maxmemory-samples", "10")}, opts...)
	srv := hotkvtest.Start(t, opts...)
	c := client(t, srv.Addr, 2)
	e := &evictEnv{t: t, srv: srv, c: c}
	if err := c.Do(context.Background(), "MEMORY", "PURGE").Err(); err != nil {
		t.Fatal(err)
	}
	e.limit = e.info("memory", "used_memory") + evictHeadroom
	if err := c.ConfigSet(context.Background(), "maxmemory", strconv.FormatInt(e.limit, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *evictEnv) info(section, field string) int64 {
	e.t.Helper()
	s := e.c.Info(context.Background(), section).Val()
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				e.t.Fatalf("%s: %q", field, v)
			}
			return n
		}
	}
	e.t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// fill writes n keys prefix:i of size bytes (with a TTL when ttl > 0) and
// returns the errors of the writes that failed.
func (e *evictEnv) fill(prefix string, n, size int, ttl time.Duration) []error {
	ctx := context.Background()
	val := strings.Repeat("v", size)
	var errs []error
	for i := 0; i < n; i += 100 {
		p := e.c.Pipeline()
		for j := i; j < min(i+100, n); j++ {
			p.Set(ctx, prefix+":"+strconv.Itoa(j), val, ttl)
		}
		cmds, _ := p.Exec(ctx)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				errs = append(errs, cmd.Err())
			}
		}
	}
	return errs
}

func (e *evictEnv) exists(prefix string, n int) int {
	ctx := context.Background()
	p := e.c.Pipeline()
	cmds := make([]*redis.IntCmd, n)
	for i := range n {
		cmds[i] = p.Exists(ctx, prefix+":"+strconv.Itoa(i))
	}
	_, _ = p.Exec(ctx)
	k := 0
	for _, cmd := range cmds {
		k += int(cmd.Val())
	}
	return k
}

// underLimit checks the bar: used_memory stays under maxmemory (plus what one
// command and the INFO reply may allocate before the next eviction).
func (e *evictEnv) underLimit() {
	e.t.Helper()
	if used := e.info("memory", "used_memory"); used > e.limit+256<<10 {
		e.t.Fatalf("used_memory %d over maxmemory %d", used, e.limit)
	}
}

// noeviction is the default: a write past the limit gets Redis's OOM error
// and no key is lost.
func TestEvictNoEvictionLosesNoKey(t *testing.T) {
	e := startEvict(t, "noeviction")
	const n = 8000
	errs := e.fill("k", n, 1000, 0)
	if len(errs) == 0 {
		t.Fatal("8 MB of writes under a 4 MB headroom: no OOM error")
	}
	for _, err := range errs {
		if err.Error() != "OOM command not allowed when used memory > 'maxmemory'." {
			t.Fatalf("error %q", err)
		}
	}
	if got, want := e.exists("k", n), n-len(errs); got != want {
		t.Fatalf("%d keys exist, %d writes succeeded", got, want)
	}
	if ev := e.info("stats", "evicted_keys"); ev != 0 {
		t.Fatalf("evicted_keys %d under noeviction", ev)
	}
	// reads and deletes still run; after a delete there is room again
	ctx := context.Background()
	if err := e.c.Get(ctx, "k:0").Err(); err != nil {
		t.Fatal(err)
	}
	p := e.c.Pipeline()
	for i := range 2000 {
		p.Del(ctx, "k:"+strconv.Itoa(i))
	}
	_, _ = p.Exec(ctx)
	if err := e.c.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatalf("write after DEL: %v", err)
	}
}

// allkeys-lru keeps the recently used keys and the server stays under the
// limit while a cache workload runs; evicted keys are counted in INFO.
func TestEvictAllKeysLRUKeepsRecentlyUsed(t *testing.T) {
	e := startEvict(t, "allkeys-lru")
	ctx := context.Background()
	e.fill("cold", 1000, 1000, 0)
	e.fill("hot", 500, 1000, 0)
	e.srv.Clock.Advance(100 * time.Second)
	readHot := func() {
		p := e.c.Pipeline()
		for i := range 500 {
			p.Get(ctx, "hot:"+strconv.Itoa(i))
		}
		_, _ = p.Exec(ctx)
	}
	readHot()
	// a cache workload: the hot keys are read between rounds of new keys, so
	// the least recently used are the cold keys, then the oldest new ones
	for round := range 5 {
		e.srv.Clock.Advance(time.Second)
		if errs := e.fill("new"+strconv.Itoa(round), 1000, 1000, 0); len(errs) > 0 {
			t.Fatalf("allkeys-lru refused a write: %v", errs[0])
		}
		e.underLimit()
		e.srv.Clock.Advance(time.Second)
		readHot()
	}
	hot, cold := e.exists("hot", 500), e.exists("cold", 1000)
	if hot < 490 || cold > 50 {
		t.Fatalf("hot keys left %d/500, cold keys left %d/1000", hot, cold)
	}
	if ev := e.info("stats", "evicted_keys"); ev < 1000 {
		t.Fatalf("evicted_keys %d", ev)
	}
}

// volatile-* evict only keys with a TTL, and reply OOM when none is left.
func TestEvictVolatileOnlyVolatile(t *testing.T) {
	for _, policy := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "volatile-lrm"} {
		t.Run(policy, func(t *testing.T) {
			e := startEvict(t, policy)
			e.fill("keep", 1000, 1000, 0)
			if errs := e.fill("vol", 2500, 1000, time.Hour); len(errs) > 0 {
				t.Fatalf("a write failed while volatile keys could go: %v", errs[0])
			}
			if got := e.exists("keep", 1000); got != 1000 {
				t.Fatalf("%d of 1000 keys without a TTL left", got)
			}
			e.underLimit()
			// only persistent keys left to write: once the volatile ones are
			// gone, OOM
			errs := e.fill("more", 6000, 1000, 0)
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), "OOM command not allowed") {
				t.Fatalf("no OOM error when nothing is evictable (%d errors)", len(errs))
			}
			if got := e.exists("keep", 1000); got != 1000 {
				t.Fatalf("%d of 1000 keys without a TTL left", got)
			}
		})
	}
}

// volatile-ttl evicts the nearest deadlines first.
func TestEvictVolatileTTLNearestFirst(t *testing.T) {
	e := startEvict(t, "volatile-ttl")
	e.fill("near", 1500, 1000, 100*time.Second)
	e.fill("far", 1500, 1000, 10000*time.Second)
	e.fill("fill", 1500, 1000, 20000*time.Second)
	// sampled, as Redis: mostly, not strictly, the nearest first
	near, far := e.exists("near", 1500), e.exists("far", 1500)
	if near > 300 || far < 1200 {
		t.Fatalf("near deadlines left %d/1500, far ones %d/1500", near, far)
	}
}

// allkeys-lfu keeps the frequently used keys; OBJECT FREQ shows their counters.
func TestEvictAllKeysLFUKeepsFrequentlyUsed(t *testing.T) {
	e := startEvict(t, "allkeys-lfu")
	ctx := context.Background()
	e.fill("rare", 1500, 1000, 0)
	e.fill("freq", 300, 1000, 0)
	for range 50 {
		p := e.c.Pipeline()
		for i := range 300 {
			p.Get(ctx, "freq:"+strconv.Itoa(i))
		}
		_, _ = p.Exec(ctx)
	}
	if f := e.c.ObjectFreq(ctx, "freq:1").Val(); f < 7 {
		t.Fatalf("OBJECT FREQ after 50 reads: %d", f)
	}
	if f := e.c.ObjectFreq(ctx, "rare:1").Val(); f != 5 {
		t.Fatalf("OBJECT FREQ of a key never read: %d (LFU_INIT_VAL is 5)", f)
	}
	e.fill("new", 3000, 1000, 0)
	// the rare keys and the new ones share the initial counter: either may go
	freq := e.exists("freq", 300)
	if ev := e.info("stats", "evicted_keys"); freq < 290 || ev < 1000 {
		t.Fatalf("frequent keys left %d/300, %d keys evicted", freq, ev)
	}
	e.underLimit()
}

// allkeys-random evicts, stays under the limit, and never refuses.
func TestEvictAllKeysRandom(t *testing.T) {
	e := startEvict(t, "allkeys-random")
	if errs := e.fill("k", 8000, 1000, 0); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	e.underLimit()
	if n := e.c.DBSize(context.Background()).Val(); n >= 8000 || n < 1000 {
		t.Fatalf("dbsize %d", n)
	}
}

// Evictions are announced as "evicted" keyspace events and invalidate the
// keys clients track; INFO counts them.
func TestEvictEventsAndTracking(t *testing.T) {
	e := startEvict(t, "allkeys-lru", hotkvtest.WithConfig("notify-keyspace-events", "Ee"))
	ctx := context.Background()
	e.fill("k", 100, 1000, 0)
	sub := client(t, e.srv.Addr, 2).Subscribe(ctx, "__keyevent@0__:evicted")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	tr := hotkvtest.Dial(t, e.srv.Addr)
	tr.Do("HELLO", "3")
	tr.Do("CLIENT", "TRACKING", "on")
	tr.Do("GET", "k:0")
	e.srv.Clock.Advance(10 * time.Second) // k:0..99 are the oldest
	e.fill("n", 6000, 1000, 0)
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || !(strings.HasPrefix(msg.Payload, "k:") || strings.HasPrefix(msg.Payload, "n:")) {
		t.Fatalf("evicted event: %v %v", msg, err)
	}
	if e.exists("k", 1) == 0 {
		r, err := tr.ReadReply()
		if err != nil || !strings.Contains(r, "invalidate") || !strings.Contains(r, "k:0") {
			t.Fatalf("tracking invalidation: %q %v", r, err)
		}
	}
	if ev := e.info("stats", "evicted_keys"); ev == 0 {
		t.Fatal("evicted_keys 0")
	}
}

// OBJECT IDLETIME follows the LRU clock; OBJECT FREQ the decayed LFU counter
// (lfu-decay-time minutes a step), and neither touches the key.
func TestObjectIdletimeAndFreq(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(1_700_000_000_000))
	c := client(t, srv.Addr, 2)
	ctx := context.Background()
	c.Set(ctx, "k", "v", 0)
	srv.Clock.Advance(42 * time.Second)
	if n := c.ObjectIdleTime(ctx, "k").Val(); n != 42*time.Second {
		t.Fatalf("IDLETIME %v", n)
	}
	if n := c.ObjectIdleTime(ctx, "k").Val(); n != 42*time.Second {
		t.Fatalf("OBJECT touched the key: IDLETIME %v", n)
	}
	c.Get(ctx, "k")
	if n := c.ObjectIdleTime(ctx, "k").Val(); n != 0 {
		t.Fatalf("IDLETIME after GET %v", n)
	}
	c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lfu")
	c.Set(ctx, "f", "v", 0)
	if n := c.ObjectFreq(ctx, "f").Val(); n != 5 {
		t.Fatalf("FREQ of a new key %d", n)
	}
	for range 200 {
		c.Get(ctx, "f")
	}
	f0 := c.ObjectFreq(ctx, "f").Val()
	if f0 <= 10 {
		t.Fatalf("FREQ after 200 reads %d", f0)
	}
	srv.Clock.Advance(3 * time.Minute)
	if n := c.ObjectFreq(ctx, "f").Val(); n != f0-3 {
		t.Fatalf("FREQ 3 minutes later %d, want %d", n, f0-3)
	}
	c.ConfigSet(ctx, "lfu-decay-time", "0")
	srv.Clock.Advance(30 * time.Minute)
	if n := c.ObjectFreq(ctx, "f").Val(); n != f0 {
		t.Fatalf("FREQ with lfu-decay-time 0: %d, want %d", n, f0)
	}
	// CLIENT NO-TOUCH reads leave the counter alone
	c2 := client(t, srv.Addr, 2)
	c2.Do(ctx, "CLIENT", "NO-TOUCH", "on")
	for range 200 {
		c2.Get(ctx, "f")
	}
	if n := c.ObjectFreq(ctx, "f").Val(); n != f0 {
		t.Fatalf("FREQ after NO-TOUCH reads %d, want %d", n, f0)
	}
	if err := c.ObjectIdleTime(ctx, "f").Err(); err == nil || !strings.Contains(err.Error(), "An LFU maxmemory policy is selected") {
		t.Fatalf("IDLETIME under LFU: %v", err)
	}
	// LRM: reads do not count as access, writes do
	c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lrm")
	c.Set(ctx, "m", "v", 0)
	srv.Clock.Advance(20 * time.Second)
	c.Get(ctx, "m")
	if n := c.ObjectIdleTime(ctx, "m").Val(); n != 20*time.Second {
		t.Fatalf("LRM IDLETIME after a read %v", n)
	}
	c.Append(ctx, "m", "x")
	if n := c.ObjectIdleTime(ctx, "m").Val(); n != 0 {
		t.Fatalf("LRM IDLETIME after a write %v", n)
	}
}

// MEMORY USAGE estimates key + value + entry, per type, within expected
// ranges; SAMPLES 0 looks at every element.
func TestMemoryUsagePerType(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := client(t, srv.Addr, 2)
	ctx := context.Background()
	c.Set(ctx, "s", strings.Repeat("x", 1000), 0)
	big := make([]any, 0, 2000)
	for i := range 1000 {
		big = append(big, "member-"+strconv.Itoa(i))
	}
	c.RPush(ctx, "list", big...)
	c.SAdd(ctx, "set", big...)
	var z []redis.Z
	var h []any
	for i := range 1000 {
		z = append(z, redis.Z{Score: float64(i), Member: "member-" + strconv.Itoa(i)})
		h = append(h, "field-"+strconv.Itoa(i), "value-"+strconv.Itoa(i))
	}
	c.ZAdd(ctx, "zset", z...)
	c.HSet(ctx, "hash", h...)
	c.HSet(ctx, "smallhash", "a", "1")
	for i := range 1000 {
		c.XAdd(ctx, &redis.XAddArgs{Stream: "stream", Values: []string{"field", "value-" + strconv.Itoa(i)}})
	}
	for _, tc := range []struct {
		key    string
		lo, hi int64
	}{
		{"s", 1050, 1400},        // 1,024-byte allocation + entry + key
		{"list", 12_000, 40_000}, // listpack nodes
		{"set", 25_000, 140_000}, // hashtable: entry with its member, and a bucket, each
		{"zset", 60_000, 200_000},
		{"hash", 50_000, 200_000},
		{"smallhash", 48, 400},     // entry + key + a listpack in the entry (no struct)
		{"stream", 10_000, 80_000}, // listpack nodes of about 20 bytes per entry
	} {
		n, err := c.MemoryUsage(ctx, tc.key).Result()
		if err != nil || n < tc.lo || n > tc.hi {
			t.Errorf("MEMORY USAGE %s = %d (%v), want %d..%d", tc.key, n, err, tc.lo, tc.hi)
		}
		all, _ := c.MemoryUsage(ctx, tc.key, 0).Result()
		if all < n*8/10 || all > n*12/10 {
			t.Errorf("MEMORY USAGE %s SAMPLES 0 = %d, sampled %d", tc.key, all, n)
		}
	}
	if err := c.MemoryUsage(ctx, "nokey").Err(); err != redis.Nil {
		t.Errorf("missing key: %v", err)
	}
	st, err := c.Do(ctx, "MEMORY", "STATS").Slice()
	if err != nil || len(st) != 2*(33+1) || fmt.Sprint(st[0]) != "peak.allocated" {
		t.Fatalf("MEMORY STATS: %v %v", st, err)
	}
}

// A client that disconnects gives its buffers back to used_memory at once, as
// Redis's freeClient does: a half-sent 6 MB request held by the server counts
// while the client is connected and stops counting when it goes, before any GC
// (without it, eviction took keys for the dead client's buffer).
func TestUsedMemoryDropsWhenClientLeaves(t *testing.T) {
	e := startEvict(t, "allkeys-lru")
	base := e.info("memory", "used_memory")
	conn, err := net.Dial("tcp", e.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	const big = 6 << 20
	if _, err := fmt.Fprintf(conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s", big, strings.Repeat("x", big/2)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server reads what came
	e.c.Do(context.Background(), "MEMORY", "PURGE")
	held := e.info("memory", "used_memory")
	conn.Close()
	time.Sleep(200 * time.Millisecond) // the server sees the close
	after := e.info("memory", "used_memory")
	if held < base+big/2 || after > base+512<<10 {
		t.Fatalf("used_memory %d before, %d with a half-sent %d-byte request, %d after the client left", base, held, big, after)
	}
}

// A key table that would double past maxmemory waits until it is 1.618 full
// (Redis's dictExpandAllowed), so a resize does not make the server evict:
// 4,096 keys in 4,096 buckets, a limit 10 KB above used memory (the 8,192-
// bucket table takes 64 KB), and three more keys evict nothing (Redis's
// maxmemory unit, "Don't rehash if used memory exceeds maxmemory after rehash").
func TestKeyTableDoesNotGrowPastMaxmemory(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("latency-tracking", "no"),
		hotkvtest.WithConfig("maxmemory-policy", "allkeys-random"))
	c := client(t, srv.Addr, 2)
	ctx := context.Background()
	p := c.Pipeline()
	for i := range 4095 {
		p.Set(ctx, "key:"+strconv.Itoa(i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	e := &evictEnv{t: t, srv: srv, c: c}
	if err := c.Do(ctx, "MEMORY", "PURGE").Err(); err != nil { // the garbage gone: used is what is live
		t.Fatal(err)
	}
	used := e.info("memory", "used_memory")
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+10<<10, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k0", "k1", "k2"} {
		if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.DBSize(ctx).Val(); n != 4098 {
		t.Fatalf("DBSIZE %d, want 4098 (evicted_keys %d)", n, e.info("stats", "evicted_keys"))
	}
}
