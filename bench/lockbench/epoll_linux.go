//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

const defaultEngine = "epoll"

// econn is one connection of the epoll engine: a batch of pipeline acquires
// or releases is in flight, and pending replies, each exactly want, are due.
type econn struct {
	fd      int
	id      int
	keys    []string
	seq     int
	release bool // the batch in flight is the releases
	want    []byte
	pending int
	in      []byte // unparsed reply bytes
	out     []byte
}

// runEpoll drives every connection from this one thread: connections are
// blocking sockets (a write of one batch never waits long: the server reads
// it), read once per readiness event, so epoll_wait, read and write are the
// only system calls, as in redis-benchmark.
func runEpoll(addr string, clients, pipeline int, rel releaser, d time.Duration) (int64, time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return 0, 0, err
	}
	var sa unix.SockaddrInet4
	copy(sa.Addr[:], ta.IP.To4())
	sa.Port = ta.Port
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(epfd)
	byFd := map[int32]*econn{}
	defer func() {
		for fd := range byFd {
			unix.Close(int(fd))
		}
	}()
	for i := 0; i < clients; i++ {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, 0, err
		}
		byFd[int32(fd)] = &econn{fd: fd, id: i, keys: lockKeys(i, pipeline), in: make([]byte, 0, 64<<10)}
		if err := unix.Connect(fd, &sa); err != nil {
			return 0, 0, err
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return 0, 0, err
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return 0, 0, err
		}
	}
	send := func(c *econn) error {
		tok := token(c.id, c.seq)
		c.out = batch(c.out[:0], c.keys, tok, c.release, rel)
		c.pending = len(c.keys)
		c.want = okReply
		if c.release {
			c.want = oneReply
		}
		for b := c.out; len(b) > 0; {
			n, err := unix.Write(c.fd, b)
			if err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	start := time.Now()
	deadline := start.Add(d)
	for _, c := range byFd {
		if err := send(c); err != nil {
			return 0, 0, err
		}
	}
	// After the deadline no connection starts another cycle, and the run
	// ends once every cycle in flight has released its locks (so the next run
	// finds the keys free), as the go engine does.
	var done int64
	active := len(byFd)
	events := make([]unix.EpollEvent, 256)
	for active > 0 {
		n, err := unix.EpollWait(epfd, events, 100)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		for _, ev := range events[:n] {
			c := byFd[ev.Fd]
			if len(c.in) == cap(c.in) {
				return 0, 0, fmt.Errorf("reply longer than %d bytes", cap(c.in))
			}
			r, err := unix.Read(c.fd, c.in[len(c.in):cap(c.in)])
			if err != nil {
				return 0, 0, err
			}
			if r == 0 {
				return 0, 0, fmt.Errorf("connection closed by the server")
			}
			c.in = c.in[:len(c.in)+r]
			rest := c.in
			for c.pending > 0 {
				i := bytes.IndexByte(rest, '\n')
				if i < 0 {
					break
				}
				if !bytes.Equal(rest[:i+1], c.want) {
					return 0, 0, fmt.Errorf("reply %q, want %q", rest[:i+1], c.want)
				}
				rest = rest[i+1:]
				c.pending--
			}
			if len(rest) > 0 && c.pending == 0 {
				return 0, 0, fmt.Errorf("reply %q beyond the batch", rest)
			}
			c.in = c.in[:copy(c.in, rest)]
			if c.pending > 0 {
				continue
			}
			if c.release {
				done += int64(len(c.keys))
				c.seq++
				if !time.Now().Before(deadline) {
					active--
					continue
				}
			}
			c.release = !c.release
			if err := send(c); err != nil {
				return 0, 0, err
			}
		}
	}
	return done, time.Since(start), nil
}

var (
	okReply  = []byte("+OK\r\n")
	oneReply = []byte(":1\r\n")
)
