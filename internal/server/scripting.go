package server

import (
	"log/slog"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/script"
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
	depth  int
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
}

func newScripting(s *Server) *scripting {
	sc := &scripting{s: s}
	sc.vm = script.NewVM(script.Options{
		Libs:    nil, // cjson, cmsgpack, bit, struct: wired when internal/script/lualib lands
		Version: command.Version,
		CommandExists: func(argv [][]byte) bool {
			return s.specFor(argv) != nil
		},
		Log: sc.Log,
	})
	sc.client = command.Client{ID: -1, Name: "", User: "default", Authenticated: true, Proto: 2, Multi: -1, Script: true, Flags: "S"}
	sc.ctx = command.Ctx{W: &sc.w, Client: &sc.client, KS: s.ks, Srv: s, Rand: s.eng.Rand}
	return sc
}

// Scripts is the Lua engine.
func (s *Server) Scripts() command.Scripting { return s.scripts }

// Load compiles body into the script cache.
func (sc *scripting) Load(body []byte) (string, string) {
	scr, errText := sc.vm.Load(string(body))
	if errText != "" {
		return "", errText
	}
	return scr.SHA, ""
}

func (sc *scripting) Exists(sha []byte) bool { return sc.vm.Lookup(string(sha)) != nil }

func (sc *scripting) Flush() { sc.vm.Flush() }

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
		if scr, errText = sc.vm.Load(string(body)); errText != "" {
			c.Error(errText)
			return
		}
	} else if scr = sc.vm.Lookup(string(sha)); scr == nil {
		c.Error("NOSCRIPT No matching script. Please use EVAL.")
		return
	}
	compat := scr.Flags&script.FlagEvalCompat != 0
	if !compat && scr.Flags&script.FlagNoWrites == 0 && ro {
		c.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	readOnly := ro || (!compat && scr.Flags&script.FlagNoWrites != 0)
	sc.run(c, readOnly, true, func(run *script.Run) bool {
		run.Keys, run.Args, run.Name = keys, args, scr.SHA
		return sc.vm.Eval(scr, run, c.W)
	})
}

// run executes one script invocation as the caller's execution unit: it
// publishes the busy state, points the script client at the caller's database,
// and records the reply's error for the stats.
func (sc *scripting) run(c *command.Ctx, readOnly, eval bool, exec func(run *script.Run) (noStats bool)) {
	s := sc.s
	if sc.depth > 0 { // cannot happen: EVAL and FCALL are noscript
		c.Error("ERR script called from a script")
		return
	}
	cl := s.clientOf(c.Client)
	st := &scriptState{caller: cl, startUs: s.clock.NowUs(), eval: eval, readOnly: readOnly, nowMs: c.Now,
		thresholdMs: s.cfg.Int("busy-reply-threshold")}
	sc.cur.Store(st)
	sc.depth++
	sc.client.DB = c.Client.DB
	sc.client.Proto = 2
	mark := len(c.W.Buf)
	run := &script.Run{Host: sc, Interrupt: func() bool { return sc.interrupt(st) }}
	noStats := exec(run)
	sc.depth--
	sc.cur.Store(nil)
	if st.timedOut.Load() {
		s.log.Warn("slow script finished", "ms", (s.clock.NowUs()-st.startUs)/1000)
	}
	if len(c.W.Buf) > mark && c.W.Buf[mark] == '-' && !noStats {
		end := mark + 1
		for end < len(c.W.Buf) && c.W.Buf[end] != ' ' && c.W.Buf[end] != '\r' {
			end++
		}
		c.ErrCode = string(c.W.Buf[mark+1 : end])
	}
}

// interrupt is called by the interpreter every 100,000 instructions (Redis's
// scriptInterrupt): past busy-reply-threshold the script is "timed out", other
// clients get BUSY and may kill it; while it runs on, the event loop it holds
// keeps serving them.
func (sc *scripting) interrupt(st *scriptState) bool {
	s := sc.s
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
	s.whileBlocked(st)
	s.eng.Lend() // clients of other loops or goroutines waiting for the lock get BUSY
	if st.killReq.Load() {
		s.log.Warn("Lua script killed by user with SCRIPT KILL.")
		return true
	}
	return false
}

// Call runs a command for the script (Redis's scriptCall): the script policy
// checks, then the handler as the script client, with the script's frozen time.
func (sc *scripting) Call(run *script.Run, argv [][]byte) ([]byte, string) {
	s := sc.s
	st := sc.cur.Load()
	spec := s.specFor(argv)
	if spec == nil || spec.Run == nil {
		return nil, "Unknown Redis command called from script"
	}
	if !command.CheckArity(spec.Arity, len(argv)) {
		return nil, "Wrong number of args calling Redis command from script"
	}
	if spec.Flags&command.NoScript != 0 {
		return nil, "This Redis command is not allowed from script"
	}
	if spec.Flags&command.Write != 0 {
		if st != nil && st.readOnly {
			return nil, "Write commands are not allowed from read-only scripts."
		}
		if st != nil {
			st.wrote.Store(true)
		}
	}
	c := &sc.ctx
	sc.w.Buf = sc.w.Buf[:0]
	sc.w.Proto = run.Resp
	sc.client.Proto = run.Resp
	c.Spec, c.Argv, c.ErrCode, c.Dirty = spec, argv, "", 0
	if st != nil {
		c.Now = st.nowMs
	}
	c.DB = s.ks.DBs[sc.client.DB]
	start := s.clock.NowUs()
	s.run(c, spec)
	end := s.clock.NowUs()
	stat := &s.cmdStats[spec.ID]
	stat.calls++
	stat.usec += end - start
	s.stats.commands++
	s.stats.dirty += int64(c.Dirty)
	if c.ErrCode != "" {
		stat.failed++
		s.countError(c.ErrCode)
	}
	return sc.w.Buf, ""
}

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
// with dispatchBusy, still under the lock, and must not touch the keyspace.
func (s *Server) lockOrBusy() *scriptState {
	s.eng.Lock()
	if s.eng.Lent() {
		return s.scripts.cur.Load()
	}
	return nil
}

// dispatchBusy answers one command of a client while a script is busy (Redis's
// processCommand with isInsideYieldingLongCommand): lookup, arity and auth as
// usual, then only the commands flagged allow-busy run; the rest get BUSY.
// It runs with the engine lock held, either by the script's own event loop
// (whileBlocked) or lent by the script (lockOrBusy), so it must not touch the
// keyspace: only connection and transaction state.
func (s *Server) dispatchBusy(cl *client, argv [][]byte, st *scriptState) {
	c := &cl.ctx
	mark := len(cl.w.Buf)
	c.ErrCode, c.Argv = "", argv
	spec := s.specFor(argv)
	switch {
	case spec == nil:
		if s.table.Lookup(argv[0]) == nil {
			c.Error(command.ErrUnknownCommand(argv))
		} else {
			c.Error(command.ErrUnknownSubcommand(argv[1], string(argv[0])))
		}
	case !command.CheckArity(spec.Arity, len(argv)) || spec.Run == nil:
		c.Error(command.ErrArity(spec.FullName()))
	case !cl.Authenticated && spec.Flags&command.NoAuth == 0:
		c.Err(command.ErrNoAuth)
	case spec.Flags&command.AllowBusy == 0:
		c.Error(busyError(st))
	}
	if c.ErrCode == "" {
		switch spec.FullName() {
		case "script|kill", "function|kill", "function|stats", "auth", "hello", "quit":
			c.Spec = spec
			s.run(c, spec)
		case "shutdown":
			nosave := false
			for _, a := range argv[1:] {
				if eqFoldStr(a, "nosave") {
					nosave = true
				}
			}
			if !nosave {
				c.Error(busyError(st))
				break
			}
			st.killReq.Store(true)
			c.Spec = spec
			s.run(c, spec)
		default: // multi, discard, watch, unwatch, reset
			c.Spec = spec
			s.run(c, spec)
		}
	}
	if c.ErrCode != "" {
		s.countError(c.ErrCode)
		if cl.InMulti() {
			cl.multi.dirty = true
		}
	}
	s.finishReply(cl, mark, false)
}

func eqFoldStr(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x := b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != s[i] {
			return false
		}
	}
	return true
}
