package server

import (
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/glob"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/script"
	"github.com/hotkv/hotkv/internal/script/lualib"
)

// scripting is the server's side of Lua scripting: the interpreter, the client
// that scripts' commands run as, and the state other clients see while a script
// runs (BUSY, SCRIPT KILL). Everything but cur is touched only under the engine
// lock.
type scripting struct {
	s      *Server
	vm     *script.VM
	client command.Client // the script client (Redis's lua_client)
	ctx    command.Ctx
	w      resp.Writer
	cur    atomic.Pointer[scriptState] // the running script, read by other clients
	// allowDenied is DEBUG SET-DISABLE-DENY-SCRIPTS
	allowDenied atomic.Bool
	depth       int
	// the running invocation (begin/end): its Run, reused by every call, and
	// where its reply starts in the caller's buffer
	runv               script.Run
	mark               int
	interruptCur       func() bool // interrupt(cur), made once
	busyReplyThreshold func() int64
}

// scriptState is one running script as other clients see it.
type scriptState struct {
	caller      *client
	startUs     int64
	eval        bool // EVAL (SCRIPT KILL) rather than FCALL (FUNCTION KILL)
	readOnly    bool
	wrote       atomic.Bool // SCRIPT_WRITE_DIRTY: the script ran a write command
	timedOut    atomic.Bool // past busy-reply-threshold: others get BUSY
	killReq     atomic.Bool // SCRIPT KILL / FUNCTION KILL / SHUTDOWN NOSAVE asked to stop
	nowMs       int64
	thresholdMs int64
	name        string   // the function's name (FUNCTION STATS)
	argv        [][]byte // the caller's command, copied (FUNCTION STATS)
	lastPollUs  int64
	allowOOM    bool // the script's allow-oom flag
}

// aclCheck is redis.acl_check_cmd: argv checked against the caller's user
// (luaRedisAclCheckCmdPermissionsCommand: the command must exist and have
// a valid number of arguments).
func (sc *scripting) aclCheck(argv [][]byte) (allowed bool, errText string) {
	s := sc.s
	spec := s.specFor(argv)
	switch {
	case spec == nil:
		return false, "Invalid command passed to redis.acl_check_cmd()"
	case !command.CheckArity(spec.Arity, len(argv)):
		return false, "Wrong number of args for redis.acl_check_cmd()"
	}
	st := sc.cur.Load()
	if st == nil || st.caller == nil || st.caller.User == nil {
		return true, ""
	}
	r, _ := st.caller.User.Check(s.acl.Commands().ByID(spec.ID), argv, &s.aclSc)
	return r == acl.OK, ""
}

func newScripting(s *Server) *scripting {
	sc := &scripting{s: s}
	sc.vm = script.NewVM(script.Options{
		Libs:        lualib.Open, // cjson, cmsgpack, bit, struct
		LibReadonly: lualib.IsReadonly,
		Version:     command.Version,
		ACLCheck:    sc.aclCheck,
		Log:         sc.Log,
	})
	// the script memory limit: half of maxmemory, so that a script stops
	// before the Go memory limit maxmemory sets (maxmemory.go) makes the
	// collector run back to back; 0 (no maxmemory): the default
	sc.vm.MemLimit = func() int64 { return s.hot.maxmemory.Load() / 2 }
	sc.client = command.Client{ID: -1, Name: "", Authenticated: true, Proto: 2, Multi: -1, Script: true, Flags: "S"}
	sc.ctx = command.Ctx{W: &sc.w, Client: &sc.client, KS: s.ks, Srv: s, Rand: s.eng.Rand, Locks: s.lockView()}
	sc.interruptCur = func() bool { return sc.interrupt(sc.cur.Load()) }
	sc.busyReplyThreshold = s.cfg.IntFunc("busy-reply-threshold")
	return sc
}

// Scripts is the Lua engine.
func (s *Server) Scripts() command.Scripting { return s.scripts }

// Load compiles body into the script cache.
func (sc *scripting) Load(body []byte) (string, string) {
	scr, errText := sc.vm.LoadBytes(body)
	if errText != "" {
		return "", errText
	}
	return scr.SHA, ""
}

func (sc *scripting) Exists(sha []byte) bool { return sc.vm.Lookup(string(sha)) != nil }

func (sc *scripting) Flush() int {
	n := sc.vm.Len()
	sc.vm.Flush()
	return n
}

// Redis's shared.slowevalerr / slowscripterr.
const (
	errBusyEval     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// Kill is SCRIPT KILL / FUNCTION KILL (Redis's scriptKill). It runs either from
// a client served while the script is busy or, when no script runs, normally.
func (sc *scripting) Kill(c *command.Ctx, eval bool) {
	st := sc.cur.Load()
	switch {
	case st == nil:
		c.Error("NOTBUSY No scripts in execution right now.")
	case st.wrote.Load():
		c.Error("UNKILLABLE Sorry the script already executed write commands against the dataset. " +
			"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
	case eval && !st.eval:
		c.Error(errBusyFunction)
	case !eval && st.eval:
		c.Error(errBusyEval)
	default:
		st.killReq.Store(true)
		c.W.SimpleString("OK")
	}
}

// Eval runs an EVAL-family command (evalGenericCommand + scriptPrepareForRun).
func (sc *scripting) Eval(c *command.Ctx, body, sha []byte, keys, args [][]byte, ro bool) {
	var scr *script.Script
	if body != nil {
		var errText string
		if scr, errText = sc.vm.LoadBytes(body); errText != "" {
			c.Error(errText)
			return
		}
	} else if scr = sc.vm.LookupBytes(sha); scr == nil {
		c.Error("NOSCRIPT No matching script. Please use EVAL.")
		return
	}
	compat := scr.Flags&script.FlagEvalCompat != 0
	if !compat && scr.Flags&script.FlagNoWrites == 0 && ro {
		c.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	if !compat && scr.Flags&(script.FlagAllowOOM|script.FlagNoWrites) == 0 && sc.s.preCommandOOM {
		c.Error(errOOM) // such a script is a denyoom command
		return
	}
	if !compat && scr.Flags&script.FlagNoWrites == 0 && sc.s.diskError() != "" {
		c.Error(sc.s.diskError())
		return
	}
	if !compat && scr.Flags&script.FlagNoWrites == 0 && !sc.s.goodReplicas() {
		c.Error(errNoReplicas)
		return
	}
	readOnly := ro || (!compat && scr.Flags&script.FlagNoWrites != 0)
	allowOOM := !compat && scr.Flags&script.FlagAllowOOM != 0
	run, st := sc.begin(c, readOnly, true)
	if run == nil {
		return
	}
	st.allowOOM = allowOOM
	run.Keys, run.Args, run.Name = keys, args, scr.SHA
	sc.end(c, st, sc.vm.Eval(scr, run, c.W))
}

// begin starts one script invocation as the caller's execution unit: it
// publishes the busy state and points the script client at the caller's
// database. It returns the Run to hand to the interpreter (reused from call to
// call: the interpreter keeps no reference to it after the script returns), or
// nil after replying with an error. end must follow.
func (sc *scripting) begin(c *command.Ctx, readOnly, eval bool) (*script.Run, *scriptState) {
	s := sc.s
	if sc.depth > 0 { // cannot happen: EVAL and FCALL are noscript
		c.Error("ERR script called from a script")
		return nil, nil
	}
	cl := s.clientOf(c.Client)
	st := &scriptState{caller: cl, startUs: s.clock.NowUs(), eval: eval, readOnly: readOnly, nowMs: c.Now,
		thresholdMs: sc.busyReplyThreshold()}
	sc.cur.Store(st)
	sc.depth++
	sc.client.DB = c.Client.DB
	sc.client.User = c.Client.User
	sc.client.Proto = 2
	sc.mark = len(c.W.Buf)
	sc.runv = script.Run{Host: sc, Interrupt: sc.interruptCur}
	return &sc.runv, st
}

// end finishes the invocation begin started and records the reply's error for
// the stats.
func (sc *scripting) end(c *command.Ctx, st *scriptState, noStats bool) {
	s := sc.s
	sc.depth--
	sc.cur.Store(nil)
	sc.runv = script.Run{} // drop the references to the caller's arguments
	if st.timedOut.Load() {
		s.log.Warn("slow script finished", "ms", (s.clock.NowUs()-st.startUs)/1000)
	}
	mark := sc.mark
	if len(c.W.Buf) > mark && c.W.Buf[mark] == '-' {
		if noStats { // counted where it happened: only a failed call of the script
			c.FailedNoStats = true
		} else {
			end := mark + 1
			for end < len(c.W.Buf) && c.W.Buf[end] != ' ' && c.W.Buf[end] != '\r' {
				end++
			}
			c.ErrCode = string(c.W.Buf[mark+1 : end])
		}
	}
}

// interrupt is called by the interpreter every 100,000 instructions (Redis's
// scriptInterrupt): past busy-reply-threshold the script is "timed out", other
// clients get BUSY and may kill it; while it runs on, the event loop it holds
// keeps serving them.
func (sc *scripting) interrupt(st *scriptState) bool {
	s := sc.s
	if s.stopping.Load() {
		// SIGTERM, SIGINT or SHUTDOWN while a script runs: stop it, as SHUTDOWN
		// NOSAVE does, so that the server can exit
		s.log.Warn("Lua script killed: the server is shutting down.")
		return true
	}
	if !st.timedOut.Load() {
		if st.thresholdMs <= 0 || (s.clock.NowUs()-st.startUs)/1000 < st.thresholdMs {
			return false
		}
		what := "FUNCTION KILL"
		if st.eval {
			what = "SCRIPT KILL"
		}
		s.log.Warn("Slow script detected: still in execution after " +
			itoa((s.clock.NowUs()-st.startUs)/1000) + " milliseconds. You can try killing the script using the " + what + " command.")
		st.timedOut.Store(true)
	}
	caller := st.caller
	if caller == nil {
		caller = s.loadCaller // a script of an AOF that DEBUG LOADAOF loads
	}
	if caller != nil && caller.nc != nil {
		caller.nc.PollWhileBusy() // the other clients of its event loop
	}
	s.eng.Lend() // clients of other loops or goroutines waiting for the lock get BUSY
	if st.killReq.Load() {
		s.log.Warn("Lua script killed by user with SCRIPT KILL.")
		return true
	}
	return false
}

// poll runs the interrupt check between a script's commands too, at most once
// a millisecond: the instruction hook alone is too far apart in a script whose
// time goes into the commands it calls.
func (sc *scripting) poll(st *scriptState) {
	now := sc.s.clock.NowUs()
	if now-st.lastPollUs < 1000 {
		return
	}
	st.lastPollUs = now
	if sc.interrupt(st) {
		sc.vm.Kill()
	}
}

// Call runs a command for the script (Redis's scriptCall): admitted by admit,
// run by call as the script client, with the script's frozen time. It returns
// the reply, or the refusal's text.
func (sc *scripting) Call(run *script.Run, argv [][]byte) ([]byte, string) {
	s := sc.s
	st := sc.cur.Load()
	if st != nil {
		sc.poll(st)
	}
	spec, v, refusal := s.admit(fromScript, nil, argv, nil)
	if v != admitted {
		return nil, refusal
	}
	if spec.Flags&command.Write != 0 && st != nil {
		st.wrote.Store(true)
	}
	c := &sc.ctx
	sc.w.Buf = sc.w.Buf[:0]
	sc.w.Proto = run.Resp
	sc.client.Proto = run.Resp
	c.Argv = argv
	if st != nil {
		c.Now = st.nowMs
		c.FrozenUs = st.startUs
	}
	c.DB = s.ks.DBs[sc.client.DB]
	s.call(fromScript, c, spec, s.clock.NowUs())
	return sc.w.Buf, ""
}

// SetDisableDenyScripts is DEBUG SET-DISABLE-DENY-SCRIPTS.
func (s *Server) SetDisableDenyScripts(on bool) { s.scripts.allowDenied.Store(on) }

// Log is redis.log: Redis's levels debug, verbose, notice, warning.
func (sc *scripting) Log(level int, msg string) {
	l := slog.LevelInfo
	switch level {
	case 0, 1:
		l = slog.LevelDebug
	case 3:
		l = slog.LevelWarn
	}
	sc.s.log.Log(nil, l, msg)
}

// commandFlags are a script command's flags as admission judges them
// (Redis's evalGetCommandFlags, fcallGetCommandFlags): those of the script or
// function it names when it declares flags (a shebang, a registered
// function); the command's own for a script in backward-compatible mode, or
// one not found (it fails when it runs).
func (sc *scripting) commandFlags(spec *command.Spec, argv [][]byte) command.Flag {
	var f script.Flags
	if len(argv) < 2 {
		return spec.Flags
	}
	switch spec.ScriptArg {
	case command.ScriptBody:
		var ok bool
		if f, ok = script.ShebangFlags(argv[1]); !ok {
			return spec.Flags
		}
	case command.ScriptSHA:
		scr := sc.vm.LookupBytes(argv[1])
		if scr == nil {
			return spec.Flags
		}
		f = scr.Flags
	case command.ScriptFunction:
		fn := sc.vm.Function(string(argv[1]))
		if fn == nil {
			return spec.Flags
		}
		f = fn.Flags
	default:
		return spec.Flags
	}
	if f&script.FlagEvalCompat != 0 {
		return spec.Flags
	}
	// scriptFlagsToCmdFlags: the declared flags replace the command's
	flags := spec.Flags &^ (command.Stale | command.DenyOOM | command.Write | command.MayReplicate)
	if f&(script.FlagAllowOOM|script.FlagNoWrites) == 0 {
		flags |= command.DenyOOM
	}
	if f&script.FlagNoWrites == 0 {
		flags |= command.Write
	}
	if f&script.FlagAllowStale != 0 {
		flags |= command.Stale
	}
	return flags
}

// busyScript is the running script when it is busy (past
// busy-reply-threshold: other clients get BUSY), else nil.
func (s *Server) busyScript() *scriptState {
	if st := s.scripts.cur.Load(); st != nil && st.timedOut.Load() {
		return st
	}
	return nil
}

// busyError is the reply to a command refused while a script is busy.
func busyError(st *scriptState) string {
	if st.eval {
		return errBusyEval
	}
	return errBusyFunction
}

// lockOrBusy takes the engine lock for a batch of commands. It returns the
// running script when the lock was only lent by a script past
// busy-reply-threshold (see engine.Lend): the caller then answers the batch
// with process given that script, still under the lock, and must not touch
// the keyspace.
func (s *Server) lockOrBusy() *scriptState {
	s.eng.Lock()
	if s.eng.Lent() {
		return s.scripts.cur.Load()
	}
	return nil
}

// FCall runs FCALL / FCALL_RO (fcallCommandGeneric).
func (sc *scripting) FCall(c *command.Ctx, name []byte, keys, args [][]byte, ro bool) {
	f := sc.vm.Function(string(name))
	if f == nil {
		c.Error("ERR Function not found")
		return
	}
	if f.Flags&script.FlagNoWrites == 0 && ro {
		c.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	if f.Flags&(script.FlagAllowOOM|script.FlagNoWrites) == 0 && sc.s.preCommandOOM {
		c.Error(errOOM)
		return
	}
	if f.Flags&script.FlagNoWrites == 0 && sc.s.diskError() != "" {
		c.Error(sc.s.diskError())
		return
	}
	if f.Flags&script.FlagNoWrites == 0 && !sc.s.goodReplicas() {
		c.Error(errNoReplicas)
		return
	}
	readOnly := ro || f.Flags&script.FlagNoWrites != 0
	run, st := sc.begin(c, readOnly, false)
	if run == nil {
		return
	}
	st.name = f.Name
	st.allowOOM = f.Flags&script.FlagAllowOOM != 0
	for _, a := range c.Argv {
		st.argv = append(st.argv, append([]byte(nil), a...))
	}
	run.Keys, run.Args, run.Name = keys, args, f.Name
	sc.end(c, st, sc.vm.FCall(f, run, c.W))
}

func (sc *scripting) nowMs() int64 { return sc.s.clock.NowUs() / 1000 }

func (sc *scripting) FunctionLoad(code []byte, replace bool) (string, string) {
	return sc.vm.LoadLibrary(string(code), replace, sc.nowMs)
}

func (sc *scripting) FunctionDelete(name []byte) bool { return sc.vm.DeleteLibrary(string(name)) }

func (sc *scripting) FunctionFlush() int {
	n := sc.vm.NumFunctions()
	sc.vm.FlushFunctions()
	return n
}

func (sc *scripting) FunctionDump() []byte { return script.DumpLibraries(sc.vm.Libraries()) }

// FunctionRestore is FUNCTION RESTORE: every library of the payload is compiled
// first; nothing changes unless all of them load and the policy allows it.
func (sc *scripting) FunctionRestore(payload []byte, policy string) string {
	codes, err := script.ParseDump(payload)
	if err != nil {
		if err.Error() == "ERR payload version or checksum are wrong" {
			return "ERR DUMP payload version or checksum are wrong"
		}
		return err.Error()
	}
	libs, errText := sc.vm.CompileLibraries(codes, sc.nowMs)
	if errText != "" {
		return errText
	}
	vm := sc.vm
	switch policy {
	case "flush":
		vm.FlushFunctions()
	case "append":
		for _, l := range libs {
			if vm.Library(l.Name) != nil {
				return "ERR Library " + l.Name + " already exists"
			}
		}
	}
	// a function may not clash with one of a library that stays
	for _, l := range libs {
		for _, f := range l.Functions {
			if old := vm.Function(f.Name); old != nil && !strings.EqualFold(old.Library.Name, l.Name) {
				replaced := false
				for _, nl := range libs {
					if strings.EqualFold(nl.Name, old.Library.Name) {
						replaced = true
					}
				}
				if !replaced {
					return "ERR Function " + f.Name + " already exists"
				}
			}
		}
	}
	vm.InstallLibraries(libs)
	return ""
}

// FunctionList appends FUNCTION LIST's reply.
func (sc *scripting) FunctionList(c *command.Ctx, pattern []byte, withCode bool) {
	var libs []*script.Library
	for _, l := range sc.vm.Libraries() {
		if pattern == nil || glob.Match(pattern, []byte(l.Name), true) {
			libs = append(libs, l)
		}
	}
	w := c.W
	w.ArrayLen(len(libs))
	for _, l := range libs {
		if withCode {
			w.MapLen(4)
		} else {
			w.MapLen(3)
		}
		w.BulkString("library_name")
		w.BulkString(l.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.ArrayLen(len(l.Functions))
		for _, f := range l.Functions {
			w.MapLen(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Description)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			names := f.Flags.FlagNames()
			w.SetLen(len(names))
			for _, n := range names {
				w.SimpleString(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.Code)
		}
	}
}

// FunctionStats appends FUNCTION STATS's reply: the running function, if any,
// and the engine's counts.
func (sc *scripting) FunctionStats(c *command.Ctx) {
	w := c.W
	w.MapLen(2)
	w.BulkString("running_script")
	st := sc.cur.Load()
	if st == nil || st.eval {
		w.Null()
	} else {
		w.MapLen(3)
		w.BulkString("name")
		w.BulkString(st.name)
		w.BulkString("command")
		w.ArrayLen(len(st.argv))
		for _, a := range st.argv {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int((sc.s.clock.NowUs() - st.startUs) / 1000)
	}
	w.BulkString("engines")
	w.MapLen(1)
	w.BulkString("LUA")
	w.MapLen(2)
	w.BulkString("libraries_count")
	w.Int(int64(len(sc.vm.Libraries())))
	w.BulkString("functions_count")
	w.Int(int64(sc.vm.NumFunctions()))
}
