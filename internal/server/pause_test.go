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

// TestHeldCommandThatBlocksParks: a command CLIENT PAUSE held back that
// blocks once the pause ends parks its connection, and the commands
// pipelined behind it wait for it, as behind any blocked command. On the
// event loops, the connection went on with its pipeline while blocked (PING
// answered before BLPOP).
func TestHeldCommandThatBlocksParks(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		a := hotkvtest.Dial(t, srv.Addr)
		b := hotkvtest.Dial(t, srv.Addr)
		if got := a.Do("CLIENT", "PAUSE", "200", "WRITE"); got != "+OK\r\n" {
			t.Fatalf("CLIENT PAUSE: %q", got)
		}
		b.Write(append(hotkvtest.EncodeCommand("BLPOP", "list", "0"), hotkvtest.EncodeCommand("PING")...))
		time.Sleep(400 * time.Millisecond) // the pause ends; BLPOP runs and blocks
		if got := a.Do("LPUSH", "list", "x"); got != ":1\r\n" {
			t.Fatalf("LPUSH: %q", got)
		}
		for _, want := range []string{"*2\r\n$4\r\nlist\r\n$1\r\nx\r\n", "+PONG\r\n"} {
			if got, err := b.ReadReply(); err != nil || got != want {
				t.Fatalf("reply %q, %v; want %q", got, err, want)
			}
		}
	})
}
