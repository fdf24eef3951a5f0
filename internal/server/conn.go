package server

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/repl"
)

// client is one connection: its reader, its reply buffer and the state commands see.
type client struct {
	command.Client
	conn            net.Conn // goroutine mode only
	fd              int      // event-loop mode: the socket (-1 in goroutine mode)
	raddr           net.Addr
	sent            int   // event-loop mode: bytes of w.Buf already written
	clockUs         int64 // the server clock when the next command of the batch starts
	softSinceMs     int64 // when the pending output first exceeded the soft limit
	wantWrite       bool
	writeQueued     bool       // event-loop mode: in its loop's writes, flushed at the end of the cycle
	held            [][]byte   // event-loop mode: a command held back by CLIENT PAUSE
	loop            *eventLoop // event-loop mode: the loop that owns the connection
	srv             *Server
	push            pushState    // Pub/Sub messages and invalidations (pubsub.go)
	block           blockedState // a parked blocking command (blocking.go)
	isBlocked       atomic.Bool  // block.on, for the owner and CLIENT LIST
	parked          bool         // event-loop mode: input not read while blocked
	pauseCounted    bool         // counted in blocked_clients while CLIENT PAUSE holds it (notePaused)
	pending         [][][]byte   // goroutine mode: commands read while blocked
	pushSoftSince   int64        // when queued messages first exceeded the soft limit
	multi           multiState
	killed          atomic.Bool
	idleShrink      atomic.Bool // goroutine mode: the idle reaper asks it to give its buffers back
	rd              *resp.Reader
	w               resp.Writer
	ctx             command.Ctx
	lastInteraction atomic.Int64                 // ms, read by the idle reaper
	lastCmd         atomic.Pointer[command.Spec] // read by CLIENT LIST
	mem             clientMem                    // published memory figures (clientmem.go)
	netIn, netOut   int64
	pushed          bool // the reply buffer holds out-of-band messages (resetReplyBuf)
	cmds            int64
	// replication (repl.go): set once the connection sent SYNC/PSYNC
	replica           *repl.Link
	pendingListenPort int64 // REPLCONF listening-port before SYNC
	woff              int64 // the stream offset a WAIT waits for
	// replySeq is the unit the client's output waits for when a reply
	// barrier is set (barrier.go); 0: none
	replySeq atomic.Uint64
}

// maxBatch bounds how many pipelined commands one connection runs per hold of the
// engine lock, and maxReplyBatch how many reply bytes it buffers before flushing,
// so one client's deep pipeline cannot starve the others or grow memory unbounded.
const (
	maxBatch      = 1024
	maxReplyBatch = 64 << 10
)

// newClient builds the state of a connection in goroutine mode.
func (s *Server) newClient(conn net.Conn) *client {
	cl := s.initClient(conn.RemoteAddr(), conn.LocalAddr(), readSource(conn))
	cl.conn = conn
	cl.rd.SetPool(&s.readBufs) // given back when idle (dropIdleBuffers)
	if tc, ok := conn.(*net.TCPConn); ok {
		if ka := s.cfg.Int("tcp-keepalive"); ka > 0 {
			_ = tc.SetKeepAlive(true)
			_ = tc.SetKeepAlivePeriod(secondsDuration(ka))
		}
		_ = tc.SetNoDelay(true)
	}
	return cl
}

// initClient builds the transport-neutral state of a new connection reading from rd.
func (s *Server) initClient(raddr, laddr net.Addr, rd io.Reader) *client {
	cl := &client{fd: -1, raddr: raddr, srv: s}
	cl.ID = s.nextID.Add(1)
	cl.Addr = raddr.String()
	cl.LAddr = laddr.String()
	cl.Proto = 2
	cl.User = "default"
	cl.Authenticated = s.cfg.String("requirepass") == ""
	cl.Multi = -1
	cl.CreatedMs = s.clock.NowMs()
	cl.lastInteraction.Store(cl.CreatedMs)
	cl.rd = resp.NewReader(rd, s.limits)
	cl.rd.SetUnauthenticated(!cl.Authenticated)
	cl.w.Proto = 2
	cl.ctx = command.Ctx{W: &cl.w, Client: &cl.Client, KS: s.ks, Srv: s, Rand: s.eng.Rand}
	return cl
}

// kill disconnects the client from any goroutine: the connection's owner (its
// goroutine or event loop) sees the socket fail and cleans up. Call it with
// Server.mu held and only for a client still in Server.clients (the event loop
// closes a socket only after taking it out of the registry).
func (cl *client) kill() {
	cl.killed.Store(true)
	if cl.conn != nil {
		_ = cl.conn.Close()
		return
	}
	shutdownFD(cl.fd)
}

// serve runs one connection in goroutine mode: read a command (blocking), then run it and every
// further command already buffered under one hold of the engine lock, appending
// the replies into one buffer, and flush once (docs/ARCHITECTURE.md §1).
func (s *Server) serve(cl *client) {
	defer s.wg.Done()
	defer s.dropClient(cl)
	for {
		var argv [][]byte
		var err error
		if len(cl.pending) > 0 && !cl.isBlocked.Load() {
			argv, cl.pending = cl.pending[0], cl.pending[1:]
		} else {
			argv, err = cl.rd.ReadCommand()
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					// woken to deliver messages or a blocked command's reply,
					// or to give an idle client's buffers back
					_ = cl.conn.SetReadDeadline(time.Time{})
					if !s.flush(cl) {
						return
					}
					if cl.idleShrink.Swap(false) {
						s.dropIdleBuffers(cl)
					}
					continue
				}
				s.readFailed(cl, err)
				return
			}
			if cl.isBlocked.Load() || len(cl.pending) > 0 {
				// parked by a blocking command: keep reading (to see a hang-up)
				// but run nothing until it is released
				cl.pending = append(cl.pending, copyArgv(argv))
				continue
			}
		}
		cl.clockUs = s.clock.NowUs()
		cl.lastInteraction.Store(cl.clockUs / 1000)
		if st := s.lockOrBusy(); st != nil {
			// a script is busy and lent the lock: answer this batch with BUSY
			for {
				s.process(cl, argv, st)
				var ok bool
				if argv, ok, err = cl.rd.TryCommand(); !ok || err != nil || cl.CloseAfterReply {
					break
				}
			}
			s.eng.Unlock()
			if !s.flush(cl) || cl.CloseAfterReply || err != nil {
				if err != nil {
					s.readFailed(cl, err)
				}
				return
			}
			continue
		}
		for n := 0; ; n++ {
			s.dispatch(cl, argv)
			if cl.CloseAfterReply || n >= maxBatch || len(cl.w.Buf) >= maxReplyBatch || cl.isBlocked.Load() || cl.killed.Load() {
				break
			}
			if len(cl.pending) > 0 {
				argv, cl.pending = cl.pending[0], cl.pending[1:]
				continue
			}
			var ok bool
			argv, ok, err = cl.rd.TryCommand()
			if err != nil {
				s.eng.Unlock()
				s.flush(cl)
				s.readFailed(cl, err)
				return
			}
			if !ok {
				break
			}
		}
		s.eng.Unlock()
		if !s.flush(cl) || cl.CloseAfterReply {
			return
		}
		s.publishMem(cl)
	}
}

// idleReplyMs is how long a client goes without a command before it gives
// its reply buffer back (event loops: sweepIdle; goroutine mode: the idle
// reaper wakes the client, dropIdleBuffers), and in goroutine mode its read
// buffer too.
const idleReplyMs = 2000

// dropIdleBuffers gives back a goroutine-mode client's buffers once it has
// been idle for idleReplyMs: its reply buffer, if nothing is left to write,
// and its read buffer, if no request is partly read, as Redis's clientsCron
// frees an idle client's query buffer (Redis 7.0) and shrinks its reply
// buffer. Its goroutine calls it, woken by the idle reaper. The next read
// waits for input without a buffer (resp.ReadyWaiter) and takes one from the
// pool; an active client keeps its buffer, so the wait costs a system call
// only once an idle period.
func (s *Server) dropIdleBuffers(cl *client) {
	nowMs := s.clock.NowMs()
	if nowMs-cl.lastInteraction.Load() < idleReplyMs {
		return
	}
	cl.rd.Release() // into the pool: still live, nothing freed
	s.noteReleased(cl.dropIdleReply(nowMs))
	s.publishMem(cl)
}

// dropIdleReply drops cl's reply buffer if cl has been idle for idleReplyMs
// with nothing left to write, and returns the bytes it gave back. Only cl's
// owner (its loop or goroutine) calls it.
func (cl *client) dropIdleReply(nowMs int64) int64 {
	if cap(cl.w.Buf) == 0 || len(cl.w.Buf) > 0 || cl.writeQueued || nowMs-cl.lastInteraction.Load() < idleReplyMs {
		return 0
	}
	n := int64(cap(cl.w.Buf))
	cl.w.Buf = nil
	return n
}

// noteReleased counts n bytes of dropped client buffers as freed in
// used_memory at once (mem.released), as Redis's used_memory drops when it
// frees them, not at the next GC.
func (s *Server) noteReleased(n int64) {
	if n > 0 {
		s.eng.Lock()
		s.mem.released += n
		s.eng.Unlock()
	}
}

// readFailed handles a reader error: a protocol error gets Redis's reply, then
// the connection is closed (as Redis does); anything else just closes.
func (s *Server) readFailed(cl *client, err error) {
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		s.log.Debug("protocol error", "client", cl.Addr, "err", pe.Msg)
		cl.w.Error("ERR " + pe.Msg)
		s.flush(cl)
		return
	}
	if errors.Is(err, resp.ErrQueryBufferLimit) {
		s.stats.queryBufLimitDisconnects.Add(1)
		s.log.Warn("closing client that reached max query buffer length", "client", cl.Addr)
	}
}

// flush writes the reply buffer (and the queued messages); false when the
// connection failed.
func (s *Server) flush(cl *client) bool {
	cl.drainPush()
	if s.replyHeld(cl) {
		if !s.waitForBarrier(cl) {
			return false
		}
		cl.drainPush()
	}
	if len(cl.w.Buf) == 0 {
		return true
	}
	if s.overOutputLimit(cl, len(cl.w.Buf)) {
		cl.w.Buf = cl.w.Buf[:0]
		return false
	}
	n, err := cl.conn.Write(cl.w.Buf)
	s.stats.writes.Add(1)
	cl.netOut += int64(n)
	s.stats.netOutput.Add(int64(n))
	cl.resetReplyBuf()
	return err == nil
}

// resetReplyBuf empties the reply buffer once all of it was written. It is
// kept for the next replies up to 1 MiB: a client that asks for big replies
// (LRANGE of hundreds of elements, pipelines) usually asks again, and growing
// a fresh buffer for every batch cost LRANGE_600 -P 16 its p99 (38 ms against
// 10). A buffer that held out-of-band messages (drainPush) and grew past
// Redis's 16 KiB reply chunk is given back: the client did not ask for them,
// and a burst must not stay live. Kept, it counted in used_memory: after an
// eviction, 10 tracking clients held about 100 KB each of invalidations
// already sent, and the next eviction pass took keys for them, which sent
// more (Redis's #8069 feedback loop).
func (cl *client) resetReplyBuf() {
	pushed := cl.pushed
	cl.pushed = false
	if c := cap(cl.w.Buf); c > 1<<20 || (pushed && c > replyChunk) {
		cl.w.Buf = nil
	} else {
		cl.w.Buf = cl.w.Buf[:0]
	}
}

func (s *Server) dropClient(cl *client) {
	s.eng.Lock()
	s.unwatchAll(cl)
	s.releaseClient(cl)
	s.unsubscribeAll(cl)
	s.dropBlocked(cl)
	s.trk.Disable(cl)
	s.dropReplica(cl)
	s.dropWaiter(cl)
	s.eng.Unlock()
	// leave the registry before the socket closes, as the event loop does: a
	// client whose connection is seen closed is gone for CLIENT LIST and for
	// tracking redirection (tracking-redir-broken)
	s.mu.Lock()
	delete(s.clients, cl.ID)
	s.mu.Unlock()
	_ = cl.conn.Close()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// copyArgv copies a command out of the reader's buffer.
func copyArgv(argv [][]byte) [][]byte {
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		cp[i] = append([]byte(nil), a...)
	}
	return cp
}
