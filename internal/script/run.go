package script

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
)

// Host is what a running script needs from the server. Calls happen on the
// script's goroutine, inside the script's execution unit.
type Host interface {
	// Call runs argv as the script's client (redis.call / redis.pcall) and returns
	// the reply in RESP version run.Resp. When the script may not run the command
	// (unknown, wrong arity, not allowed from scripts, a write in a read-only
	// script...) it returns refusal instead: Redis's text, either "message" (code
	// ERR) or "-CODE message".
	Call(run *Run, argv [][]byte) (reply []byte, refusal string)
	// Log writes redis.log's message at level (0 debug .. 3 warning).
	Log(level int, msg string)
}

// Run is one script invocation.
type Run struct {
	Host Host
	Keys [][]byte
	Args [][]byte
	// Name is the SHA1 of an EVAL script or the name of a function, for error
	// messages ("script: <name>, on @user_script:1.").
	Name string
	// Resp is the protocol the script's redis.call replies use: 2 unless the
	// script calls redis.setresp(3).
	Resp int
	// Repl is redis.set_repl's setting (REPL_ALL by default).
	Repl int
	// Interrupt, when not nil, is called every hookEvery Lua instructions; it
	// returns true to kill the script (SCRIPT KILL, FUNCTION KILL, SHUTDOWN).
	Interrupt func() bool
}

// Propagation targets of redis.set_repl.
const (
	ReplNone  = 0
	ReplAOF   = 1
	ReplSlave = 2
	ReplAll   = ReplAOF | ReplSlave
)

// hookEvery is how often a running script checks Interrupt (Redis's count hook
// runs every 100,000 instructions), memEvery how often it checks the script
// memory limit (memlimit.go: a heap read costs about 0.6 µs, so 0.6 ns per
// instruction; a script of fewer instructions never pays it).
const (
	hookEvery = 100000
	memEvery  = 1000
)

// hookCtx is the context gopher-lua polls before every instruction: its Done
// method is the instruction hook that lets a long script be interrupted.
type hookCtx struct {
	interrupt func() bool
	n         int // instructions since the last memory check
	checks    int // memory checks since the last Interrupt
	killed    bool
	// memLimit is how many bytes the script may add to the heap, heapStart
	// the heap when it started; oom: it was stopped for going over
	memLimit  int64
	heapStart uint64
	oom       bool
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (h *hookCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (h *hookCtx) Value(any) any               { return nil }
func (h *hookCtx) Err() error {
	if h.oom {
		return errors.New(errScriptOOM)
	}
	return errKilled{}
}
func (h *hookCtx) Done() <-chan struct{} {
	if h.killed {
		return closedChan // every instruction fails: pcall cannot catch the kill
	}
	h.n++
	if h.n < memEvery { // the per-instruction cost: an increment and a compare
		return nil
	}
	h.n = 0
	if h.overMemory() {
		h.killed, h.oom = true, true
		return closedChan
	}
	h.checks++
	if h.checks < hookEvery/memEvery {
		return nil
	}
	h.checks = 0
	if h.interrupt != nil && h.interrupt() {
		h.killed = true
		return closedChan
	}
	return nil
}

// Poll checks now what Done checks every hookEvery instructions: whether
// the script is to stop (SCRIPT KILL, SHUTDOWN, a served busy client's
// request). Builtins that run long without executing Lua instructions (the
// pattern matcher) call it every few thousand steps; nil to go on.
func (h *hookCtx) Poll() error {
	if !h.killed && h.interrupt != nil && h.interrupt() {
		h.killed = true
	}
	if h.killed {
		return h.Err()
	}
	return nil
}

// overMemory reports whether the script added more than memLimit bytes to
// the heap. The heap's objects include garbage: over the limit, a
// collection decides.
func (h *hookCtx) overMemory() bool {
	if h.memLimit <= 0 || int64(heapObjects())-int64(h.heapStart) <= h.memLimit {
		return false
	}
	runtime.GC()
	return int64(heapObjects())-int64(h.heapStart) > h.memLimit
}

type errKilled struct{}

func (errKilled) Error() string { return "Script killed by user with SCRIPT KILL..." }

// Running reports whether a script is running.
func (vm *VM) Running() bool { return vm.run != nil }

// Kill makes the running script fail at its next instruction, as when its
// Interrupt returns true.
func (vm *VM) Kill() { vm.hook.killed = true }

// Killed reports whether the running (or last) script was killed.
func (vm *VM) Killed() bool { return vm.hook.killed }

// Eval runs s with run's keys and arguments as globals KEYS and ARGV and appends
// its reply (or error) to w, converted as Redis converts Lua values. It reports
// whether the reply is an error that was already counted in the error stats
// (an error raised by redis.call), which the caller must not count again.
func (vm *VM) Eval(s *Script, run *Run, w *resp.Writer) (noStats bool) {
	if vm.keys == nil { // the first run: make the tables (globals are read-only to scripts)
		vm.keys, vm.argv = vm.L.NewTable(), vm.L.NewTable()
		vm.globals.RawSetString("KEYS", vm.keys)
		vm.globals.RawSetString("ARGV", vm.argv)
	}
	fillArray(vm.keys, run.Keys)
	fillArray(vm.argv, run.Args)
	vm.evalRan = true
	return vm.call(s.fn, run, w)
}

// call runs fn with args as run.
func (vm *VM) call(fn *lua.LFunction, run *Run, w *resp.Writer, args ...lua.LValue) (noStats bool) {
	L := vm.L
	if run.Resp == 0 {
		run.Resp = 2
	}
	if run.Repl == 0 {
		run.Repl = ReplAll
	}
	vm.run = run
	vm.hook = hookCtx{interrupt: run.Interrupt, memLimit: vm.memLimit(), heapStart: heapObjects()}
	L.SetContext(&vm.hook)
	defer func() {
		L.RemoveContext()
		vm.run = nil
		L.SetTop(0)
		if cap(vm.argBytes) > 64<<10 || cap(vm.argv0) > 1024 { // don't keep a huge call's buffers
			vm.argBytes, vm.argEnds, vm.argv0 = nil, nil, nil
		}
	}()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	err := L.PCall(len(args), 1, vm.handler)
	if err != nil {
		var ev lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok && ae.Object != nil {
			ev = ae.Object
		}
		return vm.writeError(ev, run, w)
	}
	ret := L.Get(-1)
	if t, ok := ret.(*lua.LTable); ok && t.RawGetString("err").Type() == lua.LTString {
		noStats = lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
	}
	luaToResp(L, ret, run, w, 0)
	return noStats
}

// writeError is luaCallFunction's error path: the table from the error handler
// becomes "-<err> script: <name>, on <source>:<line>."
func (vm *VM) writeError(ev lua.LValue, run *Run, w *resp.Writer) (noStats bool) {
	t, ok := ev.(*lua.LTable)
	if !ok {
		w.Error("ERR Error running script " + run.Name + ", " + truncate(lua.LVAsString(ev), 100))
		return false
	}
	noStats = lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
	msg := ""
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		msg = string(s)
	} else {
		msg = "ERR unknown error" // error({}): Redis 7.0 crashes here
	}
	src, sok := t.RawGetString("source").(lua.LString)
	line := t.RawGetString("line")
	if sok && line != lua.LNil {
		msg += " script: " + run.Name + ", on " + string(src) + ":" + lua.LVAsString(line) + "."
	}
	w.Error(sanitize(msg))
	return noStats
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// sanitize replaces CR and LF, which cannot appear in an error or status reply.
func sanitize(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] == '\r' || b[j] == '\n' {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return s
}

// fillArray refills the KEYS or ARGV table of the previous EVAL with items (an
// EVAL script cannot keep a reference to it past its run: globals and library
// tables are read-only).
func fillArray(t *lua.LTable, items [][]byte) {
	n := t.Len()
	// one string holds every item: one allocation, then each item's LString is
	// a substring of it (its boxing is the only allocation per item)
	size := 0
	for _, it := range items {
		size += len(it)
	}
	all := make([]byte, 0, size)
	for _, it := range items {
		all = append(all, it...)
	}
	str := unsafe.String(unsafe.SliceData(all), len(all))
	off := 0
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(str[off:off+len(it)]))
		off += len(it)
	}
	for i := len(items) + 1; i <= n; i++ {
		t.RawSetInt(i, lua.LNil)
	}
}

func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}
