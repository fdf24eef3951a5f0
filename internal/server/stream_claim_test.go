package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A blocked XREADGROUP ... CLAIM (Redis 8.4) is served when the oldest pending
// entry becomes idle enough, without any write (trackStreamClaimTimeouts):
// the claim arrives after min-idle-time, not before; with nothing pending it
// looks again after min-idle-time and goes on waiting until its timeout; a new
// entry serves it at once, as [id, fields, 0, 0].
func TestStreamClaimBlocking(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctl := hotkvtest.Dial(t, srv.Addr)
	blocked := blockedClients(t, ctl)
	w := hotkvtest.Dial(t, srv.Addr)

	ctl.Do("XADD", "s", "1-0", "f", "v")
	ctl.Do("XGROUP", "CREATE", "s", "g", "0")
	ctl.Do("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
	start := time.Now()
	w.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "5000", "CLAIM", "150", "STREAMS", "s", ">"))
	blocked(1)
	r, err := w.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 140*time.Millisecond || waited > 3*time.Second {
		t.Fatalf("the claim came after %v; want it once the entry is 150 ms idle", waited)
	}
	if !strings.HasPrefix(r, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n:") || !strings.HasSuffix(r, "\r\n:1\r\n") {
		t.Fatalf("claim reply %q", r)
	}
	if got := ctl.Do("XPENDING", "s", "g", "-", "+", "10", "c2"); !strings.Contains(got, "$2\r\nc2\r\n") || !strings.HasSuffix(got, ":2\r\n") {
		t.Fatalf("c2 must own 1-0 with 2 deliveries: %q", got)
	}

	// nothing pending anywhere: it wakes after 100 ms, finds nothing, waits on
	ctl.Do("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
	start = time.Now()
	w.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "c", "BLOCK", "600", "CLAIM", "100", "STREAMS", "e", ">"))
	blocked(1)
	time.Sleep(250 * time.Millisecond)
	blocked(1)
	if r, err := w.ReadReply(); err != nil || r != "*-1\r\n" {
		t.Fatalf("timeout: %q %v", r, err)
	}
	if waited := time.Since(start); waited < 590*time.Millisecond {
		t.Fatalf("timed out after %v, before its 600 ms", waited)
	}

	// a new entry serves it before anything is idle enough
	w.Write(hotkvtest.EncodeCommand("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "CLAIM", "100000", "STREAMS", "e", ">"))
	blocked(1)
	ctl.Do("XADD", "e", "5-0", "k", "x")
	if r, err := w.ReadReply(); err != nil || r != "*1\r\n*2\r\n$1\r\ne\r\n*1\r\n*4\r\n$3\r\n5-0\r\n*2\r\n$1\r\nk\r\n$1\r\nx\r\n:0\r\n:0\r\n" {
		t.Fatalf("new entry: %q %v", r, err)
	}
	blocked(0)
}
