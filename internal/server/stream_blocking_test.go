package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Blocked XREAD and XREADGROUP over TCP (t_stream.c xreadCommand with the
// blocking machinery of decision 0015): XADD serves them in arrival order; "$"
// means the last ID when the command blocked, not when it runs again; an
// XREADGROUP ">" client fails with NOGROUP when its key is deleted or
// flushed or its group destroyed, and with WRONGTYPE when the key changes
// type; a plain XREAD keeps waiting through a DEL; timeouts and CLIENT UNBLOCK
// reply a null array (or UNBLOCKED).
func TestStreamBlocking(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		ctl := hotkvtest.Dial(t, srv.Addr)
		blocked := blockedClients(t, ctl)
		read := func(c *hotkvtest.Conn, want string) {
			t.Helper()
			r, err := c.ReadReply()
			if err != nil || r != want {
				t.Fatalf("got %q (%v), want %q", r, err, want)
			}
		}
		w1, w2 := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)

		// $ is the last ID at block time: an XADD before the waiter blocked is
		// not served, the next is, to both waiters (w2 with a count)
		ctl.Do("XADD", "s", "1-1", "old", "x")
		w1.Write(hotkvtest.EncodeCommand("XREAD", "BLOCK", "0", "STREAMS", "s", "nokey", "$", "$"))
		blocked(1)
		w2.Write(hotkvtest.EncodeCommand("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$"))
		blocked(2)
		ctl.Do("MULTI")
		ctl.Do("XADD", "s", "2-1", "new", "1")
		ctl.Do("XADD", "s", "2-2", "new", "2")
		ctl.Do("EXEC")
		read(w1, "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$3\r\nnew\r\n$1\r\n1\r\n*2\r\n$3\r\n2-2\r\n*2\r\n$3\r\nnew\r\n$1\r\n2\r\n")
		read(w2, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$3\r\nnew\r\n$1\r\n1\r\n")
		blocked(0)

		// XADD + DEL in one transaction wakes nobody; a later XADD does
		w1.Write(hotkvtest.EncodeCommand("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
		blocked(1)
		ctl.Do("MULTI")
		ctl.Do("XADD", "s", "3-0", "gone", "1")
		ctl.Do("DEL", "s")
		ctl.Do("EXEC")
		time.Sleep(20 * time.Millisecond)
		blocked(1)
		ctl.Do("XADD", "s", "9-5", "back", "1") // after the $ resolved at block time (2-2)
		read(w1, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n9-5\r\n*2\r\n$4\r\nback\r\n$1\r\n1\r\n")

		// XREADGROUP >: served, then pending for its consumer
		ctl.Do("DEL", "q")
		ctl.Do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		w1.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "q", ">"))
		blocked(1)
		if r := infoInt(t, ctl, "total_blocking_keys_on_nokey"); r != 1 {
			t.Fatalf("total_blocking_keys_on_nokey %d", r)
		}
		ctl.Do("XADD", "q", "5-0", "f", "v")
		read(w1, "*1\r\n*2\r\n$1\r\nq\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
		if r := ctl.Do("XPENDING", "q", "g"); r != "*4\r\n:1\r\n$3\r\n5-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n" {
			t.Fatalf("XPENDING after the blocked read: %q", r)
		}

		// the group destroyed, the key deleted, flushed, or of another type
		for _, c := range []struct {
			kill []string
			want string
		}{
			{[]string{"XGROUP", "DESTROY", "q", "g"}, "-NOGROUP No such key 'q' or consumer group 'g' in XREADGROUP with GROUP option\r\n"},
			{[]string{"DEL", "q"}, "-NOGROUP No such key 'q' or consumer group 'g' in XREADGROUP with GROUP option\r\n"},
			{[]string{"FLUSHDB"}, "-NOGROUP No such key 'q' or consumer group 'g' in XREADGROUP with GROUP option\r\n"},
			{[]string{"SET", "q", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		} {
			ctl.Do("DEL", "q")
			ctl.Do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
			w1.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "q", ">"))
			blocked(1)
			ctl.Do(c.kill...)
			read(w1, c.want)
			blocked(0)
		}

		// a list waiter and a group waiter on one key: DEL fails the second
		ctl.Do("DEL", "q")
		w2.Write(hotkvtest.EncodeCommand("BLPOP", "q", "0"))
		blocked(1)
		ctl.Do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		w1.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "q", ">"))
		blocked(2)
		ctl.Do("DEL", "q")
		read(w1, "-NOGROUP No such key 'q' or consumer group 'g' in XREADGROUP with GROUP option\r\n")
		ctl.Do("RPUSH", "q", "a")
		read(w2, "*2\r\n$1\r\nq\r\n$1\r\na\r\n")

		// timeout, then CLIENT UNBLOCK TIMEOUT and ERROR
		start := time.Now()
		if r := w1.Do("XREAD", "BLOCK", "50", "STREAMS", "none", "0"); r != "*-1\r\n" {
			t.Fatalf("timeout: %q", r)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Fatalf("returned after %v", d)
		}
		w1.Write(hotkvtest.EncodeCommand("XREAD", "BLOCK", "0", "STREAMS", "none", "$"))
		blocked(1)
		ctl.Do("CLIENT", "UNBLOCK", clientID(t, ctl, "xread"), "TIMEOUT")
		read(w1, "*-1\r\n")
		w1.Write(hotkvtest.EncodeCommand("XREAD", "BLOCK", "0", "STREAMS", "none", "$"))
		blocked(1)
		ctl.Do("CLIENT", "UNBLOCK", clientID(t, ctl, "xread"), "ERROR")
		read(w1, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")

		// inside MULTI the BLOCK is a timeout at once
		w1.Do("MULTI")
		w1.Do("XREAD", "BLOCK", "0", "STREAMS", "none", "$")
		if r := w1.Do("EXEC"); r != "*1\r\n*-1\r\n" {
			t.Fatalf("XREAD BLOCK in MULTI: %q", r)
		}
		// RESP3: a map
		w2.Do("HELLO", "3")
		w2.Write(hotkvtest.EncodeCommand("XREAD", "BLOCK", "0", "STREAMS", "r3", "$"))
		blocked(1)
		ctl.Do("XADD", "r3", "1-1", "a", "b")
		r, _ := w2.ReadReply()
		if !strings.HasPrefix(r, "%1\r\n$2\r\nr3\r\n*1\r\n") {
			t.Fatalf("RESP3 reply: %q", r)
		}
	})
}
