//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hotkv/hotkv/internal/keyspace"
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
	s       *Server
	epfd    int
	wakefd  int // eventfd: shutdown and new listeners
	conns   map[int]*client
	events  []unix.EpollEvent
	backlog []*client // clients with complete commands still buffered (batch cap reached)
	writes  []*client // clients whose replies wait for the end of the cycle (queueWrite)
	cmdUs   int64     // this cycle: µs spent running commands, and how many
	cmds    int64
	held    []*client              // clients whose next command waits for CLIENT PAUSE to end
	pfReqs  []keyspace.PrefetchReq // prefetch's scratch
	bufs    *resp.LocalPool        // read buffers, lent to a client while it has input (Reader.Release)
	sweptMs int64                  // when sweepIdle last ran
	pfPeek  []resp.Peeked

	// clients with queued Pub/Sub messages (pubsub.go), filled by any goroutine
	pushMu    sync.Mutex
	pushQ     []*client
	pushWoken atomic.Bool

	// while a timed-out script runs on this loop (whileBlocked)
	blocked    bool
	busyEvents []unix.EpollEvent
	closeLater []*client // closes that wait for the engine lock
}

func shutdownFD(fd int) {
	if fd >= 0 {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
	}
}

// fdReader reads a non-blocking socket: EAGAIN comes back as an error, which
// leaves the resp.Reader's state intact for the next readiness event.
type fdReader struct {
	fd int
	s  *Server
}

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := rawRead(r.fd, p)
		r.s.stats.reads.Add(1)
		if n > 0 {
			r.s.stats.netInput.Add(int64(n))
		}
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

// listenerFD returns the socket of a TCP listener; the loop accepts on it itself.
func listenerFD(ln net.Listener) (int, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return -1, errors.New("event loop needs a TCP listener")
	}
	rc, err := tl.SyscallConn()
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
func (s *Server) runLoops(n int) (stop func(), err error) {
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
		l := &eventLoop{s: s, epfd: epfd, wakefd: wfd, conns: map[int]*client{}, events: make([]unix.EpollEvent, 256),
			bufs: resp.NewLocalPool(loopSpareBufs)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
			return nil, err
		}
		loops = append(loops, l)
	}
	s.loops = loops
	for _, ln := range s.lns {
		if err := s.watchListener(ln); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func(l *eventLoop) {
			defer wg.Done()
			l.run()
		}(l)
	}
	return func() {
		s.stopping.Store(true)
		for _, l := range loops {
			var one = [8]byte{1}
			_, _ = unix.Write(l.wakefd, one[:])
		}
		wg.Wait()
		for _, l := range loops {
			_ = unix.Close(l.epfd)
			_ = unix.Close(l.wakefd)
		}
	}, nil
}

// watchListener makes every loop accept on ln (EPOLLEXCLUSIVE: one loop wakes
// per new connection).
func (s *Server) watchListener(ln net.Listener) error {
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
	rawWait, busyPoll := rawWaitMs, l.s.busyPoll
	if runtime.GOMAXPROCS(0) <= len(l.s.loops) {
		// the loops could hold every P: leave one to the other goroutines
		rawWait, busyPoll = 0, 0
	}
	for !l.s.stopping.Load() {
		timeout := 100 // ms; the idle reaper and CLIENT PAUSE need no finer tick
		if len(l.backlog) > 0 || l.pushWoken.Load() {
			timeout = 0 // more to do: buffered commands, or pushes queued without a wake-up
		} else if len(l.held) > 0 {
			timeout = int(min(max(l.s.pauseRemainingMs(), 1), 100))
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
		if n == 0 && err == nil {
			n, err = epollWaitRaw(l.epfd, l.events, min(timeout, rawWait))
		}
		if n == 0 && err == nil && timeout > rawWait {
			n, err = unix.EpollWait(l.epfd, l.events, timeout-rawWait)
		}
		if err != nil && err != unix.EINTR {
			l.s.log.Error("epoll_wait failed", "err", err)
			break
		}
		cycleStart := l.s.clock.NowUs()
		l.cmdUs, l.cmds = 0, 0
		for i := 0; i < n; i++ {
			ev := l.events[i]
			fd := int(ev.Fd)
			switch {
			case l.plumbing(fd):
			default:
				cl := l.conns[fd]
				if cl == nil {
					continue
				}
				if (cl.held != nil || cl.parked) && ev.Events&(unix.EPOLLHUP|unix.EPOLLERR|unix.EPOLLRDHUP) != 0 {
					l.close(cl) // hung up while paused or blocked: HUP cannot be masked, don't spin on it
					continue
				}
				if ev.Events&unix.EPOLLOUT != 0 {
					l.flushAndPublish(cl) // the output that drains shrinks its figures
				}
				if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 && l.conns[fd] == cl {
					l.serve(cl, true)
				}
			}
		}
		l.retry()
		l.servePushes()
		l.flushWrites()
		if len(l.closeLater) > 0 {
			later := l.closeLater
			l.closeLater = nil
			for _, cl := range later {
				l.close(cl)
			}
		}
		now := l.s.clock.NowUs()
		l.s.loopStats.cycle(now-cycleStart, l.cmdUs, l.cmds)
		if now/1000-l.sweptMs >= 1000 {
			l.sweepIdle(now / 1000)
		}
	}
	for _, cl := range l.conns {
		l.close(cl)
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
	_, ok := l.s.lnFDs.Load(fd)
	return ok
}

// accept takes every pending connection on the listener.
func (l *eventLoop) accept(lfd int) {
	s := l.s
	for {
		fd, sa, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			if err != unix.EAGAIN && err != unix.EINTR && err != unix.ECONNABORTED {
				s.log.Warn("accept failed", "err", err)
			}
			return
		}
		s.stats.connectionsReceived.Add(1)
		s.mu.Lock()
		full := int64(len(s.clients)) >= s.cfg.Int("maxclients")
		s.mu.Unlock()
		if full {
			s.stats.rejectedConnections.Add(1)
			_, _ = unix.Write(fd, []byte("-ERR max number of clients reached\r\n"))
			_ = unix.Close(fd)
			continue
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if ka := s.cfg.Int("tcp-keepalive"); ka > 0 {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(ka))
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(max(ka/3, 1)))
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 3)
		}
		lsa, _ := unix.Getsockname(fd)
		cl := s.initClient(sockaddrToAddr(sa), sockaddrToAddr(lsa), fdReader{fd: fd, s: s})
		cl.fd = fd
		cl.loop = l
		cl.rd.SetPool(l.bufs)
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			_ = unix.Close(fd)
			continue
		}
		l.conns[fd] = cl
		s.mu.Lock()
		s.clients[cl.ID] = cl
		s.mu.Unlock()
	}
}

func sockaddrToAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return &net.TCPAddr{}
}

// serve runs the client's buffered commands (reading from its socket first when
// readable) under one hold of the engine lock, then writes the replies.
func (l *eventLoop) serve(cl *client, readable bool) {
	s := l.s
	if cl.killed.Load() {
		l.close(cl)
		return
	}
	if cl.held != nil || cl.parked {
		return // waiting for CLIENT PAUSE to end or a blocking command: input waits
	}
	var argv [][]byte
	var ok bool
	var err error
	var ran int64 // commands run in this batch
	if readable {
		argv, err = cl.rd.ReadCommand()
		ok = err == nil
	} else {
		argv, ok, err = cl.rd.TryCommand()
	}
	if ok {
		cl.clockUs = s.clock.NowUs()
		batchStart, cmdsBefore := cl.clockUs, cl.cmds
		cl.lastInteraction.Store(cl.clockUs / 1000)
		if st := s.lockOrBusy(); st != nil {
			closeNow := l.serveBusy(cl, argv, st) // a script lent the lock: BUSY
			s.eng.Unlock()
			if closeNow {
				l.close(cl)
			} else {
				l.flush(cl)
			}
			return
		}
		s.lockLoop = l
		for n := 0; ; n++ {
			if n%keyspace.PrefetchMax == 0 && cl.rd.Buffered() > 0 {
				l.prefetch(cl, argv)
			} else if n == 0 && len(argv) >= 5 {
				l.prefetchKeys(cl, argv)
			}
			if !s.dispatch(cl, argv) {
				l.hold(cl, argv)
				break
			}
			if cl.isBlocked.Load() {
				cl.parked = true // stop reading until the command is released
				l.interest(cl)
				break
			}
			if cl.CloseAfterReply || cl.killed.Load() {
				break
			}
			if n >= maxBatch {
				l.backlog = append(l.backlog, cl) // fairness: come back after the others
				break
			}
			argv, ok, err = cl.rd.TryCommand()
			if !ok || err != nil {
				break
			}
		}
		s.lockLoop = nil
		s.eng.Unlock()
		l.cmdUs += cl.clockUs - batchStart
		ran = cl.cmds - cmdsBefore
		l.cmds += ran
	}
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		var pe *resp.ProtocolError
		switch {
		case errors.As(err, &pe):
			cl.w.Error("ERR " + pe.Msg)
			cl.CloseAfterReply = true
		case errors.Is(err, resp.ErrQueryBufferLimit):
			s.stats.queryBufLimitDisconnects.Add(1)
			s.log.Warn("closing client that reached max query buffer length", "client", cl.Addr)
			l.close(cl)
			return
		default: // EOF, reset, killed
			l.close(cl)
			return
		}
	}
	if cl.held == nil && !cl.parked {
		cl.rd.Release() // nothing left to parse: the buffer goes back to the loop
	}
	if ran > 1 || cl.writeQueued {
		l.queueWrite(cl)
		// the batch's replies wait for the end of the cycle: the clients
		// served until then must see them in the sum
		s.publishForEviction(cl)
		return
	}
	l.flushAndPublish(cl)
}

// sweepIdle runs once a second: a client idle for idleReplyMs whose replies
// were all written gives its reply buffer back, as Redis's clientsCron
// shrinks an idle client's reply buffer (clientsCronResizeOutputBuffer, to
// 1 KiB) and frees its query buffer. resetReplyBuf keeps a buffer of up to
// 1 MiB between batches, which a client that asks for big replies needs
// while it keeps asking (LRANGE_600 -P 16's p99), but an idle connection
// kept it for life, counted in used_memory and so against maxmemory.
// The buffers count as freed in used_memory at once (noteReleased).
func (l *eventLoop) sweepIdle(nowMs int64) {
	l.sweptMs = nowMs
	var freed int64
	for _, cl := range l.conns {
		if n := cl.dropIdleReply(nowMs); n > 0 {
			freed += n
			l.s.publishMem(cl)
		}
	}
	l.s.noteReleased(freed)
}

// flushAndPublish writes cl's replies and, unless that closed it, publishes
// its memory figures.
func (l *eventLoop) flushAndPublish(cl *client) {
	l.flush(cl)
	if l.conns[cl.fd] == cl {
		l.s.publishMem(cl)
	}
}

// queueWrite leaves cl's replies for flushWrites at the end of the cycle, as
// Redis writes to its clients with pending replies in beforeSleep: the
// replies of the clients served in a cycle go out back to back. serve queues
// a client that ran a pipeline (two commands or more); one command's reply is
// written at once. Written one by one between the pipelines of the next
// clients, each reply found the client (a load generator on the other core,
// say) asleep again and paid a wake-up in the kernel (an interrupt to the
// other core): with 50 clients sending 16 commands each, that was a fifth of
// the loop's time. Between single commands a few microseconds apart the
// client is still awake, and a reply at once lets it send its next request
// while the loop serves the others (decision 0032).
func (l *eventLoop) queueWrite(cl *client) {
	if !cl.writeQueued {
		cl.writeQueued = true
		l.writes = append(l.writes, cl)
	}
}

// flushWrites writes the replies queueWrite left, and publishes each client's
// memory figures after its write.
func (l *eventLoop) flushWrites() {
	for i, cl := range l.writes {
		l.writes[i] = nil
		cl.writeQueued = false
		if l.conns[cl.fd] == cl { // not closed in the meantime
			l.flushAndPublish(cl)
		}
	}
	l.writes = l.writes[:0]
}

// prefetch starts loading, from memory into the CPU caches, the keyspace
// entries (and members) of the pipelined commands about to run: argv's and
// those of the complete requests buffered behind it (keyspace.DB.Prefetch).
// Engine lock held.
func (l *eventLoop) prefetch(cl *client, argv [][]byte) {
	if len(argv) < 2 {
		return
	}
	db := l.s.ks.DBs[cl.DB]
	if !db.PrefetchWorth(argv[1]) {
		return // the data is in the caches anyway
	}
	r := keyspace.PrefetchReq{Key: argv[1], Last: argv[len(argv)-1]}
	if len(argv) > 2 {
		r.Arg2 = argv[2]
	}
	reqs := append(l.pfReqs[:0], r)
	l.pfPeek = cl.rd.PeekArgs(l.pfPeek[:0], keyspace.PrefetchMax-len(reqs))
	for _, p := range l.pfPeek {
		reqs = append(reqs, keyspace.PrefetchReq{Key: p.Arg1, Arg2: p.Arg2, Last: p.Last})
	}
	if len(reqs) > 1 { // one request (nothing complete behind it): nothing to overlap
		db.Prefetch(reqs)
	}
	clear(reqs) // they point into the client's buffer: keep no buffer alive
	clear(l.pfPeek)
	l.pfReqs = reqs[:0]
}

// prefetchKeys is prefetch for one command that names several keys (MSET,
// MGET, DEL, EXISTS, ...; the command table's key positions): without it
// their lookups wait for memory one after the other. Engine lock held.
func (l *eventLoop) prefetchKeys(cl *client, argv [][]byte) {
	db := l.s.ks.DBs[cl.DB]
	if db.Len() < keyspace.PrefetchMinKeys {
		return // the keys are in the CPU caches anyway
	}
	spec := l.s.table.Lookup(argv[0])
	if spec == nil {
		return
	}
	first, last, step, ok := spec.KeyRange(len(argv))
	if !ok || last < first+step {
		return // one key (or none): nothing to overlap
	}
	reqs := l.pfReqs[:0]
	for i := first; i <= last && len(reqs) < keyspace.PrefetchMax; i += step {
		reqs = append(reqs, keyspace.PrefetchReq{Key: argv[i]})
	}
	db.Prefetch(reqs) // two keys or more: the range was checked above
	clear(reqs)       // they point into the client's buffer: keep no buffer alive
	l.pfReqs = reqs[:0]
}

// flush writes what it can of the reply buffer (and of the queued messages);
// the rest waits for EPOLLOUT.
func (l *eventLoop) flush(cl *client) {
	cl.drainPush()
	if l.s.replyHeld(cl) && l.s.holdForBarrier(cl) {
		return // ReleaseReplies wakes the loop for it
	}
	if len(cl.w.Buf) > cl.sent && l.s.overOutputLimit(cl, len(cl.w.Buf)-cl.sent) {
		l.close(cl)
		return
	}
	for cl.sent < len(cl.w.Buf) {
		n, err := rawWrite(cl.fd, cl.w.Buf[cl.sent:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			l.wantWrite(cl, true)
			return
		}
		if err != nil {
			l.close(cl)
			return
		}
		cl.sent += n
		l.s.stats.netOutput.Add(int64(n))
		l.s.stats.writes.Add(1)
	}
	cl.sent = 0
	cl.resetReplyBuf()
	l.wantWrite(cl, false)
	if cl.CloseAfterReply {
		l.close(cl)
	}
}

func (l *eventLoop) wantWrite(cl *client, on bool) {
	if cl.wantWrite == on {
		return
	}
	cl.wantWrite = on
	l.interest(cl)
}

// interest sets what the loop waits for on cl: input unless a command is held
// back by CLIENT PAUSE (level-triggered epoll would report the unread input
// forever), output while replies are pending.
func (l *eventLoop) interest(cl *client) {
	var ev uint32
	if cl.held == nil && !cl.parked {
		ev |= unix.EPOLLIN
	} else if cl.parked {
		ev |= unix.EPOLLRDHUP // a blocked client that hangs up is dropped at once
	}
	if cl.wantWrite {
		ev |= unix.EPOLLOUT
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, cl.fd, &unix.EpollEvent{Events: ev, Fd: int32(cl.fd)})
}

// hold parks cl's next command until CLIENT PAUSE releases it.
func (l *eventLoop) hold(cl *client, argv [][]byte) {
	l.s.notePaused(cl, true)
	cl.held = argv
	l.held = append(l.held, cl)
	l.interest(cl)
}

// retry serves clients left with buffered commands and clients whose held
// command CLIENT PAUSE no longer holds back.
func (l *eventLoop) retry() {
	if len(l.backlog) > 0 {
		bl := l.backlog
		l.backlog = nil
		for _, cl := range bl {
			if l.conns[cl.fd] == cl {
				l.serve(cl, false)
			}
		}
	}
	if len(l.held) == 0 {
		return
	}
	held := l.held
	l.held = nil
	for _, cl := range held {
		if l.conns[cl.fd] != cl {
			continue
		}
		if cl.killed.Load() {
			l.close(cl)
			continue
		}
		argv := cl.held
		if l.s.pausedFor(cl, l.s.specFor(argv), argv) {
			l.held = append(l.held, cl)
			continue
		}
		if l.s.scripts.cur.Load() != nil { // a busy script: CLIENT PAUSE outlived it?
			l.held = append(l.held, cl)
			continue
		}
		cl.held = nil
		l.s.notePaused(cl, false)
		cl.clockUs = l.s.clock.NowUs()
		l.s.eng.Lock()
		ran := l.s.dispatch(cl, argv)
		l.s.eng.Unlock()
		if !ran { // paused again in between
			l.hold(cl, argv)
			continue
		}
		l.interest(cl)
		l.serve(cl, false) // the rest of its buffered commands, then the replies
	}
}

// plumbing handles an event on the loop's own descriptors: the wake-up
// eventfd (drained) and a listener (accept). It reports whether fd was one.
func (l *eventLoop) plumbing(fd int) bool {
	switch {
	case fd == l.wakefd:
		var buf [8]byte
		_, _ = unix.Read(l.wakefd, buf[:])
	case l.isListener(fd):
		l.accept(fd)
	default:
		return false
	}
	return true
}

func (l *eventLoop) close(cl *client) {
	if l.conns[cl.fd] != cl {
		return
	}
	if l.blocked {
		// serving clients while a script runs on this loop: the engine lock is
		// held, so the close waits for the script to end
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, cl.fd, &unix.EpollEvent{Events: 0, Fd: int32(cl.fd)})
		l.closeLater = append(l.closeLater, cl)
		return
	}
	delete(l.conns, cl.fd)
	l.s.notePaused(cl, false)
	cl.rd.Release() // an empty buffer serves the next connection
	l.s.eng.Lock()
	l.s.unwatchAll(cl)
	l.s.releaseClient(cl)
	l.s.unsubscribeAll(cl)
	l.s.dropBlocked(cl)
	l.s.trk.Disable(cl)
	l.s.dropReplica(cl)
	l.s.dropWaiter(cl)
	l.s.eng.Unlock()
	// leave the registry before the fd is closed: CLIENT KILL and the idle reaper
	// shut down only registered clients, under the same lock, so they can never
	// hit this fd after it is closed and reused by a new connection
	l.s.mu.Lock()
	delete(l.s.clients, cl.ID)
	l.s.mu.Unlock()
	_ = unix.Close(cl.fd)
}

// serveBusy answers a client's buffered commands while a script is busy (see
// process, given the script). The engine lock is held (by the script's loop, or lent), so a
// connection that failed is not closed here: closeNow asks the caller to.
func (l *eventLoop) serveBusy(cl *client, argv [][]byte, st *scriptState) (closeNow bool) {
	var err error
	for {
		l.s.process(cl, argv, st)
		var ok bool
		if argv, ok, err = cl.rd.TryCommand(); !ok || err != nil || cl.CloseAfterReply {
			break
		}
	}
	if err != nil {
		var pe *resp.ProtocolError
		if errors.As(err, &pe) {
			cl.w.Error("ERR " + pe.Msg)
			cl.CloseAfterReply = true
		} else {
			return true
		}
	}
	return false
}

// whileBlocked serves the other clients of the loop a timed-out script runs on
// (Redis's processEventsWhileBlocked): it polls the loop's sockets without
// waiting and answers their commands with dispatch. It runs on the loop's
// goroutine, inside the script, with the engine lock held; the script's caller
// is left alone until its script ends.
func (s *Server) whileBlocked(st *scriptState) {
	caller := st.caller
	if caller == nil || caller.loop == nil {
		return
	}
	l := caller.loop
	if l.busyEvents == nil {
		l.busyEvents = make([]unix.EpollEvent, 64)
	}
	l.blocked = true
	defer func() { l.blocked = false }()
	n, err := epollPoll(l.epfd, l.busyEvents)
	if err != nil {
		return
	}
	for i := 0; i < n; i++ {
		ev := l.busyEvents[i]
		fd := int(ev.Fd)
		switch {
		case l.plumbing(fd):
		default:
			cl := l.conns[fd]
			if cl == nil || cl == caller || cl.held != nil || cl.parked {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(cl)
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 && l.conns[fd] == cl {
				argv, err := cl.rd.ReadCommand()
				if err != nil {
					if !errors.Is(err, unix.EAGAIN) {
						l.close(cl)
					}
					continue
				}
				if l.serveBusy(cl, argv, st) {
					l.close(cl) // deferred: l.blocked
				} else {
					cl.rd.Release()
					l.flush(cl)
				}
			}
		}
	}
}

// queuePush asks the loop to deliver cl's queued messages; any goroutine,
// under the engine lock. When the loop itself runs the command that produced
// the message (a PUBLISH to a subscriber of the same loop), the loop serves
// its pushes at the end of the cycle and the wake-up (an eventfd write, and its
// read and epoll event) is skipped, as Redis writes to subscribers before its
// next epoll_wait.
func (l *eventLoop) queuePush(cl *client) {
	l.pushMu.Lock()
	l.pushQ = append(l.pushQ, cl)
	l.pushMu.Unlock()
	if !l.pushWoken.Swap(true) && l.s.lockLoop != l {
		var one = [8]byte{1}
		_, _ = unix.Write(l.wakefd, one[:])
	}
}

// servePushes writes the queued messages of the clients queuePush named.
func (l *eventLoop) servePushes() {
	if !l.pushWoken.Load() {
		return
	}
	l.pushWoken.Store(false)
	l.pushMu.Lock()
	q := l.pushQ
	l.pushQ = nil
	l.pushMu.Unlock()
	for _, cl := range q {
		if l.conns[cl.fd] != cl || cl.held != nil {
			continue
		}
		// published: a subscriber that does not read grows by its messages
		// without running a command (client eviction, CLIENT LIST's omem)
		l.flushAndPublish(cl)
		if cl.parked && !cl.isBlocked.Load() && l.conns[cl.fd] == cl {
			// a blocking command was served: carry on with the pipeline
			cl.parked = false
			l.interest(cl)
			l.serve(cl, false)
		}
	}
}
