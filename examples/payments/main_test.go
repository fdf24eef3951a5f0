package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Concurrent captures, duplicate captures and refunds: every order captured
// once, refunds within the capture, fences in order in every ledger; and the
// paused holder's stale capture is rejected by the fenced store.
func TestPayments(t *testing.T) {
	srv := hotkvtest.Start(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := run(ctx, config{addr: srv.Addr, orders: 8, workers: 6, ttl: 500 * time.Millisecond, pause: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(res.violations) > 0 {
		t.Fatalf("violations: %v", res.violations)
	}
	if len(res.captures) != 9 {
		t.Fatalf("%d orders with a ledger, want 9", len(res.captures))
	}
	for order, n := range res.captures {
		if n != 1 {
			t.Errorf("%s captured %d times", order, n)
		}
		if !strings.HasSuffix(order, ":paused") && res.refunded[order] != 2500 {
			t.Errorf("%s refunded %d, want 2500", order, res.refunded[order])
		}
	}
	if res.staleRejected != 1 {
		t.Fatalf("%d stale writes rejected, want 1 (the paused holder)", res.staleRejected)
	}
	for _, want := range []string{"captured 50.00", "capture again: already", "refunded 10.00", "rejected by the store"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
