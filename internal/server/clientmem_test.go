package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/redis/go-redis/v9"
)

// memEnv is a server with a one-connection control client that client
// eviction never takes (CLIENT NO-EVICT on).
type memEnv struct {
	t   *testing.T
	srv *hotkvtest.Server
	c   *redis.Client
}

func startMemEnv(t *testing.T, opts ...hotkvtest.Option) *memEnv {
	t.Helper()
	srv := hotkvtest.Start(t, opts...)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, PoolSize: 1,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error {
			return cn.Do(ctx, "CLIENT", "NO-EVICT", "ON").Err()
		}})
	t.Cleanup(func() { _ = c.Close() })
	return &memEnv{t: t, srv: srv, c: c}
}

// named opens a raw connection called name.
func (e *memEnv) named(name string) net.Conn {
	e.t.Helper()
	conn, err := net.Dial("tcp", e.srv.Addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$%d\r\n%s\r\n", len(name), name)
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "+OK\r\n" {
		e.t.Fatalf("SETNAME %s: %q %v", name, line, err)
	}
	return conn
}

// field is CLIENT LIST's field f of the client called name; ok false when
// there is no such client.
func (e *memEnv) field(name, f string) (v int64, ok bool) {
	e.t.Helper()
	for _, line := range strings.Split(e.c.ClientList(context.Background()).Val(), "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, kv := range strings.Fields(line) {
			if s, found := strings.CutPrefix(kv, f+"="); found {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					e.t.Fatalf("%s=%q", f, s)
				}
				return n, true
			}
		}
		e.t.Fatalf("no %s in %q", f, line)
	}
	return 0, false
}

// waitFor polls cond for up to 2 s.
func (e *memEnv) waitFor(what string, cond func() bool) {
	e.t.Helper()
	for range 200 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("timed out waiting for %s", what)
}

// sendPartial starts a request with one argument of n bytes and sends sent of them.
func sendPartial(t *testing.T, conn net.Conn, n, sent int) {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "*2\r\n$4\r\nECHO\r\n$%d\r\n%s", n, strings.Repeat("v", sent)); err != nil {
		t.Fatal(err)
	}
}

// CLIENT LIST's memory fields report what a client's buffers hold: a
// half-received request in qbuf and tot-mem, queued MULTI commands in
// multi-mem; MEMORY STATS' clients.normal sums tot-mem.
func TestClientListMemoryFields(t *testing.T) {
	e := startMemEnv(t)
	e.named("idle")
	a := e.named("big")
	sendPartial(t, a, 1<<20, 300_000)
	e.waitFor("qbuf", func() bool { q, _ := e.field("big", "qbuf"); return q >= 300_000 })
	tot, _ := e.field("big", "tot-mem")
	if tot < 300_000 {
		t.Fatalf("tot-mem %d with 300 KB of a request buffered", tot)
	}
	if q, _ := e.field("idle", "qbuf"); q != 0 {
		t.Fatalf("idle client qbuf=%d", q)
	}

	m := e.named("multi")
	r := bufio.NewReader(m)
	fmt.Fprintf(m, "*1\r\n$5\r\nMULTI\r\n")
	for range 3 {
		fmt.Fprintf(m, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000\r\n%s\r\n", strings.Repeat("x", 10000))
	}
	for range 4 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor("multi-mem", func() bool { n, _ := e.field("multi", "multi-mem"); return n >= 30000 })

	w := e.named("watch")
	wr := bufio.NewReader(w)
	for i := range 100 {
		key := fmt.Sprintf("%0100d", i)
		fmt.Fprintf(w, "*2\r\n$5\r\nWATCH\r\n$%d\r\n%s\r\n", len(key), key)
		if _, err := wr.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor("WATCH's multi-mem", func() bool { n, _ := e.field("watch", "multi-mem"); return n >= 100*100 })

	var normal int64
	switch st := e.c.Do(context.Background(), "MEMORY", "STATS").Val().(type) {
	case map[any]any:
		normal, _ = st["clients.normal"].(int64)
	case []any:
		for i := 0; i+1 < len(st); i += 2 {
			if st[i] == "clients.normal" {
				normal, _ = st[i+1].(int64)
			}
		}
	}
	if normal < tot {
		t.Fatalf("clients.normal %d below one client's tot-mem %d", normal, tot)
	}
}

// An idle client holds no query buffer: CLIENT LIST shows qbuf=0
// qbuf-free=0. An event loop lends its read buffer for a read and takes it
// back once the client's requests ran, as Redis 7.4+ lends its thread's
// reusable query buffer; a client left with part of a request keeps the
// buffer it was read into until the rest arrives, then gives it back. In
// goroutine mode a client gives its buffer back after 2 s idle, as Redis 7.0's
// clientsCron frees it. Before, every client kept a 32 KiB buffer for life,
// which counted in used_memory: 50 connections held 1.7 MB of a 3 MB
// maxmemory.
func TestIdleClientHoldsNoQueryBuffer(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		e := startMemEnv(t, opts...)
		e.named("idle")
		idle := func() bool {
			q, _ := e.field("idle", "qbuf")
			free, _ := e.field("idle", "qbuf-free")
			tot, _ := e.field("idle", "tot-mem")
			return q == 0 && free == 0 && tot <= 4096
		}
		if len(opts) > 0 { // goroutine mode
			// the figures are published after the reply is written: CLIENT
			// LIST may come first, so wait for them (well within the 2 s
			// after which an idle client gives its buffer back)
			e.waitFor("the buffer kept while active (goroutine mode gave it back at once?)", func() bool {
				free, _ := e.field("idle", "qbuf-free")
				return free > 0
			})
			for i := 0; !idle(); i++ {
				if i == 50 {
					free, _ := e.field("idle", "qbuf-free")
					t.Fatalf("after 5 s idle: qbuf-free=%d", free)
				}
				time.Sleep(100 * time.Millisecond)
			}
			return // goroutine mode publishes figures after a command, not while a request arrives
		}
		if !idle() {
			q, _ := e.field("idle", "qbuf")
			free, _ := e.field("idle", "qbuf-free")
			tot, _ := e.field("idle", "tot-mem")
			t.Fatalf("idle client: qbuf=%d qbuf-free=%d tot-mem=%d", q, free, tot)
		}
		part := e.named("part")
		fmt.Fprintf(part, "*2\r\n$4\r\nECHO\r\n$5\r\nab")
		e.waitFor("the partial request", func() bool { n, _ := e.field("part", "qbuf"); return n > 0 })
		if free, _ := e.field("part", "qbuf-free"); free <= 0 {
			t.Fatalf("a partial request with qbuf-free=%d", free)
		}
		fmt.Fprintf(part, "cde\r\n")
		if line, err := bufio.NewReader(part).ReadString('c'); err != nil || line != "$5\r\nabc" {
			t.Fatalf("ECHO: %q %v", line, err)
		}
		e.waitFor("the buffer's return", func() bool {
			q, _ := e.field("part", "qbuf")
			free, _ := e.field("part", "qbuf-free")
			return q == 0 && free == 0
		})
	})
}

// A client idle for 2 s gives back its reply buffer, in both transports, as
// Redis's clientsCron shrinks an idle client's: one that read a 185 KB reply
// kept the buffer between batches for life, counted in used_memory.
func TestIdleClientGivesBackReplyBuffer(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		e := startMemEnv(t, opts...)
		ctx := context.Background()
		vals := make([]any, 600)
		for i := range vals {
			vals[i] = strings.Repeat("v", 300)
		}
		if err := e.c.RPush(ctx, "list", vals...).Err(); err != nil {
			t.Fatal(err)
		}
		c := e.named("reader")
		fmt.Fprintf(c, "*4\r\n$6\r\nLRANGE\r\n$4\r\nlist\r\n$1\r\n0\r\n$2\r\n-1\r\n")
		reply := make([]byte, 6+600*(6+302))
		if _, err := io.ReadFull(c, reply); err != nil || !strings.HasPrefix(string(reply), "*600\r\n$300\r\n") {
			t.Fatalf("LRANGE: %q %v", reply[:20], err)
		}
		e.waitFor("the reply's figures", func() bool { n, _ := e.field("reader", "omem"); return n > 100_000 })
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			omem, _ := e.field("reader", "omem")
			rbs, _ := e.field("reader", "rbs")
			if omem == 0 && rbs == 0 {
				// and the client still works
				fmt.Fprintf(c, "*1\r\n$4\r\nPING\r\n")
				if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
					t.Fatalf("PING after the shrink: %q %v", line, err)
				}
				return
			}
		}
		omem, _ := e.field("reader", "omem")
		tot, _ := e.field("reader", "tot-mem")
		t.Fatalf("after 5 s idle: omem=%d tot-mem=%d", omem, tot)
	})
}

// maxmemory-clients disconnects the biggest evictable clients until the
// clients' memory is below it (Redis's client eviction), sparing CLIENT
// NO-EVICT ones, and counts them in evicted_clients.
func TestClientEviction(t *testing.T) {
	e := startMemEnv(t)
	ctx := context.Background()
	evicted := func() int64 {
		for _, line := range strings.Split(e.c.Info(ctx, "stats").Val(), "\r\n") {
			if v, ok := strings.CutPrefix(line, "evicted_clients:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatal("no evicted_clients")
		return 0
	}
	gone := func(name string) bool { _, ok := e.field(name, "tot-mem"); return !ok }

	// clients of about 200 KB, 600 KB and 1.2 MB, no limit yet
	small, mid, big := e.named("small"), e.named("mid"), e.named("big")
	sendPartial(t, small, 200_000, 199_000)
	sendPartial(t, mid, 600_000, 599_000)
	sendPartial(t, big, 1_200_000, 1_199_000)
	keep := e.named("keep")
	fmt.Fprintf(keep, "*3\r\n$6\r\nCLIENT\r\n$8\r\nNO-EVICT\r\n$2\r\nON\r\n")
	sendPartial(t, keep, 2_000_000, 1_999_000)
	e.waitFor("the clients' buffers", func() bool { n, _ := e.field("keep", "tot-mem"); return n >= 2_000_000 })
	e.waitFor("big's buffer", func() bool { n, _ := e.field("big", "tot-mem"); return n >= 1_200_000 })

	// a limit that only the biggest evictable client's departure meets
	if err := e.c.ConfigSet(ctx, "maxmemory-clients", "1100000").Err(); err != nil {
		t.Fatal(err)
	}
	e.waitFor("big's eviction", func() bool { return gone("big") })
	if gone("small") || gone("mid") || gone("keep") || evicted() != 1 {
		t.Fatalf("after the first limit: small gone %v, mid gone %v, keep gone %v, evicted_clients %d",
			gone("small"), gone("mid"), gone("keep"), evicted())
	}
	// a client that grows past the limit goes at once
	if _, err := small.Write([]byte(strings.Repeat("v", 1000) + "\r\n")); err != nil { // small's ECHO ends
		t.Fatal(err)
	}
	// the write may fail: the server can evict small before it has all of it
	_, _ = fmt.Fprintf(small, "*2\r\n$4\r\nECHO\r\n$%d\r\n%s", 1_500_000, strings.Repeat("v", 1_499_000))
	e.waitFor("small's eviction", func() bool { return gone("small") })
	if gone("mid") || evicted() != 2 {
		t.Fatalf("mid gone %v, evicted_clients %d", gone("mid"), evicted())
	}
	// a percentage of maxmemory
	if err := e.c.ConfigSet(ctx, "maxmemory", "10mb").Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.c.ConfigSet(ctx, "maxmemory-clients", "5%").Err(); err != nil { // 512 KiB
		t.Fatal(err)
	}
	e.waitFor("mid's eviction", func() bool { return gone("mid") })
	if gone("keep") {
		t.Fatal("a CLIENT NO-EVICT client was evicted")
	}
	if _, err := keep.Write([]byte("x")); err != nil {
		t.Fatalf("the no-evict client's connection: %v", err)
	}
}

// startClientEviction is the setup of Redis's client-eviction cases:
// allkeys-lru with 4 MB over used_memory, 20 keys of 100 KB (the returned
// value), maxmemory-clients 1 MB, and the control client CLIENT NO-EVICT.
func startClientEviction(t *testing.T, opts ...hotkvtest.Option) (*evictEnv, string) {
	e := startEvict(t, "allkeys-lru", opts...)
	ctx := context.Background()
	if err := e.c.Do(ctx, "CLIENT", "NO-EVICT", "ON").Err(); err != nil {
		t.Fatal(err)
	}
	// as Redis's maxmemory unit: copied replies count in the output buffers
	if err := e.c.Do(ctx, "DEBUG", "REPLY-COPY-AVOIDANCE", "0").Err(); err != nil {
		t.Fatal(err)
	}
	val := strings.Repeat("x", 100_000)
	for i := range 20 { // 2 MB of the 4 MB headroom
		if err := e.c.Set(ctx, "big:"+strconv.Itoa(i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.c.ConfigSet(ctx, "maxmemory-clients", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	return e, val
}

// evictedAny reports whether a client or a key was evicted.
func (e *evictEnv) evictedAny() bool {
	return e.info("stats", "evicted_clients") > 0 || e.info("stats", "evicted_keys") > 0
}

// noKeyEvicted checks that client eviction came first: no key evicted, all
// 20 of startClientEviction's keys there.
func (e *evictEnv) noKeyEvicted() {
	e.t.Helper()
	if n := e.info("stats", "evicted_keys"); n != 0 {
		e.t.Fatalf("%d keys evicted (evicted_clients %d): client eviction must come first",
			n, e.info("stats", "evicted_clients"))
	}
	if n := e.c.DBSize(context.Background()).Val(); n != 20 {
		e.t.Fatalf("dbsize %d, want 20", n)
	}
}

// Client eviction comes before key eviction (Redis's processCommand runs
// evictClients first), also when the clients' output grows inside one batch:
// Redis's maxmemory unit's case of 20 clients that send MGET of a 100 KB key
// and never read, with room for the keys and maxmemory-clients of output. The
// clients send their MGETs in bursts (a pipeline per write), so a batch holds
// MBs of replies before its end; they must be counted, and their evicted
// owners' buffers taken as freed, before the next command's key eviction.
func TestClientEvictionBeforeKeyEviction(t *testing.T) {
	onBothTransports(t, testClientEvictionBeforeKeyEviction)
}

func testClientEvictionBeforeKeyEviction(t *testing.T, opts ...hotkvtest.Option) {
	e, _ := startClientEviction(t, opts...)
	burst := []byte(strings.Repeat("*2\r\n$4\r\nMGET\r\n$5\r\nbig:1\r\n", 30)) // 3 MB of replies
	conns := make([]net.Conn, 10)
	for i := range conns {
		conns[i] = hotkvtest.Dial(t, e.srv.Addr).Net()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !e.evictedAny() {
		if time.Now().After(deadline) {
			t.Fatal("neither a client nor a key was evicted")
		}
		for _, c := range conns {
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write(burst) // an evicted client's write fails
		}
	}
	time.Sleep(50 * time.Millisecond) // the bursts still on their way
	e.noKeyEvicted()
}

// Subscribers that do not read grow by the messages they are sent without
// running a command: their memory is counted as it grows, and client
// eviction takes them before key eviction takes keys (Redis's maxmemory
// unit's Pub/Sub case).
func TestClientEvictionOfSlowSubscribers(t *testing.T) {
	onBothTransports(t, testClientEvictionOfSlowSubscribers)
}

func testClientEvictionOfSlowSubscribers(t *testing.T, opts ...hotkvtest.Option) {
	e, val := startClientEviction(t, opts...)
	ctx := context.Background()
	for range 10 {
		hotkvtest.Dial(t, e.srv.Addr).Do("SUBSCRIBE", "bla") // then it never reads
	}
	deadline := time.Now().Add(20 * time.Second)
	for !e.evictedAny() {
		if time.Now().After(deadline) {
			t.Fatal("neither a client nor a key was evicted")
		}
		if err := e.c.Publish(ctx, "bla", val).Err(); err != nil {
			t.Fatal(err)
		}
	}
	e.noKeyEvicted()
}
