package server_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A client that ran a pipeline of commands in a cycle gets its replies at the
// end of the cycle, with those of the other pipelining clients served in it
// (decision 0032), as Redis writes in beforeSleep; a client that sent one
// command gets its reply at once. Set-up: C's DEBUG SLEEP keeps the loop busy
// while A sends two PINGs in one write, S one PING and B a DEBUG SLEEP, so that
// the next epoll_wait reports A, S, B in that order.
func TestRepliesLeaveAtTheEndOfTheCycle(t *testing.T) {
	srv := hotkvtest.Start(t)
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn, bufio.NewReader(conn)
	}
	send := func(conn net.Conn, cmd string) {
		if _, err := conn.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(r *bufio.Reader, want string) {
		t.Helper()
		if line, err := r.ReadString('\n'); err != nil || line != want {
			t.Fatalf("reply %q, %v; want %q", line, err, want)
		}
	}
	a, ar := dial()
	sc, sr := dial()
	b, br := dial()
	c, cr := dial()
	for _, r := range []struct {
		conn net.Conn
		rd   *bufio.Reader
	}{{a, ar}, {sc, sr}, {b, br}, {c, cr}} { // every connection accepted and served once
		send(r.conn, "PING\r\n")
		expect(r.rd, "+PONG\r\n")
	}

	send(c, "DEBUG SLEEP 0.3\r\n")
	time.Sleep(100 * time.Millisecond) // C's command runs
	send(a, "PING\r\nPING\r\n")
	time.Sleep(20 * time.Millisecond)
	send(sc, "PING\r\n")
	time.Sleep(20 * time.Millisecond)
	send(b, "DEBUG SLEEP 0.6\r\n")
	expect(cr, "+OK\r\n") // the loop goes on to A, S, then B

	_ = sc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	expect(sr, "+PONG\r\n") // one command: written at once, while B's runs
	_ = a.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if line, err := ar.ReadString('\n'); err == nil {
		t.Fatalf("A's reply %q came while B's command ran; want it at the end of the cycle", line)
	}
	_ = a.SetReadDeadline(time.Time{})
	expect(br, "+OK\r\n")
	expect(ar, "+PONG\r\n")
	expect(ar, "+PONG\r\n")
}
