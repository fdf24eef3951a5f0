package server_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestMinReplicasToWrite: with min-replicas-to-write and min-replicas-max-lag
// set, writes need that many replicas that acknowledged (or attached) within
// max-lag seconds (Redis's checkGoodReplicasStatus), from clients and from
// scripts alike; reads are never refused.
func TestMinReplicasToWrite(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(now0),
		hotkvtest.WithConfig("min-replicas-to-write", "1"), hotkvtest.WithConfig("min-replicas-max-lag", "10"))
	cl := hotkvtest.Dial(t, srv.Addr)
	const noReplicas = "-NOREPLICAS Not enough good replicas to write.\r\n"
	write := func(want string) {
		t.Helper()
		if got := cl.Do("SET", "k", "v"); got != want {
			t.Fatalf("SET: %q, want %q", got, want)
		}
		if got := cl.Do("EVAL", "return redis.pcall('set', KEYS[1], 'v')", "1", "k"); got != want {
			t.Fatalf("EVAL writing: %q, want %q", got, want)
		}
	}
	write(noReplicas)
	if got := cl.Do("GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET: %q", got)
	}
	r := attachStream(t, srv.Addr, "PSYNC ? -1")
	write("+OK\r\n") // a replica that just attached is good

	// no acknowledgement for more than max-lag: not good any more
	srv.Clock.Advance(11 * time.Second)
	write(noReplicas)
	_, _ = r.c.Write(hotkvtest.EncodeCommand("REPLCONF", "ACK", strconv.Itoa(0)))
	if got := cl.Do("PING"); got != "+PONG\r\n" { // the ACK is served before the PING
		t.Fatalf("PING: %q", got)
	}
	write("+OK\r\n")
	set := func(name, value string) {
		t.Helper()
		if got := cl.Do("CONFIG", "SET", name, value); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %s: %q", name, value, got)
		}
	}
	set("min-replicas-to-write", "2")
	write(noReplicas)
	// either parameter at 0 turns the check off, and back on (admission
	// mirrors both: hotParams)
	set("min-replicas-max-lag", "0")
	write("+OK\r\n")
	set("min-replicas-max-lag", "10")
	write(noReplicas)
	set("min-replicas-to-write", "0")
	write("+OK\r\n")
	set("min-replicas-to-write", "2")
	write(noReplicas)
}
