package server_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// go-redis's PubSub API: channel and pattern subscriptions, messages from
// another connection, PUBSUB introspection, unsubscribing.
func TestPubSubGoRedis(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		ps := c.Subscribe(ctx, "news", "alerts")
		defer ps.Close()
		for i := 0; i < 2; i++ {
			if _, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil {
				t.Fatalf("subscribe confirmation: %v", err)
			}
		}
		if err := ps.PSubscribe(ctx, "lock:*"); err != nil {
			t.Fatal(err)
		}
		if m, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		} else if s, ok := m.(*redis.Subscription); !ok || s.Kind != "psubscribe" || s.Count != 3 {
			t.Fatalf("psubscribe confirmation: %#v", m)
		}
		pub := client(t, srv.Addr, 2)
		if n := pub.Publish(ctx, "news", "hello").Val(); n != 1 {
			t.Fatalf("PUBLISH news = %d, want 1", n)
		}
		if n := pub.Publish(ctx, "lock:billing", "released").Val(); n != 1 {
			t.Fatalf("PUBLISH lock:billing = %d, want 1 (the pattern)", n)
		}
		if n := pub.Publish(ctx, "nobody", "x").Val(); n != 0 {
			t.Fatalf("PUBLISH nobody = %d", n)
		}
		m1, err := ps.ReceiveMessage(ctx)
		if err != nil || m1.Channel != "news" || m1.Payload != "hello" || m1.Pattern != "" {
			t.Fatalf("message: %#v %v", m1, err)
		}
		m2, err := ps.ReceiveMessage(ctx)
		if err != nil || m2.Channel != "lock:billing" || m2.Payload != "released" || m2.Pattern != "lock:*" {
			t.Fatalf("pmessage: %#v %v", m2, err)
		}
		if got := pub.PubSubNumSub(ctx, "news", "none").Val(); got["news"] != 1 || got["none"] != 0 {
			t.Fatalf("NUMSUB = %v", got)
		}
		if got := pub.PubSubNumPat(ctx).Val(); got != 1 {
			t.Fatalf("NUMPAT = %d", got)
		}
		if got := pub.PubSubChannels(ctx, "*").Val(); strings.Join(got, ",") != "alerts,news" {
			t.Fatalf("CHANNELS = %v", got)
		}
		if err := ps.Unsubscribe(ctx, "news"); err != nil {
			t.Fatal(err)
		}
		if m, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		} else if s, ok := m.(*redis.Subscription); !ok || s.Kind != "unsubscribe" || s.Count != 2 {
			t.Fatalf("unsubscribe confirmation: %#v", m)
		}
		if n := pub.Publish(ctx, "news", "late").Val(); n != 0 {
			t.Fatalf("PUBLISH after unsubscribe = %d", n)
		}
		// the lock release script of Redisson publishes from inside the script
		pub.Set(ctx, "lock:x", "tok", 0)
		n, err := pub.Eval(ctx, "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]); "+
			"redis.call('publish', KEYS[2], ARGV[2]); return 1 end; return 0", []string{"lock:x", "alerts"}, "tok", "unlocked").Int()
		if err != nil || n != 1 {
			t.Fatalf("EVAL with PUBLISH: %v %v", n, err)
		}
		m3, err := ps.ReceiveMessage(ctx)
		if err != nil || m3.Channel != "alerts" || m3.Payload != "unlocked" {
			t.Fatalf("message from a script: %#v %v", m3, err)
		}
	})
}

// Many subscribers on many connections all get every message, in order, on
// both transports; subscribers that go away are dropped from the registry.
func TestPubSubFanOut(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		const subs, msgs = 50, 200
		conns := make([]*hotkvtest.Conn, subs)
		for i := range conns {
			conns[i] = hotkvtest.Dial(t, srv.Addr)
			if r := conns[i].Do("SUBSCRIBE", "fan"); !strings.HasPrefix(r, "*3\r\n$9\r\nsubscribe") {
				t.Fatalf("SUBSCRIBE: %q", r)
			}
		}
		pub := hotkvtest.Dial(t, srv.Addr)
		for i := 0; i < msgs; i++ {
			if r := pub.Do("PUBLISH", "fan", "m"+itoa(i)); r != ":"+itoa(subs)+"\r\n" {
				t.Fatalf("PUBLISH %d: %q", i, r)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan string, subs)
		for _, c := range conns {
			wg.Add(1)
			go func(c *hotkvtest.Conn) {
				defer wg.Done()
				for i := 0; i < msgs; i++ {
					r, err := c.ReadReply()
					want := "*3\r\n$7\r\nmessage\r\n$3\r\nfan\r\n$" + itoa(len("m"+itoa(i))) + "\r\nm" + itoa(i) + "\r\n"
					if err != nil || r != want {
						errs <- r
						return
					}
				}
			}(c)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("a subscriber got %q", e)
		}
		for _, c := range conns[:25] {
			_ = c.Net().Close()
		}
		waitFor(t, func() bool { return pub.Do("PUBSUB", "NUMSUB", "fan") == "*2\r\n$3\r\nfan\r\n:25\r\n" })
	})
}

// A subscriber that stops reading is disconnected when its pending messages
// pass the pubsub class of client-output-buffer-limit; the publisher and
// other clients go on.
func TestSlowSubscriberDisconnected(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, append(opts, hotkvtest.WithConfig("client-output-buffer-limit", "pubsub 256kb 128kb 60"))...)
		slow := hotkvtest.Dial(t, srv.Addr)
		if r := slow.Do("SUBSCRIBE", "firehose"); !strings.HasPrefix(r, "*3") {
			t.Fatal(r)
		}
		pub := hotkvtest.Dial(t, srv.Addr)
		payload := strings.Repeat("x", 16<<10)
		for i := 0; i < 2000; i++ { // 32 MB: far past what the socket buffers hold
			r := pub.Do("PUBLISH", "firehose", payload)
			if r == ":0\r\n" {
				break // the subscriber is gone
			}
			if r != ":1\r\n" {
				t.Fatalf("PUBLISH: %q", r)
			}
		}
		waitFor(t, func() bool { return pub.Do("PUBLISH", "firehose", "x") == ":0\r\n" })
		if n := infoInt(t, pub, "client_output_buffer_limit_disconnections"); n < 1 {
			t.Fatalf("client_output_buffer_limit_disconnections = %d", n)
		}
		if r := pub.Do("PING"); r != "+PONG\r\n" {
			t.Fatal(r)
		}
	})
}

// RESP3: pushes interleave with replies on one connection, a message published
// before a command comes before its reply, and any command may be sent.
func TestPubSubRESP3Interleaving(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		c := hotkvtest.Dial(t, srv.Addr)
		if r := c.Do("HELLO", "3"); !strings.HasPrefix(r, "%") {
			t.Fatal(r)
		}
		if r := c.Do("SUBSCRIBE", "ch"); r != ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" {
			t.Fatalf("SUBSCRIBE: %q", r)
		}
		other := hotkvtest.Dial(t, srv.Addr)
		other.Do("PUBLISH", "ch", "first")
		if r := c.Do("SET", "k", "v"); r != ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nfirst\r\n" {
			t.Fatalf("push before SET's reply: %q", r)
		}
		if r, _ := c.ReadReply(); r != "+OK\r\n" {
			t.Fatalf("SET reply: %q", r)
		}
		// publishing to itself: the reply, then the push (Redis 7.2+, pubsub.tcl
		// "publish to self inside multi/script")
		c.Write(hotkvtest.EncodeCommand("PUBLISH", "ch", "self"))
		if r, _ := c.ReadReply(); r != ":1\r\n" {
			t.Fatalf("PUBLISH reply: %q", r)
		}
		if r, _ := c.ReadReply(); r != ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nself\r\n" {
			t.Fatalf("self push: %q", r)
		}
		// a message while idle arrives without a command
		other.Do("PUBLISH", "ch", "idle")
		if r, _ := c.ReadReply(); r != ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nidle\r\n" {
			t.Fatalf("idle push: %q", r)
		}
		if r := c.Do("RESET"); r != "+RESET\r\n" {
			t.Fatal(r)
		}
		if r := other.Do("PUBLISH", "ch", "gone"); r != ":0\r\n" {
			t.Fatalf("RESET did not unsubscribe: %q", r)
		}
	})
}

// Subscriptions count in used_memory and go out of it when their client
// unsubscribes or leaves, at once, not at the next GC: a subscriber that
// filled memory up to maxmemory and left does not keep the next one out
// (pubsub.tcl's "fails with OOM when memory limit exceeded" run back to back).
func TestSubscriptionsFreeTheirMemory(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctl := hotkvtest.Dial(t, srv.Addr)
	ctl.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	oom := "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	for round := range 3 {
		// 10 MB above what the process uses now: the server shares the
		// test binary's heap, which earlier tests leave larger or smaller
		ctl.Do("MEMORY", "PURGE")
		ctl.Do("CONFIG", "SET", "maxmemory", strconv.FormatInt(usedMemory(t, ctl)+10<<20, 10))
		sub := hotkvtest.Dial(t, srv.Addr)
		n := 0
		for ; n < 20000; n++ {
			r := sub.Do("SUBSCRIBE", strings.Repeat("a", 2048)+strconv.Itoa(n))
			if r == oom {
				break
			}
		}
		if n < 1000 || n == 20000 {
			t.Fatalf("round %d: %d subscriptions before OOM; want the limit to stop a few thousand", round, n)
		}
		sub.Net().Close()
		ctl.Do("CONFIG", "SET", "maxmemory", "0")
		time.Sleep(20 * time.Millisecond) // the server notices the close
	}
}

// usedMemory reads INFO memory's used_memory.
func usedMemory(t *testing.T, c *hotkvtest.Conn) int64 {
	t.Helper()
	for _, l := range strings.Split(c.Do("INFO", "memory"), "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory")
	return 0
}
