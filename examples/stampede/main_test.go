package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Thirty concurrent requests per round: one rebuild on a cold cache (the others
// wait and get its value), none on a fresh one, one background rebuild on a
// stale one (everybody served the stale value without waiting for it).
func TestStampede(t *testing.T) {
	srv := hotkvtest.Start(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// fresh: long enough for the cold round's waiters and the fresh round on a
	// loaded machine.
	cfg := config{addr: srv.Addr, requests: 30, fresh: 1500 * time.Millisecond, rebuild: 150 * time.Millisecond}
	rounds, err := run(ctx, cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(rounds) != 4 {
		t.Fatalf("%d rounds", len(rounds))
	}
	cold, fresh, stale, after := rounds[0], rounds[1], rounds[2], rounds[3]
	if cold.rebuilds != 1 || cold.rebuilt != 1 || cold.waited != cfg.requests-1 {
		t.Errorf("cold: %+v, want 1 rebuild and %d waiting", cold, cfg.requests-1)
	}
	if fresh.rebuilds != 0 || fresh.fresh != cfg.requests {
		t.Errorf("fresh: %+v", fresh)
	}
	if stale.rebuilds != 1 || stale.stale != cfg.requests {
		t.Errorf("stale: %+v, want 1 background rebuild and all served stale", stale)
	}
	// Served stale without waiting for the 150ms rebuild.
	if stale.slowest >= cfg.rebuild {
		t.Errorf("a stale request took %v: it waited for the rebuild", stale.slowest)
	}
	if after.rebuilds != 0 || after.fresh != cfg.requests {
		t.Errorf("after: %+v", after)
	}
	if !strings.Contains(out.String(), `now cached: "report v2"`) {
		t.Error("the background rebuild's value is not cached")
	}
}
