package network

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/resp"
)

// The network side against a fake server: sessions that answer each command
// with its name, over real sockets, on the event loops and on goroutines.

type fakeHost struct {
	mu       sync.Mutex
	max      int // connections it takes (0: any)
	sessions []*fakeSession
	open     atomic.Int64
	released atomic.Int64
	paused   atomic.Bool // HOLD is held back while set
}

func (h *fakeHost) Open(c *Conn) (Session, *resp.Writer, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.max > 0 && int(h.open.Load()) >= h.max {
		return nil, nil, []byte("-ERR max number of clients reached\r\n")
	}
	s := &fakeSession{h: h, c: c}
	h.sessions = append(h.sessions, s)
	h.open.Add(1)
	return s, &s.w, nil
}

func (h *fakeHost) Released(n int64) { h.released.Add(n) }

func (h *fakeHost) CycleStart()   {}
func (h *fakeHost) CycleEnd(bool) {}
func (h *fakeHost) CycleDone()    {}

func (h *fakeHost) PauseRemainingMs() int64 {
	if h.paused.Load() {
		return 5
	}
	return 0
}

func (h *fakeHost) session(t *testing.T, i int) *fakeSession {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		if len(h.sessions) > i {
			s := h.sessions[i]
			h.mu.Unlock()
			return s
		}
		h.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no session %d", i)
	return nil
}

// fakeSession answers "+NAME" for each command; QUIT closes after its reply,
// HOLD is held back while the host is paused, and Push queues a message
// that BeforeWrite moves into the reply buffer, as the server's drainPush.
type fakeSession struct {
	h       *fakeHost
	c       *Conn
	w       resp.Writer
	mu      sync.Mutex // guards queue, batches
	queue   []byte
	batches []int64 // commands per Run
	closed  atomic.Int64
}

func (s *fakeSession) reply(argv [][]byte) (quit bool) {
	name := strings.ToUpper(string(argv[0]))
	s.w.SimpleString(name)
	return name == "QUIT"
}

func (s *fakeSession) Run(argv [][]byte, pending *[][][]byte) (r Ran) {
	var ok bool
	for {
		if string(argv[0]) == "HOLD" && s.h.paused.Load() {
			r.Stop, r.Held = StopHeld, argv
			break
		}
		r.Cmds++
		if s.reply(argv) {
			r.Close = true
			break
		}
		if pending != nil && len(*pending) > 0 {
			argv, *pending = (*pending)[0], (*pending)[1:]
			continue
		}
		if argv, ok, r.Err = s.c.Reader().TryCommand(); !ok || r.Err != nil {
			break
		}
	}
	s.mu.Lock()
	s.batches = append(s.batches, r.Cmds)
	s.mu.Unlock()
	return r
}

func (s *fakeSession) Busy(argv [][]byte) Ran { return s.Run(argv, nil) }

func (s *fakeSession) Resume(argv [][]byte) bool {
	if s.h.paused.Load() {
		return false
	}
	s.reply(argv)
	return true
}

func (s *fakeSession) Held(bool)     {}
func (s *fakeSession) Blocked() bool { return false }
func (s *fakeSession) Closing() bool { return false }

func (s *fakeSession) BeforeWrite(sent int, wait bool) Gate {
	s.mu.Lock()
	s.w.Buf = append(s.w.Buf, s.queue...)
	s.queue = s.queue[:0]
	s.mu.Unlock()
	return WriteNow
}

func (s *fakeSession) AfterWrite()  { s.w.Buf = s.w.Buf[:0] }
func (s *fakeSession) Publish(bool) {}
func (s *fakeSession) Closed() {
	s.closed.Add(1)
	s.h.open.Add(-1)
}

// Push queues msg for the connection's owner to write, from any goroutine.
func (s *fakeSession) Push(msg string) {
	s.mu.Lock()
	s.queue = append(s.queue, msg...)
	s.mu.Unlock()
	s.c.Wake()
}

// start runs a Net over a fresh listener on both transports.
func start(t *testing.T, goroutines bool, h *fakeHost) (*Net, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := New(Deps{Host: h, Config: config.New(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock: clock.New(), Limits: resp.NewLimits(), Listener: ln, Goroutines: goroutines})
	if err := n.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n, ln.Addr().String()
}

// served is a Net serving a fresh fakeHost.
func served(t *testing.T, goroutines bool) (*fakeHost, string) {
	t.Helper()
	h := &fakeHost{}
	_, addr := start(t, goroutines, h)
	return h, addr
}

func transports(t *testing.T, f func(t *testing.T, goroutines bool)) {
	for _, g := range []bool{false, true} {
		name := "eventloop"
		if g {
			name = "goroutine"
		} else if !eventLoopSupported {
			continue
		}
		t.Run(name, func(t *testing.T) { f(t, g) })
	}
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

func send(t *testing.T, c net.Conn, cmds string) {
	t.Helper()
	if _, err := c.Write([]byte(cmds)); err != nil {
		t.Fatal(err)
	}
}

// pinged is a connection that was served once.
func pinged(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, r := dial(t, addr)
	send(t, c, "PING\r\n")
	expect(t, r, "+PING")
	return c, r
}

func expect(t *testing.T, r *bufio.Reader, want ...string) {
	t.Helper()
	for _, w := range want {
		line, err := r.ReadString('\n')
		if err != nil || line != w+"\r\n" {
			t.Fatalf("read %q, %v; want %q", line, err, w)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A pipeline is one batch: its commands go to Run together and their replies
// come back in order.
func TestPipelineIsOneBatch(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		h := &fakeHost{}
		n, addr := start(t, goroutines, h)
		c, r := dial(t, addr)
		send(t, c, "*1\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n*1\r\n$1\r\nc\r\n")
		expect(t, r, "+A", "+B", "+C")
		s := h.session(t, 0)
		s.mu.Lock()
		batches := append([]int64(nil), s.batches...)
		s.mu.Unlock()
		if len(batches) != 1 || batches[0] != 3 {
			t.Fatalf("batches %v; want one batch of 3 commands", batches)
		}
		if got := n.Stats.ConnectionsReceived.Load(); got != 1 {
			t.Fatalf("connections received %d; want 1", got)
		}
		// counted once the write returned, maybe after the client read it
		waitFor(t, "the write to be counted", func() bool {
			return n.Stats.Writes.Load() > 0 && n.Stats.NetOutput.Load() >= int64(len("+A\r\n+B\r\n+C\r\n"))
		})
	})
}

// A connection over maxclients (the host refuses it) gets Redis's error and
// is closed; the session of a connection that hangs up is closed once.
func TestRefusedAndClosed(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		h := &fakeHost{max: 1}
		n, addr := start(t, goroutines, h)
		a, _ := pinged(t, addr)
		_, br := dial(t, addr)
		expect(t, br, "-ERR max number of clients reached")
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("the refused connection stays open: %v", err)
		}
		if got := n.Stats.RejectedConnections.Load(); got != 1 {
			t.Fatalf("rejected %d; want 1", got)
		}
		a.Close()
		s := h.session(t, 0)
		waitFor(t, "the session to close", func() bool { return s.closed.Load() == 1 })
		time.Sleep(20 * time.Millisecond)
		if got := s.closed.Load(); got != 1 {
			t.Fatalf("Closed called %d times; want 1", got)
		}
	})
}

// QUIT's reply is written before the connection closes; a protocol error gets
// Redis's reply and closes it.
func TestCloseAfterReplyAndProtocolError(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		_, addr := served(t, goroutines)
		c, r := dial(t, addr)
		send(t, c, "QUIT\r\nPING\r\n")
		expect(t, r, "+QUIT")
		if line, err := r.ReadString('\n'); err != io.EOF {
			t.Fatalf("after QUIT: %q, %v; want the connection closed", line, err)
		}
		c2, r2 := dial(t, addr)
		send(t, c2, "*1\r\n$x\r\n")
		expect(t, r2, "-ERR Protocol error: invalid bulk length")
		if _, err := r2.ReadByte(); err != io.EOF {
			t.Fatalf("after a protocol error: %v; want the connection closed", err)
		}
	})
}

// Output queued from another goroutine (Pub/Sub, a blocked command's reply)
// reaches an idle connection: Wake gets its owner to write it.
func TestWakeWritesQueuedOutput(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		h, addr := served(t, goroutines)
		c, r := pinged(t, addr)
		s := h.session(t, 0)
		s.Push("+message\r\n")
		expect(t, r, "+message")
		send(t, c, "PING\r\n") // still served after the wake-up
		expect(t, r, "+PING")
	})
}

// Kill, from any goroutine, disconnects the connection and its session is
// closed.
func TestKill(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		h, addr := served(t, goroutines)
		_, r := pinged(t, addr)
		s := h.session(t, 0)
		s.c.Kill()
		if _, err := r.ReadByte(); err == nil {
			t.Fatal("the killed connection still reads")
		}
		waitFor(t, "the killed session to close", func() bool { return s.closed.Load() == 1 })
	})
}

// A command CLIENT PAUSE holds back (StopHeld) waits on the event loop,
// with the commands behind it, until Resume runs it; the loop wakes for the
// pause's end without input.
func TestHeldCommandResumes(t *testing.T) {
	if !eventLoopSupported {
		t.Skip("no event loops here: goroutine mode holds commands inside Run")
	}
	h := &fakeHost{}
	h.paused.Store(true)
	_, addr := start(t, false, h)
	c, r := dial(t, addr)
	send(t, c, "HOLD\r\nPING\r\n")
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("reply %q while the command is held", line)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h.paused.Store(false)
	expect(t, r, "+HOLD", "+PING")
}

// Stop closes every connection and tells each session.
func TestStopClosesConnections(t *testing.T) {
	transports(t, func(t *testing.T, goroutines bool) {
		h := &fakeHost{}
		n, addr := start(t, goroutines, h)
		var rs []*bufio.Reader
		for i := 0; i < 3; i++ {
			_, r := pinged(t, addr)
			rs = append(rs, r)
		}
		n.Stop()
		for i, r := range rs {
			if _, err := r.ReadByte(); err == nil {
				t.Fatalf("connection %d still open after Stop", i)
			}
		}
		if got := h.open.Load(); got != 0 {
			t.Fatalf("%d sessions left open after Stop", got)
		}
	})
}

// An idle event-loop connection gives its reply buffer back, and the host
// counts it as released.
func TestIdleReplyBufferReleased(t *testing.T) {
	c := &Conn{w: &resp.Writer{Buf: make([]byte, 0, 4096)}}
	c.lastActive.Store(1000)
	if got := c.dropIdleReply(1000 + IdleReplyMs - 1); got != 0 {
		t.Fatalf("dropped %d bytes before IdleReplyMs", got)
	}
	c.writeQueued = true
	if got := c.dropIdleReply(1000 + IdleReplyMs); got != 0 {
		t.Fatalf("dropped %d bytes of a buffer waiting to be written", got)
	}
	c.writeQueued = false
	if got := c.dropIdleReply(1000 + IdleReplyMs); got != 4096 || c.w.Buf != nil {
		t.Fatalf("dropped %d bytes (buffer %v); want 4096 and no buffer", got, c.w.Buf != nil)
	}
}
