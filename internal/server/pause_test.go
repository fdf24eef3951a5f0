package server_test

import (
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestPauseSuspendsExpiry: while CLIENT PAUSE (WRITE here) is in force, keys
// past their TTL read as absent but are not deleted, by reads or by the
// active cycle (Redis's PAUSE_ACTION_EXPIRE); after UNPAUSE a read expires
// them (Redis's pause.tcl, "Test both active and passive expires are
// skipped during client pause").
func TestPauseSuspendsExpiry(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(now0))
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("MULTI")
	c.Do("SET", "foo", "bar", "PX", "10")
	c.Do("SET", "bar", "foo", "PX", "10")
	c.Do("CLIENT", "PAUSE", "50000", "WRITE")
	if got := c.Do("EXEC"); got != "*3\r\n+OK\r\n+OK\r\n+OK\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	expired := infoInt(t, c, "expired_keys")
	srv.Clock.Advance(100 * time.Millisecond)
	time.Sleep(350 * time.Millisecond) // a few cron ticks: the active cycle must not run
	for _, k := range []string{"foo", "bar"} {
		if got := c.Do("GET", k); got != "$-1\r\n" {
			t.Fatalf("GET %s during the pause: %q", k, got)
		}
	}
	if got := infoInt(t, c, "expired_keys"); got != expired {
		t.Fatalf("expired_keys went from %d to %d during the pause", expired, got)
	}
	if got := c.Do("DBSIZE"); got != ":2\r\n" {
		t.Fatalf("DBSIZE during the pause: %q (the keys must still be there)", got)
	}
	c.Do("CLIENT", "UNPAUSE")
	c.Do("GET", "foo")
	c.Do("GET", "bar")
	if got := infoInt(t, c, "expired_keys"); got != expired+2 {
		t.Fatalf("expired_keys after UNPAUSE: %d, want %d", got, expired+2)
	}
}
