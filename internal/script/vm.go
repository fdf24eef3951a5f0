package script

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Flags are a script's shebang flags (`#!lua flags=no-writes,allow-oom`) or a
// function's registration flags.
type Flags uint16

// Script flags, as Redis names them.
const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
	// FlagEvalCompat marks an EVAL script without a shebang: Redis's backward
	// compatible mode, where the flags do not apply and the script may write.
	FlagEvalCompat
)

var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites},
	{"allow-oom", FlagAllowOOM},
	{"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster},
	{"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// FlagNames returns the names of the flags set in f, in Redis's order.
func (f Flags) FlagNames() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.flag != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// ParseFlag returns the flag called name.
func ParseFlag(name string) (Flags, bool) {
	for _, n := range flagNames {
		if n.name == name {
			return n.flag, true
		}
	}
	return 0, false
}

// Script is one compiled EVAL script in the cache.
type Script struct {
	SHA   string // lower-case hex SHA1 of Body
	Body  string
	Flags Flags
	fn    *lua.LFunction
}

// VM is the Lua interpreter every script of a server runs in, one at a time, and
// the EVAL script cache. It is not safe for concurrent use: the server calls it
// under the engine's serialisation point only (a script is one execution unit).
type VM struct {
	L       *lua.LState
	env     *lua.LTable         // what scripts see as their globals: a read-only view of globals
	globals *lua.LTable         // the real globals (KEYS and ARGV are set here)
	libs    func(L *lua.LState) // Options.Libs: loads the extra libraries
	handler *lua.LFunction
	scripts map[string]*Script
	// evalRan and fnRan: a script (EVAL) or a function (FCALL, a library's
	// load) ran since the last SCRIPT FLUSH or FUNCTION FLUSH, so that its
	// libraries may have changed (cjson's settings...) and a flush must
	// renew them; a flush of libraries nothing ran with leaves them (a fresh
	// VM's are already what a flush would make), and makes no garbage.
	evalRan, fnRan bool
	// bodyBytes is the total size of the cached bodies (INFO used_memory_scripts_eval).
	bodyBytes int
	rand      lrand48
	run       *Run // the running script, nil when idle
	hook      hookCtx
	protected map[*lua.LTable]bool
	real      map[*lua.LTable]*lua.LTable // read-only view -> the table it shows
	// libReadonly tells the libraries' read-only tables (Options.LibReadonly)
	libReadonly func(t *lua.LTable) bool
	fn          functions
	keys        *lua.LTable // EVAL's KEYS and ARGV, refilled for every run
	argv        *lua.LTable
	// redis.call's argument buffers (scriptArgs), reused by every call
	argv0    [][]byte
	argBytes []byte
	argEnds  []int

	// MemLimit, when set and positive, is the script memory limit in bytes
	// (memlimit.go): half of the server's maxmemory.
	MemLimit func() int64

	version  string
	aclCheck func(argv [][]byte) (allowed bool, errText string)
	logf     func(level int, msg string)
}

// Options configure a VM.
type Options struct {
	// Libs, when not nil, loads the extra libraries Redis preloads (cjson,
	// cmsgpack, bit, struct) into the interpreter's globals.
	Libs func(L *lua.LState)
	// LibReadonly, when not nil, tells the read-only tables the libraries
	// make (cjson's array metatable): rawset refuses them as it refuses the
	// sandbox's own.
	LibReadonly func(t *lua.LTable) bool
	// Version is redis.REDIS_VERSION ("8.4.0").
	Version string
	// ACLCheck is redis.acl_check_cmd: whether the running script's caller
	// may run argv, or the error to raise (an unknown command, a wrong
	// number of arguments).
	ACLCheck func(argv [][]byte) (allowed bool, errText string)
	// Log receives redis.log calls made outside a script run (while a function
	// library loads).
	Log func(level int, msg string)
}

// NewVM builds the sandboxed interpreter.
func NewVM(o Options) *VM {
	vm := &VM{scripts: map[string]*Script{}, protected: map[*lua.LTable]bool{}, real: map[*lua.LTable]*lua.LTable{},
		version: o.Version, aclCheck: o.ACLCheck, logf: o.Log, libReadonly: o.LibReadonly}
	vm.rand.reset()
	vm.libs = o.Libs
	vm.L = newSandbox(vm, o.Libs)
	vm.initFunctions(vm.L)
	return vm
}

// SHA1Hex is the lower-case hex SHA1 of s (script names, redis.sha1hex).
func SHA1Hex(s string) string {
	hx := sha1Hex([]byte(s))
	return string(hx[:])
}

// sha1Hex is the lower-case hex SHA1 of b, in an array (no allocation).
func sha1Hex(b []byte) (hx [2 * sha1.Size]byte) {
	h := sha1.Sum(b)
	hex.Encode(hx[:], h[:])
	return hx
}

// Lookup returns the cached script with this SHA1 (any case), or nil.
func (vm *VM) Lookup(sha string) *Script {
	if s := vm.scripts[sha]; s != nil {
		return s
	}
	return vm.scripts[strings.ToLower(sha)]
}

// LookupBytes is Lookup for a SHA1 in a command's argument (no copy when the
// case matches).
func (vm *VM) LookupBytes(sha []byte) *Script {
	if s := vm.scripts[string(sha)]; s != nil {
		return s
	}
	return vm.scripts[strings.ToLower(string(sha))]
}

// Len is the number of cached scripts.
func (vm *VM) Len() int { return len(vm.scripts) }

// CacheBytes approximates the memory the script cache holds.
func (vm *VM) CacheBytes() int { return vm.bodyBytes + len(vm.scripts)*(40+64) }

// Flush empties the script cache (SCRIPT FLUSH). The interpreter is rebuilt so
// that nothing a script left behind survives, as Redis resets its Lua state.
func (vm *VM) Flush() {
	if len(vm.scripts) > 0 {
		vm.scripts = map[string]*Script{}
	}
	vm.bodyBytes = 0
	// Redis starts a new Lua state for scripts: fresh libraries (cjson's
	// settings back to their defaults), unless no script ran since the last
	if vm.libs != nil && vm.evalRan {
		vm.evalRan = false
		L := vm.L
		vm.forgetLibViews(vm.globals)
		mt := L.GetMetatable(vm.globals)
		L.SetMetatable(vm.globals, lua.LNil) // its __index raises on what the loaders look for
		vm.libs(L)
		L.SetMetatable(vm.globals, mt)
		vm.protectLibs(L, vm.globals)
	}
}

// protectLibs replaces the extra libraries in globals by read-only views.
func (vm *VM) protectLibs(L *lua.LState, globals *lua.LTable) {
	for _, name := range extraLibs {
		if t, ok := globals.RawGetString(name).(*lua.LTable); ok && vm.real[t] == nil {
			globals.RawSetString(name, vm.readonlyView(L, t, nil))
		}
	}
}

// forgetLibViews drops the read-only views of the extra libraries in globals
// from the registries (protected, real): they are about to be replaced, and
// would stay reachable from the maps.
func (vm *VM) forgetLibViews(globals *lua.LTable) {
	for _, name := range extraLibs {
		if view, ok := globals.RawGetString(name).(*lua.LTable); ok {
			vm.forgetView(view)
		}
	}
}

// forgetView removes a read-only view, the table it shows and the stand-in
// getmetatable returns from the registries.
func (vm *VM) forgetView(view *lua.LTable) {
	if t := vm.real[view]; t != nil {
		delete(vm.protected, t)
	}
	// getmetatable's stand-in (GetMetatable honours __metatable)
	if shown, ok := vm.L.GetMetatable(view).(*lua.LTable); ok {
		delete(vm.protected, shown)
	}
	delete(vm.real, view)
	delete(vm.protected, view)
}

// LoadBytes is Load for a body in a command's argument: a cached script is
// found by its SHA1 without copying the body or building the hex string
// (EVAL of a cached script allocates nothing here).
func (vm *VM) LoadBytes(body []byte) (*Script, string) {
	hx := sha1Hex(body)
	if s := vm.scripts[string(hx[:])]; s != nil {
		return s, ""
	}
	return vm.Load(string(body))
}

// Load compiles body into the cache (EVAL, SCRIPT LOAD) and returns the script,
// or the error reply text (without '-') when the shebang or the code is invalid.
func (vm *VM) Load(body string) (*Script, string) {
	sha := SHA1Hex(body)
	if s := vm.scripts[sha]; s != nil {
		return s, ""
	}
	flags := FlagEvalCompat
	code := body
	if strings.HasPrefix(body, "#!") {
		nl := strings.IndexByte(body, '\n')
		if nl < 0 {
			nl = len(body)
		}
		var err string
		flags, err = parseShebang(body[:nl])
		if err != "" {
			return nil, err
		}
		// keep the line count: the shebang line becomes an empty line
		code = body[nl:]
	}
	fn, err := vm.compile(code, "user_script")
	if err != "" {
		return nil, "ERR Error compiling script (new function): " + err
	}
	s := &Script{SHA: sha, Body: body, Flags: flags, fn: fn}
	vm.scripts[sha] = s
	vm.bodyBytes += len(body)
	return s, ""
}

// ShebangFlags are the flags of a script's text as its shebang states them
// (FlagEvalCompat without one), read without compiling it (Redis's
// evalExtractShebangFlags); ok is false for an invalid shebang.
func ShebangFlags(body []byte) (f Flags, ok bool) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return FlagEvalCompat, true
	}
	line := body
	if nl := bytes.IndexByte(body, '\n'); nl >= 0 {
		line = body[:nl]
	}
	f, err := parseShebang(string(line))
	return f, err == ""
}

// parseShebang parses `#!lua [flags=a,b]` as Redis's evalExtractShebangFlags.
func parseShebang(line string) (Flags, string) {
	parts := strings.Split(line, " ")
	parts = dropEmpty(parts)
	if len(parts) == 0 {
		return 0, "ERR Invalid engine in script shebang"
	}
	if parts[0] != "#!lua" {
		return 0, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	var flags Flags
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "flags=") {
			return 0, "ERR Unknown lua shebang option: " + p
		}
		for _, f := range dropEmpty(strings.Split(p[len("flags="):], ",")) {
			fl, ok := ParseFlag(f)
			if !ok {
				return 0, "ERR Unexpected flag in script shebang: " + f
			}
			flags |= fl
		}
	}
	return flags, ""
}

func dropEmpty(s []string) []string {
	out := s[:0]
	for _, p := range s {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// compile loads code as a chunk named name in the sandbox, returning Lua's
// message (in C Lua's "name:line: message" shape) on a syntax error.
//
// As Redis's luaCreateFunction, the body becomes the body of a function of no
// parameters (`function() <code>\nend`, on the code's first line so that line
// numbers stay), which the chunk returns: a main chunk would be a vararg
// function, and gopher-lua builds an `arg` table for every call of one.
func (vm *VM) compile(code, name string) (*lua.LFunction, string) {
	chunk, err := vm.L.Load(strings.NewReader("return function() "+code+"\nend"), name)
	if err != nil {
		lines := strings.Count(code, "\n") + 1
		msg := compileError(err.Error(), name, lines)
		if isSyntaxError(msg) {
			if puc := checkSyntax(code, name); puc != "" {
				return nil, puc // C Lua's words for it
			}
		}
		// a string left open on the code's last line runs into the wrapper's
		// newline; C Lua, reading the code alone, meets the end of input
		if prefix := name + ":" + strconv.Itoa(lines) + ": unfinished string near '"; strings.HasPrefix(msg, prefix) {
			msg = prefix[:len(prefix)-1] + "'<eof>'"
		}
		return nil, msg
	}
	if msg := ambiguousCall(code, name); msg != "" {
		return nil, msg
	}
	chunk.Env = vm.env
	L := vm.L
	L.Push(chunk)
	if err := L.PCall(0, 1, nil); err != nil {
		return nil, err.Error()
	}
	fn, ok := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	if !ok {
		return nil, "internal error: the script did not compile to a function"
	}
	return fn, ""
}

// ambiguousCall returns C Lua's error for code that gopher-lua compiled but
// Lua 5.1 refuses: a call whose '(' opens a new line ("f\n(g)()"), which
// lparser.c rejects as "ambiguous syntax (function call x new statement)";
// "" otherwise. Only that verdict of checkSyntax is taken for code gopher-lua
// accepted.
func ambiguousCall(code, name string) string {
	if !strings.Contains(code, "(") || !strings.Contains(code, "\n") {
		return ""
	}
	if msg := checkSyntax(code, name); strings.Contains(msg, ": ambiguous syntax (function call x new statement) near '") {
		return msg
	}
	return ""
}

// isSyntaxError reports whether a reshaped gopher-lua message is one of its
// parser's (which checkSyntax words as C Lua does), not the lexer's.
func isSyntaxError(msg string) bool {
	for _, le := range lexErrors {
		if strings.Contains(msg, ": "+le+" near '") {
			return false
		}
	}
	return true
}

// lexErrors are the lexer's messages, in PUC Lua 5.1's words (gopher-lua
// patches): C Lua puts them before the token ("malformed number near '1e'"),
// where a syntax error follows it.
var lexErrors = []string{"malformed number", "unfinished string", "unfinished long string", "unfinished long comment"}

// compileError reshapes gopher-lua's "name line:3(column:4) near 'x':   parse
// error" into C Lua's "name:3: near 'x': parse error", and a lexical error
// into C Lua's "name:3: malformed number near 'x'". lastLine is the code's
// last line: an error at the end of input is reported on it, as C Lua does.
func compileError(msg, name string, lastLine int) string {
	msg = strings.TrimSpace(msg)
	if rest, ok := strings.CutPrefix(msg, name+" at EOF:"); ok {
		return name + ":" + strconv.Itoa(lastLine) + ": " + strings.Join(strings.Fields(rest), " ") + " near '<eof>'"
	}
	if rest, ok := strings.CutPrefix(msg, name+" line:"); ok {
		line := rest
		if i := strings.IndexByte(rest, '('); i >= 0 {
			line = rest[:i]
			rest = rest[i:]
			if j := strings.IndexByte(rest, ')'); j >= 0 {
				rest = rest[j+1:]
			}
		} else if i := strings.IndexByte(rest, ' '); i >= 0 {
			line, rest = rest[:i], rest[i:]
		}
		text := strings.Join(strings.Fields(rest), " ")
		for _, le := range lexErrors {
			if tok, ok := strings.CutSuffix(text, ": "+le); ok && strings.HasPrefix(tok, "near ") {
				if n, err := strconv.Atoi(line); err == nil && n > lastLine {
					line = strconv.Itoa(lastLine) // the wrapper's end: C Lua's end of input
				}
				return name + ":" + line + ": " + le + " " + tok
			}
		}
		return name + ":" + line + ": " + text
	}
	return msg
}

// memoryKB approximates the interpreter's heap for gcinfo and
// collectgarbage("count"): gopher-lua lives on Go's heap, so this is the
// cached code plus a fixed base.
func (vm *VM) memoryKB() int { return (32768 + vm.CacheBytes() + vm.LibraryBytes()) / 1024 }
