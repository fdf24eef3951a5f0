package server

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"
)

// With appendfsync everysec an event loop writes the AOF once per cycle, not
// once per client: the replies of the clients it served wait for the end of
// the cycle (network.Ran.Barrier), as Redis's beforeSleep writes the AOF
// once before every reply. 40 clients send a SET each at the same moment,
// 25 times: far fewer writes of the file than commands.
func TestEverysecOneAOFWritePerCycle(t *testing.T) {
	s, addr := startListening(t, false, "--appendonly", "yes", "--appendfsync", "everysec")
	if s.net.Goroutines() {
		t.Skip("no event loops here: each connection writes for itself")
	}

	const clients, rounds = 40, 25
	conns := make([]net.Conn, clients)
	readers := make([]*bufio.Reader, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i], readers[i] = c, bufio.NewReader(c)
	}
	ask := func(i int, cmd string) {
		if _, err := conns[i].Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range conns { // every client connected and served once
		ask(i, "PING\r\n")
		_ = conns[i].SetReadDeadline(time.Now().Add(10 * time.Second))
		if l, err := readers[i].ReadString('\n'); err != nil || l != "+PONG\r\n" {
			t.Fatalf("%q %v", l, err)
		}
	}
	before := s.aof.Writes()
	for r := 0; r < rounds; r++ {
		for i := range conns {
			ask(i, fmt.Sprintf("SET k%d:%d v\r\n", i, r))
		}
		for i := range conns {
			if l, err := readers[i].ReadString('\n'); err != nil || l != "+OK\r\n" {
				t.Fatalf("%q %v", l, err)
			}
		}
	}
	writes := s.aof.Writes() - before
	t.Logf("%d SETs from %d clients: %d writes of the AOF", clients*rounds, clients, writes)
	if writes > clients*rounds/2 {
		t.Errorf("%d writes of the AOF for %d commands: not one per cycle", writes, clients*rounds)
	}
}
