package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// redisCLI86 is the reference build's redis-cli (8.6.3), beside its
// redis-server; the test skips without it (fails when HOTKV_REQUIRE_REF).
func redisCLI86(t *testing.T) program {
	t.Helper()
	p := filepath.Join(filepath.Dir(hotkvtest.RedisRefOrSkip(t)), "redis-cli")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the reference build has no redis-cli: %v", err)
	}
	return program{name: "redis-cli 8.6.3", path: p}
}

// statServer is a server holding the same data as any other statServer, with
// the same counters: keys in databases 0 and 5, one connection so far.
func statServer(t *testing.T) string {
	t.Helper()
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(1_700_000_000_000))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	for i := 0; i < 1234; i++ {
		c.Set(ctx, fmt.Sprint("k", i), i, 0)
	}
	c.Do(ctx, "SELECT", "5")
	c.Do(ctx, "MSET", "a", "1", "b", "2")
	c.Close()
	return srv.Addr
}

// --stat prints what redis-cli --stat prints: the same header, columns and
// widths, the same figures for two servers in the same state (the memory
// column aside: two processes' heaps), line by line.
func TestStatModeAsRedisCLI(t *testing.T) {
	rc := redisCLI86(t) // 7.0's --stat does not ask for the number of databases
	hk := hotkvCLI(t)
	run := func(p program) []string {
		addr := statServer(t)
		host, port, _ := strings.Cut(addr, ":")
		r := p.run(t, runOpts{tty: true, stopAfter: 1500 * time.Millisecond}, "-h", host, "-p", port, "-i", "0.2", "--stat")
		lines := strings.Split(strings.ReplaceAll(r.stdout, "\r\n", "\n"), "\n")
		if len(lines) < 6 {
			t.Fatalf("%s printed %q (%s)", p.name, r.stdout, r.stderr)
		}
		return lines[:5] // the header and three rounds
	}
	want, got := run(rc), run(hk)
	mask := func(l string) string {
		if len(l) >= 19 && !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "keys") {
			return l[:11] + "<mem>   " + l[19:]
		}
		return l
	}
	for i := range want {
		if mask(got[i]) != mask(want[i]) {
			t.Errorf("line %d:\n hotkv-cli %q\n redis-cli %q", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(got[2], "1236       ") || !strings.Contains(got[3], "(+1)") {
		t.Errorf("figures: %q", got)
	}
}

// --locks shows the lock view: the counters and the held locks with their
// token digest, age and TTL; --pattern filters the table.
func TestLocksMode(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(1_700_000_000_000))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	c.SetNX(ctx, "lock:billing-run", "tok-a81f", 30*time.Second)
	c.SetNX(ctx, "lock:billing-run", "tok-b22c", 30*time.Second)
	c.SetNX(ctx, "lock:reports", "tok-c", time.Minute)
	srv.Clock.Advance(1500 * time.Millisecond)
	dig, _ := c.Do(ctx, "DIGEST", "lock:billing-run").Text()
	host, port, _ := strings.Cut(srv.Addr, ":")
	r := hotkvCLI(t).run(t, runOpts{}, "-h", host, "-p", port, "--locks")
	want := "held 2  acquired 2  contended 1  released 0  stale 0  extended 0  expired-while-held 0  removed 0  hold-p99 0us  wait-p99 0us\n" +
		"key                               db  token digest             age         ttl  refused  extended\n" +
		fmt.Sprintf("lock:billing-run                   0  %s       1.50s      28.50s        1         0\n", dig) +
		"lock:reports                       0  "
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("--locks printed (%d):\n%s\nwant a start of\n%s", r.code, r.stdout, want)
	}
	r = hotkvCLI(t).run(t, runOpts{}, "-h", host, "-p", port, "--locks", "--pattern", "*reports")
	if strings.Contains(r.stdout, "billing") || !strings.Contains(r.stdout, "lock:reports") {
		t.Errorf("--pattern: %s", r.stdout)
	}
}
