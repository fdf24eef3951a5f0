//go:build linux

package network

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"

	"golang.org/x/sys/unix"
)

// TLS on the event loops (decision 0047): the handshake runs on a goroutine
// of its own, blocking; then the socket moves to an event loop, where
// crypto/tls reads and writes through loopTLS. Its reads do not block: an
// empty socket is a temporary net.Error, which crypto/tls returns without
// spoiling its state (a record half read stays in its buffer). Its writes
// only collect the ciphertext (Conn.tlsOut), which the loop writes as the
// socket takes it, encrypting more of the reply only once all is out.

// loopTLS is the transport under a crypto/tls connection served on a loop:
// the Go connection while the handshake runs, the socket after the hand-off.
type loopTLS struct {
	net.Conn       // the handshake's connection (blocking); unused after the hand-off
	fd       int   // after the hand-off: the socket (non-blocking), else -1
	c        *Conn // after the hand-off: the connection it carries
	in       countIn
}

func (a *loopTLS) Read(p []byte) (int, error) {
	if a.fd < 0 {
		return a.Conn.Read(p)
	}
	for {
		n, err := rawRead(a.fd, p)
		a.in.add(n)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, wouldBlock{}
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (a *loopTLS) Write(p []byte) (int, error) {
	if a.fd < 0 {
		return a.Conn.Write(p)
	}
	a.c.tlsOut = append(a.c.tlsOut, p...)
	return len(p), nil
}

// wouldBlock is an empty socket: temporary (crypto/tls keeps its state) and
// EAGAIN to the loop.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "resource temporarily unavailable" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }
func (wouldBlock) Is(t error) bool { return t == unix.EAGAIN }

// tlsSource is the request reader's source for a loop TLS connection: the
// plaintext crypto/tls decrypts. A read that returned data may have left
// more records in crypto/tls's buffer, which no epoll event announces:
// tlsMore asks the loop to read again (retry).
type tlsSource struct{ c *Conn }

func (s tlsSource) Read(p []byte) (int, error) {
	n, err := s.c.tlsc.Read(p)
	if n > 0 {
		s.c.tlsMore = true
		return n, nil
	}
	if errors.Is(err, unix.EAGAIN) {
		s.c.tlsMore = false
		return 0, unix.EAGAIN
	}
	return n, err
}

// handshakeForLoop runs the handshake on raw and hands the connection to an
// event loop; false when it failed (raw is closed).
func (n *Net) handshakeForLoop(raw net.Conn, tc *tls.Config) bool {
	tcp, ok := raw.(*net.TCPConn)
	if !ok {
		return false
	}
	a := &loopTLS{Conn: raw, fd: -1}
	conn := tls.Server(a, tc)
	if !n.runHandshake(conn, raw) {
		return true // closed; nothing more to do
	}
	// the socket leaves Go's poller: a duplicate of it goes to the loop, and
	// closing the original unregisters it there
	rc, err := tcp.SyscallConn()
	fd := -1
	if err == nil {
		_ = rc.Control(func(f uintptr) {
			if d, err := unix.Dup(int(f)); err == nil {
				fd = d
			}
		})
	}
	if fd < 0 {
		_ = raw.Close()
		return true
	}
	unix.CloseOnExec(fd)
	_ = unix.SetNonblock(fd, true)
	c := n.newConn(raw.RemoteAddr(), raw.LocalAddr(), func(c *Conn) io.Reader { return tlsSource{c} })
	a.in = countIn{st: &n.Stats, conn: &c.netIn}
	c.fd, c.tlsc = fd, conn
	a.c = c
	if st := conn.ConnectionState(); len(st.PeerCertificates) > 0 && len(st.VerifiedChains) > 0 {
		c.peerCN = st.PeerCertificates[0].Subject.CommonName
	}
	a.fd = fd
	_ = raw.Close() // the duplicate keeps the socket open
	l := n.loops[int(n.adoptNext.Add(1))%len(n.loops)]
	l.adopt(c)
	return true
}

// adoptQ is a loop's queue of TLS connections handed over after their
// handshake (any goroutine fills it, the loop empties it).
type adoptQ struct {
	mu     sync.Mutex
	q      []*Conn
	closed bool // the loop stopped: its wake-up descriptor is closed (or about to be)
}

// adopt queues c for the loop and wakes it. The wake-up is written under
// the queue's lock, which the loop's stop takes before it closes the
// descriptor: a hand-off racing a stop never writes to a closed (or
// reused) descriptor; it closes the socket instead.
func (l *eventLoop) adopt(c *Conn) {
	l.adopted.mu.Lock()
	defer l.adopted.mu.Unlock()
	if l.adopted.closed {
		_ = unix.Close(c.fd)
		return
	}
	l.adopted.q = append(l.adopted.q, c)
	signal(l.wakefd)
}

// stopAdopting refuses later hand-offs; call before closing wakefd. The
// connections still queued are closed.
func (l *eventLoop) stopAdopting() {
	l.adopted.mu.Lock()
	defer l.adopted.mu.Unlock()
	l.adopted.closed = true
	for _, c := range l.adopted.q {
		_ = unix.Close(c.fd)
	}
	l.adopted.q = nil
}

// takeAdopted registers the connections handed over: the loop's epoll
// watches them, the host opens their sessions (a refusal is encrypted and
// written, then the socket closed), and what arrived with the handshake is
// served at once.
func (l *eventLoop) takeAdopted() {
	l.adopted.mu.Lock()
	q := l.adopted.q
	l.adopted.q = nil
	l.adopted.mu.Unlock()
	for _, c := range q {
		c.loop = l
		c.rd.SetPool(l.bufs)
		if l.n.stopping.Load() {
			_ = unix.Close(c.fd)
			continue
		}
		if refusal := l.n.open(c); refusal != nil {
			l.n.Stats.RejectedConnections.Add(1)
			_, _ = c.tlsc.Write(refusal)
			_, _ = rawWrite(c.fd, c.tlsOut)
			_ = unix.Close(c.fd)
			continue
		}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
			c.sess.Closed()
			_ = unix.Close(c.fd)
			continue
		}
		l.conns.put(c.fd, c)
		l.serve(c, true)
	}
}

// flushTLS is flush for a TLS connection: the ciphertext pending goes out
// first; then up to tlsChunk more of the reply is encrypted, and so on
// until the reply is out or the socket is full (the rest waits for EPOLLOUT).
func (l *eventLoop) flushTLS(c *Conn) {
	for {
		for len(c.tlsOut) > 0 {
			n, err := rawWrite(c.fd, c.tlsOut)
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				l.wantWrite(c, true)
				return
			}
			if err != nil {
				l.close(c)
				return
			}
			c.netOut.Add(int64(n))
			l.n.Stats.NetOutput.Add(int64(n))
			l.n.Stats.Writes.Add(1)
			if n == len(c.tlsOut) {
				c.tlsOut = c.tlsOut[:0]
				if cap(c.tlsOut) > 4*tlsChunk {
					c.tlsOut = nil
				}
			} else {
				c.tlsOut = c.tlsOut[:copy(c.tlsOut, c.tlsOut[n:])]
			}
		}
		if c.sent >= c.w.Len() {
			break
		}
		seg := c.w.Segment(c.sent)
		if len(seg) > tlsChunk {
			seg = seg[:tlsChunk]
		}
		if _, err := c.tlsc.Write(seg); err != nil {
			l.close(c)
			return
		}
		c.sent += len(seg)
	}
	c.sent = 0
	c.sess.AfterWrite()
	l.wantWrite(c, false)
	if c.closing {
		l.close(c) // QUIT, CLIENT KILL of itself: once the replies are out, as flush
	}
}

// tlsChunk is how much of a reply is encrypted ahead of the socket.
const tlsChunk = 64 << 10
