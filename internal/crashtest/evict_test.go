package crashtest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Eviction cannot take a lock (issue 26, deliverable 8; decision 0044): a
// hotkv process with maxmemory 50mb and allkeys-lru takes 100 locks (SET NX
// PX), then 200 MB of cache keys arrive. With protect-locks-from-eviction
// every lock holds; without it the same load evicts locks (Redis 8.6.3
// evicted 99 of 100), which shows the test can fail. A process of its own,
// so that used_memory is the server's alone.
func TestLocksSurviveEviction(t *testing.T) {
	bin := hotkvtest.BuildHotKV(t)
	held, evicted := locksAfterCacheLoad(t, bin, "yes")
	if held != 100 {
		t.Fatalf("%d of 100 locks held after 200 MB of cache keys (evicted_keys %d)", held, evicted)
	}
	if evicted == 0 {
		t.Fatal("nothing was evicted: the load did not press on memory")
	}
	t.Logf("protected: 100 of 100 locks held, %d cache keys evicted", evicted)
	held, _ = locksAfterCacheLoad(t, bin, "no")
	if held == 100 {
		t.Fatal("without protection no lock was evicted: the test cannot tell")
	}
	t.Logf("unprotected: %d of 100 locks held", held)
}

func locksAfterCacheLoad(t *testing.T, bin, protect string) (held int, evicted int64) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--dir", t.TempDir(), "--save", "",
		"--maxmemory", "50mb", "--maxmemory-policy", "allkeys-lru", "--protect-locks-from-eviction", protect)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	defer c.Close()
	for i := 0; c.Ping(ctx).Err() != nil; i++ {
		if i > 500 {
			t.Fatal("hotkv did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 100; i++ {
		if ok, err := c.SetNX(ctx, fmt.Sprintf("lock:%d", i), "tok", 10*time.Minute).Result(); err != nil || !ok {
			t.Fatalf("lock:%d: %v %v", i, ok, err)
		}
	}
	val := strings.Repeat("x", 10<<10)
	for start := 0; start < 20000; start += 200 { // 20,000 x 10 KB
		p := c.Pipeline()
		for i := start; i < start+200; i++ {
			p.Set(ctx, fmt.Sprintf("cache:%d", i), val, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("cache load: %v", err)
		}
	}
	for i := 0; i < 100; i++ {
		if v, _ := c.Get(ctx, fmt.Sprintf("lock:%d", i)).Result(); v == "tok" {
			held++
		}
	}
	info := c.Info(ctx, "stats").Val()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "evicted_keys:"); ok {
			evicted, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return held, evicted
}
