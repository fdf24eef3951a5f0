package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
)

// upTo is a reply barrier that releases the units up to a number the test
// sets, as an AOF releases what it fsynced.
type upTo struct{ n atomic.Uint64 }

func (b *upTo) Released(seq uint64) bool { return seq <= b.n.Load() }
func (b *upTo) Reached(seq uint64) bool  { return seq <= b.n.Load() }

// nopTarget is a propagation target that keeps nothing: with a target, the
// units with effects get numbers.
type nopTarget struct{}

func (nopTarget) Propagate(int, [][]byte) {}
func (nopTarget) UnitDone()               {}

// eachTransport runs f against a listening server with an upTo barrier set
// and a propagation target (so that units with effects get numbers), once on
// event loops and once with a goroutine per connection.
func eachTransport(t *testing.T, f func(t *testing.T, s *Server, addr string, b *upTo)) {
	for _, goroutines := range []bool{false, true} {
		name := "eventloop"
		if goroutines {
			name = "goroutines"
		}
		t.Run(name, func(t *testing.T) {
			s, addr := startListening(t, goroutines)
			b := &upTo{}
			s.eng.Lock()
			s.AddPropagationTarget(nopTarget{}, command.PropAll)
			s.eng.Unlock()
			s.SetReplyBarrier(b)
			f(t, s, addr, b)
		})
	}
}

// startListening runs a server of this package on a loopback port until the
// test ends; args are more command-line parameters.
func startListening(t *testing.T, goroutines bool, args ...string) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	if _, err := cfg.ParseArgs(append([]string{"--dir", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	s := New(cfg, Options{Listener: ln, Seed: 1, GoroutinePerConn: goroutines,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, ln.Addr().String()
}

type barrierConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialBarrier(t *testing.T, addr string) *barrierConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &barrierConn{t, c, bufio.NewReader(c)}
}

func (r *barrierConn) send(args ...string) {
	var b []byte
	b = append(b, '*')
	b = append(b, itoa(int64(len(args)))...)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = append(b, itoa(int64(len(a)))...)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// expect reads want (bytes of one or more replies) within d.
func (r *barrierConn) expect(want string, d time.Duration) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(r.br, buf); err != nil || string(buf) != want {
		r.t.Fatalf("read %q (%v), want %q", buf, err, want)
	}
}

// silent checks that nothing arrives for d.
func (r *barrierConn) silent(d time.Duration) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	if b, err := r.br.ReadByte(); err == nil {
		rest, _ := r.br.Peek(r.br.Buffered())
		r.t.Fatalf("got %q while the barrier holds it", string(b)+string(rest))
	}
}

// TestReplyBarrier: with a barrier set, the replies of a unit with effects,
// the replies of later readers, and the messages the unit published wait
// until the barrier releases the unit, and come out in order; output that
// depends on no held unit flows. On both transports.
func TestReplyBarrier(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *Server, addr string, b *upTo) {
		w, r, sub, pub := dialBarrier(t, addr), dialBarrier(t, addr), dialBarrier(t, addr), dialBarrier(t, addr)

		w.send("PING") // no unit with effects yet: nothing to wait for
		w.expect("+PONG\r\n", 2*time.Second)
		sub.send("SUBSCRIBE", "ch")
		sub.expect("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", 2*time.Second)

		w.send("SET", "k", "v") // unit 1
		w.silent(100 * time.Millisecond)
		r.send("GET", "k") // read what unit 1 wrote: waits for it too
		r.silent(50 * time.Millisecond)
		pub.send("PUBLISH", "ch", "hello") // unit 2 (PUBLISH propagates)
		pub.silent(50 * time.Millisecond)
		sub.silent(50 * time.Millisecond)
		if got := s.UnitSeq(); got != 2 {
			t.Fatalf("UnitSeq %d, want 2", got)
		}

		b.n.Store(1)
		s.ReleaseReplies()
		w.expect("+OK\r\n", 2*time.Second)
		r.expect("$1\r\nv\r\n", 2*time.Second)
		pub.silent(50 * time.Millisecond)
		sub.silent(10 * time.Millisecond)

		b.n.Store(2)
		s.ReleaseReplies()
		pub.expect(":1\r\n", 2*time.Second)
		sub.expect("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n", 2*time.Second)

		// a pipeline's replies stay in order behind a held one
		w.send("INCR", "n")
		w.send("GET", "n")
		w.silent(50 * time.Millisecond)
		b.n.Store(3)
		s.ReleaseReplies()
		w.expect(":1\r\n$1\r\n1\r\n", 2*time.Second)

		// without a barrier, nothing waits
		s.SetReplyBarrier(nil)
		w.send("SET", "k", strings.Repeat("x", 3))
		w.expect("+OK\r\n", 2*time.Second)
	})
}

// TestReplyBarrierByKeys: a command without effects whose keys sit at fixed
// positions waits only for the units that changed its keys (a refused SET
// NX, a read, a DELEX whose token does not match are answered at once while
// another client's write waits); one that reads a key a held unit changed,
// a keyless read, a command after a flush or a swap of databases, and a
// reply behind a held one in a pipeline still wait. On both transports.
func TestReplyBarrierByKeys(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *Server, addr string, b *upTo) {
		release := func(n uint64) { b.n.Store(n); s.ReleaseReplies() }
		w, r, q := dialBarrier(t, addr), dialBarrier(t, addr), dialBarrier(t, addr)

		w.send("SET", "lock:a", "tok-a", "NX", "PX", "30000") // unit 1
		w.silent(50 * time.Millisecond)
		release(1)
		w.expect("+OK\r\n", 2*time.Second)

		w.send("SET", "lock:b", "tok-b", "NX", "PX", "30000") // unit 2, held
		w.silent(50 * time.Millisecond)
		r.send("SET", "lock:a", "tok-x", "NX", "PX", "30000") // refused: lock:a is unit 1's
		r.expect("$-1\r\n", 2*time.Second)
		r.send("GET", "lock:a")
		r.expect("$5\r\ntok-a\r\n", 2*time.Second)
		r.send("DELEX", "lock:a", "IFEQ", "tok-stale")
		r.expect(":0\r\n", 2*time.Second)
		r.send("EXISTS", "lock:a", "nokey")
		r.expect(":1\r\n", 2*time.Second)

		q.send("SET", "lock:b", "tok-y", "NX", "PX", "30000") // refused by unit 2: waits for it
		q.silent(50 * time.Millisecond)
		r.send("MGET", "lock:a", "lock:b") // one of its keys is unit 2's
		r.silent(50 * time.Millisecond)
		release(2)
		w.expect("+OK\r\n", 2*time.Second)
		q.expect("$-1\r\n", 2*time.Second)
		r.expect("*2\r\n$5\r\ntok-a\r\n$5\r\ntok-b\r\n", 2*time.Second)

		w.send("SET", "k", "v") // unit 3, held
		w.silent(50 * time.Millisecond)
		r.send("DBSIZE") // no keys named: waits for the last unit
		r.silent(50 * time.Millisecond)
		q.send("GET", "lock:a", "extra") // an arity error is no read: at once
		q.expect("-ERR wrong number of arguments for 'get' command\r\n", 2*time.Second)
		// a pipeline's replies share the client's buffer: the read of
		// a clean key waits behind the read of unit 3's
		q.send("GET", "k")
		q.send("GET", "lock:a")
		q.silent(50 * time.Millisecond)
		release(3)
		w.expect("+OK\r\n", 2*time.Second)
		r.expect(":3\r\n", 2*time.Second)
		q.expect("$1\r\nv\r\n$5\r\ntok-a\r\n", 2*time.Second)

		for i, flush := range [][]string{{"SWAPDB", "0", "1"}, {"FLUSHALL"}} {
			w.send(flush...) // unit 4, then 6: every key changed
			w.silent(50 * time.Millisecond)
			r.send("GET", "lock:a")
			r.silent(50 * time.Millisecond)
			release(uint64(4 + 2*i))
			w.expect("+OK\r\n", 2*time.Second)
			r.expect("$-1\r\n", 2*time.Second) // db 0 holds db 1's (none), then nothing
			if i == 0 {
				w.send("SWAPDB", "0", "1") // unit 5: back
				release(5)
				w.expect("+OK\r\n", 2*time.Second)
				r.send("GET", "lock:a") // unchanged since, and released: at once
				r.expect("$5\r\ntok-a\r\n", 2*time.Second)
			}
		}

		// a lock that expires under its holder: the active expiry's
		// deletion (unit 8, no command's) holds the readers of the key
		w.send("SET", "lock:e", "tok-e", "NX", "PX", "30") // unit 7
		release(7)
		w.expect("+OK\r\n", 2*time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for s.UnitSeq() < 8 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := s.UnitSeq(); got != 8 {
			t.Fatalf("UnitSeq %d after the lock's expiry, want 8", got)
		}
		r.send("GET", "lock:e")
		r.silent(50 * time.Millisecond)
		q.send("EXISTS", "lock:a") // another key (flushed at unit 6): at once
		q.expect(":0\r\n", 2*time.Second)
		release(8)
		r.expect("$-1\r\n", 2*time.Second)
	})
}

// TestMarkKeysDirty: a command with effects marks every key the command
// table says it names, at fixed positions or found by its keys function,
// and every key when it names none; the unit's end numbers them.
func TestMarkKeysDirty(t *testing.T) {
	s, _ := startListening(t, false)
	s.eng.Lock()
	defer s.eng.Unlock()
	s.AddPropagationTarget(nopTarget{}, command.PropAll)
	s.setReplyBarrierLocked(&upTo{})
	bs := &s.barrier
	for _, tc := range []struct {
		argv []string
		keys []string // nil: every key
	}{
		{[]string{"SET", "a", "1", "NX", "PX", "100"}, []string{"a"}},
		{[]string{"MSET", "b", "1", "c", "2"}, []string{"b", "c"}},
		{[]string{"LMPOP", "2", "l1", "l2", "LEFT"}, []string{"l1", "l2"}},
		{[]string{"ZUNIONSTORE", "d", "2", "z1", "z2"}, []string{"d", "z1", "z2"}},
		{[]string{"FUNCTION", "FLUSH"}, nil},
	} {
		argv := make([][]byte, len(tc.argv))
		for i, a := range tc.argv {
			argv[i] = []byte(a)
		}
		spec := s.table.Lookup(argv[0])
		if len(spec.Subs) > 0 {
			for _, sub := range spec.Subs {
				if strings.EqualFold(sub.Name, tc.argv[1]) {
					spec = sub
				}
			}
		}
		bs.dirty, bs.pend, bs.allPend = [dirtySlots]uint64{}, bs.pend[:0], false
		s.markKeysDirty(&command.Ctx{Argv: argv, DB: s.ks.DBs[0]}, spec)
		if tc.keys == nil {
			if !bs.allPend || len(bs.pend) != 0 {
				t.Fatalf("%v: allPend %v, %d slots pending; want every key", tc.argv, bs.allPend, len(bs.pend))
			}
		} else {
			for _, k := range tc.keys {
				if bs.dirty[dirtySlot(0, []byte(k))] != dirtyPending {
					t.Fatalf("%v: key %q not marked", tc.argv, k)
				}
			}
			if bs.allPend || len(bs.pend) > len(tc.keys) {
				t.Fatalf("%v: allPend %v, %d slots pending; want %d keys", tc.argv, bs.allPend, len(bs.pend), len(tc.keys))
			}
		}
		bs.seq.Add(1)
		s.numberDirty()
		for _, k := range tc.keys {
			if got := bs.dirty[dirtySlot(0, []byte(k))]; got != bs.seq.Load() {
				t.Fatalf("%v: key %q numbered %d, want %d", tc.argv, k, got, bs.seq.Load())
			}
		}
		if tc.keys == nil && bs.allSeq != bs.seq.Load() {
			t.Fatalf("%v: allSeq %d, want %d", tc.argv, bs.allSeq, bs.seq.Load())
		}
	}
}
