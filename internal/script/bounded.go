package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// Builtins that loop or allocate in Go, outside the Lua instructions whose
// hook lets SCRIPT KILL, FUNCTION KILL and SHUTDOWN stop a script (and
// checks its memory, vm.go): each is bounded here as Lua 5.1 bounds it, or
// by the script memory limit where Lua 5.1 has no bound.
//
//   - unpack: at most LUAI_MAXCSTACK values on the stack ("too many results
//     to unpack", Lua's lua_checkstack); gopher-lua's pushed every index up
//     to 2^31 and hung the server.
//   - string.rep: a result over the memory limit is refused ("not enough
//     memory"); an empty string repeated is empty at once (Lua 5.1 loops n
//     times).
//   - table.concat: Lua 5.1's range (up to the last index asked, not the
//     table's length) and its error for a value that is not a string or a
//     number; the result is held to the memory limit.
//   - string.gsub: the result is built once, in order (gopher-lua copied the
//     whole string for each replacement: a quarter of a million matches took
//     minutes), held to the memory limit, with Lua 5.1's replacement rules
//     ("%x" is "x", a replacement value that is not a string or a number is
//     an error).
//   - string.format: strformat.go (widths and precisions of two digits).

// maxCStack is LUAI_MAXCSTACK: the most values a C function may push.
const maxCStack = 8000

// errNoMemory is Lua's memory error message (LUA_ERRMEM).
const errNoMemory = "not enough memory"

// installBounded replaces gopher-lua's unbounded builtins in the base,
// string and table libraries (before the read-only views are made).
func (vm *VM) installBounded(L *lua.LState, g *lua.LTable) {
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	if s, ok := g.RawGetString("string").(*lua.LTable); ok {
		s.RawSetString("rep", L.NewFunction(vm.strRep))
		s.RawSetString("format", L.NewFunction(strFormat))
		s.RawSetString("gsub", L.NewFunction(vm.strGsub))
	}
	if t, ok := g.RawGetString("table").(*lua.LTable); ok {
		t.RawSetString("concat", L.NewFunction(vm.tableConcat))
	}
}

// luaUnpack is luaB_unpack.
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := int64(L.OptInt(2, 1))
	e := int64(L.OptInt(3, t.Len()))
	if i > e {
		return 0
	}
	n := e - i + 1
	if n <= 0 || n+int64(L.GetTop()) > maxCStack {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= e; k++ {
		L.Push(t.RawGetInt(int(k)))
	}
	return int(n)
}

// strRep is str_rep.
func (vm *VM) strRep(L *lua.LState) int {
	s := checkLString(L, 1, "rep")
	n := int64(checkNumber(L, 2, "rep"))
	if n <= 0 || len(s) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if n > vm.allocLimit()/int64(len(s)) {
		L.RaiseError(errNoMemory)
	}
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

// tableConcat is tconcat.
func (vm *VM) tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := ""
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		sep = checkLString(L, 2, "concat")
	}
	i := int64(L.OptInt(3, 1))
	last := int64(L.OptInt(4, t.Len()))
	limit := vm.allocLimit()
	var b []byte
	for ; i <= last; i++ {
		v := t.RawGetInt(int(i))
		switch v.(type) {
		case lua.LString, lua.LNumber:
		default:
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), i)
		}
		b = append(b, checkValueText(v)...)
		if i != last {
			b = append(b, sep...)
		}
		if int64(len(b)) > limit {
			L.RaiseError(errNoMemory)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// checkValueText is a string or number value as lua_tolstring gives it.
func checkValueText(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return n.String() // lua_tolstring's %.14g (the gopher-lua patch)
	}
	return string(v.(lua.LString))
}

// strGsub is str_gsub.
func (vm *VM) strGsub(L *lua.LState) int {
	src := checkLString(L, 1, "gsub")
	pat := checkLString(L, 2, "gsub")
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LNumber, lua.LString, *lua.LTable, *lua.LFunction:
	default:
		argError(L, 3, "gsub", "string/function/table expected")
	}
	limit := -1 // all
	if L.GetTop() >= 4 && L.Get(4) != lua.LNil {
		if limit = int(max(min(checkNumber(L, 4, "gsub"), float64(len(src)+1)), 0)); limit == 0 {
			L.Push(lua.LString(src))
			L.Push(lua.LNumber(0))
			return 2
		}
	}
	matches, err := pm.FindCheck(pat, []byte(src), 0, limit, vm.patternCheck(L))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	maxLen := vm.allocLimit()
	var b []byte
	prev := 0
	for _, m := range matches {
		start, end := m.Capture(0), m.Capture(1)
		b = append(b, src[prev:start]...)
		b = appendReplacement(L, b, src, m, repl)
		prev = end
		if int64(len(b)) > maxLen {
			L.RaiseError(errNoMemory)
		}
	}
	b = append(b, src[prev:]...)
	L.Push(lua.LString(b))
	L.Push(lua.LNumber(len(matches)))
	return 2
}

// appendReplacement is add_value: what replaces the match m.
func appendReplacement(L *lua.LState, b []byte, src string, m *pm.MatchData, repl lua.LValue) []byte {
	whole := src[m.Capture(0):m.Capture(1)]
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LNumber, lua.LString:
		return appendSubst(L, b, src, m, lua.LVAsString(r))
	case *lua.LTable:
		v = L.GetTable(r, captureValue(L, src, m, 0))
	case *lua.LFunction:
		n := max(m.CaptureLength()/2-1, 1)
		L.Push(r)
		for i := 0; i < n; i++ {
			L.Push(captureValue(L, src, m, i))
		}
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	}
	switch x := v.(type) {
	case lua.LString:
		return append(b, x...)
	case lua.LNumber:
		return append(b, x.String()...)
	}
	if v == lua.LNil || v == lua.LFalse {
		return append(b, whole...) // keep the original text
	}
	L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	return b
}

// appendSubst is add_s: the replacement string with %0-%9 expanded and any
// other escaped character kept as itself.
func appendSubst(L *lua.LState, b []byte, src string, m *pm.MatchData, news string) []byte {
	for i := 0; i < len(news); i++ {
		c := news[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		i++
		if i >= len(news) {
			return append(b, 0) // Lua reads the terminating NUL
		}
		switch c = news[i]; {
		case c < '0' || c > '9':
			b = append(b, c)
		case c == '0':
			b = append(b, src[m.Capture(0):m.Capture(1)]...)
		default:
			b = append(b, lua.LVAsString(captureValue(L, src, m, int(c-'1')))...)
		}
	}
	return b
}

// captureValue is push_onecapture: capture i (0-based), the whole match when
// there are no captures and i is 0, a position capture as a number.
func captureValue(L *lua.LState, src string, m *pm.MatchData, i int) lua.LValue {
	levels := m.CaptureLength()/2 - 1
	if i >= levels {
		if i != 0 {
			L.RaiseError("invalid capture index")
		}
		return lua.LString(src[m.Capture(0):m.Capture(1)])
	}
	k := 2 * (i + 1)
	if m.IsPosCapture(k) {
		return lua.LNumber(m.Capture(k))
	}
	return lua.LString(src[m.Capture(k):m.Capture(k+1)])
}

// patternCheck lets a long pattern match stop when the script is killed or
// times out (the matcher runs no Lua instruction: the hook alone would not
// see it), as the patched string library does for find, match and gmatch.
func (vm *VM) patternCheck(L *lua.LState) func() error {
	ctx := L.Context()
	if ctx == nil {
		return nil
	}
	if p, ok := ctx.(interface{ Poll() error }); ok {
		return p.Poll
	}
	return func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
			return nil
		}
	}
}
