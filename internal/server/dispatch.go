package server

import (
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/command"
)

// cmdStat is one command's INFO commandstats line.
type cmdStat struct {
	calls, usec, rejected, failed int64
}

// dispatch is the policy gate in front of every handler (Redis's processCommand):
// command lookup, subcommand lookup, arity, authentication and client pause, in
// Redis's order; then it runs the handler with a frozen now and records stats.
// It is called with the engine lock held. It returns false, having done nothing,
// when CLIENT PAUSE holds the command back and the caller must not block
// (event-loop mode): the caller keeps argv and calls again later.
func (s *Server) dispatch(cl *client, argv [][]byte) bool {
	if !s.blockOnPause && s.pauseActive() && s.pausedFor(s.pauseSpec(cl, argv)) {
		return false
	}
	c := &cl.ctx
	cl.drainPush() // messages published before this command come before its reply
	mark := len(cl.w.Buf)
	skipReply := cl.Reply == command.ReplySkip
	if skipReply {
		cl.Reply = command.ReplyOn
	}
	c.ErrCode, c.Dirty, c.Argv = "", 0, argv
	cl.cmds++

	// a command that is refused inside MULTI makes EXEC abort (flagTransaction)
	reject := func(spec *command.Spec) bool {
		if spec != nil {
			s.cmdStats[spec.ID].rejected++
		}
		s.countError(c.ErrCode)
		if cl.InMulti() {
			cl.multi.dirty = true
			if spec != nil && spec.Name == "exec" {
				// a refused EXEC ends the transaction (Redis's execCommandAbort)
				msg := string(cl.w.Buf[mark+1 : len(cl.w.Buf)-2])
				msg = strings.TrimPrefix(msg, "ERR ")
				cl.w.Buf = cl.w.Buf[:mark]
				c.Error("EXECABORT Transaction discarded because of: " + msg)
				discardQueue(cl)
				s.unwatchAll(cl)
			}
		}
		s.finishReply(cl, mark, skipReply)
		s.trackAfterCommand(cl, spec)
		return true
	}
	spec := s.table.Lookup(argv[0])
	switch {
	case spec == nil:
		c.Error(command.ErrUnknownCommand(argv))
		return reject(nil)
	case len(spec.Subs) > 0 && len(argv) >= 2:
		sub := spec.Sub(argv[1])
		if sub == nil {
			c.Error(command.ErrUnknownSubcommand(argv[1], string(argv[0])))
			return reject(nil)
		}
		spec = sub
	}
	cl.lastCmd.Store(spec)
	switch {
	case !command.CheckArity(spec.Arity, len(argv)) || (spec.Run == nil):
		c.Error(command.ErrArity(spec.FullName()))
	case !cl.Authenticated && spec.Flags&command.NoAuth == 0:
		c.Err(command.ErrNoAuth)
	case spec.Name == "debug" && !s.debugAllowed(cl):
		c.Error("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", " +
			"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
			"and then restart the server.")
	case cl.InMulti() && spec.Flags&command.NoMulti != 0:
		c.Error("ERR Command not allowed inside a transaction")
	case s.evictClientsFirst(cl):
		return true // client eviction took cl itself: its command does not run
	case s.rejectOnOOM(cl, spec, &mark):
		c.Error(errOOM)
	case (spec.Flags&command.Write != 0 || (spec.Name == "exec" && cl.multi.flags&command.Write != 0) || spec.Name == "ping") &&
		s.writesDeniedByDiskError():
		c.Error(errMisconf)
	case (spec.Flags&command.Write != 0 || (spec.Name == "exec" && cl.multi.flags&command.Write != 0)) && !s.goodReplicas():
		c.Error(errNoReplicas)
	case cl.Subscribed && cl.Proto == 2 && !allowedWhileSubscribed(spec):
		c.Error("ERR Can't execute '" + spec.FullName() + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	}
	if c.ErrCode != "" {
		return reject(spec)
	}
	if cl.InMulti() && !runsInMulti(spec) {
		cl.queue(spec, argv)
		c.W.SimpleString("QUEUED")
		s.finishReply(cl, mark, skipReply)
		s.trackAfterCommand(cl, spec)
		return true
	}
	if s.blockOnPause {
		s.waitIfPaused(cl, spec)
	}
	// one clock read per command: a command starts when the previous one of the
	// batch ended (cl.clockUs, set by the caller at the start of the batch)
	s.trackBeforeExec(cl)
	s.execute(cl, spec, argv, cl.clockUs/1000)
	if s.mem.evictAfter {
		s.evictAfterCommand()
	}
	if !hasPushAsReply(spec) {
		// the (un)subscribe confirmations are pushes: CLIENT REPLY OFF|SKIP
		// keeps them, as Redis sends them with CLIENT_PUSHING set
		s.finishReply(cl, mark, skipReply)
	}
	// invalidations of the keys it wrote, messages the command produced for its
	// own client: they follow its reply and, being pushes, survive CLIENT REPLY
	s.trackAfterCommand(cl, spec)
	cl.flushSelfPush()
	if len(s.blocked.ready) > 0 { // the unit's writes may serve blocked clients
		s.serveReady()
	}
	if !cl.Authenticated {
		// still unauthenticated after this command: keep the reader's strict limits
		cl.rd.SetUnauthenticated(true)
	} else {
		cl.rd.SetUnauthenticated(false)
	}
	return true
}

// runsInMulti: the commands that run at once inside MULTI instead of being
// queued (Redis's processCommand list).
func runsInMulti(spec *command.Spec) bool {
	switch spec.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return spec.Parent() == nil
	}
	return false
}

// pauseSpec is the spec CLIENT PAUSE judges: for EXEC, a write if the queue
// holds one (Redis pauses such an EXEC in WRITE mode).
func (s *Server) pauseSpec(cl *client, argv [][]byte) *command.Spec {
	spec := s.specFor(argv)
	if spec != nil && spec.Name == "exec" && cl.multi.flags&command.Write != 0 {
		return s.table.Lookup([]byte("set"))
	}
	return spec
}

// execute runs one command with the frozen time nowMs and records its stats.
// Called with the engine lock held.
func (s *Server) execute(cl *client, spec *command.Spec, argv [][]byte, nowMs int64) {
	c := &cl.ctx
	c.Spec, c.Argv, c.ErrCode, c.Dirty, c.FailedNoStats = spec, argv, "", 0, false
	start := cl.clockUs
	c.Now = nowMs
	s.eng.BeginAt(c.Now)
	c.DB = s.ks.DBs[cl.DB]
	outer := !cl.push.running // EXEC runs its commands through execute too
	cl.push.running = true
	s.trackBeginCommand()
	off := s.repl.offset
	s.propBegin(c, spec)
	s.run(c, spec)
	s.propEnd(c, spec)
	if s.repl.offset != off && spec.Name != "wait" {
		cl.woff = s.repl.offset // what a WAIT of this client waits for (Redis's c->woff)
	}
	s.trackRemember(spec, argv)
	if outer {
		cl.push.running = false
	}
	end := s.clock.NowUs()
	cl.clockUs = end
	if cl.isBlocked.Load() {
		// a parked blocking command is counted once, when it is served or times
		// out (rerunBlocked), as Redis accounts it
		s.stats.dirty += int64(c.Dirty)
		return
	}
	st := &s.cmdStats[spec.ID]
	st.calls++
	st.usec += end - start
	s.recordLatency(spec.ID, end-start)
	s.stats.commands++
	s.stats.dirty += int64(c.Dirty)
	if c.ErrCode != "" {
		st.failed++
		s.countError(c.ErrCode)
	} else if c.FailedNoStats {
		st.failed++
	}
}

// specFor resolves the command (and subcommand) argv names, or nil.
func (s *Server) specFor(argv [][]byte) *command.Spec {
	spec := s.table.Lookup(argv[0])
	if spec != nil && len(spec.Subs) > 0 && len(argv) >= 2 {
		return spec.Sub(argv[1])
	}
	return spec
}

// hasPushAsReply reports the commands whose reply is the push confirmation of
// each channel (Redis's cmdHasPushAsReply).
func hasPushAsReply(spec *command.Spec) bool {
	switch spec.FullName() {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe":
		return true
	}
	return false
}

// finishReply drops the reply just written when CLIENT REPLY OFF or SKIP says so.
func (s *Server) finishReply(cl *client, mark int, skip bool) {
	if skip || cl.Reply == command.ReplyOff {
		cl.w.Buf = cl.w.Buf[:mark]
	}
}

func (s *Server) countError(code string) {
	s.stats.errorReplies++
	if len(s.errStats) < 128 || s.errStats[code] > 0 { // Redis caps errorstats at 128 kinds
		s.errStats[code]++
	}
}

// waitIfPaused blocks a paused client before it runs spec (CLIENT PAUSE), with the
// engine lock released while it waits.
func (s *Server) waitIfPaused(cl *client, spec *command.Spec) {
	waited := false
	for s.pausedFor(spec) {
		s.eng.Unlock()
		time.Sleep(5 * time.Millisecond)
		s.eng.Lock()
		waited = true
	}
	if waited {
		cl.clockUs = s.clock.NowUs() // the command starts now, not before the pause
	}
}

// debugAllowed applies enable-debug-command: "yes", or "local" for a loopback client.
func (s *Server) debugAllowed(cl *client) bool {
	switch s.cfg.String("enable-debug-command") {
	case "yes":
		return true
	case "local":
		return isLocal(cl.raddr)
	}
	return false
}

// isLocal reports whether a client connects from this machine (loopback or a unix socket).
func isLocal(a net.Addr) bool {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	return true
}

// run calls the handler. A panic in a handler is a HotKV bug: it is logged with its
// stack, the client gets an error in place of the partial reply, and the server
// and every other client go on (the engine lock stays held by the caller).
func (s *Server) run(c *command.Ctx, spec *command.Spec) {
	mark := len(c.W.Buf)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("command panicked: this is a HotKV bug, please report it",
				"command", spec.FullName(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.W.Buf = c.W.Buf[:mark]
			c.Error("ERR internal error in '" + spec.FullName() + "': the command was aborted")
		}
	}()
	spec.Run(c)
	if s.mem.settled { // the command reported used memory: its text is garbage
		s.forgetReportGarbage()
	}
}

const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// goodReplicas is Redis's checkGoodReplicasStatus: with min-replicas-to-write
// set, writes need that many replicas; HotKV has none yet.
func (s *Server) goodReplicas() bool {
	return s.minReplicasToWrite() == 0 || s.minReplicasMaxLag() == 0
}
