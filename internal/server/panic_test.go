package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
)

// A handler that panics is a bug, but it must not take the server down: the
// client gets an error, its connection and every other client go on.
func TestHandlerPanicIsContained(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(config.New(), Options{Clock: clock.NewFake(1e12), Listener: ln, Seed: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.table.Lookup([]byte("echo")).Run = func(c *command.Ctx) {
		c.W.ArrayLen(3) // a partial reply that must not reach the client
		var m map[string]int
		m["boom"]++
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	c := dialRaw(t, ln.Addr().String())
	other := dialRaw(t, ln.Addr().String())
	if r := c.Do("ECHO", "x"); r != "-ERR internal error in 'echo': the command was aborted\r\n" {
		t.Fatalf("panicking command: %q", r)
	}
	if r := c.Do("SET", "k", "v"); r != "+OK\r\n" {
		t.Fatalf("same connection after the panic: %q", r)
	}
	if r := other.Do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("other client: %q", r)
	}
}

// rawConn is a minimal inline-command client (hotkvtest imports this package).
type rawConn struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, addr string) *rawConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c}
}

// Do sends an inline command and returns what arrives within a short wait.
func (r *rawConn) Do(args ...string) string {
	line := ""
	for i, a := range args {
		if i > 0 {
			line += " "
		}
		line += a
	}
	if _, err := r.c.Write([]byte(line + "\r\n")); err != nil {
		r.t.Fatal(err)
	}
	_ = r.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, err := r.c.Read(buf)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(buf[:n])
}
