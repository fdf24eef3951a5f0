package network

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// A connection's reads stop at maxTurnRead bytes in a turn of its loop, with
// more waiting in the socket: EAGAIN, the bytes left unread for the next
// turn, which reads again once the loop zeroed the count.
func TestTurnReadBudget(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	const sent = 64 << 10
	if n, err := unix.Write(fds[1], []byte(strings.Repeat("x", sent))); n != sent || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	var in atomic.Int64
	turn := maxTurnRead - 1000 // the turn has read all but 1000 bytes of its budget
	r := fdReader{fd: fds[0], in: countIn{st: &Stats{}, conn: &in}, turn: &turn}
	buf := make([]byte, 32<<10)
	if n, err := r.Read(buf); n != 1000 || err != nil || turn != maxTurnRead {
		t.Fatalf("Read near the budget = %d, %v (turn %d); want the 1000 bytes left", n, err, turn)
	}
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("Read at the budget = %d, %v; want EAGAIN", n, err)
	}
	if queued, err := unix.IoctlGetInt(fds[0], unix.SIOCINQ); err != nil || queued != sent-1000 {
		t.Fatalf("%d bytes queued (%v), want %d left for the next turn", queued, err, sent-1000)
	}
	turn = 0 // the loop's next turn
	total := 1000
	for total < sent {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if turn != sent-1000 || in.Load() != sent {
		t.Fatalf("turn %d, counted %d; want %d, %d", turn, in.Load(), sent-1000, sent)
	}
}

// The sockets of closed connections are all closed by the time Stop
// returns, whether the loop or the closer goroutine closed them: the
// process's open files come back to where they were.
func TestClosedConnectionsLeaveNoFD(t *testing.T) {
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	before := openFDs()
	h := &fakeHost{}
	n, addr := start(t, false, h)
	if len(n.loops) == 0 {
		t.Skip("no event loops")
	}
	for range 50 {
		c, _ := pinged(t, addr)
		// a partial big argument the server never reads whole: the socket
		// is closed with input queued
		_, _ = c.Write([]byte("*2\r\n$3\r\nSET\r\n$100000000\r\n" + strings.Repeat("a", 256<<10)))
		_ = c.Close()
	}
	waitFor(t, "the sessions to close", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, s := range h.sessions {
			if s.closed.Load() == 0 {
				return false
			}
		}
		return true
	})
	n.Stop()
	if after := openFDs(); after > before {
		t.Fatalf("%d files open after Stop, %d before", after, before)
	}
}
