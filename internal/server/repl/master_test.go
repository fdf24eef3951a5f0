package repl

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

type fakeReplica struct{ got strings.Builder }

func (r *fakeReplica) Push(msg []byte) { r.got.Write(msg) }
func (r *fakeReplica) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 40000}
}

func (r *fakeReplica) take() string {
	s := r.got.String()
	r.got.Reset()
	return s
}

type fakeHost struct{ targets []Target }

func (h *fakeHost) AddTarget(t Target) { h.targets = append(h.targets, t) }
func (h *fakeHost) RemoveTarget(t Target) {
	for i, x := range h.targets {
		if x == t {
			h.targets = append(h.targets[:i], h.targets[i+1:]...)
		}
	}
}
func (h *fakeHost) PingPeriodMs() int64 { return 10_000 }

func (h *fakeHost) BacklogSize() int64 { return 1 << 20 }

func (h *fakeHost) BacklogTTLMs() int64 { return 0 }

// TestMaster: the stream goes to every replica with a SELECT when the
// database changes (and first for a new replica); the offset counts its
// bytes; acknowledgements count for WAIT and min-replicas; GETACK goes to
// PSYNC replicas only; the last replica leaving unsubscribes the stream.
func TestMaster(t *testing.T) {
	h := &fakeHost{}
	m := New(h)
	a, b := &fakeReplica{}, &fakeReplica{}
	la := m.Attach(a, true, 6380, 1_000)
	if len(h.targets) != 1 {
		t.Fatalf("%d propagation targets after the first replica", len(h.targets))
	}
	feed := h.targets[0]
	feed.Propagate(2, bytes.Fields([]byte("SET k v")))
	feed.UnitDone()
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
	if got := a.take(); got != want {
		t.Fatalf("stream %q", got)
	}
	if m.Offset() != int64(len(want)) || m.UnitEnd() != m.Offset() {
		t.Fatalf("offset %d, unit end %d, want %d", m.Offset(), m.UnitEnd(), len(want))
	}
	lb := m.Attach(b, false, 6381, 5_000)
	feed.Propagate(2, bytes.Fields([]byte("DEL k")))
	feed.UnitDone()
	if got, gotB := a.take(), b.take(); got != gotB || !strings.HasPrefix(got, "*2\r\n$6\r\nSELECT") {
		t.Fatalf("after a new replica: %q and %q", got, gotB)
	}
	end := m.Offset()
	m.Ack(la, end, 20_000)
	m.Ack(lb, end-1, 20_000)
	m.Ack(lb, 3, 21_000) // an older offset does not go back
	if m.Acked(end) != 1 || m.Acked(end-1) != 2 || lb.AckOffset() != end-1 {
		t.Fatalf("Acked: %d %d, b at %d", m.Acked(end), m.Acked(end-1), lb.AckOffset())
	}
	if g := m.Good(30_000, 10); g != 2 {
		t.Fatalf("Good at lag 10 s: %d", g)
	}
	if g := m.Good(31_500, 10); g != 1 {
		t.Fatalf("Good once a is 11 s behind: %d", g)
	}
	m.RequestAcks()
	if got := a.take(); got != "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n" || b.take() != "" {
		t.Fatalf("GETACK: a %q (b attached with SYNC gets none)", got)
	}
	info := string(m.AppendInfo(nil, 31_000))
	if !strings.HasPrefix(info, "connected_slaves:2\r\nslave0:ip=10.0.0.7,port=6380,state=online,offset=") ||
		!strings.Contains(info, ",lag=11\r\nslave1:") {
		t.Fatalf("INFO: %q", info)
	}
	if r := m.Replicas(); len(r) != 2 || r[1].Port != 6381 || r[1].IP != "10.0.0.7" {
		t.Fatalf("ROLE: %+v", r)
	}
	m.Detach(la)
	m.Detach(lb)
	// the backlog stays (a replica may come back with PSYNC), so the stream
	// is still encoded into it
	if len(h.targets) != 1 || m.Len() != 0 {
		t.Fatalf("after the last replica left: %d targets, %d replicas", len(h.targets), m.Len())
	}
	if active, _, _, hist := m.BacklogInfo(); !active || hist == 0 {
		t.Fatalf("backlog active %v histlen %d", active, hist)
	}
	off := m.Offset()
	h.targets[0].Propagate(0, [][]byte{[]byte("DEL"), []byte("k")})
	h.targets[0].UnitDone()
	if data, ok := m.Partial(off + 1); !ok || string(data) != "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n" {
		t.Fatalf("the backlog after %d: %q %v", off, data, ok)
	}
}
