package server

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/command"
)

// cmdStat is one command's INFO commandstats line.
type cmdStat struct {
	calls, usec, rejected, failed int64
}

// dispatch serves one command of a client: process, with no script busy.
func (s *Server) dispatch(cl *client, argv [][]byte) bool { return s.process(cl, argv, nil) }

// process serves one command of a client as its own execution unit (Redis's
// processCommand and what follows call): the messages queued for the client
// first, then admission (admit), then the command itself through call, or its
// error, or QUEUED; its reply kept or dropped as CLIENT REPLY says; then what
// follows the unit: eviction after a command that changed maxmemory, the
// client's own invalidations and messages after its reply, and the blocked
// clients its writes serve. busy is the running script while a script is busy
// (only allow-busy commands run then, and nothing that follows a unit).
// It is called with the engine lock held. It returns false, having done
// nothing, when CLIENT PAUSE holds the command back and the caller must not
// block (event-loop mode): the caller keeps argv and calls again later.
func (s *Server) process(cl *client, argv [][]byte, busy *scriptState) bool {
	cl.drainPush()         // messages published before this command come before its reply
	if cl.replica != nil { // a replica's link carries no replies
		defer s.replicaReplied(cl, cl.w.Len())
	}
	o := fromClient
	if busy != nil {
		o = fromBusy
	}
	spec, v, refusal := s.admitClient(o, cl, argv, busy) // admit, for a client
	for v == held && s.blockOnPause {
		s.waitWhilePaused(cl, spec, argv) // goroutine mode: the connection sleeps
		spec, v, refusal = s.admitClient(o, cl, argv, busy)
	}
	switch v {
	case held:
		return false
	case dropped:
		return true // client eviction took cl itself: its command does not run
	}
	c := &cl.ctx
	mark := len(cl.w.Buf)
	if cl.Reply == command.ReplySkip {
		cl.Reply = command.ReplySkipping // this command's reply (finishReply)
	}
	c.ErrCode, c.Dirty, c.Argv = "", 0, argv
	c.Own = cl.nc.Reader().OwnedArgs(argv) // 0 unless argv is the reader's own request
	cl.cmds++
	switch v {
	case refused:
		c.Error(refusal) // counted by admit
		if cl.InMulti() {
			cl.multi.dirty = true // a refused command makes EXEC abort (flagTransaction)
			if spec != nil && spec.RunsQueue() {
				// a refused EXEC ends the transaction (Redis's execCommandAbort)
				msg := strings.TrimPrefix(refusal, "ERR ")
				cl.w.Truncate(mark)
				c.Error("EXECABORT Transaction discarded because of: " + msg)
				discardQueue(cl)
				s.unwatchAll(cl)
				if len(s.obs.monitors) > 0 {
					s.feedMonitors(fromClient, c) // the transaction's end (execCommandAbort)
				}
			}
		}
		s.finishReply(cl, mark)
		if o == fromClient {
			s.trackAfterCommand(cl, spec)
		}
		return true
	case queued:
		cl.queue(spec, argv, s.effectiveFlags(cl, spec, argv))
		c.W.SimpleString("QUEUED")
		s.finishReply(cl, mark)
		s.trackAfterCommand(cl, spec)
		return true
	}
	if o == fromBusy {
		c.DB, c.Now = s.ks.DBs[cl.DB], cl.clockUs/1000
		prev := s.cur
		s.cur = cl
		cl.clockUs = s.call(fromBusy, c, spec, cl.clockUs)
		s.cur = prev
		s.finishReply(cl, mark)
		return true
	}
	// one clock read per command: a command starts when the previous one of the
	// batch ended (cl.clockUs, set by the caller at the start of the batch)
	s.trk.BeforeExec(cl, &cl.Client)
	cl.push.running = true // messages for cl from its own command follow its reply
	c.DB, c.Now = s.ks.DBs[cl.DB], cl.clockUs/1000
	s.cur = cl
	var seqBefore uint64
	if s.barrier.on {
		seqBefore = s.barrier.seq.Load()
	}
	cl.clockUs = s.call(fromClient, c, spec, cl.clockUs)
	s.cur = nil
	cl.push.running = false
	if s.barrier.on { // without a barrier nothing is stamped (a test, not a call)
		s.noteReplySeq(cl, c, spec, seqBefore)
	}
	if s.mem.evictAfter {
		s.evictAfterCommand()
	}
	if c.ReplyLast && spec.Flags&command.PushReply == 0 {
		// the messages for cl (its own invalidations) go before the reply
		reply := cl.w.Cut(mark)
		s.trackAfterCommand(cl, spec)
		cl.flushSelfPush()
		mark = len(cl.w.Buf)
		cl.w.Paste(reply)
	}
	if spec.Flags&command.PushReply == 0 {
		s.finishReply(cl, mark)
	} else {
		// the (un)subscribe confirmations are pushes: CLIENT REPLY OFF|SKIP
		// keeps them, as Redis sends them with CLIENT_PUSHING set
		cl.endSkip()
	}
	// invalidations of the keys it wrote, messages the command produced for its
	// own client: they follow its reply and, being pushes, survive CLIENT REPLY
	s.trackAfterCommand(cl, spec)
	cl.flushSelfPush()
	if len(s.blocked.ready) > 0 { // the unit's writes may serve blocked clients
		s.serveReady()
	}
	// still unauthenticated after this command: keep the reader's strict limits
	cl.nc.Reader().SetUnauthenticated(!cl.Authenticated)
	return true
}

// specFor resolves the command (and subcommand) argv names, or nil.
func (s *Server) specFor(argv [][]byte) *command.Spec {
	spec := s.table.Lookup(argv[0])
	if spec != nil && len(spec.Subs) > 0 && len(argv) >= 2 {
		return spec.Sub(argv[1])
	}
	return spec
}

// endSkip ends CLIENT REPLY SKIP's hold on the command just served and
// reports whether its reply is skipped: yes unless the command turned replies
// ON (Redis's CLIENT REPLY ON clears the skip before it replies OK) or OFF.
func (cl *client) endSkip() bool {
	if cl.Reply == command.ReplySkipping {
		cl.Reply = command.ReplyOn
		return true
	}
	return false
}

// finishReply drops the reply just written when CLIENT REPLY OFF or SKIP says so.
func (s *Server) finishReply(cl *client, mark int) {
	if cl.endSkip() || cl.Reply == command.ReplyOff {
		cl.w.Truncate(mark)
	}
}

// waitWhilePaused sleeps while CLIENT PAUSE holds back cl's command spec
// (goroutine mode), with the engine lock released.
func (s *Server) waitWhilePaused(cl *client, spec *command.Spec, argv [][]byte) {
	s.notePaused(cl, true)
	for s.pausedFor(cl, spec, argv) {
		s.eng.Unlock()
		time.Sleep(5 * time.Millisecond)
		s.eng.Lock()
	}
	s.notePaused(cl, false)
	cl.clockUs = s.clock.NowUs() // the command starts now, not before the pause
}

// notePaused counts a client CLIENT PAUSE holds back in blocked_clients, as
// Redis counts its postponed clients (BLOCKED_POSTPONE). The client's owner
// calls it; on is whether it is held now.
func (s *Server) notePaused(cl *client, on bool) {
	if cl.pauseCounted == on {
		return
	}
	cl.pauseCounted = on
	if on {
		s.stats.blockedClients.Add(1)
	} else {
		s.stats.blockedClients.Add(-1)
	}
}

// isLocal reports whether a client connects from this machine (loopback or a unix socket).
func isLocal(a net.Addr) bool {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	return true
}

// replicaReplied drops a replica that a command of its own made reply (any
// output past mark, in bytes): the reply would land in its replication
// stream, so it is not written. Redis logs and frees it the same way
// (_addReplyToBufferOrList's logInvalidUseAndFreeClientAsync; an error also
// gets afterErrorReply's CRITICAL line). REPLCONF ACK replies nothing.
// Engine lock held.
func (s *Server) replicaReplied(cl *client, mark int) {
	n := cl.w.Len() - mark // the reply's bytes
	if n <= 0 {
		return
	}
	name := "<unknown>"
	if spec := cl.lastCmd.Load(); spec != nil {
		name = spec.FullName()
	}
	if n <= len(cl.w.Buf) { // all of it in the plain buffer (a reply of this size is)
		reply := cl.w.Buf[len(cl.w.Buf)-n:]
		if reply[0] == '-' {
			msg := strings.TrimRight(string(reply[1:min(len(reply), 4096)]), "\r\n")
			s.log.Warn(fmt.Sprintf("== CRITICAL == This master is sending an error to its replica: '%s' after processing the command '%s'", msg, name))
		}
		cl.w.Truncate(len(cl.w.Buf) - n)
	}
	s.log.Warn(fmt.Sprintf("Replica generated a reply to command '%s', disconnecting it: %s", name, s.appendClientLine(nil, cl)))
	cl.kill()
}
