package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// errWouldBlock stands for EAGAIN: the Reader keeps its state and a later
// call carries on.
var errWouldBlock = errors.New("would block")

// stepSource is a non-blocking socket as an event loop reads it: Read
// returns what has arrived (avail) and errWouldBlock when nothing has, or
// io.EOF once all of data was read if the peer closed.
type stepSource struct {
	data       []byte
	pos, avail int
	closed     bool
}

func (s *stepSource) Read(p []byte) (int, error) {
	if s.pos == s.avail {
		if s.closed && s.avail == len(s.data) {
			return 0, io.EOF
		}
		return 0, errWouldBlock
	}
	n := copy(p, s.data[s.pos:s.avail])
	s.pos += n
	return n, nil
}

// scribblePool is a LocalPool that overwrites every buffer given back, so a
// Reader that still used a buffer after Release would parse garbage.
type scribblePool struct {
	LocalPool
	gets int
}

func (p *scribblePool) Get() []byte { p.gets++; return p.LocalPool.Get() }

func (p *scribblePool) Put(b []byte) {
	for i := range b {
		b[i] = 0xAA
	}
	p.LocalPool.Put(b)
}

// pooledConn is one connection of a simulated event loop.
type pooledConn struct {
	src  *stepSource
	rd   *Reader
	cmds [][]string
	err  error
}

// serve is the event loop's serve: read, parse every complete command,
// copy each out (the next client may get the same buffer), then Release.
func (c *pooledConn) serve(t *testing.T) {
	for c.err == nil {
		argv, err := c.rd.ReadCommand()
		if err != nil {
			if err != errWouldBlock {
				c.err = err
			}
			break
		}
		cmd := make([]string, len(argv))
		for i, a := range argv {
			cmd[i] = string(a)
		}
		c.cmds = append(c.cmds, cmd)
		if len(c.cmds) > 10000 {
			t.Fatal("too many commands")
		}
	}
	if c.rd.Release() && (c.rd.Mem() != 0 || c.rd.Buffered() != 0) {
		t.Fatalf("released, yet Mem %d Buffered %d", c.rd.Mem(), c.rd.Buffered())
	}
}

// FuzzPooledReaders runs two connections that share one buffer pool, their
// input arriving in steps of fuzzed sizes and served in turn as an event
// loop serves them, and checks that each gets exactly the commands, and
// the error, of the reference parser: a buffer given back while a request
// still needed it, or used after it was given back, would be scribbled on.
func FuzzPooledReaders(f *testing.F) {
	readerSeeds(f)
	f.Add([]byte("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nPI"), byte(3))
	f.Fuzz(func(t *testing.T, in []byte, chunk byte) {
		if len(in) >= inlineMax {
			return
		}
		lim := fuzzLimits()
		pool := &scribblePool{LocalPool: LocalPool{keep: 1}}
		other := append(bytes.Clone(in[len(in)/2:]), in[:len(in)/2]...)
		conns := []*pooledConn{{src: &stepSource{data: in}}, {src: &stepSource{data: other}}}
		steps := []int{int(chunk&0x0f) + 1, int(chunk>>4) + 1}
		for i, c := range conns {
			c.rd = NewReader(c.src, lim)
			c.rd.SetPool(pool)
			c.src.avail = min(steps[i], len(c.src.data))
			c.src.closed = c.src.avail == len(c.src.data)
		}
		for round := 0; ; round++ {
			busy := false
			for i, c := range conns {
				if c.err != nil {
					continue
				}
				busy = true
				c.serve(t)
				c.src.avail = min(c.src.avail+steps[i], len(c.src.data))
				c.src.closed = c.src.avail == len(c.src.data)
			}
			if !busy {
				break
			}
			if round > 4*len(in)+10 {
				t.Fatal("no progress")
			}
		}
		for _, c := range conns {
			want, end := refParse(string(c.src.data), fuzzBulkMax, false)
			if !sameCmds(c.cmds, want) || errText(c.err) != end {
				t.Fatalf("input %q:\n got %q %v\nwant %q %v", c.src.data, c.cmds, errText(c.err), want, end)
			}
		}
	})
}

// A Reader with a pool holds no buffer between requests that arrive whole:
// one buffer serves every connection, and a connection with part of a
// request keeps its own until the request is complete.
func TestPooledReaderLendsOneBuffer(t *testing.T) {
	pool := &scribblePool{LocalPool: LocalPool{keep: 2}}
	req := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
	var conns []*pooledConn
	for range 100 {
		c := &pooledConn{src: &stepSource{}}
		c.rd = NewReader(c.src, nil)
		c.rd.SetPool(pool)
		conns = append(conns, c)
	}
	for round := range 10 {
		for _, c := range conns {
			c.src.data = append(c.src.data, req...)
			c.src.avail = len(c.src.data)
			c.serve(t)
			if len(c.cmds) != round+1 || c.cmds[round][2] != "value" {
				t.Fatalf("round %d: %q", round, c.cmds)
			}
			if c.rd.Mem() != 0 {
				t.Fatalf("an idle connection holds %d bytes", c.rd.Mem())
			}
		}
	}
	if pool.gets != 1000 || pool.Free() != 1 {
		t.Fatalf("%d gets, %d free: want 1000 gets of one buffer", pool.gets, pool.Free())
	}

	// half a request: the connection keeps its buffer, the next gets another
	a, b := conns[0], conns[1]
	a.src.data = append(a.src.data, req[:10]...)
	a.src.avail = len(a.src.data)
	a.serve(t)
	if a.rd.Mem() != defaultBufSize || a.rd.Buffered() != 10 {
		t.Fatalf("partial: Mem %d Buffered %d", a.rd.Mem(), a.rd.Buffered())
	}
	b.src.data = append(b.src.data, req...)
	b.src.avail = len(b.src.data)
	b.serve(t)
	a.src.data = append(a.src.data, req[10:]...)
	a.src.avail = len(a.src.data)
	a.serve(t)
	if len(a.cmds) != 11 || a.cmds[10][1] != "key" || a.rd.Mem() != 0 || pool.Free() != 2 {
		t.Fatalf("after the rest: %q Mem %d free %d", a.cmds[len(a.cmds)-1], a.rd.Mem(), pool.Free())
	}
}

// waitSource is a blocking source that can wait for input without a
// buffer (ReadyWaiter); it checks the Reader holds none while it waits.
type waitSource struct {
	t     *testing.T
	rd    *Reader
	parts [][]byte
	waits int
}

func (s *waitSource) WaitReady() error {
	s.waits++
	if s.rd.Mem() != 0 {
		s.t.Fatalf("waiting with %d bytes held", s.rd.Mem())
	}
	return nil
}

func (s *waitSource) Read(p []byte) (int, error) {
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	if s.parts[0] = s.parts[0][n:]; len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	return n, nil
}

// A Reader reading a blocking source waits for input before it takes a
// buffer, so a connection blocked in a read holds none; one left with part
// of a request reads the rest into the buffer it has.
func TestPooledReaderWaitsWithoutBuffer(t *testing.T) {
	src := &waitSource{t: t, parts: [][]byte{
		[]byte("*1\r\n$4\r\nPING\r\n"), []byte("*2\r\n$4\r\nE"), []byte("CHO\r\n$2\r\nhi\r\n"), []byte("PING\r\n"),
	}}
	r := NewReader(src, nil)
	src.rd = r
	r.SetPool(&LocalPool{keep: 1})
	var got []string
	for {
		argv, err := r.ReadCommand()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(bytes.Join(argv, []byte(" "))))
		if !r.Release() {
			t.Fatal("Release refused with nothing buffered")
		}
	}
	if len(got) != 3 || got[1] != "ECHO hi" {
		t.Fatalf("%q", got)
	}
	// waits before the first request, the second (not its rest), the
	// third, and the end
	if src.waits != 4 {
		t.Fatalf("%d waits, want 4", src.waits)
	}
}

// Reset keeps the pool: the Reader still gives its buffer back.
func TestPooledReaderReset(t *testing.T) {
	pool := NewLocalPool(1)
	r := NewReader(oneRequest{[]byte("PING\r\n")}, nil)
	r.SetPool(pool)
	r.ReadCommand()
	r.Reset(oneRequest{[]byte("*1\r\n$4\r\nPING\r\n")})
	if argv, err := r.ReadCommand(); err != nil || string(argv[0]) != "PING" {
		t.Fatalf("after Reset: %q %v", argv, err)
	}
	if !r.Release() || pool.Free() != 1 || r.Mem() != 0 {
		t.Fatalf("after Reset the buffer did not go back: free %d, Mem %d", pool.Free(), r.Mem())
	}
}
