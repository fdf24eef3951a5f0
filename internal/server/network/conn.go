package network

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/resp"
)

// Conn is one connection's transport: its socket, its request reader, and
// the writing of the reply buffer its session fills. Its owner (the event
// loop that accepted it, or its own goroutine) alone reads and writes it; the
// methods that say so may be called from any goroutine.
type Conn struct {
	rd           *resp.Reader
	w            *resp.Writer // the session's reply buffer
	sess         Session
	raddr, laddr net.Addr
	conn         net.Conn   // goroutine mode only
	fd           int        // event-loop mode: the socket (-1 in goroutine mode)
	loop         *eventLoop // event-loop mode: the loop that owns the connection
	sent         int        // event-loop mode: bytes of the reply (w.Len) already written
	wantWrite    bool
	writeQueued  bool       // event-loop mode: in its loop's writes, flushed at the end of the cycle
	held         [][]byte   // a command held back by CLIENT PAUSE (event-loop mode)
	parked       bool       // event-loop mode: input not read while blocked
	turnIn       int        // event-loop mode: bytes read in this turn (maxTurnRead)
	pending      [][][]byte // goroutine mode: commands read while blocked
	closing      bool       // close once the replies are written
	killed       atomic.Bool
	idleShrink   atomic.Bool  // goroutine mode: give the buffers back (ShrinkWhenIdle)
	lastActive   atomic.Int64 // ms: when its last batch of commands started
	netIn        atomic.Int64 // bytes read (CLIENT LIST tot-net-in)
	netOut       atomic.Int64 // bytes written (tot-net-out)
	raw          net.Conn     // TLS on a goroutine: the socket under conn (Kill closes it without the close_notify a dead peer would hold up)
	peerCN       string       // TLS: the Common Name of the client's verified certificate
	tlsc         *tls.Conn    // TLS on an event loop (tls_loop_linux.go): the record layer over the socket
	tlsOut       []byte       // TLS on an event loop: ciphertext not yet written
	tlsMore      bool         // TLS on an event loop: the last read returned data, crypto/tls may hold more
	coalesce     atomic.Bool  // a replica link: its output may wait for the loop's coalescing turn (SetCoalesce)
	coalesced    bool         // event-loop mode: in its loop's coalesced list
	lastFlushUs  int64        // event-loop mode: when a coalesced link was last written
}

// SetCoalesce marks c as a replica link: on an event loop its stream is
// written at most every coalesceUs while the loop is busy (in bigger
// writes, which the replica reads in fewer calls), and before the loop
// sleeps. Any goroutine.
func (c *Conn) SetCoalesce(on bool) { c.coalesce.Store(on) }

// NewConn wraps conn for goroutine mode, without serving it: the
// connections a listener accepts are served (acceptLoop); tests and
// benchmarks that run a session's commands themselves use it directly.
func (n *Net) NewConn(conn net.Conn) *Conn {
	c := n.newConn(conn.RemoteAddr(), conn.LocalAddr(), func(c *Conn) io.Reader {
		return readSource(conn, countIn{st: &n.Stats, conn: &c.netIn})
	})
	c.conn = conn
	c.rd.SetPool(&n.readBufs) // given back when idle (dropIdleBuffers)
	if tc, ok := conn.(*net.TCPConn); ok {
		if ka := n.cfg.Int("tcp-keepalive"); ka > 0 {
			_ = tc.SetKeepAlive(true)
			_ = tc.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		}
		_ = tc.SetNoDelay(true)
	}
	return c
}

// newConn builds a connection whose reader reads what src returns for it.
func (n *Net) newConn(raddr, laddr net.Addr, src func(*Conn) io.Reader) *Conn {
	c := &Conn{fd: -1, raddr: raddr, laddr: laddr}
	c.rd = resp.NewReader(src(c), n.limits)
	c.lastActive.Store(n.clock.NowMs())
	return c
}

// countIn counts bytes read: the server's (INFO total_net_input_bytes,
// total_reads_processed) and the connection's (tot-net-in).
type countIn struct {
	st   *Stats
	conn *atomic.Int64
}

func (ci countIn) add(n int) {
	ci.st.Reads.Add(1)
	if n > 0 {
		ci.st.NetInput.Add(int64(n))
		ci.conn.Add(int64(n))
	}
}

// NetIn and NetOut are the bytes read from and written to the connection
// (CLIENT LIST tot-net-in, tot-net-out); any goroutine.
func (c *Conn) NetIn() int64  { return c.netIn.Load() }
func (c *Conn) NetOut() int64 { return c.netOut.Load() }

// RemoteAddr and LocalAddr are the connection's addresses.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }
func (c *Conn) LocalAddr() net.Addr  { return c.laddr }

// Reader is the connection's request reader; owner only.
func (c *Conn) Reader() *resp.Reader { return c.rd }

// Sent is how many bytes of the reply buffer were written already; owner only.
func (c *Conn) Sent() int { return c.sent }

// Touch records that a batch of commands starts at ms (CLIENT LIST's idle,
// the timeout, the idle buffers).
func (c *Conn) Touch(ms int64) { c.lastActive.Store(ms) }

// LastActive is when the connection's last batch started (ms); any goroutine.
func (c *Conn) LastActive() int64 { return c.lastActive.Load() }

// Killed reports whether Kill was called; any goroutine.
func (c *Conn) Killed() bool { return c.killed.Load() }

// Kill disconnects the connection from any goroutine: its owner sees the
// socket fail and closes it. Call it only while the session is registered
// (before Closed returns): an event loop closes a socket only after Closed,
// so the fd cannot have been reused.
func (c *Conn) Kill() {
	c.killed.Store(true)
	if c.raw != nil {
		_ = c.raw.Close()
		return
	}
	if c.conn != nil {
		_ = c.conn.Close()
		return
	}
	if c.loop != nil {
		shutdownFD(c.fd)
	}
}

// Wake tells the owner that the session has output to write (queued
// messages, a blocked command's reply, replies the barrier released); any
// goroutine, under the engine lock.
func (c *Conn) Wake() {
	switch {
	case c.loop != nil:
		c.loop.queuePush(c)
	case c.conn != nil:
		_ = c.conn.SetReadDeadline(time.Unix(1, 0)) // interrupts the blocking read
	}
}

// ShrinkWhenIdle asks a goroutine-mode connection, idle for IdleReplyMs, to
// give its buffers back (dropIdleBuffers): its goroutine waits in a read, so
// it is woken as for output. The event loops sweep their idle connections
// themselves. Any goroutine.
func (c *Conn) ShrinkWhenIdle() {
	if c.conn != nil && !c.idleShrink.Swap(true) {
		_ = c.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// IdleReplyMs is how long a connection goes without a command before it
// gives its reply buffer back (event loops: sweepIdle; goroutine mode:
// ShrinkWhenIdle), and in goroutine mode its read buffer too.
const IdleReplyMs = 2000

// serve runs one connection in goroutine mode: read a command (blocking),
// then run it and every further command already buffered as one batch
// (Session.Run), and flush once (docs/ARCHITECTURE.md §1).
func (n *Net) serve(c *Conn) {
	defer n.wg.Done()
	defer n.drop(c)
	for {
		var argv [][]byte
		var err error
		if len(c.pending) > 0 && !c.sess.Blocked() {
			argv, c.pending = c.pending[0], c.pending[1:]
		} else {
			argv, err = c.rd.ReadCommand()
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					// woken to deliver messages or a blocked command's reply,
					// or to give an idle connection's buffers back
					_ = c.conn.SetReadDeadline(time.Time{})
					if !n.flush(c) || c.sess.Closing() {
						return
					}
					if c.idleShrink.Swap(false) {
						n.dropIdleBuffers(c)
					}
					continue
				}
				n.readFailed(c, err)
				return
			}
			if c.sess.Blocked() || len(c.pending) > 0 {
				// parked by a blocking command: keep reading (to see a hang-up)
				// but run nothing until it is released
				c.pending = append(c.pending, copyArgv(argv))
				continue
			}
		}
		r := c.sess.Run(argv, &c.pending)
		if r.Err != nil {
			n.flush(c)
			n.readFailed(c, r.Err)
			return
		}
		if !n.flush(c) || r.Close {
			return
		}
		c.sess.Publish(false)
	}
}

// dropIdleBuffers gives back a goroutine-mode connection's buffers once it
// has been idle for IdleReplyMs: its reply buffer, if nothing is left to
// write, and its read buffer, if no request is partly read, as Redis's
// clientsCron frees an idle client's query buffer (Redis 7.0) and shrinks
// its reply buffer. Its goroutine calls it, woken by ShrinkWhenIdle. The next
// read waits for input without a buffer (resp.ReadyWaiter) and takes one
// from the pool; an active connection keeps its buffer, so the wait costs a
// system call only once an idle period.
func (n *Net) dropIdleBuffers(c *Conn) {
	nowMs := n.clock.NowMs()
	if nowMs-c.lastActive.Load() < IdleReplyMs {
		return
	}
	c.rd.Release() // into the pool: still live, nothing freed
	if freed := c.dropIdleReply(nowMs); freed > 0 {
		n.host.Released(freed)
	}
	c.sess.Publish(false)
}

// dropIdleReply drops c's reply buffer if c has been idle for IdleReplyMs
// with nothing left to write, and returns the bytes it gave back. Owner only.
func (c *Conn) dropIdleReply(nowMs int64) int64 {
	if cap(c.w.Buf) == 0 || c.w.Len() > 0 || c.writeQueued || nowMs-c.lastActive.Load() < IdleReplyMs {
		return 0
	}
	freed := int64(cap(c.w.Buf))
	c.w.Buf = nil
	return freed
}

// readFailed handles a reader error in goroutine mode: a protocol error gets
// Redis's reply, then the connection is closed (as Redis does); anything else
// just closes.
func (n *Net) readFailed(c *Conn, err error) {
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		n.log.Debug("protocol error", "client", c.raddr.String(), "err", pe.Msg)
		c.w.Error("ERR " + pe.Msg)
		n.flush(c)
		return
	}
	if errors.Is(err, resp.ErrQueryBufferLimit) {
		n.queryBufLimit(c)
	}
}

func (n *Net) queryBufLimit(c *Conn) {
	n.Stats.QueryBufLimitDisconnects.Add(1)
	n.log.Warn("closing client that reached max query buffer length", "client", c.raddr.String())
}

// flush writes the reply buffer (and the queued messages) in goroutine mode;
// false when the connection failed or must close.
func (n *Net) flush(c *Conn) bool {
	if c.sess.BeforeWrite(0, true) == WriteDrop {
		return false
	}
	if c.w.Len() == 0 {
		return true
	}
	for off := 0; off < c.w.Len(); {
		written, err := c.conn.Write(c.w.Segment(off))
		n.Stats.Writes.Add(1)
		n.Stats.NetOutput.Add(int64(written))
		c.netOut.Add(int64(written))
		if err != nil {
			return false
		}
		off += written
	}
	c.sess.AfterWrite()
	return true
}

// drop closes a goroutine-mode connection: the session leaves the registry
// before the socket closes, as on an event loop, so a connection seen closed
// is gone for CLIENT LIST and for tracking redirection.
func (n *Net) drop(c *Conn) {
	c.sess.Closed()
	n.goMu.Lock()
	delete(n.goConns, c)
	n.goMu.Unlock()
	_ = c.conn.Close()
}

// copyArgv copies a command out of the reader's buffer.
func copyArgv(argv [][]byte) [][]byte {
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		cp[i] = append([]byte(nil), a...)
	}
	return cp
}

// countedReader is an io.Reader that counts what it reads.
type countedReader struct {
	r  io.Reader
	in countIn
}

func (c countedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.in.add(n)
	return n, err
}
