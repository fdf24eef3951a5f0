package server

import (
	"strings"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
)

// verdict is admit's answer.
type verdict uint8

const (
	admitted verdict = iota // run it now (call)
	refused                 // refused, with the error text admit returns
	queued                  // inside MULTI: queue it for EXEC
	held                    // CLIENT PAUSE holds it back: run it when the pause ends
	dropped                 // client eviction took the client itself: nothing runs
)

// admit is the one admission gate: everything Redis's processCommand decides
// for a client's command (fromClient, fromBusy) and scriptCall for a script's
// (fromScript), in their order. It looks argv up and returns the command (nil
// when unknown), the verdict and, when refused, the error text: a client's
// error reply ("ERR unknown command ..."), or for a script the text scriptCall
// raises ("-" and a whole error, or a message the script API prefixes). A
// refusal is counted here as Redis's rejectCommand counts it (the command's
// rejected_calls, the error in errorstats); a refused command in MULTI flags
// the transaction in process. busy is the running script when a script is
// busy (fromBusy). Engine lock held (lent, when busy).
//
// The commands of EXEC's queue and a blocked client's command run again are
// not admitted again (Redis's execCommand and blocked-client replies neither).
func (s *Server) admit(o origin, cl *client, argv [][]byte, busy *scriptState) (*command.Spec, verdict, string) {
	switch o {
	case fromScript:
		return s.admitScript(argv)
	case fromApply:
		return s.admitApply(argv)
	}
	return s.admitClient(o, cl, argv, busy)
}

// admitClient is admit for a client's command (fromClient, fromBusy):
// processCommand's checks. process calls it directly.
func (s *Server) admitClient(o origin, cl *client, argv [][]byte, busy *scriptState) (*command.Spec, verdict, string) {
	spec := s.table.Lookup(argv[0]) // lookup's common case, inline: a command without subcommands
	if spec == nil || len(spec.Subs) > 0 {
		var unknown string
		if spec, unknown = s.lookupIn(argv, spec); spec == nil {
			return nil, refused, unknown
		}
	}
	cl.lastCmd.Store(spec)
	switch {
	case !command.CheckArity(spec.Arity, len(argv)) || spec.Run == nil:
		return spec, refused, s.refuse(spec, command.ErrArity(spec.FullName()))
	case spec.Flags&command.Protected != 0 && s.protectedDenied(cl, spec.Gate):
		return spec, refused, s.refuse(spec, spec.Gate.Refusal())
	case !cl.Authenticated && spec.Flags&command.NoAuth == 0 && s.acl.RequireAuth():
		return spec, refused, s.refuse(spec, command.ErrNoAuth.Text())
	case cl.InMulti() && spec.Flags&command.NoMulti != 0:
		return spec, refused, s.refuse(spec, "ERR Command not allowed inside a transaction")
	}
	if u := cl.User; u != nil && !u.AllPerms() {
		ctx := acl.CtxToplevel
		if cl.InMulti() {
			ctx = acl.CtxMulti
		}
		if e := s.aclCheck(cl, spec, argv, ctx); e != "" {
			return spec, refused, s.refuse(spec, e)
		}
	}
	flags := s.effectiveFlags(cl, spec, argv) // after the arity check, as Redis's getCommandFlags
	if o == fromClient {
		if s.hot.memClients.Load() != 0 && s.evictClientsFirst(cl) { // maxmemory-clients 0: no client eviction
			return spec, dropped, ""
		}
		if s.rejectOnOOM(cl, spec, flags) {
			return spec, refused, s.refuse(spec, errOOM)
		}
	}
	switch {
	case cl.replica != nil && flags&(command.Write|command.ReadOnly|command.MayReplicate) != 0:
		// the replication link is not a client's (processCommand: a
		// replica is exempt from CLIENT PAUSE, so it must not reach the
		// keyspace)
		return spec, refused, s.refuse(spec, "ERR Replica can't interact with the keyspace")
	case flags&(command.Write|command.HealthCheck) != 0 && s.diskError() != "":
		return spec, refused, s.refuse(spec, s.diskError())
	case flags&command.Write != 0 && !s.goodReplicas():
		return spec, refused, s.refuse(spec, errNoReplicas)
	case s.replicaFlag.Load() && s.replicaRefusal(flags) != "":
		return spec, refused, s.refuse(spec, s.replicaRefusal(flags))
	case cl.Subscribed && cl.Proto == 2 && flags&command.SubscribedOK == 0:
		return spec, refused, s.refuse(spec, "ERR Can't execute '"+spec.FullName()+
			"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	case flags&command.Loading == 0 && s.rdb.Loading():
		return spec, refused, s.refuse(spec, errLoading)
	case flags&command.NoAsyncLoading != 0 && s.rdb.AsyncLoading():
		return spec, refused, s.refuse(spec, errLoading)
	case busy != nil && flags&command.AllowBusy == 0:
		return spec, refused, s.refuse(spec, busyError(busy))
	case o == fromClient && s.pause.untilMs.Load() != 0 && s.pausedFor(cl, spec, argv): // pausedFor checks the deadline
		return spec, held, ""
	case cl.InMulti() && flags&command.RunsInMulti == 0:
		return spec, queued, ""
	}
	return spec, admitted, ""
}

// lookup finds argv's command (or subcommand); nil and the refusal, counted,
// when there is none.
func (s *Server) lookup(argv [][]byte) (*command.Spec, string) {
	return s.lookupIn(argv, s.table.Lookup(argv[0]))
}

// lookupIn is lookup given the table's entry for argv[0] (nil: none).
func (s *Server) lookupIn(argv [][]byte, spec *command.Spec) (*command.Spec, string) {
	if spec == nil {
		return nil, s.refuse(nil, command.ErrUnknownCommand(argv))
	}
	if len(spec.Subs) > 0 && len(argv) >= 2 {
		sub := spec.Sub(argv[1])
		if sub == nil {
			return nil, s.refuse(nil, command.ErrUnknownSubcommand(argv[1], string(argv[0])))
		}
		spec = sub
	}
	return spec, ""
}

// admitScript is Redis's scriptCall checks for a command a script calls.
func (s *Server) admitScript(argv [][]byte) (*command.Spec, verdict, string) {
	sc := s.scripts
	st := sc.cur.Load()
	spec := s.specFor(argv)
	switch {
	case spec == nil || spec.Run == nil:
		return nil, refused, s.refuseScript(nil, "Unknown Redis command called from script")
	case !command.CheckArity(spec.Arity, len(argv)):
		return spec, refused, s.refuseScript(spec, "Wrong number of args calling Redis command from script")
	case spec.Flags&command.NoScript != 0 && !sc.allowDenied.Load():
		return spec, refused, s.refuseScript(spec, "This Redis command is not allowed from script")
	}
	// scriptVerifyACL: the caller's user
	if st != nil && st.caller != nil {
		if r, msg := s.aclDeny(st.caller, spec, argv, acl.CtxLua); r != acl.OK {
			return spec, refused, s.refuseScript(spec, "ACL failure in script: "+msg)
		}
	}
	// scriptVerifyWriteCommandAllow: a read-only script runs no command that
	// writes or may replicate (so that it may run during CLIENT PAUSE WRITE)
	if st != nil && st.readOnly && spec.Flags&(command.Write|command.MayReplicate) != 0 {
		return spec, refused, s.refuseScript(spec, "Write commands are not allowed from read-only scripts.")
	}
	if spec.Flags&command.Write != 0 {
		switch {
		case s.diskError() != "":
			return spec, refused, s.refuseScript(spec, "-"+s.diskError())
		case !s.goodReplicas():
			return spec, refused, s.refuseScript(spec, "-"+errNoReplicas)
		}
	}
	// scriptVerifyOOM: a denyoom command is refused while the script has not
	// written yet, when the server was out of memory as the script started
	if spec.Flags&command.DenyOOM != 0 && st != nil && !st.allowOOM && !st.wrote.Load() && s.preCommandOOM && s.maxmemory() > 0 {
		return spec, refused, s.refuseScript(spec, "-"+errOOM)
	}
	return spec, admitted, ""
}

// effectiveFlags are the flags admission judges (Redis's getCommandFlags):
// EXEC's include those of the commands it queued (c->mstate.cmd_flags); a
// script command's follow the script's flags (scriptFlags).
func (s *Server) effectiveFlags(cl *client, spec *command.Spec, argv [][]byte) command.Flag {
	if spec.Flags&command.RunsCommands == 0 { // inlined: most commands are their flags
		return spec.Flags
	}
	return s.unitFlags(cl, spec, argv)
}

// unitFlags is effectiveFlags for a command that runs others.
func (s *Server) unitFlags(cl *client, spec *command.Spec, argv [][]byte) command.Flag {
	switch {
	case spec.RunsQueue():
		return spec.Flags | cl.multi.flags&(command.Write|command.DenyOOM|command.MayReplicate)
	case spec.ScriptArg != command.NoScriptArg:
		return s.scripts.commandFlags(spec, argv)
	}
	return spec.Flags
}

// errLoading is Redis's shared.loadingerr: a command not allowed while the
// snapshot loads at start-up.
const errLoading = "LOADING Redis is loading the dataset in memory"

// refuse counts a refusal of a client's command, text its error reply, as
// Redis's rejectCommand does (rejected_calls of the command, when known; the
// error's first word in errorstats) and returns text.
func (s *Server) refuse(spec *command.Spec, text string) string {
	return s.refuseAs(spec, firstWord(text), text)
}

// refuseScript is refuse for scriptCall's texts: a whole error after "-",
// or a message the script API makes an ERR.
func (s *Server) refuseScript(spec *command.Spec, text string) string {
	code := "ERR"
	if strings.HasPrefix(text, "-") {
		code = firstWord(text[1:])
	}
	return s.refuseAs(spec, code, text)
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

func (s *Server) refuseAs(spec *command.Spec, code, text string) string {
	s.countError(code)
	if spec != nil {
		s.cmdStats[spec.ID].rejected++
	}
	return text
}

// protectedDenied applies a protected command's gate (DEBUG:
// enable-debug-command, MODULE LOAD/LOADEX/UNLOAD: enable-module-command):
// "yes", or "local" for a loopback client.
func (s *Server) protectedDenied(cl *client, g *command.Gate) bool {
	switch s.cfg.String(g.Param) {
	case "yes":
		return false
	case "local":
		return !isLocal(cl.raddr)
	}
	return true
}

const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// goodReplicas is Redis's checkGoodReplicasStatus: with min-replicas-to-write
// and min-replicas-max-lag set, writes need that many replicas whose last
// acknowledgement (or attachment) is at most max-lag seconds old. Redis
// counts them once a second (refreshGoodSlavesCount); HotKV counts them when
// a write asks, which is the same rule without the second's delay.
func (s *Server) goodReplicas() bool {
	return s.hot.minReplicas.Load() == 0 || s.enoughGoodReplicas() // inlined: off by default
}

// enoughGoodReplicas counts the good replicas (goodReplicas, when
// min-replicas-to-write is set).
func (s *Server) enoughGoodReplicas() bool {
	need, maxLag := s.hot.minReplicas.Load(), s.cfg.Int("min-replicas-max-lag")
	if need == 0 || s.replicaFlag.Load() { // a replica: its master decides (Redis checks masters only)
		return true // off, or min-replicas-max-lag 0
	}
	return s.repl.Good(s.clock.NowMs(), maxLag) >= need
}

// hotParams mirror the parameters whose defaults switch a check of every
// command off (min-replicas-to-write, maxmemory, maxmemory-clients), kept
// current by CONFIG SET's hooks: with the defaults, admission pays a load
// and a compare for each instead of a parameter read and a call. They are
// the server's only reading of maxmemory and maxmemory-clients.
type hotParams struct {
	minReplicas atomic.Int64 // min-replicas-to-write, or 0 when min-replicas-max-lag is 0
	maxmemory   atomic.Int64
	memClients  atomic.Int64 // maxmemory-clients
}

// wireHotParams fills s.hot and keeps it current. It runs before any other
// hook of these parameters is registered, so theirs see the new values.
func (s *Server) wireHotParams() {
	load := func() {
		need := s.cfg.Int("min-replicas-to-write")
		if s.cfg.Int("min-replicas-max-lag") == 0 {
			need = 0
		}
		s.hot.minReplicas.Store(need)
		s.hot.maxmemory.Store(s.cfg.Int("maxmemory"))
		s.hot.memClients.Store(s.cfg.Int("maxmemory-clients"))
	}
	load()
	for _, name := range []string{"min-replicas-to-write", "min-replicas-max-lag", "maxmemory", "maxmemory-clients"} {
		s.cfg.OnChange(name, func(string) error { load(); return nil })
	}
}
