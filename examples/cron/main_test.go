package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/redis/go-redis/v9"
)

// Five instances, four ticks: each tick's billing run happens exactly once.
func TestCron(t *testing.T) {
	srv := hotkvtest.Start(t)
	var out bytes.Buffer
	cfg := config{addr: srv.Addr, name: "i", instances: 5, ticks: 4,
		every: 300 * time.Millisecond, work: 60 * time.Millisecond, ttl: 200 * time.Millisecond, skew: 100 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := run(ctx, cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	counts := c.HGetAll(ctx, "cron:billing-run:runs").Val()
	if len(counts) != cfg.ticks || len(rep.runs) != cfg.ticks {
		t.Fatalf("%d ticks ran (server), %d (report), want %d", len(counts), len(rep.runs), cfg.ticks)
	}
	for tick, n := range counts {
		ms, _ := strconv.ParseInt(tick, 10, 64)
		if n != "1" || len(rep.runs[ms]) != 1 {
			t.Errorf("tick %s ran %s times (%v)", tick, n, rep.runs[ms])
		}
		if rep.skip[ms] != cfg.instances-1 {
			t.Errorf("tick %s: %d skips, want %d", tick, rep.skip[ms], cfg.instances-1)
		}
	}
	if !strings.Contains(out.String(), "runs the billing run") || !strings.Contains(out.String(), "skips tick") {
		t.Fatal("output does not tell what happened")
	}
}

// A run twice as long as the lock's TTL keeps the lock (the watchdog),
// and the instances that arrive meanwhile skip: no second run, no lost lock.
func TestCronSlowRun(t *testing.T) {
	srv := hotkvtest.Start(t)
	var out bytes.Buffer
	cfg := config{addr: srv.Addr, name: "s", instances: 4, ticks: 2,
		every: 800 * time.Millisecond, work: 500 * time.Millisecond, ttl: 250 * time.Millisecond, skew: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := run(ctx, cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	for tick, who := range rep.runs {
		if len(who) != 1 {
			t.Errorf("tick %d ran %d times", tick, len(who))
		}
	}
	if len(rep.runs) != cfg.ticks || rep.lost != 0 {
		t.Fatalf("%d ticks ran (want %d), %d runs lost their lock\n%s", len(rep.runs), cfg.ticks, rep.lost, out.String())
	}
}

func TestCronNoServer(t *testing.T) {
	_, err := run(context.Background(), config{addr: "127.0.0.1:1", instances: 1, ticks: 1, every: time.Second}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "go run ./cmd/hotkv") {
		t.Fatalf("got %v", err)
	}
}
