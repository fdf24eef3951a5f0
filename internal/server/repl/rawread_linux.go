package repl

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawReader reads a TCP connection with raw read(2) calls through its
// RawConn: the runtime's poller still waits for readability and enforces
// the read deadline, but a read that finds data skips the runtime's
// enter/exit-syscall bookkeeping, which wakes the sysmon thread on every
// call when it sleeps. On a replica's busy link that was a third of the
// replica's CPU (BENCHMARKS.md).
type rawReader struct {
	rc  syscall.RawConn
	p   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

// streamReader returns what the link's buffered reader reads from: conn
// itself, or a rawReader for a plain TCP connection.
func streamReader(conn net.Conn) io.Reader {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	r := &rawReader{rc: rc}
	r.fn = r.read
	return r
}

// read is one read(2); false asks the poller to wait (EAGAIN). Netpoll is
// edge-triggered, so EINTR retries at once instead of waiting for an edge.
func (r *rawReader) read(fd uintptr) bool {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.n, r.err = int(n), nil
			if n == 0 {
				r.err = io.EOF
			}
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		r.n, r.err = 0, e
		return true
	}
}

func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p = p
	err := r.rc.Read(r.fn)
	r.p = nil
	if err != nil {
		return 0, err // the deadline, or the connection closed
	}
	return r.n, r.err
}
