package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// receive waits for the next message of ps (a failure after 5 s).
func receive(t *testing.T, ps *redis.PubSub) *redis.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("waiting for a message: %v", err)
	}
	return m
}

func wantMsg(t *testing.T, m *redis.Message, pattern, channel, payload string) {
	t.Helper()
	if m.Pattern != pattern || m.Channel != channel || m.Payload != payload {
		t.Fatalf("got message pattern=%q channel=%q payload=%q, want %q %q %q",
			m.Pattern, m.Channel, m.Payload, pattern, channel, payload)
	}
}

// redis.io/docs/latest/develop/use/keyspace-notifications: go-redis's PubSub
// API receives keyspace (K) and keyevent (E) messages, through PSUBSCRIBE and
// SUBSCRIBE alike, in RESP2 and RESP3, on both connection paths.
func TestKeyspaceNotificationsPubSub(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		pat := c.PSubscribe(ctx, "__key*__:*")
		defer pat.Close()
		del := c.Subscribe(ctx, "__keyevent@0__:del", "__keyevent@0__:expired")
		defer del.Close()
		for _, ps := range []*redis.PubSub{pat, del} {
			if _, err := ps.Receive(ctx); err != nil { // the (first) confirmation
				t.Fatal(err)
			}
		}
		if _, err := del.Receive(ctx); err != nil { // the second channel's
			t.Fatal(err)
		}

		// off by default: a PUBLISH after the SET is the first message
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		c.Publish(ctx, "__keyevent@0__:barrier", "x")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:barrier", "x")

		if err := c.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err != nil {
			t.Fatal(err)
		}
		c.Set(ctx, "k", "v2", 0)
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyspace@0__:k", "set")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:set", "k")
		c.Del(ctx, "k")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyspace@0__:k", "del")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:del", "k")
		wantMsg(t, receive(t, del), "", "__keyevent@0__:del", "k")

		// active expiry (no command touches the key) announces "expired"
		c.Set(ctx, "t", "v", 100*time.Millisecond)
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyspace@0__:t", "set")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:set", "t")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyspace@0__:t", "expire")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:expire", "t")
		srv.Clock.Advance(200 * time.Millisecond)
		wantMsg(t, receive(t, del), "", "__keyevent@0__:expired", "t")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyspace@0__:t", "expired")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:expired", "t")

		// the n class, and the flags as CONFIG GET prints them
		c.ConfigSet(ctx, "notify-keyspace-events", "En")
		if v := c.ConfigGet(ctx, "notify-keyspace-events").Val()["notify-keyspace-events"]; v != "nE" {
			t.Fatalf("CONFIG GET: %q", v)
		}
		c.Set(ctx, "n1", "v", 0)
		c.Set(ctx, "n1", "w", 0)
		c.HSet(ctx, "n2", "f", "v")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:new", "n1")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:new", "n2")

		// off again
		c.ConfigSet(ctx, "notify-keyspace-events", "")
		c.Del(ctx, "n1")
		c.Publish(ctx, "__keyevent@0__:barrier", "y")
		wantMsg(t, receive(t, pat), "__key*__:*", "__keyevent@0__:barrier", "y")
	})
}

// A RESP3 client subscribed on its own connection gets the events of its own
// commands as push messages right after the command's reply (after the whole
// reply of an EXEC or a script), as Redis 7.2+ defers them
// (server.pending_push_messages; unit/pubsub "publish to self inside multi").
func TestKeyspaceNotificationsSelfPushRESP3(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("HELLO", "3")
	c.Do("CONFIG", "SET", "notify-keyspace-events", "E$g")
	c.Do("SUBSCRIBE", "__keyevent@0__:set")
	push := func(key string) string {
		return ">3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$1\r\n" + key + "\r\n"
	}
	expect := func(what string, want ...string) {
		t.Helper()
		for _, w := range want {
			if r, err := c.ReadReply(); err != nil || r != w {
				t.Fatalf("%s: got %q (%v), want %q", what, r, err, w)
			}
		}
	}
	c.Write(hotkvtest.EncodeCommand("SET", "k", "v"))
	expect("SET", "+OK\r\n", push("k"))
	// events of a transaction and of a script are published like any other
	c.Do("MULTI")
	c.Do("SET", "a", "1")
	c.Do("DEL", "a")
	c.Do("SET", "b", "1")
	c.Write(hotkvtest.EncodeCommand("EXEC"))
	expect("EXEC", "*3\r\n+OK\r\n:1\r\n+OK\r\n", push("a"), push("b"))
	c.Write(hotkvtest.EncodeCommand("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "s"))
	expect("EVAL", "+OK\r\n", push("s"))
	// the push survives CLIENT REPLY SKIP, which drops only the reply
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP")) // no reply
	c.Write(hotkvtest.EncodeCommand("SET", "k", "w"))
	c.Write(hotkvtest.EncodeCommand("PING"))
	expect("SET after CLIENT REPLY SKIP", push("k"), "+PONG\r\n")
}

// The lock use case (README, issue "keyspace notifications"): a waiter blocked
// on a keyspace notification takes the lock the moment the holder's DELEX or
// the TTL frees it, with no polling. The waiter subscribes to the lock's
// keyspace channel BEFORE trying SET NX (so no release can slip between a
// failed try and the subscription), then tries again only when the channel
// says "del" or "expired". Real clock: the TTL path depends on the active
// expiry cycle (hz 10: within ~100 ms of the deadline).
func TestLockWaiterKeyspaceNotification(t *testing.T) {
	const lock = "lock:billing-run"
	for _, path := range []string{"delex", "ttl"} {
		t.Run(path, func(t *testing.T) {
			srv := hotkvtest.Start(t)
			ctx := context.Background()
			holder := client(t, srv.Addr, 3)
			waiter := client(t, srv.Addr, 2)
			if err := holder.ConfigSet(ctx, "notify-keyspace-events", "Kgx").Err(); err != nil {
				t.Fatal(err)
			}
			ttl := 30 * time.Second
			if path == "ttl" {
				ttl = 300 * time.Millisecond
			}
			if ok, err := holder.SetNX(ctx, lock, "tok-holder", ttl).Result(); err != nil || !ok {
				t.Fatalf("holder: %v %v", ok, err)
			}

			var tries atomic.Int32
			acquired := make(chan time.Time, 1)
			ready := make(chan struct{})
			go func() {
				ps := waiter.Subscribe(ctx, "__keyspace@0__:"+lock)
				defer ps.Close()
				if _, err := ps.Receive(ctx); err != nil {
					t.Error(err)
					return
				}
				msgs := ps.Channel()
				try := func() bool {
					tries.Add(1)
					ok, err := waiter.SetNX(ctx, lock, "tok-waiter", 30*time.Second).Result()
					if err != nil {
						t.Error(err)
					}
					return ok
				}
				if try() {
					t.Error("the waiter took a held lock")
					return
				}
				close(ready)
				for m := range msgs { // blocks: no sleeping, no polling
					if (m.Payload == "del" || m.Payload == "expired") && try() {
						acquired <- time.Now()
						return
					}
				}
			}()
			select {
			case <-ready:
			case <-time.After(5 * time.Second):
				t.Fatal("waiter not ready")
			}

			var freed time.Time
			if path == "delex" {
				time.Sleep(50 * time.Millisecond) // the holder's work
				freed = time.Now()
				if n, err := holder.Do(ctx, "DELEX", lock, "IFEQ", "tok-holder").Int(); err != nil || n != 1 {
					t.Fatalf("DELEX: %v %v", n, err)
				}
			} else {
				freed = time.Now().Add(ttl) // the deadline (set before ready)
			}
			select {
			case at := <-acquired:
				if d := at.Sub(freed); d > 2*time.Second {
					t.Fatalf("the waiter took the lock %v after it was freed", d)
				} else {
					t.Logf("%s: the waiter took the lock %v after it was freed", path, d.Round(time.Millisecond))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the waiter never got the lock")
			}
			if v := holder.Get(ctx, lock).Val(); v != "tok-waiter" {
				t.Fatalf("lock holds %q", v)
			}
			if n := tries.Load(); n != 2 {
				t.Fatalf("the waiter tried %d times, want 2 (once before waiting, once on the event)", n)
			}
		})
	}
}

// (UN)SUBSCRIBE confirmations are pushes: CLIENT REPLY OFF does not silence
// them (unit/pubsub "PubSub messages with CLIENT REPLY OFF"), in RESP2 and RESP3.
func TestSubscribeConfirmationsSurviveReplyOff(t *testing.T) {
	srv := hotkvtest.Start(t)
	for _, proto := range []string{"2", "3"} {
		c := hotkvtest.Dial(t, srv.Addr)
		c.Do("HELLO", proto)
		c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "OFF"))
		c.Write(hotkvtest.EncodeCommand("SET", "k", "v")) // silenced
		c.Write(hotkvtest.EncodeCommand("SUBSCRIBE", "ch"))
		want := "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
		if proto == "3" {
			want = ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
		}
		if r, err := c.ReadReply(); err != nil || r != want {
			t.Fatalf("RESP%s: got %q (%v), want %q", proto, r, err, want)
		}
	}
}

// The active expiry of hash fields announces "hexpired", then "del" when the
// hash was left empty (Redis's hashTypeActiveExpire), with no command on the key.
func TestKeyspaceNotificationsActiveFieldExpiry(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(1_700_000_000_000))
	ctx := context.Background()
	c := client(t, srv.Addr, 3)
	c.ConfigSet(ctx, "notify-keyspace-events", "Khg")
	ps := c.PSubscribe(ctx, "__keyspace@0__:*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	c.HSet(ctx, "h", "a", "1", "b", "2")
	c.Do(ctx, "HPEXPIRE", "h", "100", "FIELDS", "1", "a")
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "hset")
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "hexpire")
	srv.Clock.Advance(200 * time.Millisecond)
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "hexpired")
	c.Do(ctx, "HPEXPIRE", "h", "100", "FIELDS", "1", "b")
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "hexpire")
	srv.Clock.Advance(200 * time.Millisecond)
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "hexpired")
	wantMsg(t, receive(t, ps), "__keyspace@0__:*", "__keyspace@0__:h", "del")
	if n := c.Exists(ctx, "h").Val(); n != 0 {
		t.Fatalf("EXISTS h = %d", n)
	}
}
