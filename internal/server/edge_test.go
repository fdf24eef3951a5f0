package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/hotkv/hotkv/internal/server"
)

// countingListener counts the Write calls made on accepted connections.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

// startRaw runs a server built directly from server.New with the given clock and listener.
func startRaw(t *testing.T, clk clock.Clock, ln net.Listener, cfgPairs ...[2]string) string {
	t.Helper()
	cfg := config.New()
	if len(cfgPairs) > 0 {
		if err := cfg.Set(cfgPairs...); err != nil {
			t.Fatal(err)
		}
	}
	srv := server.New(cfg, server.Options{Clock: clk, Listener: ln, Seed: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// docs/ARCHITECTURE.md §1: a client that pipelines 100 commands gets one write.
func TestOneFlushPerPipelinedBatch(t *testing.T) {
	ln0, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: ln0}
	addr := startRaw(t, clock.NewFake(1e12), ln)
	c := hotkvtest.Dial(t, addr)
	var batch []byte
	for i := 0; i < 100; i++ {
		batch = append(batch, hotkvtest.EncodeCommand("INCR", "n")...)
	}
	c.Write(batch)
	for i := 1; i <= 100; i++ {
		r, err := c.ReadReply()
		if err != nil || r != ":"+itoa(i)+"\r\n" {
			t.Fatalf("reply %d: %q %v", i, r, err)
		}
	}
	if n := ln.writes.Load(); n != 1 {
		t.Fatalf("%d writes for one pipelined batch, want 1", n)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// docs/ARCHITECTURE.md §4.2: the server clock advances on the monotonic clock, so stepping
// the wall clock forward or back neither expires nor extends a TTL.
func TestWallClockStepDoesNotMoveTTLs(t *testing.T) {
	var mu sync.Mutex
	wall := time.UnixMilli(1_700_000_000_000)
	var mono time.Duration
	clk := clock.NewFrom(
		func() time.Time { mu.Lock(); defer mu.Unlock(); return wall },
		func() time.Duration { mu.Lock(); defer mu.Unlock(); return mono })
	step := func(wallStep, monoStep time.Duration) {
		mu.Lock()
		wall = wall.Add(wallStep)
		mono += monoStep
		mu.Unlock()
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	c := hotkvtest.Dial(t, startRaw(t, clk, ln))
	if r := c.Do("SET", "lock", "tok", "PX", "5000"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	step(time.Hour, time.Second) // NTP jumps an hour ahead; one real second passes
	if r := c.Do("PTTL", "lock"); r != ":4000\r\n" {
		t.Fatalf("after a forward wall step: %q (a wall-clock server would have expired the lock)", r)
	}
	step(-3*time.Hour, 3900*time.Millisecond) // and two hours behind
	if r := c.Do("PTTL", "lock"); r != ":100\r\n" {
		t.Fatalf("after a backward wall step: %q", r)
	}
	step(0, 99*time.Millisecond)
	if r := c.Do("EXISTS", "lock"); r != ":1\r\n" {
		t.Fatal("expired early")
	}
	step(0, time.Millisecond)
	if r := c.Do("EXISTS", "lock"); r != ":0\r\n" {
		t.Fatal("expired late")
	}
}

// Garbage, a 4 GB bulk length and an over-long inline request each get Redis's
// error and a closed connection; other clients are unaffected.
func TestBadInputIsolated(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		testBadInputIsolated(t, hotkvtest.Start(t, opts...))
	})
}

func testBadInputIsolated(t *testing.T, srv *hotkvtest.Server) {
	good := hotkvtest.Dial(t, srv.Addr)
	good.Do("SET", "k", "v")
	cases := []struct{ in, want string }{
		{"*1\r\n$4294967296\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4000000000\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*2\r\n:1\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"SET k \"abc\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{strings.Repeat("x", 70*1024), "-ERR Protocol error: too big inline request\r\n"},
		{"*1\r\n" + strings.Repeat("9", 70*1024), "-ERR Protocol error: too big bulk count string\r\n"},
		{"\x01\xffgarbage\r\n", "-ERR unknown command '\x01\xffgarbage'\r\n"},
	}
	for _, tc := range cases {
		bad := hotkvtest.Dial(t, srv.Addr)
		bad.Write([]byte(tc.in))
		r, err := bad.ReadReply()
		if err != nil || r != tc.want {
			t.Errorf("%q: got %q %v, want %q", tc.in[:min(len(tc.in), 40)], r, err, tc.want)
		}
		if strings.HasPrefix(tc.want, "-ERR Protocol") {
			if _, err := bad.ReadReply(); err == nil {
				t.Errorf("%q: connection not closed after a protocol error", tc.in[:min(len(tc.in), 40)])
			}
		}
		if r := good.Do("GET", "k"); r != "$1\r\nv\r\n" {
			t.Fatalf("other client affected: %q", r)
		}
	}
}

// Limits: a bulk over proto-max-bulk-len is refused; SETRANGE and APPEND cannot
// build a string past it; a query buffer past client-query-buffer-limit closes.
func TestLimits(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("proto-max-bulk-len", "1mb"))
	c := hotkvtest.Dial(t, srv.Addr)
	if r := c.Do("SETRANGE", "k", "1048576", "x"); r != "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n" {
		t.Fatal(r)
	}
	c.Do("SET", "a", strings.Repeat("a", 1<<20-1))
	if r := c.Do("APPEND", "a", "bb"); r != "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n" {
		t.Fatal(r)
	}
	big := hotkvtest.Dial(t, srv.Addr)
	big.Write([]byte("*2\r\n$3\r\nGET\r\n$1048577\r\n"))
	if r, _ := big.ReadReply(); r != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatal(r)
	}
	// many small pending arguments of one huge command: the query buffer limit trips
	small := hotkvtest.Start(t, hotkvtest.WithConfig("client-query-buffer-limit", "1mb"))
	qb := hotkvtest.Dial(t, small.Addr)
	var b bytes.Buffer
	b.WriteString("*100000\r\n")
	for b.Len() < 2<<20 {
		b.WriteString("$10\r\n0123456789\r\n")
	}
	_ = qb.Net().SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = qb.Net().Write(b.Bytes())
	if _, err := qb.ReadReply(); err == nil {
		t.Fatal("connection past the query buffer limit was not closed")
	}
	if r := c.Do("PING"); r != "+PONG\r\n" {
		t.Fatal(r)
	}
}

func TestAuthRequired(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("requirepass", "s3cret"))
	c := hotkvtest.Dial(t, srv.Addr)
	steps := [][2]string{
		{"GET k", "-NOAUTH Authentication required.\r\n"},
		{"AUTH wrong", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"AUTH s3cret", "+OK\r\n"},
		{"GET k", "$-1\r\n"},
	}
	for _, s := range steps {
		if r := c.Do(strings.Fields(s[0])...); r != s[1] {
			t.Fatalf("%s: %q", s[0], r)
		}
	}
	h := hotkvtest.Dial(t, srv.Addr)
	if r := h.Do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(r, "%7\r\n") {
		t.Fatalf("HELLO AUTH: %q", r)
	}
	// an unauthenticated client cannot send a big multibulk
	u := hotkvtest.Dial(t, srv.Addr)
	u.Write([]byte("*20\r\n"))
	if r, _ := u.ReadReply(); r != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Fatal(r)
	}
}

func TestClientReplyKillPause(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		testClientReplyKillPause(t, hotkvtest.Start(t, opts...))
	})
}

func testClientReplyKillPause(t *testing.T, srv *hotkvtest.Server) {
	c := hotkvtest.Dial(t, srv.Addr)
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "OFF"))
	c.Write(hotkvtest.EncodeCommand("SET", "a", "1"))
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP")) // no effect while OFF
	if r := c.Do("CLIENT", "REPLY", "ON"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP"))
	c.Write(hotkvtest.EncodeCommand("GET", "a"))
	if r := c.Do("GET", "a"); r != "$1\r\n1\r\n" {
		t.Fatalf("after SKIP: %q", r)
	}
	victim := hotkvtest.Dial(t, srv.Addr)
	id := strings.TrimSuffix(strings.TrimPrefix(victim.Do("CLIENT", "ID"), ":"), "\r\n")
	if r := c.Do("CLIENT", "KILL", "ID", id); r != ":1\r\n" {
		t.Fatal(r)
	}
	if _, err := victim.ReadReply(); err == nil {
		t.Fatal("killed client still connected")
	}
	list := c.Do("CLIENT", "LIST")
	if strings.Contains(list, "id="+id+" ") || !strings.Contains(list, "cmd=client|list") {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	// CLIENT PAUSE WRITE holds writes, not reads; UNPAUSE releases them
	if r := c.Do("CLIENT", "PAUSE", "60000", "WRITE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	other := hotkvtest.Dial(t, srv.Addr)
	if r := other.Do("GET", "a"); r != "$1\r\n1\r\n" { // would time out if held
		t.Fatalf("read held by a WRITE pause: %q", r)
	}
	writer := hotkvtest.Dial(t, srv.Addr)
	writer.Write(hotkvtest.EncodeCommand("SET", "a", "2"))
	_ = writer.Net().SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := writer.Net().Read(make([]byte, 16)); err == nil {
		t.Fatalf("a write ran during the pause (%d bytes of reply)", n)
	}
	if r := c.Do("CLIENT", "UNPAUSE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r, err := writer.ReadReply(); err != nil || r != "+OK\r\n" {
		t.Fatalf("held write after UNPAUSE: %q %v", r, err)
	}
	if r := other.Do("GET", "a"); r != "$1\r\n2\r\n" {
		t.Fatal(r)
	}
}

func TestIdleTimeout(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("timeout", "1"))
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("PING")
	// a subscriber and a blocked client are not idle (Redis's
	// clientsCronHandleTimeout); a client trickling a command that never
	// completes is (stricter than Redis, where each byte resets the clock)
	sub := hotkvtest.Dial(t, srv.Addr)
	sub.Do("SUBSCRIBE", "news")
	blocked := hotkvtest.Dial(t, srv.Addr)
	blocked.Write(hotkvtest.EncodeCommand("BLPOP", "nolist", "0"))
	trickle := hotkvtest.Dial(t, srv.Addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for _, b := range []byte("*2\r\n$4\r\nPING\r\n$100\r\n" + strings.Repeat("x", 99)) {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := trickle.Net().Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	_ = c.Net().SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1)
	if _, err := c.Net().Read(buf); err == nil {
		t.Fatal("idle client not closed")
	}
	_ = trickle.Net().SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := trickle.Net().Read(buf); err == nil {
		t.Fatal("trickling client not closed")
	}
	admin := hotkvtest.Dial(t, srv.Addr)
	if r := admin.Do("PUBLISH", "news", "still here"); r != ":1\r\n" {
		t.Fatalf("the subscriber was closed: %q", r)
	}
	if r := admin.Do("LPUSH", "nolist", "v"); r != ":1\r\n" {
		t.Fatal(r)
	}
	if r, err := blocked.ReadReply(); err != nil || !strings.Contains(r, "nolist") {
		t.Fatalf("the blocked client was closed: %q %v", r, err)
	}
}

// CONFIG SET port moves the listener; a port that cannot be bound is refused
// with Redis's error and nothing changes.
func TestConfigSetPortRebinds(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	if r := c.Do("CONFIG", "SET", "port", busyPort); r != "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n" {
		t.Fatalf("busy port: %q", r)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	freePort := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()
	if r := c.Do("CONFIG", "SET", "bind", "127.0.0.1", "port", freePort); r != "+OK\r\n" {
		t.Fatalf("free port: %q", r)
	}
	n := hotkvtest.Dial(t, "127.0.0.1:"+freePort)
	if r := n.Do("PING"); r != "+PONG\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("PING"); r != "+PONG\r\n" { // existing connections stay
		t.Fatal(r)
	}
	if _, err := net.DialTimeout("tcp", srv.Addr, time.Second); err == nil {
		t.Fatal("the old listener is still open")
	}
}

// The event loops too answer a pipelined batch with one write: INFO's
// total_writes_processed grows by one for 100 pipelined commands (and one for
// the first INFO's own reply).
func TestOneWritePerBatchEventLoop(t *testing.T) {
	srv := hotkvtest.Start(t)
	obs := hotkvtest.Dial(t, srv.Addr)
	writes := func() int {
		r := obs.Do("INFO", "stats")
		i := strings.Index(r, "total_writes_processed:")
		if i < 0 {
			t.Fatalf("no total_writes_processed in %q", r)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(r[i+len("total_writes_processed:") : i+strings.Index(r[i:], "\r")]))
		return n
	}
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("PING")
	before := writes()
	var batch []byte
	for i := 0; i < 100; i++ {
		batch = append(batch, hotkvtest.EncodeCommand("INCR", "n")...)
	}
	c.Write(batch)
	for i := 1; i <= 100; i++ {
		if r, err := c.ReadReply(); err != nil || r != ":"+itoa(i)+"\r\n" {
			t.Fatalf("reply %d: %q %v", i, r, err)
		}
	}
	if d := writes() - before; d != 2 {
		t.Fatalf("%d writes for one pipelined batch and one INFO reply, want 2", d)
	}
}

// INFO latencystats reports per-command percentiles (redis.io INFO, tests/unit/info.tcl).
func TestInfoLatencystats(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
	c.Do("SET", "k", "v")
	c.Do("DEBUG", "SLEEP", "0.05")
	c.Do("CLIENT", "ID")
	info := c.Do("INFO", "latencystats")
	for _, want := range []string{"# Latencystats", "latency_percentiles_usec_set:p50=", ",p99=", ",p99.9=", "latency_percentiles_usec_client|id:p50="} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO latencystats lacks %q:\n%s", want, info)
		}
	}
	i := strings.Index(info, "latency_percentiles_usec_debug:p50=")
	if i < 0 {
		t.Fatal("no debug line")
	}
	v, err := strconv.ParseFloat(info[i+len("latency_percentiles_usec_debug:p50="):i+strings.Index(info[i:], ",")], 64)
	if err != nil || v < 50000 {
		t.Fatalf("DEBUG SLEEP 0.05 reported p50=%v µs (%v), want >= 50000", v, err)
	}
	c.Do("CONFIG", "SET", "latency-tracking", "no")
	if info := c.Do("INFO", "latencystats"); strings.Contains(info, "latency_percentiles") {
		t.Fatalf("latency-tracking no still reports: %q", info)
	}
	if info := c.Do("INFO"); strings.Contains(info, "Latencystats") {
		t.Fatal("latencystats is not a default section")
	}
}

// client-output-buffer-limit: a reply over the normal class's hard limit closes
// the client and counts a disconnection (tests/unit/info.tcl, which turns
// copy avoidance off: with it, as in Redis 8.6, a long string reply refers to
// the value and counts a pointer's worth, so the whole reply goes out).
func TestOutputBufferHardLimit(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		admin := hotkvtest.Dial(t, srv.Addr)
		admin.Do("SET", "big", strings.Repeat("a", 100000))
		if r := admin.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 10000 0 0"); r != "+OK\r\n" {
			t.Fatal(r)
		}
		c := hotkvtest.Dial(t, srv.Addr)
		if r := c.Do("GET", "big"); len(r) != 100011 {
			t.Fatalf("with copy avoidance: a %d-byte reply, want the whole 100011 as redis-server 8.6.3", len(r))
		}
		admin.Do("DEBUG", "REPLY-COPY-AVOIDANCE", "0")
		c.Write(hotkvtest.EncodeCommand("GET", "big"))
		if r, err := c.ReadReply(); err == nil {
			t.Fatalf("got a %d-byte reply past the hard limit", len(r))
		}
		if r := admin.Do("INFO", "stats"); !strings.Contains(r, "client_output_buffer_limit_disconnections:1\r\n") {
			t.Fatalf("disconnection not counted: %q", r)
		}
		admin.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		if r := admin.Do("STRLEN", "big"); r != ":100000\r\n" {
			t.Fatal(r)
		}
	})
}

// INFO stats carries the event-loop and instantaneous fields with Redis's names;
// INFO debug is shown only when asked for.
func TestInfoEventloopFields(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	for i := 0; i < 10; i++ {
		c.Do("SET", "k", "v")
	}
	stats := c.Do("INFO", "stats")
	for _, f := range []string{"instantaneous_ops_per_sec:", "instantaneous_input_kbps:", "instantaneous_output_kbps:",
		"eventloop_duration_sum:", "instantaneous_eventloop_cycles_per_sec:", "instantaneous_eventloop_duration_usec:",
		"total_reads_processed:", "total_writes_processed:"} {
		if !strings.Contains(stats, f) {
			t.Errorf("INFO stats lacks %s", f)
		}
	}
	if strings.Contains(stats, "eventloop_cycles:0\r\n") || strings.Contains(stats, "eventloop_duration_cmd_sum:0\r\n") {
		t.Errorf("event-loop counters did not move: %q", stats)
	}
	if all := c.Do("INFO", "all"); strings.Contains(all, "eventloop_duration_aof_sum") {
		t.Error("INFO all must not show the debug section")
	}
	if dbg := c.Do("INFO", "debug"); !strings.Contains(dbg, "eventloop_cmd_per_cycle_max:") {
		t.Errorf("INFO debug: %q", dbg)
	}
}

// onBothTransports runs fn on the event loops and on the goroutine-per-connection
// path, passing the hotkvtest options that select it.
func onBothTransports(t *testing.T, fn func(t *testing.T, opts ...hotkvtest.Option)) {
	t.Run("loop", func(t *testing.T) { fn(t) })
	t.Run("goroutines", func(t *testing.T) { fn(t, hotkvtest.WithGoroutinePerConn()) })
}

// Replies larger than the socket can take are written in pieces as the client
// drains them (EAGAIN, then EPOLLOUT in the event loop), in order and intact,
// while other clients are served meanwhile.
func TestLargeRepliesToASlowReader(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		c := hotkvtest.Dial(t, srv.Addr)
		val := make([]byte, 8<<20)
		for i := range val {
			val[i] = byte('a' + i%26)
		}
		if r := c.Do("SET", "big", string(val)); r != "+OK\r\n" {
			t.Fatal(r)
		}
		var batch []byte
		for i := 0; i < 4; i++ {
			batch = append(batch, hotkvtest.EncodeCommand("GET", "big")...)
			batch = append(batch, hotkvtest.EncodeCommand("INCR", "n")...)
		}
		obs := hotkvtest.Dial(t, srv.Addr)
		before := infoInt(t, obs, "total_writes_processed")
		c.Write(batch)
		other := hotkvtest.Dial(t, srv.Addr)
		if r := other.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("another client is stuck behind the slow reader: %q", r)
		}
		want := "$" + strconv.Itoa(len(val)) + "\r\n" + string(val) + "\r\n"
		for i := 1; i <= 4; i++ {
			r, err := c.ReadReply()
			if err != nil || r != want {
				t.Fatalf("GET %d: %d bytes, %v", i, len(r), err)
			}
			if r, err := c.ReadReply(); err != nil || r != ":"+strconv.Itoa(i)+"\r\n" {
				t.Fatalf("INCR %d: %q %v", i, r, err)
			}
		}
		// the event loop wrote the 32 MiB batch in pieces (a goroutine's blocking
		// Write counts as one); the observer's own INFO replies add 1 and 1
		if d := infoInt(t, obs, "total_writes_processed") - before; len(opts) == 0 && d < 4 {
			t.Fatalf("%d writes: the partial-write path did not run", d)
		}
	})
}

// infoInt reads one integer field of INFO.
func infoInt(t *testing.T, c *hotkvtest.Conn, field string) int {
	t.Helper()
	r := c.Do("INFO", "everything", "debug")
	i := strings.Index(r, field+":")
	if i < 0 {
		t.Fatalf("INFO has no %s", field)
	}
	rest := r[i+len(field)+1:]
	n, err := strconv.Atoi(rest[:strings.Index(rest, "\r")])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// maxclients: one connection too many gets Redis's error and is closed; the
// others keep working.
func TestMaxClients(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, append(opts, hotkvtest.WithConfig("maxclients", "2"))...)
		a := hotkvtest.Dial(t, srv.Addr)
		a.Do("PING")
		b := hotkvtest.Dial(t, srv.Addr)
		b.Do("PING")
		c := hotkvtest.Dial(t, srv.Addr)
		if r, err := c.ReadReply(); err != nil || r != "-ERR max number of clients reached\r\n" {
			t.Fatalf("third client: %q %v", r, err)
		}
		if _, err := c.ReadReply(); err == nil {
			t.Fatal("refused client not closed")
		}
		if r := a.Do("INFO", "stats"); !strings.Contains(r, "rejected_connections:1\r\n") {
			t.Fatalf("rejection not counted: %q", r)
		}
	})
}

// A client that hangs up while CLIENT PAUSE holds its command back is cleaned up
// (and does not keep the server busy); the pause then ends normally.
func TestHangUpWhilePaused(t *testing.T) {
	srv := hotkvtest.Start(t)
	admin := hotkvtest.Dial(t, srv.Addr)
	cycles := infoInt(t, admin, "eventloop_cycles")
	if r := admin.Do("CLIENT", "PAUSE", "200", "WRITE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	held := hotkvtest.Dial(t, srv.Addr)
	held.Write(hotkvtest.EncodeCommand("SET", "k", "v"))
	_ = held.Net().(*net.TCPConn).SetLinger(0) // close with a reset: EPOLLHUP on the server
	_ = held.Net().Close()
	w := hotkvtest.Dial(t, srv.Addr)
	if r := w.Do("SET", "k2", "v2"); r != "+OK\r\n" { // runs once the pause ends
		t.Fatal(r)
	}
	if r := admin.Do("CLIENT", "LIST"); strings.Count(r, "id=") != 2 {
		t.Fatalf("the hung-up client is still listed: %q", r)
	}
	// an idle loop wakes about 10 times a second, plus once per event: a loop
	// spinning on the unmaskable hang-up would run thousands of cycles
	if d := infoInt(t, admin, "eventloop_cycles") - cycles; d > 200 {
		t.Fatalf("%d event-loop cycles during a 200 ms pause", d)
	}
}

// With busy polling (cmd/hotkv's default) the loops serve requests, and a
// client blocked on one connection is woken by a push from another.
func TestBusyPollServes(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithBusyPoll(time.Millisecond))
	a, b := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)
	for i := 0; i < 100; i++ {
		if got := a.Do("INCR", "n"); got != ":"+strconv.Itoa(i+1)+"\r\n" {
			t.Fatalf("INCR = %q", got)
		}
	}
	b.Write(hotkvtest.EncodeCommand("BLPOP", "q", "0"))
	time.Sleep(20 * time.Millisecond) // b blocks
	if got := a.Do("RPUSH", "q", "job"); got != ":1\r\n" {
		t.Fatalf("RPUSH = %q", got)
	}
	if got, err := b.ReadReply(); err != nil || got != "*2\r\n$1\r\nq\r\n$3\r\njob\r\n" {
		t.Fatalf("BLPOP = %q, %v", got, err)
	}
}
