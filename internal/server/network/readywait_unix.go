//go:build unix

package network

import (
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// readyConn is a goroutine-mode connection as its Reader's source: besides
// Read, it waits until the socket has input without a buffer to read into
// (resp.ReadyWaiter), so a connection that gave its buffer back when idle
// (dropIdleBuffers) holds none while it waits for its next request.
type readyConn struct {
	countedReader // Read: the connection's, counted
	rc            syscall.RawConn
}

// readSource returns what a goroutine-mode Reader reads conn through: a
// readyConn when the connection exposes its socket, else conn (a Reader
// then takes a buffer before it waits).
func readSource(conn net.Conn, in countIn) io.Reader {
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			return readyConn{countedReader: countedReader{r: conn, in: in}, rc: rc}
		}
	}
	return countedReader{r: conn, in: in}
}

// WaitReady waits in the runtime's poller until the socket is readable: a
// one-byte MSG_PEEK that finds no data parks the goroutine until the poller
// reports input, a hang-up or an error (the Read that follows returns it).
// Read deadlines and Close end the wait as they end a Read.
func (c readyConn) WaitReady() error {
	return c.rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		// anything but "no data" ends the wait: data, EOF (0 bytes), an
		// error, or EINTR, after which the Read waits as a Read does
		return err != unix.EAGAIN && err != unix.EWOULDBLOCK
	})
}
