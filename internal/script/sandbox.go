package script

import (
	lua "github.com/yuin/gopher-lua"
	"strings"
)

// The sandbox follows Redis's script_lua.c: the base, table, string, math and
// coroutine libraries (no os, io, package, dofile, loadfile, print), the extra
// libraries, the redis table, and globals that scripts can read but not change.
//
// Redis patches Lua with read-only tables; gopher-lua has none, so scripts see
// the globals and every library table through read-only views: an empty table
// whose metatable reads through to the real one (__index) and refuses writes
// (__newindex), with a protected __metatable so that setmetatable and the view's
// metatable cannot be changed either. rawset on a view is refused too.

const (
	errReadonly      = "Attempt to modify a readonly table"
	errMissingGlobal = "Script attempted to access nonexistent global variable '%s'"
)

// builtins kept from gopher-lua's base library (Redis's lua_builtins_allow_list).
var removedBuiltins = []string{"dofile", "loadfile", "print", "_printregs", "module", "require", "_GOPHER_LUA_VERSION"}

func newSandbox(vm *VM, libs func(L *lua.LState)) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 1024, RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024 * 8,
		// the concatenation operator is held to the script memory limit
		// (memlimit.go; third_party/gopher-lua/PATCHES.md)
		ConcatLimit: func(n int) bool { return int64(n) <= vm.allocLimit() }})
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	if libs != nil {
		libs(L)
	}
	g := L.G.Global
	for _, name := range removedBuiltins {
		g.RawSetString(name, lua.LNil)
	}
	vm.installBounded(L, g)
	vm.globals = g
	registerRedisAPI(vm, L)

	// math.random and math.randomseed: Redis's own, identical on every platform
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		m.RawSetString("random", L.NewFunction(vm.mathRandom))
		m.RawSetString("randomseed", L.NewFunction(vm.mathRandomSeed))
	}
	// pcall returns the message of a redis error table, as Redis 7's pcall does
	origPcall := g.RawGetString("pcall").(*lua.LFunction)
	g.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int {
		top := L.GetTop()
		L.Insert(origPcall, 1)
		L.Call(top, lua.MultRet)
		if L.GetTop() >= 2 && L.Get(1) == lua.LFalse {
			if t, ok := L.Get(2).(*lua.LTable); ok {
				if s, ok := t.RawGetString("err").(lua.LString); ok {
					L.Replace(2, s)
				}
			}
		}
		return L.GetTop()
	}))
	origSetmt := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && vm.protected[t] {
			L.Error(lua.LString(errReadonly), 0) // no position, as Lua's own check
		}
		top := L.GetTop()
		L.Insert(origSetmt, 1)
		L.Call(top, 1)
		return 1
	}))
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if vm.protected[t] || (vm.libReadonly != nil && vm.libReadonly(t)) {
			L.Error(lua.LString(errReadonly), 0)
		}
		L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
		L.Push(t)
		return 1
	}))
	// chunks compiled at run time see the same read-only globals
	for _, name := range []string{"loadstring", "load"} {
		orig := g.RawGetString(name).(*lua.LFunction)
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if name == "loadstring" && L.GetTop() == 1 {
				if src, ok := L.Get(1).(lua.LString); ok {
					if strings.HasPrefix(string(src), "\x1b") {
						// a binary chunk (string.dump's): Redis's Lua loads
						// text only, so it fails as text does
						L.Push(lua.LNil)
						L.Push(lua.LString(chunkID(string(src)) + ":1: unexpected symbol near 'char(27)'"))
						return 2
					}
					L.Push(lua.LString(chunkID(string(src))))
				}
			}
			top := L.GetTop()
			L.Insert(orig, 1)
			L.Call(top, lua.MultRet)
			if fn, ok := L.Get(1).(*lua.LFunction); ok {
				fn.Env = vm.env
			}
			return L.GetTop()
		}))
	}

	// string.dump: the header of a Lua 5.1 binary chunk (signature "\x1bLua",
	// version 0x51, the x86-64 sizes). No Lua here loads binary chunks
	// (Redis's refuses them too: loadstring reads them as text), so the
	// header stands for the function; C functions cannot be dumped.
	if str, ok := g.RawGetString("string").(*lua.LTable); ok {
		str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
			if fn := L.CheckFunction(1); fn.IsG {
				L.RaiseError("unable to dump given function")
			}
			L.Push(lua.LString("\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"))
			return 1
		}))
	}

	// gcinfo: Lua 5.1's deprecated heap size in KB (gopher-lua lacks it)
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(vm.memoryKB()))
		return 1
	}))
	// os: only os.clock (Redis 8)
	osLib := L.NewTable()
	osLib.RawSetString("clock", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(cpuSeconds()))
		return 1
	}))
	g.RawSetString("os", osLib)

	// next, pairs and ipairs see through the read-only views
	origNext := g.RawGetString("next").(*lua.LFunction)
	next := L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			if real := vm.real[t]; real != nil {
				L.Replace(1, real)
			}
		}
		top := L.GetTop()
		L.Insert(origNext, 1)
		L.Call(top, lua.MultRet)
		return L.GetTop()
	})
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if real := vm.real[t]; real != nil {
			t = real
		}
		L.Push(next)
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	}))
	origIpairs := g.RawGetString("ipairs").(*lua.LFunction)
	g.RawSetString("ipairs", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			if real := vm.real[t]; real != nil {
				L.Replace(1, real)
			}
		}
		top := L.GetTop()
		L.Insert(origIpairs, 1)
		L.Call(top, lua.MultRet)
		return L.GetTop()
	}))

	// read-only views of the library tables, then of the globals
	for _, name := range []string{"string", "math", "table", "coroutine", "os", "redis", "cjson", "cmsgpack", "bit", "struct"} {
		if t, ok := g.RawGetString(name).(*lua.LTable); ok {
			g.RawSetString(name, vm.readonlyView(L, t, nil))
		}
	}
	// the strings' metatable: getmetatable('') shows a read-only view of it
	// (Redis protects it: "Attempt to modify a readonly table")
	// and its __index is the string table scripts see (getmetatable('').__index
	// == string, as in Redis)
	if smt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		if view, ok := g.RawGetString("string").(*lua.LTable); ok {
			smt.RawSetString("__index", view)
		}
		smt.RawSetString("__metatable", vm.readonlyView(L, smt, nil))
	}
	missing := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errMissingGlobal, L.ToString(2))
		return 0
	})
	gmt := L.NewTable()
	gmt.RawSetString("__index", missing)
	L.SetMetatable(g, gmt)
	vm.env = vm.readonlyView(L, g, nil)
	g.RawSetString("_G", vm.env)
	L.Env = vm.env
	vm.handler = L.NewFunction(vm.errorHandler)
	return L
}

// readonlyView returns an empty table that reads through to t and refuses writes.
func (vm *VM) readonlyView(L *lua.LState, t *lua.LTable, index lua.LValue) *lua.LTable {
	view, _ := vm.readonlyViewMeta(L, t, index)
	return view
}

// readonlyViewMeta is readonlyView that also returns the view's real metatable.
func (vm *VM) readonlyViewMeta(L *lua.LState, t *lua.LTable, index lua.LValue) (*lua.LTable, *lua.LTable) {
	view := L.NewTable()
	mt := L.NewTable()
	if index == nil {
		index = t
	}
	mt.RawSetString("__index", index)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	// what getmetatable returns: an empty read-only table (the real metatable
	// would lead back to the writable table)
	shown := L.NewTable()
	smt := L.NewTable()
	smt.RawSetString("__newindex", mt.RawGetString("__newindex"))
	smt.RawSetString("__metatable", shown)
	L.SetMetatable(shown, smt)
	mt.RawSetString("__metatable", shown)
	L.SetMetatable(view, mt)
	vm.protected[view] = true
	vm.protected[shown] = true
	vm.real[view] = t
	vm.protected[t] = true
	return view, mt
}

// errorHandler is Redis's __redis__err__handler: it turns the error into a table
// {err=..., source=..., line=...} naming where in the script it happened.
func (vm *VM) errorHandler(L *lua.LState) int {
	errv := L.Get(1)
	var t *lua.LTable
	if vm.hook.oom {
		t = errorTable(L, "-"+errScriptOOM)
	} else if vm.hook.killed {
		t = errorTable(L, "Script killed by user with SCRIPT KILL...")
	} else if et, ok := errv.(*lua.LTable); ok {
		t = et
	} else {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+lua.LVAsString(errv)))
	}
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			break
		}
		if dbg.What != "G" && dbg.CurrentLine > 0 {
			src := dbg.Source
			if src == "user_script" || src == "user_function" {
				src = "@" + src
			}
			t.RawSetString("source", lua.LString(src))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
			break
		}
	}
	L.Push(t)
	return 1
}

// errorTable builds Redis's error table from an error text (luaPushErrorBuff):
// "-CODE message" keeps CODE, a text without '-' gets ERR; the table's err field
// is "CODE message" with trailing CR/LF trimmed.
func errorTable(L *lua.LState, text string) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(errorText(text)))
	return t
}

func errorText(text string) string {
	code, msg := "ERR", text
	if len(text) > 0 && text[0] == '-' {
		sp := -1
		for i := 1; i < len(text); i++ {
			if text[i] == ' ' {
				sp = i
				break
			}
		}
		if sp < 0 {
			msg = text[1:]
		} else {
			code, msg = text[1:sp], text[sp+1:]
		}
	}
	for len(msg) > 0 && (msg[len(msg)-1] == '\n' || msg[len(msg)-1] == '\r') {
		msg = msg[:len(msg)-1]
	}
	for len(msg) > 0 && (msg[0] == '\n' || msg[0] == '\r') {
		msg = msg[1:]
	}
	return code + " " + msg
}

// chunkID is the name Lua 5.1 gives a chunk loaded from a string (luaO_chunkid):
// [string "first line..."].
func chunkID(src string) string {
	const max = 60 - len(`[string "..."]`)
	if i := strings.IndexByte(src, 0); i >= 0 {
		src = src[:i] // the chunk name is a C string
	}
	line := src
	cut := false
	for i := 0; i < len(line); i++ {
		if line[i] == '\n' || line[i] == '\r' {
			line, cut = line[:i], true
			break
		}
	}
	if len(line) > max {
		line, cut = line[:max], true
	}
	if cut {
		line += "..."
	}
	return `[string "` + line + `"]`
}
