//go:build linux

package network

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hotkv/hotkv/internal/resp"
)

// eventLoopSupported: the epoll event loops serve connections on Linux.
const eventLoopSupported = true

// eventLoop is Redis's networking model on Linux: one goroutine that waits in
// epoll for ready sockets and, in the order the kernel reports them, reads each
// one's input, runs every complete command under one hold of the engine lock
// and writes the replies. It never reads a socket that has no data (no EAGAIN
// read per request, unlike goroutine-per-connection), and no goroutine switch
// stands between a request and its reply (docs/decisions/0009). There is one
// loop per io-threads; each owns the connections it accepted.
type eventLoop struct {
	n       *Net
	epfd    int
	wakefd  int // eventfd: shutdown and new listeners
	conns   connTable
	events  []unix.EpollEvent
	backlog []*Conn // connections with complete commands still buffered (batch cap reached)
	writes  []*Conn // connections whose replies wait for the end of the cycle (queueWrite)
	cmdUs   int64   // this cycle: µs spent running commands, and how many
	cmds    int64
	held    []*Conn         // connections whose next command waits for CLIENT PAUSE to end
	bufs    *resp.LocalPool // read buffers, lent to a connection while it has input (Reader.Release)
	sweptMs int64           // when sweepIdle last ran

	// running is set while the loop runs a batch of commands (Session.Run,
	// Resume), waiting for the engine lock included: a message for one of the
	// loop's connections then needs no wake-up, as the loop serves its pushes
	// before the end of the cycle (queuePush)
	running atomic.Bool
	tid     atomic.Int32 // the loop's thread (tests signal it)

	// connections with output to write (Conn.Wake), filled by any goroutine
	pushMu    sync.Mutex
	pushQ     []*Conn
	pushWoken atomic.Bool
	// replica links whose output waits (Conn.SetCoalesce): written
	// coalesceUs after their last write, or before the loop sleeps
	coalesced []*Conn

	// while a timed-out script runs on this loop (PollWhileBusy)
	blocked    bool
	busyEvents []unix.EpollEvent
	closeLater []*Conn    // closes that wait for the engine lock
	closer     chan<- int // sockets to close off the loop (closeFD)

	adopted  adoptQ  // TLS connections handed over after their handshake
	tlsAgain []*Conn // TLS connections whose crypto/tls may hold more input (Conn.tlsMore)
}

func shutdownFD(fd int) {
	if fd >= 0 {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
	}
}

// fdReader reads a non-blocking socket: EAGAIN comes back as an error, which
// leaves the resp.Reader's state intact for the next readiness event. It
// reads at most maxTurnRead bytes in a turn of the loop (*turn, which the
// loop zeroes as it serves the connection), then answers EAGAIN too.
type fdReader struct {
	fd   int
	in   countIn
	turn *int
}

// maxTurnRead bounds the bytes one connection's reads take in a turn of its
// loop: a client streaming a big argument (a 512 MB bulk) reads what its
// socket holds a quarter megabyte at a time, the loop's other clients served
// in between, instead of until the socket runs dry. Epoll is
// level-triggered: the rest is announced again at once.
const maxTurnRead = 256 << 10

func (r fdReader) Read(p []byte) (int, error) {
	room := maxTurnRead - *r.turn
	if room <= 0 {
		return 0, unix.EAGAIN
	}
	if len(p) > room {
		p = p[:room]
	}
	for {
		n, err := rawRead(r.fd, p)
		*r.turn += max(n, 0)
		r.in.add(n)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// listenerFD returns the socket of a TCP or Unix listener; the loop accepts
// on it itself.
func listenerFD(ln net.Listener) (int, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, errors.New("event loop needs a TCP or Unix listener")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// runLoops starts io-threads event loops and returns a function that stops them
// and waits until every connection is closed.
func (s *Net) runLoops(n int) (stop func(), err error) {
	loops := make([]*eventLoop, 0, n)
	for i := 0; i < n; i++ {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return nil, err
		}
		wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			return nil, err
		}
		l := &eventLoop{n: s, epfd: epfd, wakefd: wfd, events: make([]unix.EpollEvent, 256),
			bufs: resp.NewLocalPool(loopSpareBufs)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
			return nil, err
		}
		loops = append(loops, l)
	}
	s.loops = loops
	s.wakeMu.Lock()
	s.wakeFD = loops[0].wakefd
	s.wakeMu.Unlock()
	for _, ln := range s.lns {
		if err := s.watchListener(ln); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	closer := make(chan int, closeQueue)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for fd := range closer {
			_ = unix.Close(fd)
		}
	}()
	for _, l := range loops {
		l.closer = closer
		wg.Add(1)
		go func(l *eventLoop) {
			defer wg.Done()
			l.run()
		}(l)
	}
	return func() {
		s.wakeMu.Lock()
		s.wakeFD = -1
		s.wakeMu.Unlock()
		s.stopping.Store(true)
		for _, l := range loops {
			signal(l.wakefd)
		}
		wg.Wait()
		close(closer)
		<-closed // every connection's socket is closed when stop returns
		for _, l := range loops {
			l.stopAdopting()
			_ = unix.Close(l.epfd)
			_ = unix.Close(l.wakefd)
		}
	}, nil
}

// Wake interrupts the first event loop's wait, so that it runs a cycle (and
// Host.CycleDone) at once; false when no event loop runs (goroutine mode,
// or the loops stopped). Any goroutine.
func (s *Net) Wake() bool {
	s.wakeMu.RLock()
	defer s.wakeMu.RUnlock()
	if s.wakeFD < 0 {
		return false
	}
	signal(s.wakeFD)
	return true
}

// signal adds one to the eventfd fd: the loop waiting on it wakes up.
func signal(fd int) {
	var one = [8]byte{1}
	_, _ = unix.Write(fd, one[:])
}

// watchListener makes every loop accept on ln (EPOLLEXCLUSIVE: one loop wakes
// per new connection).
func (s *Net) watchListener(ln net.Listener) error {
	fd, err := listenerFD(ln)
	if err != nil {
		return err
	}
	s.lnFDs.Store(fd, true)
	for _, l := range s.loops {
		ev := &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, ev); err != nil {
			return err
		}
	}
	return nil
}

func (l *eventLoop) run() {
	runtime.LockOSThread() // the loop is the thread: no migration between epoll calls
	defer runtime.UnlockOSThread()
	l.tid.Store(int32(unix.Gettid()))
	rawWait, busyPoll := rawWaitMs, l.n.busyPoll
	if runtime.GOMAXPROCS(0) <= len(l.n.loops) {
		// the loops could hold every P: leave one to the other goroutines
		rawWait, busyPoll = 0, 0
	}
	for !l.n.stopping.Load() {
		timeout := 100 // ms; the idle reaper and CLIENT PAUSE need no finer tick
		if len(l.backlog) > 0 || len(l.tlsAgain) > 0 || l.pushWoken.Load() {
			timeout = 0 // more to do: buffered commands, or pushes queued without a wake-up
		} else if len(l.held) > 0 {
			timeout = int(min(max(l.n.host.PauseRemainingMs(), 1), 100))
		}
		// wait without telling the runtime first (a raw system call, at most
		// rawWaitMs): under load the next event comes within microseconds, and the
		// loop keeps its P. A wait the runtime knows of lets sysmon retake the P
		// after 20 µs, which costs a hand-off, a spinning M polling the netpoller
		// and a futex wake-up per wait, and keeps sysmon ticking every 20 µs.
		// Block the runtime's way only when the loop has been idle that long.
		n, err := 0, error(nil)
		if busyPoll > 0 && timeout > 0 {
			n, err = l.busyPoll(busyPoll)
		}
		if n == 0 && err == nil && len(l.coalesced) > 0 {
			// going to sleep: the replica links' output that waited goes
			// first, and the loop looks again without sleeping
			l.flushCoalesced(true)
			timeout = 0
		}
		if n == 0 && err == nil {
			n, err = epollWaitRaw(l.epfd, l.events, min(timeout, rawWait))
		}
		if n == 0 && err == nil && timeout > rawWait {
			n, err = unix.EpollWait(l.epfd, l.events, timeout-rawWait)
		}
		if err != nil && err != unix.EINTR {
			l.n.log.Error("epoll_wait failed", "err", err)
			break
		}
		n = max(n, 0) // EpollWait returns -1 with EINTR (a signal)
		l.n.host.CycleStart()
		cycleStart := l.n.clock.NowUs()
		l.cmdUs, l.cmds = 0, 0
		for _, ev := range l.events[:n] {
			c := l.connOf(ev)
			if c == nil {
				continue
			}
			if (c.held != nil || c.parked) && ev.Events&(unix.EPOLLHUP|unix.EPOLLERR|unix.EPOLLRDHUP) != 0 {
				l.close(c) // hung up while paused or blocked: HUP cannot be masked, don't spin on it
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flushAndPublish(c) // the output that drains shrinks its figures
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 && l.conns.has(c) {
				l.serve(c, true)
			}
		}
		l.retry()
		l.n.host.CycleEnd(rawWait > 0)
		l.servePushes()
		l.flushCoalesced(busyPoll == 0)
		l.flushWrites()
		if len(l.closeLater) > 0 {
			later := l.closeLater
			l.closeLater = nil
			for _, cl := range later {
				l.close(cl)
			}
		}
		now := l.n.clock.NowUs()
		l.n.Stats.Loop.Cycle(now-cycleStart, l.cmdUs, l.cmds)
		if now/1000-l.sweptMs >= 1000 {
			l.sweepIdle(now / 1000)
		}
		l.n.host.CycleDone()
	}
	for _, cl := range l.conns {
		if cl != nil {
			l.close(cl)
		}
	}
}

// rawRead and rawWrite are read(2) and write(2) on a non-blocking socket as raw
// system calls: they cannot block, so the runtime's enter/exit-syscall
// bookkeeping (about 100 ns each) is skipped.
func rawRead(fd int, p []byte) (int, error)  { return rawIO(unix.SYS_READ, fd, p) }
func rawWrite(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// epollPoll is epoll_wait with a zero timeout as a raw system call (it cannot
// block, so the runtime need not be told).
func epollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	return epollWaitRaw(epfd, events, 0)
}

// loopSpareBufs is how many free read buffers a loop keeps. Clients borrow
// the loop's buffer while they have input, so one serves every client whose
// requests arrive whole; a client left with part of a request keeps its
// buffer until the rest arrives, and the spares serve the next ones without
// an allocation. Each is 32 KiB of used_memory that no client holds.
const loopSpareBufs = 2

// rawWaitMs bounds a raw (runtime-unaware) blocking epoll_wait. While the loop
// waits raw, its goroutine counts as running: the garbage collector's
// stop-the-world and sysmon's preemption reach it by a signal, which ends the
// wait with EINTR; other goroutines run on the other Ps (with no P to spare, a
// loop never waits raw).
const rawWaitMs = 1

// busyPoll polls epoll without blocking until an event comes or d has passed
// (docs/decisions/0029). A client whose next request finds the loop awake
// writes it without waking a sleeping thread; otherwise that wake-up (the
// scheduler, an interrupt to another core) is part of every unpipelined round
// trip, and the client pays it in its write. Measured side by side with Redis
// (which sleeps at once): 5-10% more requests per second from 50 connections
// sending one request per round trip, nearly twice as many from one.
func (l *eventLoop) busyPoll(d time.Duration) (int, error) {
	start := time.Now()
	for {
		n, err := epollWaitRaw(l.epfd, l.events, 0)
		if n > 0 || err != nil || time.Since(start) >= d {
			return n, err
		}
	}
}

// epollWaitRaw is epoll_wait as a raw system call, EINTR reported as no events.
func epollWaitRaw(epfd int, events []unix.EpollEvent, timeoutMs int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(timeoutMs), 0, 0)
	if e != 0 {
		if e == unix.EINTR {
			return 0, nil
		}
		return 0, e
	}
	return int(r), nil
}

func (l *eventLoop) isListener(fd int) bool {
	_, ok := l.n.lnFDs.Load(fd)
	return ok
}

// accept takes every pending connection on the listener.
func (l *eventLoop) accept(lfd int) {
	n := l.n
	for {
		fd, sa, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			if err != unix.EAGAIN && err != unix.EINTR && err != unix.ECONNABORTED {
				n.log.Warn("accept failed", "err", err)
			}
			return
		}
		n.Stats.ConnectionsReceived.Add(1)
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if ka := n.cfg.Int("tcp-keepalive"); ka > 0 {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(ka))
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(max(ka/3, 1)))
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 3)
		}
		lsa, _ := unix.Getsockname(fd)
		c := n.newConn(sockaddrToAddr(sa), sockaddrToAddr(lsa), func(c *Conn) io.Reader {
			return fdReader{fd: fd, in: countIn{st: &n.Stats, conn: &c.netIn}, turn: &c.turnIn}
		})
		c.fd = fd
		c.loop = l
		c.rd.SetPool(l.bufs)
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			_ = unix.Close(fd)
			continue
		}
		if refusal := n.open(c); refusal != nil { // maxclients, protected mode
			_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
			n.Stats.RejectedConnections.Add(1)
			_, _ = unix.Write(fd, refusal)
			_ = unix.Close(fd)
			continue
		}
		l.conns.put(fd, c)
	}
}

func sockaddrToAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return &net.TCPAddr{}
}

// serve runs the connection's buffered commands (reading from its socket
// first when readable) as one batch, then writes the replies or leaves them
// for the end of the cycle.
func (l *eventLoop) serve(c *Conn, readable bool) {
	l.serveConn(c, readable)
	// a TLS read that returned data may have left records in crypto/tls's
	// buffer, which no epoll event announces: read again this cycle
	if c.tlsc != nil && c.tlsMore && l.conns.has(c) && c.held == nil && !c.parked {
		l.tlsAgain = append(l.tlsAgain, c)
	}
}

func (l *eventLoop) serveConn(c *Conn, readable bool) {
	if c.killed.Load() {
		l.close(c)
		return
	}
	if c.held != nil || c.parked {
		return // waiting for CLIENT PAUSE to end or a blocking command: input waits
	}
	var argv [][]byte
	var ok bool
	var err error
	var ran int64    // commands run in this batch
	var barrier bool // its replies wait on the reply barrier (Ran.Barrier)
	c.turnIn = 0
	if readable {
		argv, err = c.rd.ReadCommand()
		ok = err == nil
	} else {
		argv, ok, err = c.rd.TryCommand()
	}
	if ok {
		l.running.Store(true)
		r := c.sess.Run(argv, nil)
		l.running.Store(false)
		l.cmdUs += r.Us
		ran = r.Cmds
		barrier = r.Barrier
		l.cmds += ran
		c.closing = c.closing || r.Close
		err = r.Err
		switch r.Stop {
		case StopHeld:
			l.hold(c, r.Held)
		case StopBlocked:
			c.parked = true // stop reading until the command is released
			l.interest(c)
		case StopFull:
			l.backlog = append(l.backlog, c) // fairness: come back after the others
		}
	}
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		var pe *resp.ProtocolError
		switch {
		case errors.As(err, &pe):
			c.w.Error("ERR " + pe.Msg)
			c.closing = true
		case errors.Is(err, resp.ErrQueryBufferLimit):
			l.n.queryBufLimit(c)
			l.close(c)
			return
		default: // EOF, reset, killed
			l.close(c)
			return
		}
	}
	if c.held == nil && !c.parked {
		c.rd.Release() // nothing left to parse: the buffer goes back to the loop
	}
	if ran > 1 || c.writeQueued || barrier {
		l.queueWrite(c)
		// the batch's replies wait for the end of the cycle: the clients
		// served until then must see them in the sum
		c.sess.Publish(true)
		return
	}
	l.flushAndPublish(c)
}

// sweepIdle runs once a second: a connection idle for IdleReplyMs whose
// replies were all written gives its reply buffer back, as Redis's
// clientsCron shrinks an idle client's reply buffer
// (clientsCronResizeOutputBuffer, to 1 KiB) and frees its query buffer.
// The session keeps a buffer of up to 1 MiB between batches (AfterWrite),
// which a client that asks for big replies needs while it keeps asking
// (LRANGE_600 -P 16's p99), but an idle connection kept it for life, counted
// in used_memory and so against maxmemory. The buffers count as freed in
// used_memory at once (Host.Released).
func (l *eventLoop) sweepIdle(nowMs int64) {
	l.sweptMs = nowMs
	var freed int64
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		if b := c.dropIdleReply(nowMs); b > 0 {
			freed += b
			c.sess.Publish(false)
		}
	}
	if freed > 0 {
		l.n.host.Released(freed)
	}
}

// flushAndPublish writes c's replies and, unless that closed it, publishes
// its memory figures.
func (l *eventLoop) flushAndPublish(c *Conn) {
	l.flush(c)
	if l.conns.has(c) {
		c.sess.Publish(false)
	}
}

// queueWrite leaves c's replies for flushWrites at the end of the cycle, as
// Redis writes to its clients with pending replies in beforeSleep: the
// replies of the connections served in a cycle go out back to back. serve
// queues a connection that ran a pipeline (two commands or more); one
// command's reply is written at once. Written one by one between the
// pipelines of the next connections, each reply found the client (a load
// generator on the other core, say) asleep again and paid a wake-up in the
// kernel (an interrupt to the other core): with 50 clients sending 16
// commands each, that was a fifth of the loop's time. Between single commands
// a few microseconds apart the client is still awake, and a reply at once
// lets it send its next request while the loop serves the others (decision
// 0032).
func (l *eventLoop) queueWrite(c *Conn) {
	if !c.writeQueued {
		c.writeQueued = true
		l.writes = append(l.writes, c)
	}
}

// flushWrites writes the replies queueWrite left, and publishes each
// session's memory figures after its write.
func (l *eventLoop) flushWrites() {
	for i, c := range l.writes {
		l.writes[i] = nil
		c.writeQueued = false
		if l.conns.has(c) { // not closed in the meantime
			l.flushAndPublish(c)
		}
	}
	l.writes = l.writes[:0]
}

// flush writes what it can of the reply buffer (and of the queued messages);
// the rest waits for EPOLLOUT.
func (l *eventLoop) flush(c *Conn) {
	switch c.sess.BeforeWrite(c.sent, false) {
	case WriteHold:
		return // Conn.Wake comes when the barrier releases it
	case WriteDrop:
		l.close(c)
		return
	}
	if c.tlsc != nil {
		l.flushTLS(c)
		return
	}
	for c.sent < c.w.Len() {
		n, err := rawWrite(c.fd, c.w.Segment(c.sent))
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
		c.sent += n
		c.netOut.Add(int64(n))
		l.n.Stats.NetOutput.Add(int64(n))
		l.n.Stats.Writes.Add(1)
	}
	c.sent = 0
	c.sess.AfterWrite()
	l.wantWrite(c, false)
	if c.closing {
		l.close(c)
	}
}

func (l *eventLoop) wantWrite(c *Conn, on bool) {
	if c.wantWrite == on {
		return
	}
	c.wantWrite = on
	l.interest(c)
}

// interest sets what the loop waits for on c: input unless a command is held
// back by CLIENT PAUSE (level-triggered epoll would report the unread input
// forever), output while replies are pending.
func (l *eventLoop) interest(c *Conn) {
	var ev uint32
	if c.held == nil && !c.parked {
		ev |= unix.EPOLLIN
	} else if c.parked {
		ev |= unix.EPOLLRDHUP // a blocked client that hangs up is dropped at once
	}
	if c.wantWrite {
		ev |= unix.EPOLLOUT
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
}

// hold parks c's next command until CLIENT PAUSE releases it.
func (l *eventLoop) hold(c *Conn, argv [][]byte) {
	c.sess.Held(true)
	c.held = argv
	l.held = append(l.held, c)
	l.interest(c)
}

// retry serves connections left with buffered commands and connections whose
// held command CLIENT PAUSE no longer holds back.
func (l *eventLoop) retry() {
	if len(l.tlsAgain) > 0 {
		again := l.tlsAgain
		l.tlsAgain = nil
		for _, c := range again {
			if l.conns.has(c) && c.held == nil && !c.parked {
				l.serve(c, true)
			}
		}
	}
	if len(l.backlog) > 0 {
		bl := l.backlog
		l.backlog = nil
		for _, c := range bl {
			if l.conns.has(c) {
				l.serve(c, false)
			}
		}
	}
	if len(l.held) == 0 {
		return
	}
	held := l.held
	l.held = nil
	for _, c := range held {
		if !l.conns.has(c) {
			continue
		}
		if c.killed.Load() {
			l.close(c)
			continue
		}
		l.running.Store(true)
		ran := c.sess.Resume(c.held)
		l.running.Store(false)
		if !ran {
			l.held = append(l.held, c)
			continue
		}
		c.held = nil
		if c.sess.Blocked() { // the command it held blocks: input waits for it
			c.parked = true
			l.interest(c)
			continue
		}
		l.interest(c)
		l.serve(c, false) // the rest of its buffered commands, then the replies
	}
}

// connOf is the connection an event is for, or nil: an event on the loop's
// own descriptors is handled (plumbing), and a closed connection's ignored.
func (l *eventLoop) connOf(ev unix.EpollEvent) *Conn {
	fd := int(ev.Fd)
	if l.plumbing(fd) {
		return nil
	}
	return l.conns.get(fd)
}

// plumbing handles an event on the loop's own descriptors: the wake-up
// eventfd (drained) and a listener (accept). It reports whether fd was one.
func (l *eventLoop) plumbing(fd int) bool {
	switch {
	case fd == l.wakefd:
		var buf [8]byte
		_, _ = unix.Read(l.wakefd, buf[:])
		l.takeAdopted()
	case l.isListener(fd):
		l.accept(fd)
	default:
		return false
	}
	return true
}

func (l *eventLoop) close(c *Conn) {
	if !l.conns.has(c) {
		return
	}
	if l.blocked {
		// serving connections while a script runs on this loop: the engine
		// lock is held, so the close waits for the script to end
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: 0, Fd: int32(c.fd)})
		l.closeLater = append(l.closeLater, c)
		return
	}
	l.conns.put(c.fd, nil)
	c.rd.Release() // an empty buffer serves the next connection
	// the session leaves the registry before the fd is closed: CLIENT KILL
	// and the idle reaper shut down only registered clients, under the same
	// lock, so they can never hit this fd after it is closed and reused by a
	// new connection
	c.sess.Closed()
	l.closeFD(c.fd)
}

// closeQueue is how many sockets may wait for the closer goroutine.
const closeQueue = 1024

// closeFD closes a connection's socket off the loop: the loop stops watching
// it at once, and the closer goroutine closes it. Closing a socket whose
// peer was still sending frees everything the kernel had queued for it
// (a client streaming a big argument: megabytes, milliseconds), which the
// loop's other clients would otherwise wait for. The fd's number cannot be
// reused before the close, and nothing on the loop refers to it any more.
func (l *eventLoop) closeFD(fd int) {
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	select {
	case l.closer <- fd:
	default: // the closer is behind: close here
		_ = unix.Close(fd)
	}
}

// PollWhileBusy serves the other connections of the loop c runs on while
// c's script is busy (Redis's processEventsWhileBlocked): it polls the
// loop's sockets without waiting and answers their commands (Session.Busy).
// The script's goroutine calls it, which is the loop's, with the engine lock
// held; c itself is left alone until its script ends. It does nothing for a
// goroutine-mode connection.
func (c *Conn) PollWhileBusy() {
	l := c.loop
	if l == nil {
		return
	}
	if l.busyEvents == nil {
		l.busyEvents = make([]unix.EpollEvent, 64)
	}
	l.blocked = true
	defer func() { l.blocked = false }()
	n, err := epollPoll(l.epfd, l.busyEvents)
	if err != nil {
		return
	}
	for _, ev := range l.busyEvents[:n] {
		o := l.connOf(ev)
		if o == nil || o == c || o.held != nil || o.parked {
			continue
		}
		if ev.Events&unix.EPOLLOUT != 0 {
			l.flush(o)
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) == 0 || !l.conns.has(o) {
			continue
		}
		argv, err := o.rd.ReadCommand()
		if err != nil {
			if !errors.Is(err, unix.EAGAIN) {
				l.close(o) // deferred: l.blocked
			}
			continue
		}
		r := o.sess.Busy(argv)
		o.closing = o.closing || r.Close
		if r.Err != nil {
			var pe *resp.ProtocolError
			if !errors.As(r.Err, &pe) {
				l.close(o) // deferred: l.blocked
				continue
			}
			o.w.Error("ERR " + pe.Msg)
			o.closing = true
		}
		o.rd.Release()
		l.flush(o)
	}
}

// queuePush asks the loop to write c's output (Conn.Wake); any goroutine,
// under the engine lock. While the loop itself runs a batch (a PUBLISH to a
// subscriber of the same loop, say), it serves its pushes before the end of
// the cycle and the wake-up (an eventfd write, and its read and epoll event)
// is skipped, as Redis writes to subscribers before its next epoll_wait.
func (l *eventLoop) queuePush(c *Conn) {
	l.pushMu.Lock()
	l.pushQ = append(l.pushQ, c)
	l.pushMu.Unlock()
	if !l.pushWoken.Swap(true) && !l.running.Load() {
		signal(l.wakefd)
	}
}

// servePushes writes the output of the connections queuePush named.
func (l *eventLoop) servePushes() {
	if !l.pushWoken.Load() {
		return
	}
	l.pushWoken.Store(false)
	l.pushMu.Lock()
	q := l.pushQ
	l.pushQ = nil
	l.pushMu.Unlock()
	var now int64
	for _, c := range q {
		if !l.conns.has(c) || c.held != nil {
			continue
		}
		if c.coalesce.Load() {
			if now == 0 {
				now = l.n.clock.NowUs()
			}
			if now-c.lastFlushUs < coalesceUs {
				if !c.coalesced {
					c.coalesced = true
					l.coalesced = append(l.coalesced, c)
				}
				continue
			}
			c.lastFlushUs = now
		}
		if c.parked && c.sess.Closing() {
			c.closing = true // closed once its blocked command's reply is out
		}
		// published: a subscriber that does not read grows by its messages
		// without running a command (client eviction, CLIENT LIST's omem)
		l.flushAndPublish(c)
		if c.parked && !c.sess.Blocked() && l.conns.has(c) {
			// a blocking command was served: carry on with the pipeline
			c.parked = false
			l.interest(c)
			l.serve(c, false)
		}
	}
}

// coalesceUs is how long a replica link's output may wait after its last
// write while the loop is busy. Written every cycle, the stream of a write
// load went out a few commands at a time: a write on the primary, a read and
// a wake-up on the replica, per few commands (a sixth of the primary loop's
// time under SET -c 50 with one replica). Output that waits is written when
// its time is up or when the loop is about to sleep (its busy poll found no
// event), whichever comes first; a loop that does not busy-poll writes it at
// the end of each cycle, as before.
const coalesceUs = 200

// flushCoalesced writes the replica links' output that waited: all of it
// when all is true, else that of links last written coalesceUs ago.
func (l *eventLoop) flushCoalesced(all bool) {
	if len(l.coalesced) == 0 {
		return
	}
	now := l.n.clock.NowUs()
	keep := l.coalesced[:0]
	for _, c := range l.coalesced {
		if !l.conns.has(c) {
			c.coalesced = false
			continue
		}
		if !all && now-c.lastFlushUs < coalesceUs {
			keep = append(keep, c)
			continue
		}
		c.coalesced, c.lastFlushUs = false, now
		l.flushAndPublish(c)
	}
	clear(l.coalesced[len(keep):])
	l.coalesced = keep
}

// connTable is an event loop's connections by file descriptor: a slice, as
// descriptors are small and dense (Redis's conns array), so that the
// lookups of every event and write are an index, not a map's hash.
type connTable []*Conn

func (t connTable) get(fd int) *Conn {
	if uint(fd) < uint(len(t)) {
		return t[fd]
	}
	return nil
}

// has reports whether c is still the loop's (not closed meanwhile).
func (t connTable) has(c *Conn) bool { return t.get(c.fd) == c }

func (t *connTable) put(fd int, c *Conn) {
	if fd >= len(*t) {
		if c == nil {
			return
		}
		n := max(2*len(*t), fd+1, 64)
		grown := make(connTable, n)
		copy(grown, *t)
		*t = grown
	}
	(*t)[fd] = c
}
