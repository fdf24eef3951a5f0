package resp

import (
	"strings"
	"testing"
)

// loopReader serves data over and over, like a client that keeps
// pipelining the same requests.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], l.data[l.off:])
		n += k
		l.off = (l.off + k) % len(l.data)
	}
	return n, nil
}

func benchRead(b *testing.B, req string) {
	// Pipeline enough copies that reads land at every offset of a request.
	data := []byte(strings.Repeat(req, 1000))
	r := NewReader(&loopReader{data: data}, nil)
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		argv, err := r.ReadCommand()
		if err != nil || len(argv) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadCommandPipelined(b *testing.B) {
	b.Run("GET", func(b *testing.B) {
		benchRead(b, "*2\r\n$3\r\nGET\r\n$10\r\nkey:000001\r\n")
	})
	b.Run("SET", func(b *testing.B) {
		benchRead(b, "*3\r\n$3\r\nSET\r\n$10\r\nkey:000001\r\n$16\r\nvalue-0123456789\r\n")
	})
	b.Run("SET-NX-PX", func(b *testing.B) {
		benchRead(b, "*6\r\n$3\r\nSET\r\n$16\r\nlockbench:12:345\r\n$11\r\ntok-12-6789\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n")
	})
	b.Run("SET-4KiB", func(b *testing.B) {
		v := strings.Repeat("v", 4096)
		benchRead(b, "*3\r\n$3\r\nSET\r\n$10\r\nkey:000001\r\n$4096\r\n"+v+"\r\n")
	})
	b.Run("inline", func(b *testing.B) {
		benchRead(b, "SET key:000001 \"value 0123456789\"\r\n")
	})
}

// TestReadCommandAllocs pins the zero-allocation promise of the hot path.
func TestReadCommandAllocs(t *testing.T) {
	for _, req := range []string{
		"*2\r\n$3\r\nGET\r\n$10\r\nkey:000001\r\n",
		"*3\r\n$3\r\nSET\r\n$10\r\nkey:000001\r\n$16\r\nvalue-0123456789\r\n",
		"SET key:000001 \"value 0123456789\"\r\n",
		"*0\r\n\r\nPING\r\n",
	} {
		r := NewReader(&loopReader{data: []byte(strings.Repeat(req, 100))}, nil)
		r.ReadCommand() // first use allocates the buffer and argv
		r.ReadCommand()
		if n := testing.AllocsPerRun(10000, func() {
			if _, err := r.ReadCommand(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%q: %v allocations per command", req, n)
		}
	}
}

// oneRequest is a client that sends one request per round trip: each Read
// returns the request once.
type oneRequest struct{ req []byte }

func (o oneRequest) Read(p []byte) (int, error) { return copy(p, o.req), nil }

// BenchmarkUnpipelinedClients reads one request from each of 50 clients in
// turn, as an event loop serves unpipelined clients: "own" keeps a buffer
// per client (50 x 32 KiB), "pooled" lends one buffer from a LocalPool and
// gives it back after each request (Release).
func BenchmarkUnpipelinedClients(b *testing.B) {
	req := []byte("*3\r\n$3\r\nSET\r\n$10\r\nkey:000001\r\n$16\r\nvalue-0123456789\r\n")
	for _, pooled := range []bool{false, true} {
		name := map[bool]string{false: "own", true: "pooled"}[pooled]
		b.Run(name, func(b *testing.B) {
			pool := NewLocalPool(2)
			rs := make([]*Reader, 50)
			for i := range rs {
				rs[i] = NewReader(oneRequest{req}, nil)
				if pooled {
					rs[i].SetPool(pool)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := rs[i%len(rs)]
				i++
				if argv, err := r.ReadCommand(); err != nil || len(argv) != 3 {
					b.Fatal(err)
				}
				r.Release()
			}
		})
	}
}

// TestPooledReaderAllocs: lending the buffer costs no allocation once the
// pool has one.
func TestPooledReaderAllocs(t *testing.T) {
	req := []byte("*2\r\n$3\r\nGET\r\n$10\r\nkey:000001\r\n")
	pool := NewLocalPool(2)
	a, b := NewReader(oneRequest{req}, nil), NewReader(oneRequest{req}, nil)
	a.SetPool(pool)
	b.SetPool(pool)
	for _, r := range []*Reader{a, b} { // first uses allocate argv
		r.ReadCommand()
		r.Release()
	}
	if n := testing.AllocsPerRun(10000, func() {
		for _, r := range []*Reader{a, b} {
			if _, err := r.ReadCommand(); err != nil || !r.Release() {
				t.Fatal(err)
			}
		}
	}); n != 0 {
		t.Errorf("%v allocations per two requests", n)
	}
}
