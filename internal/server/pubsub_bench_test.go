package server

import (
	"fmt"
	"testing"
	"time"
)

// subConn is a subscriber's connection in the benchmarks: writes are discarded
// and the push wake-up (a read deadline) does nothing.
type subConn struct{ nopConn }

func (subConn) SetReadDeadline(time.Time) error { return nil }

// newPubSubBench makes a server with subs clients subscribed to "bench" and a
// publisher; drain empties the subscribers' queued messages, as their event
// loop would.
func newPubSubBench(tb testing.TB, subs int) (s *Server, pub *client, publish [][]byte, drain func(), clients []*client) {
	s, pub = newBenchServer(tb)
	clients = make([]*client, subs)
	for i := range clients {
		clients[i] = s.newClient(subConn{})
		s.clients[clients[i].ID] = clients[i] // registered, as accept does
		run(s, clients[i], args("SUBSCRIBE", "bench"))
	}
	drain = func() {
		for _, cl := range clients {
			cl.drainPush()
			cl.w.Buf = cl.w.Buf[:0]
		}
	}
	return s, pub, args("PUBLISH", "bench", "0123456789abcdef0123456789abcdef"), drain, clients
}

// BenchmarkPublish is PUBLISH of a 32-byte message to 1 and 1,000 subscribers
// (bench/pubbench's workloads) through dispatch, without the network.
func BenchmarkPublish(b *testing.B) {
	for _, subs := range []int{1, 1000} {
		b.Run(fmt.Sprintf("subs%d", subs), func(b *testing.B) {
			s, pub, publish, drain, _ := newPubSubBench(b, subs)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				run(s, pub, publish)
				drain()
			}
		})
	}
}

// PUBLISH allocates nothing once the buffers have grown: the hub reuses its
// message and encodings, the channel and payload are not copied.
func TestPublishAllocs(t *testing.T) {
	for _, subs := range []int{1, 10} {
		s, pub, publish, drain, clients := newPubSubBench(t, subs)
		run(s, pub, publish)
		drain()
		if n := testing.AllocsPerRun(500, func() { run(s, pub, publish); drain() }); n != 0 {
			t.Errorf("PUBLISH to %d subscribers: %.1f allocations, want 0", subs, n)
		}
		// what a subscriber and the publisher get, with the reused buffers
		cl := clients[len(clients)-1]
		pub.clockUs = s.clock.NowUs()
		s.eng.Lock()
		s.dispatch(pub, publish)
		s.dispatch(pub, args("PUBLISH", "bench", "x"))
		s.eng.Unlock()
		cl.drainPush()
		want := "*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$32\r\n0123456789abcdef0123456789abcdef\r\n" +
			"*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$1\r\nx\r\n"
		if got := string(cl.w.Buf); got != want {
			t.Errorf("subscriber got %q, want %q", got, want)
		}
		if got, want := string(pub.w.Buf), fmt.Sprintf(":%d\r\n:%d\r\n", subs, subs); got != want {
			t.Errorf("publisher got %q, want %q", got, want)
		}
		pub.w.Buf = pub.w.Buf[:0]
		drain()
	}
}
