package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// blockedClients returns a wait until INFO blocked_clients, read by ctl, is n.
func blockedClients(t *testing.T, ctl *hotkvtest.Conn) func(n int) {
	return func(n int) {
		t.Helper()
		waitFor(t, func() bool { return infoInt(t, ctl, "blocked_clients") == n })
	}
}

// Blocking commands park the connection, never the server: waiters are served
// in the order they blocked, by pushes from a command, EXEC or a script; they
// time out, are released by CLIENT UNBLOCK, leave when they disconnect; a
// pipelined command after a blocking one waits for it; inside MULTI and
// scripts they do not block.
func TestBlockingCommands(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		ctl := hotkvtest.Dial(t, srv.Addr)
		blocked := blockedClients(t, ctl)

		// two waiters, served first come first served, by ZADD
		w1, w2 := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)
		w1.Write(hotkvtest.EncodeCommand("BZPOPMIN", "zq", "0"))
		blocked(1)
		w2.Write(hotkvtest.EncodeCommand("BZPOPMIN", "zq", "other", "0"))
		blocked(2)
		if r := ctl.Do("ZADD", "zq", "1", "a"); r != ":1\r\n" {
			t.Fatal(r)
		}
		if r, err := w1.ReadReply(); err != nil || r != "*3\r\n$2\r\nzq\r\n$1\r\na\r\n$1\r\n1\r\n" {
			t.Fatalf("first waiter: %q %v", r, err)
		}
		blocked(1)
		// the second is served by EXEC, then by a script
		ctl.Do("MULTI")
		ctl.Do("ZADD", "other", "2", "b")
		if r := ctl.Do("EXEC"); r != "*1\r\n:1\r\n" {
			t.Fatal(r)
		}
		if r, err := w2.ReadReply(); err != nil || r != "*3\r\n$5\r\nother\r\n$1\r\nb\r\n$1\r\n2\r\n" {
			t.Fatalf("second waiter: %q %v", r, err)
		}
		blocked(0)
		w1.Write(hotkvtest.EncodeCommand("BZPOPMAX", "zs", "0"))
		blocked(1)
		ctl.Do("EVAL", "redis.call('zadd', KEYS[1], 3, 'c') return 1", "1", "zs")
		if r, _ := w1.ReadReply(); r != "*3\r\n$2\r\nzs\r\n$1\r\nc\r\n$1\r\n3\r\n" {
			t.Fatalf("woken by a script: %q", r)
		}

		// a pipelined command waits for the blocking one
		w1.Write(append(hotkvtest.EncodeCommand("BZPOPMIN", "zp", "0"), hotkvtest.EncodeCommand("PING")...))
		blocked(1)
		ctl.Do("ZADD", "zp", "4", "d")
		if r, _ := w1.ReadReply(); !strings.HasPrefix(r, "*3\r\n$2\r\nzp") {
			t.Fatalf("pipelined BZPOPMIN: %q", r)
		}
		if r, _ := w1.ReadReply(); r != "+PONG\r\n" {
			t.Fatalf("PING after it: %q", r)
		}

		// timeout: a null reply
		start := time.Now()
		if r := w1.Do("BZPOPMIN", "none", "0.05"); r != "*-1\r\n" {
			t.Fatalf("timeout reply: %q", r)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Fatalf("returned after %v, before its timeout", d)
		}

		// CLIENT UNBLOCK
		w1.Write(hotkvtest.EncodeCommand("BZPOPMIN", "none", "0"))
		blocked(1)
		id := clientID(t, ctl, "bzpopmin")
		ctl.Do("CONFIG", "RESETSTAT")
		if r := ctl.Do("CLIENT", "UNBLOCK", id, "ERROR"); r != ":1\r\n" {
			t.Fatal(r)
		}
		if r, _ := w1.ReadReply(); r != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
			t.Fatalf("unblocked with an error: %q", r)
		}
		// the command ended as one failed call (Redis's updateStatsOnUnblock)
		if r := ctl.Do("INFO", "commandstats"); !strings.Contains(r, "cmdstat_bzpopmin:calls=1,") || !strings.Contains(r, "rejected_calls=0,failed_calls=1") {
			t.Fatalf("commandstats after UNBLOCK ERROR: %q", r)
		}
		if r := ctl.Do("INFO", "errorstats"); !strings.Contains(r, "errorstat_UNBLOCKED:count=1") {
			t.Fatalf("errorstats after UNBLOCK ERROR: %q", r)
		}
		w1.Write(hotkvtest.EncodeCommand("BZPOPMIN", "none", "0"))
		blocked(1)
		if r := ctl.Do("CLIENT", "UNBLOCK", id, "TIMEOUT"); r != ":1\r\n" {
			t.Fatal(r)
		}
		if r, _ := w1.ReadReply(); r != "*-1\r\n" {
			t.Fatalf("unblocked as a timeout: %q", r)
		}
		if r := ctl.Do("CLIENT", "UNBLOCK", id); r != ":0\r\n" {
			t.Fatalf("UNBLOCK of a client that is not blocked: %q", r)
		}

		// a blocked client that hangs up leaves the queue
		w3 := hotkvtest.Dial(t, srv.Addr)
		w3.Write(hotkvtest.EncodeCommand("BZPOPMIN", "gone", "0"))
		blocked(1)
		_ = w3.Net().Close()
		blocked(0)
		ctl.Do("ZADD", "gone", "1", "x")
		if r := ctl.Do("ZCARD", "gone"); r != ":1\r\n" {
			t.Fatalf("a departed waiter consumed the element: %q", r)
		}

		// no blocking inside MULTI or a script
		ctl.Do("MULTI")
		ctl.Do("BZPOPMIN", "none", "0")
		if r := ctl.Do("EXEC"); r != "*1\r\n*-1\r\n" {
			t.Fatalf("BZPOPMIN in EXEC: %q", r)
		}
		if r := ctl.Do("EVAL", "return redis.call('bzpopmin', 'none', 0)", "0"); r != "$-1\r\n" {
			t.Fatalf("BZPOPMIN in a script: %q", r)
		}
	})
}

// clientID finds the id of the client whose last command was cmd.
func clientID(t *testing.T, c *hotkvtest.Conn, cmd string) string {
	t.Helper()
	list := c.Do("CLIENT", "LIST")
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, "cmd="+cmd+" ") {
			id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
			return strings.TrimPrefix(id, "$"+itoa(len(list))+"\r\nid=")
		}
	}
	t.Fatalf("no client ran %s: %s", cmd, list)
	return ""
}

// SWAPDB serves clients blocked on a key that exists after the swap, as Redis
// does (scanDatabaseForReadyKeys on both databases), and leaves alone those
// whose key is still missing or of another type.
func TestBlockingSwapDB(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctl := hotkvtest.Dial(t, srv.Addr)
	w := hotkvtest.Dial(t, srv.Addr)
	w2 := hotkvtest.Dial(t, srv.Addr)
	blocked := blockedClients(t, ctl)
	w.Write(hotkvtest.EncodeCommand("BLPOP", "q", "0")) // in db 0
	w2.Do("SELECT", "1")
	w2.Write(hotkvtest.EncodeCommand("BLPOP", "wrong", "0")) // in db 1
	blocked(2)
	ctl.Do("SELECT", "1")
	ctl.Do("RPUSH", "q", "from-db1")
	ctl.Do("SET", "wrong", "string") // the waiter on 'wrong' wants a list
	if r := ctl.Do("SWAPDB", "0", "1"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r, err := w.ReadReply(); err != nil || r != "*2\r\n$1\r\nq\r\n$8\r\nfrom-db1\r\n" {
		t.Fatalf("waiter in db 0 after SWAPDB: %q %v", r, err)
	}
	blocked(1)
	if r := ctl.Do("EXISTS", "q"); r != ":0\r\n" { // ctl is in db 1, which now holds db 0's data
		t.Fatalf("EXISTS q in db 1: %q", r)
	}
}

// INFO counts what is really there: pubsub_clients and the channel, pattern
// and shard channel counts, blocked clients with a timeout and the keys
// clients block on.
func TestInfoPubSubAndBlockingCounts(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctl := hotkvtest.Dial(t, srv.Addr)
	want := func(field string, n int) {
		t.Helper()
		waitFor(t, func() bool { return infoInt(t, ctl, field) == n })
	}
	for _, f := range []string{"pubsub_clients", "pubsub_channels", "pubsub_patterns", "pubsubshard_channels",
		"clients_in_timeout_table", "total_blocking_keys"} {
		want(f, 0)
	}
	s1, s2 := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)
	s1.Write(hotkvtest.EncodeCommand("SUBSCRIBE", "a", "b"))
	s1.Write(hotkvtest.EncodeCommand("PSUBSCRIBE", "p*"))
	s2.Write(hotkvtest.EncodeCommand("SSUBSCRIBE", "s"))
	s2.Write(hotkvtest.EncodeCommand("SUBSCRIBE", "a"))
	want("pubsub_clients", 2)
	want("pubsub_channels", 2)
	want("pubsub_patterns", 1)
	want("pubsubshard_channels", 1)
	s2.Write(hotkvtest.EncodeCommand("UNSUBSCRIBE"))
	s2.Write(hotkvtest.EncodeCommand("SUNSUBSCRIBE"))
	want("pubsub_clients", 1)

	b1, b2 := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)
	b1.Write(hotkvtest.EncodeCommand("BLPOP", "k1", "k2", "0"))
	b2.Write(hotkvtest.EncodeCommand("BLPOP", "k2", "k3", "100"))
	want("blocked_clients", 2)
	want("total_blocking_keys", 3)
	want("clients_in_timeout_table", 1)
	ctl.Do("RPUSH", "k2", "x")
	want("blocked_clients", 1)
	want("total_blocking_keys", 2)
}

// A blocked command that times out (or is released by CLIENT UNBLOCK TIMEOUT)
// replies without looking at its keys again, as Redis's
// replyToBlockedClientTimedOut: a key that expired meanwhile is not lazily
// deleted by it (no "expired_keys", no DEL in the replication stream); the
// next command that reads the key does that.
func TestBlockingTimeoutLeavesKeysAlone(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctl := hotkvtest.Dial(t, srv.Addr)
	if r := ctl.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	w := hotkvtest.Dial(t, srv.Addr)
	w.Do("SELECT", "9")
	w.Write(hotkvtest.EncodeCommand("BRPOP", "k", "0"))
	waitFor(t, func() bool { return infoInt(t, ctl, "blocked_clients") == 1 })
	ctl.Do("SELECT", "1")
	ctl.Do("RPUSH", "k", "hello")
	ctl.Do("PEXPIRE", "k", "20")
	time.Sleep(40 * time.Millisecond)
	ctl.Do("SWAPDB", "1", "9") // the expired key moves under the waiter: not served
	if n := infoInt(t, ctl, "blocked_clients"); n != 1 {
		t.Fatalf("blocked_clients %d after SWAPDB with an expired key", n)
	}
	before := infoInt(t, ctl, "expired_keys")
	id := clientID(t, ctl, "brpop")
	if r := ctl.Do("CLIENT", "UNBLOCK", id); r != ":1\r\n" {
		t.Fatal(r)
	}
	if r, err := w.ReadReply(); err != nil || r != "*-1\r\n" {
		t.Fatalf("timeout reply %q %v", r, err)
	}
	if n := infoInt(t, ctl, "expired_keys"); n != before {
		t.Fatalf("expired_keys %d -> %d: the timeout deleted the key", before, n)
	}
	if r := w.Do("EXISTS", "k"); r != ":0\r\n" {
		t.Fatal(r)
	}
	if n := infoInt(t, ctl, "expired_keys"); n != before+1 {
		t.Fatalf("expired_keys %d after EXISTS, want %d", n, before+1)
	}
}
