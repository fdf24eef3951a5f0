package server_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/push"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// invalidations collects the "invalidate" pushes go-redis hands to a handler:
// each is the list of keys, or nil for a flush.
type invalidations struct {
	mu  sync.Mutex
	got [][]string
}

func (h *invalidations) HandlePushNotification(_ context.Context, _ push.NotificationHandlerContext, n []interface{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(n) < 2 || n[1] == nil {
		h.got = append(h.got, nil)
		return nil
	}
	var keys []string
	for _, k := range n[1].([]interface{}) {
		keys = append(keys, k.(string))
	}
	h.got = append(h.got, keys)
	return nil
}

// take returns what arrived so far, as "k1,k2|FLUSH|k3", and forgets it.
func (h *invalidations) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	for _, keys := range h.got {
		if keys == nil {
			parts = append(parts, "FLUSH")
		} else {
			parts = append(parts, strings.Join(keys, ","))
		}
	}
	h.got = nil
	return strings.Join(parts, "|")
}

// redis.io client-side caching, RESP3: a tracking connection gets an
// "invalidate" push for each key it read once the key changes (go-redis's push
// notification handlers see them), a null on FLUSHALL, and nothing for keys it
// never read or already was told about.
func TestTrackingRESP3GoRedis(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		ctx := context.Background()
		rdb := client(t, srv.Addr, 3)
		writer := client(t, srv.Addr, 2)
		conn := rdb.Conn()
		defer conn.Close()
		h := &invalidations{}
		if err := conn.RegisterPushNotificationHandler("invalidate", h, false); err != nil {
			t.Fatal(err)
		}
		if err := conn.ClientTrackingOn(ctx, nil).Err(); err != nil {
			t.Fatal(err)
		}
		writer.MSet(ctx, "k1", "a", "k2", "b")
		conn.Get(ctx, "k1")
		conn.MGet(ctx, "k2", "k3")
		writer.Set(ctx, "k1", "x", 0)
		writer.Set(ctx, "nobody-read-me", "x", 0)
		writer.MSet(ctx, "k2", "y", "k3", "z")
		writer.Set(ctx, "k1", "again", 0) // already invalidated, not read since
		conn.Ping(ctx)
		if got := h.take(); got != "k1|k2|k3" {
			t.Fatalf("invalidations = %q, want k1|k2|k3", got)
		}
		// a change the client makes itself is announced after its reply
		conn.Get(ctx, "k1")
		if err := conn.Set(ctx, "k1", "mine", 0).Err(); err != nil {
			t.Fatal(err)
		}
		conn.Ping(ctx)
		if got := h.take(); got != "k1" {
			t.Fatalf("own write: %q", got)
		}
		conn.Get(ctx, "k1")
		writer.FlushAll(ctx)
		conn.Ping(ctx)
		if got := h.take(); got != "FLUSH" {
			t.Fatalf("FLUSHALL: %q", got)
		}
		writer.Set(ctx, "k1", "after-flush", 0) // the flush emptied the table
		conn.Ping(ctx)
		if got := h.take(); got != "" {
			t.Fatalf("after flush: %q", got)
		}
		// BCAST: every change under the prefixes, whoever made it
		if err := conn.ClientTrackingOff(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := conn.ClientTrackingOn(ctx, &redis.ClientTrackingOptions{Bcast: true, Prefixes: []string{"user:", "obj:"}}).Err(); err != nil {
			t.Fatal(err)
		}
		writer.MSet(ctx, "user:2", "a", "user:1", "b", "other", "c")
		writer.Incr(ctx, "obj:7")
		conn.Ping(ctx)
		if got := h.take(); got != "user:1,user:2|obj:7" {
			t.Fatalf("BCAST: %q", got)
		}
		if got := trackingInfoOf(t, conn); got != "flags=on,bcast redirect=0 prefixes=obj:,user:" {
			t.Fatalf("TRACKINGINFO = %s", got)
		}
	})
}

// RESP2 clients get invalidations through REDIRECT: a Pub/Sub message on
// __redis__:invalidate whose payload is the array of keys (go-redis's
// Message.PayloadSlice).
func TestTrackingRESP2RedirectGoRedis(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		ctx := context.Background()
		rdb := client(t, srv.Addr, 2)
		sub := rdb.Subscribe(ctx, "__redis__:invalidate")
		defer sub.Close()
		if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		subID := clientIDWhere(t, rdb, "cmd=subscribe")
		tracker := rdb.Conn()
		defer tracker.Close()
		if err := tracker.ClientTrackingOn(ctx, &redis.ClientTrackingOptions{Redirect: subID}).Err(); err != nil {
			t.Fatal(err)
		}
		if got, _ := tracker.Do(ctx, "CLIENT", "GETREDIR").Int64(); got != subID {
			t.Fatalf("GETREDIR = %d, want %d", got, subID)
		}
		tracker.Get(ctx, "a")
		tracker.MGet(ctx, "b", "c")
		rdb.MSet(ctx, "a", "1", "b", "2", "c", "3", "d", "4")
		for _, want := range []string{"a", "b", "c"} {
			m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			msg, ok := m.(*redis.Message)
			if !ok || msg.Channel != "__redis__:invalidate" || strings.Join(msg.PayloadSlice, ",") != want {
				t.Fatalf("got %#v, want the keys [%s]", m, want)
			}
		}
		// the redirection target goes away: the tracking client's mode says so
		_ = sub.Close()
		waitFor(t, func() bool { return clientIDWhereOK(rdb, "cmd=subscribe") == 0 })
		tracker.Get(ctx, "a")
		rdb.Set(ctx, "a", "x", 0)
		if got, want := trackingInfoOf(t, tracker), fmt.Sprintf("flags=on,broken_redirect redirect=%d prefixes=", subID); got != want {
			t.Fatalf("TRACKINGINFO after the redirection client left: %s, want %s", got, want)
		}
		if l := tracker.ClientList(ctx).Val(); !regexp.MustCompile(`flags=tR .* redir=` + strconv.FormatInt(subID, 10) + ` `).MatchString(l) {
			t.Fatalf("CLIENT LIST: %s", l)
		}
	})
}

// go-redis's own client-side cache (RESP3, CLIENT TRACKING ON on its pool
// connections) serves repeated reads locally and drops an entry when HotKV
// invalidates it.
func TestTrackingGoRedisClientSideCache(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		ctx := context.Background()
		cached := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 3, MaxRetries: -1, PoolSize: 2,
			ClientSideCacheConfig: &redis.ClientSideCacheConfig{MaxEntries: 1000, DrainInterval: time.Millisecond}})
		defer cached.Close()
		writer := client(t, srv.Addr, 2)
		writer.Set(ctx, "price", "10", 0)
		if v := cached.Get(ctx, "price").Val(); v != "10" {
			t.Fatalf("first GET = %q", v)
		}
		before := getCalls(t, writer)
		for i := 0; i < 20; i++ {
			if v := cached.Get(ctx, "price").Val(); v != "10" {
				t.Fatalf("cached GET = %q", v)
			}
		}
		if after := getCalls(t, writer); after != before {
			t.Fatalf("cached GETs reached the server: %d -> %d calls", before, after)
		}
		if n := trackingInfo(t, writer, "tracking_total_keys"); n != 1 {
			t.Fatalf("tracking_total_keys = %d", n)
		}
		writer.Set(ctx, "price", "11", 0)
		waitFor(t, func() bool { return cached.Get(ctx, "price").Val() == "11" })
	})
}

// INFO's tracking fields and CLIENT LIST's flags and redir as Redis reports
// them; disconnecting and RESET turn tracking off, while the table forgets
// the keys of a client that left only when they change (lazily, as Redis).
func TestTrackingInfoClientListCleanup(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		w := hotkvtest.Dial(t, srv.Addr)
		a := hotkvtest.Dial(t, srv.Addr)
		b := hotkvtest.Dial(t, srv.Addr)
		aID := strings.Trim(a.Do("CLIENT", "ID"), ":\r\n")
		mustDo(t, a, "+OK\r\n", "CLIENT", "TRACKING", "on", "redirect", aID)
		a.Do("MGET", "x", "y")
		mustDo(t, b, "+OK\r\n", "CLIENT", "TRACKING", "on", "bcast", "prefix", "p1", "prefix", "p2")
		info := w.Do("INFO")
		for _, want := range []string{"tracking_clients:2\r\n", "tracking_total_keys:2\r\n",
			"tracking_total_items:2\r\n", "tracking_total_prefixes:2\r\n"} {
			if !strings.Contains(info, want) {
				t.Fatalf("INFO lacks %q", want)
			}
		}
		list := w.Do("CLIENT", "LIST")
		if !regexp.MustCompile(`id=` + aID + ` .* flags=t .* redir=` + aID + ` `).MatchString(list) {
			t.Fatalf("CLIENT LIST, redirecting client: %s", list)
		}
		if !strings.Contains(list, " flags=tB ") || !strings.Contains(list, " flags=N ") {
			t.Fatalf("CLIENT LIST flags: %s", list)
		}
		mustDo(t, b, "+RESET\r\n", "RESET")
		waitFor(t, func() bool { return strings.Contains(w.Do("INFO", "stats"), "tracking_total_prefixes:0\r\n") })
		_ = a.Net().Close()
		waitFor(t, func() bool { return strings.Contains(w.Do("INFO", "clients"), "tracking_clients:0\r\n") })
		if info := w.Do("INFO", "stats"); !strings.Contains(info, "tracking_total_keys:2\r\n") {
			t.Fatalf("the keys of a client that left are forgotten lazily: %s", info)
		}
		w.Do("SET", "x", "1")
		if info := w.Do("INFO", "stats"); !strings.Contains(info, "tracking_total_keys:1\r\n") ||
			!strings.Contains(info, "tracking_total_items:1\r\n") {
			t.Fatalf("after x changed: %s", info)
		}
	})
}

// tracking-table-max-keys: over the limit, random keys leave the table and
// their clients get an invalidation as if the key changed; the effort grows
// (100, 200, ...) until the table fits, and the cron does it when no command
// comes (Redis's trackingLimitUsedSlots).
func TestTrackingTableMaxKeys(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		sub := hotkvtest.Dial(t, srv.Addr)
		subID := strings.Trim(sub.Do("CLIENT", "ID"), ":\r\n")
		sub.Do("SUBSCRIBE", "__redis__:invalidate")
		tr := hotkvtest.Dial(t, srv.Addr)
		w := hotkvtest.Dial(t, srv.Addr)
		mustDo(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "redirect", subID)
		const n = 250
		for i := 0; i < n; i++ {
			tr.Do("GET", "key"+strconv.Itoa(i))
		}
		mustDo(t, w, "+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "1")
		seen := map[string]bool{}
		for i := 0; i < n-1; i++ {
			r, err := sub.ReadReply()
			if err != nil {
				t.Fatalf("after %d invalidations: %v", i, err)
			}
			m := regexp.MustCompile(`\*1\r\n\$\d+\r\n(key\d+)\r\n$`).FindStringSubmatch(r)
			if m == nil || seen[m[1]] {
				t.Fatalf("invalidation %d: %q", i, r)
			}
			seen[m[1]] = true
		}
		if r := sub.Do("PING"); r != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
			t.Fatalf("one invalidation too many: %q", r)
		}
		if info := w.Do("INFO", "stats"); !strings.Contains(info, "tracking_total_keys:1\r\n") {
			t.Fatalf("INFO: %s", info)
		}
	})
}

// BCAST announces the keys the active expiry cycle deletes, at the end of the
// cron tick, even to a NOLOOP client that wrote them (an expiry is no
// client's change); a client's own BCAST keys follow its reply.
func TestTrackingBcastActiveExpiry(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, append(opts, hotkvtest.WithFakeClock(1_700_000_000_000))...)
		c := hotkvtest.Dial(t, srv.Addr)
		c.Do("HELLO", "3")
		mustDo(t, c, "+OK\r\n", "CLIENT", "TRACKING", "on", "bcast", "noloop")
		mustDo(t, c, "+OK\r\n", "SET", "temp", "v", "PX", "100")
		mustDo(t, c, "+OK\r\n", "SET", "kept", "v")
		srv.Clock.Advance(time.Second)
		r, err := c.ReadReply() // no command sent: the cron's broadcast
		if err != nil || r != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$4\r\ntemp\r\n" {
			t.Fatalf("active expiry broadcast: %q %v", r, err)
		}
		mustDo(t, c, "+OK\r\n", "CLIENT", "TRACKING", "off")
		mustDo(t, c, "+OK\r\n", "CLIENT", "TRACKING", "on", "bcast")
		c.Write(hotkvtest.EncodeCommand("MSET", "b", "1", "a", "2"))
		for _, want := range []string{"+OK\r\n", ">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"} {
			if r, err := c.ReadReply(); err != nil || r != want {
				t.Fatalf("own BCAST keys: %q %v, want %q", r, err, want)
			}
		}
	})
}

// trackingInfoOf renders CLIENT TRACKINGINFO (a map in RESP3, a flat array
// in RESP2) as "flags=... redirect=... prefixes=...".
func trackingInfoOf(t *testing.T, c *redis.Conn) string {
	t.Helper()
	v, err := c.Do(context.Background(), "CLIENT", "TRACKINGINFO").Result()
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]interface{}{}
	switch r := v.(type) {
	case map[interface{}]interface{}:
		for k, x := range r {
			fields[k.(string)] = x
		}
	case []interface{}:
		for i := 0; i+1 < len(r); i += 2 {
			fields[r[i].(string)] = r[i+1]
		}
	default:
		t.Fatalf("TRACKINGINFO reply %#v", v)
	}
	strs := func(x interface{}) string {
		var out []string
		for _, e := range x.([]interface{}) {
			out = append(out, e.(string))
		}
		return strings.Join(out, ",")
	}
	return fmt.Sprintf("flags=%s redirect=%v prefixes=%s", strs(fields["flags"]), fields["redirect"], strs(fields["prefixes"]))
}

func mustDo(t *testing.T, c *hotkvtest.Conn, want string, args ...string) {
	t.Helper()
	if r := c.Do(args...); r != want {
		t.Fatalf("%v = %q, want %q", args, r, want)
	}
}

// clientIDWhere finds the ID of the one client whose CLIENT LIST line contains s.
func clientIDWhere(t *testing.T, c *redis.Client, s string) int64 {
	t.Helper()
	id := clientIDWhereOK(c, s)
	if id == 0 {
		t.Fatalf("no client with %q", s)
	}
	return id
}

func clientIDWhereOK(c *redis.Client, s string) int64 {
	for _, ln := range strings.Split(c.ClientList(context.Background()).Val(), "\n") {
		if strings.Contains(ln, s) {
			id, _ := strconv.ParseInt(strings.TrimPrefix(strings.Fields(ln)[0], "id="), 10, 64)
			return id
		}
	}
	return 0
}

func getCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	m := regexp.MustCompile(`cmdstat_get:calls=(\d+)`).FindStringSubmatch(c.Info(context.Background(), "commandstats").Val())
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func trackingInfo(t *testing.T, c *redis.Client, field string) int64 {
	t.Helper()
	m := regexp.MustCompile(field + `:(\d+)`).FindStringSubmatch(c.Info(context.Background(), "stats").Val())
	if m == nil {
		t.Fatalf("INFO has no %s", field)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
