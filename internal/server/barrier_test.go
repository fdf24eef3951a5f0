package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
)

// upTo is a reply barrier that releases the units up to a number the test
// sets, as an AOF releases what it fsynced.
type upTo struct{ n atomic.Uint64 }

func (b *upTo) Released(seq uint64) bool { return seq <= b.n.Load() }

// nopTarget is a propagation target that keeps nothing: with a target, the
// units with effects get numbers.
type nopTarget struct{}

func (nopTarget) Propagate(int, [][]byte) {}
func (nopTarget) UnitDone()               {}

// startListening runs a server of this package on a loopback port until the
// test ends; args are more command-line parameters.
func startListening(t *testing.T, goroutines bool, args ...string) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	if _, err := cfg.ParseArgs(append([]string{"--dir", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	s := New(cfg, Options{Listener: ln, Seed: 1, GoroutinePerConn: goroutines,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, ln.Addr().String()
}

type barrierConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialBarrier(t *testing.T, addr string) *barrierConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &barrierConn{t, c, bufio.NewReader(c)}
}

func (r *barrierConn) send(args ...string) {
	var b []byte
	b = append(b, '*')
	b = append(b, itoa(int64(len(args)))...)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = append(b, itoa(int64(len(a)))...)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// expect reads want (bytes of one or more replies) within d.
func (r *barrierConn) expect(want string, d time.Duration) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(r.br, buf); err != nil || string(buf) != want {
		r.t.Fatalf("read %q (%v), want %q", buf, err, want)
	}
}

// silent checks that nothing arrives for d.
func (r *barrierConn) silent(d time.Duration) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	if b, err := r.br.ReadByte(); err == nil {
		rest, _ := r.br.Peek(r.br.Buffered())
		r.t.Fatalf("got %q while the barrier holds it", string(b)+string(rest))
	}
}

// TestReplyBarrier: with a barrier set, the replies of a unit with effects,
// the replies of later readers, and the messages the unit published wait
// until the barrier releases the unit, and come out in order; output that
// depends on no held unit flows. On both transports.
func TestReplyBarrier(t *testing.T) {
	for _, goroutines := range []bool{false, true} {
		name := "eventloop"
		if goroutines {
			name = "goroutines"
		}
		t.Run(name, func(t *testing.T) {
			s, addr := startListening(t, goroutines)
			b := &upTo{}
			s.eng.Lock()
			s.AddPropagationTarget(nopTarget{}, command.PropAll)
			s.eng.Unlock()
			s.SetReplyBarrier(b)
			w, r, sub, pub := dialBarrier(t, addr), dialBarrier(t, addr), dialBarrier(t, addr), dialBarrier(t, addr)

			w.send("PING") // no unit with effects yet: nothing to wait for
			w.expect("+PONG\r\n", 2*time.Second)
			sub.send("SUBSCRIBE", "ch")
			sub.expect("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", 2*time.Second)

			w.send("SET", "k", "v") // unit 1
			w.silent(100 * time.Millisecond)
			r.send("GET", "k") // read what unit 1 wrote: waits for it too
			r.silent(50 * time.Millisecond)
			pub.send("PUBLISH", "ch", "hello") // unit 2 (PUBLISH propagates)
			pub.silent(50 * time.Millisecond)
			sub.silent(50 * time.Millisecond)
			if got := s.UnitSeq(); got != 2 {
				t.Fatalf("UnitSeq %d, want 2", got)
			}

			b.n.Store(1)
			s.ReleaseReplies()
			w.expect("+OK\r\n", 2*time.Second)
			r.expect("$1\r\nv\r\n", 2*time.Second)
			pub.silent(50 * time.Millisecond)
			sub.silent(10 * time.Millisecond)

			b.n.Store(2)
			s.ReleaseReplies()
			pub.expect(":1\r\n", 2*time.Second)
			sub.expect("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n", 2*time.Second)

			// a pipeline's replies stay in order behind a held one
			w.send("INCR", "n")
			w.send("GET", "n")
			w.silent(50 * time.Millisecond)
			b.n.Store(3)
			s.ReleaseReplies()
			w.expect(":1\r\n$1\r\n1\r\n", 2*time.Second)

			// without a barrier, nothing waits
			s.SetReplyBarrier(nil)
			w.send("SET", "k", strings.Repeat("x", 3))
			w.expect("+OK\r\n", 2*time.Second)
		})
	}
}
