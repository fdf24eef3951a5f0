package server_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// The replies of every client served in one event-loop cycle go out together
// at its end (decision 0032), as Redis writes in beforeSleep: a client served
// early in a cycle gets its reply after the later clients' commands have run.
// Set-up: C's DEBUG SLEEP keeps the loop busy while A sends PING and then B a
// DEBUG SLEEP, so that the next epoll_wait reports A before B. Written at once,
// A's PONG would arrive while B's command still runs.
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
	b, br := dial()
	c, cr := dial()
	for _, r := range []struct {
		conn net.Conn
		rd   *bufio.Reader
	}{{a, ar}, {b, br}, {c, cr}} { // every connection accepted and served once
		send(r.conn, "PING\r\n")
		expect(r.rd, "+PONG\r\n")
	}

	send(c, "DEBUG SLEEP 0.3\r\n")
	time.Sleep(100 * time.Millisecond) // C's command runs
	send(a, "PING\r\n")
	time.Sleep(20 * time.Millisecond)
	send(b, "DEBUG SLEEP 0.6\r\n")
	expect(cr, "+OK\r\n") // the loop goes on to A, then B

	_ = a.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if line, err := ar.ReadString('\n'); err == nil {
		t.Fatalf("A's reply %q came while B's command ran; want it at the end of the cycle", line)
	}
	_ = a.SetReadDeadline(time.Time{})
	expect(br, "+OK\r\n")
	expect(ar, "+PONG\r\n")
}
