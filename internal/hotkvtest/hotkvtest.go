// Package hotkvtest starts in-process HotKV servers on 127.0.0.1:0 for tests, with
// a fake clock when asked, and talks raw RESP to them (httptest style).
package hotkvtest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/server"
)

// Server is a running in-process HotKV.
type Server struct {
	Addr  string
	Clock *clock.Fake // nil unless WithFakeClock
	Srv   *server.Server
	Ports map[string]int // the ports WithFreePort chose, by parameter
}

// Option configures Start.
type Option func(*startOpts)

type startOpts struct {
	fake       *clock.Fake
	config     [][2]string
	goroutines bool
	busyPoll   time.Duration
	log        io.Writer
	probe      bool
	freePorts  []string
}

// WithFreePort sets the port parameter name (tls-port, metrics-port, ...) to a
// port free on 127.0.0.1, chosen again if another process took it before the
// server could bind it (Server.Ports tells which one it got).
func WithFreePort(name string) Option {
	return func(o *startOpts) { o.freePorts = append(o.freePorts, name) }
}

// WithSnapshotProbe runs every execution unit under a probe snapshot
// (server.Options.ProbeSnapshots): a write path that changes a key without
// handing it to the snapshots first panics.
func WithSnapshotProbe() Option { return func(o *startOpts) { o.probe = true } }

// WithLog sends the server's log (slog's text) to w; it is discarded otherwise.
func WithLog(w io.Writer) Option {
	return func(o *startOpts) { o.log = w }
}

// WithBusyPoll makes the event loops poll this long before they sleep
// (server.Options.BusyPoll; cmd/hotkv's default is 50 µs, tests default to 0).
func WithBusyPoll(d time.Duration) Option {
	return func(o *startOpts) { o.busyPoll = d }
}

// WithGoroutinePerConn serves connections on goroutines instead of the event
// loops (the portable path).
func WithGoroutinePerConn() Option {
	return func(o *startOpts) { o.goroutines = true }
}

// WithFakeClock makes the server read time from a fake clock starting at ms.
func WithFakeClock(ms int64) Option {
	return func(o *startOpts) { o.fake = clock.NewFake(ms) }
}

// WithConfig sets configuration parameters before the server starts.
func WithConfig(name, value string) Option {
	return func(o *startOpts) { o.config = append(o.config, [2]string{name, value}) }
}

// Start runs a server until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o startOpts
	for _, f := range opts {
		f(&o)
	}
	// snapshots (DEBUG RELOAD, SAVE) go to a directory of the test's own
	// unless the test names one
	// unless the test names one (a restart test names the same dir twice)
	dir := ""
	var rest [][2]string
	for _, kv := range o.config {
		if kv[0] == "dir" {
			dir = kv[1]
		} else {
			rest = append(rest, kv)
		}
	}
	if dir == "" {
		dir = t.TempDir()
	}
	// startup arguments: dir and the immutable parameters
	// (enable-module-command, ...) are set as the command line sets them;
	// DEBUG is allowed unless the test says otherwise, and full syncs start
	// at once (repl-diskless-sync-delay 0), as the suite's default.conf has
	// them in Redis's own tests
	base := []string{"--dir", dir, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}
	for _, kv := range rest {
		base = append(base, "--"+kv[0], kv[1])
	}
	var (
		srv   *server.Server
		ln    net.Listener
		ports map[string]int
	)
	for attempt := 1; ; attempt++ {
		args := base
		ports = map[string]int{}
		for _, name := range o.freePorts {
			ports[name] = FreePort(t)
			args = append(args[:len(args):len(args)], "--"+name, strconv.Itoa(ports[name]))
		}
		cfg := config.New()
		if _, err := cfg.ParseArgs(args); err != nil {
			t.Fatalf("config: %v", err)
		}
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		logTo := o.log
		if logTo == nil {
			logTo = io.Discard
		}
		so := server.Options{Listener: ln, Seed: 1, Logger: slog.New(slog.NewTextHandler(logTo, nil)),
			GoroutinePerConn: o.goroutines, BusyPoll: o.busyPoll, ProbeSnapshots: o.probe,
			StrictSnapshots: true} // a change a snapshot missed is a bug the tests must see
		if o.fake != nil {
			so.Clock = o.fake
		}
		srv = server.New(cfg, so)
		err = srv.Listen()
		if err == nil {
			break
		}
		// a port FreePort chose was taken by another test's process
		// before the server bound it: choose again
		_ = ln.Close()
		inUse := errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
		if len(o.freePorts) == 0 || attempt == 10 || !inUse {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = srv.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	return &Server{Addr: ln.Addr().String(), Clock: o.fake, Srv: srv, Ports: ports}
}

// Conn is a raw RESP connection.
type Conn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

// Dial opens a raw connection to addr.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Conn{t: t, c: c, br: bufio.NewReader(c)}
}

// Net is the underlying connection.
func (c *Conn) Net() net.Conn { return c.c }

// Write sends raw bytes.
func (c *Conn) Write(b []byte) {
	c.t.Helper()
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// Do sends args as a RESP array and returns the raw bytes of one reply.
func (c *Conn) Do(args ...string) string {
	c.t.Helper()
	c.Write(EncodeCommand(args...))
	r, err := c.ReadReply()
	if err != nil {
		c.t.Fatalf("%s: %v", Brief(args), err)
	}
	return r
}

// ReadReply reads the raw bytes of one complete RESP2/RESP3 reply, with a deadline.
func (c *Conn) ReadReply() (string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	err := readReply(c.br, &buf)
	return string(buf), err
}

// EncodeCommand encodes args as a RESP multibulk command.
func EncodeCommand(args ...string) []byte {
	b := []byte{'*'}
	b = appendInt(b, len(args))
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = appendInt(b, len(a))
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// readReply appends one reply's raw bytes to buf.
func readReply(br *bufio.Reader, buf *[]byte) error {
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	*buf = append(*buf, line...)
	if len(line) < 3 {
		return io.ErrUnexpectedEOF
	}
	body := line[1 : len(line)-2]
	n := 0
	neg := false
	for i, ch := range body {
		if i == 0 && ch == '-' {
			neg = true
			continue
		}
		if ch < '0' || ch > '9' {
			n = -1
			break
		}
		n = n*10 + int(ch-'0')
	}
	if neg {
		n = -1
	}
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			return err
		}
		*buf = append(*buf, data...)
	case '*', '~', '>':
		for i := 0; i < n; i++ {
			if err := readReply(br, buf); err != nil {
				return err
			}
		}
	case '%', '|':
		for i := 0; i < 2*n; i++ {
			if err := readReply(br, buf); err != nil {
				return err
			}
		}
		if line[0] == '|' { // an attribute precedes the real reply
			return readReply(br, buf)
		}
	}
	return nil
}

// ReadReplyFrom reads one complete reply's raw bytes from br and appends them to buf.
func ReadReplyFrom(br *bufio.Reader, buf *[]byte) error { return readReply(br, buf) }

// Brief renders a command for a failure message, cutting long arguments.
func Brief(args []string) string {
	var b []byte
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		if len(a) > 40 {
			a = a[:40] + "...(" + strconv.Itoa(len(a)) + " bytes)"
		}
		b = strconv.AppendQuote(b, a)
	}
	return string(b)
}
