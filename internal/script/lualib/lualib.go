// Package lualib provides the four C libraries Redis preloads into its Lua 5.1
// scripting environment (cjson, cmsgpack, bit and struct), written in Go on
// gopher-lua and behaving like Redis's bundled versions in deps/lua/src:
// lua_cjson.c (lua-cjson 2.1.0), lua_cmsgpack.c (lua-cmsgpack 0.4.0),
// lua_bit.c (LuaBitOp 1.0.2) and lua_struct.c (Roberto's struct library with
// Redis's bounds fixes).
//
// The libraries reproduce the C code's observable behaviour on a 64-bit
// little-endian build: output bytes, number formatting, error texts (with the
// "source:line: " prefix luaL_error adds and the "bad argument #n to 'f'"
// form of luaL_argerror), and the limits the C code hits through Lua 5.1's
// C stack (LUAI_MAXCSTACK), which this package counts instead of using.
//
// Known differences from Redis:
//   - Tables are iterated in gopher-lua's order (array part, then keys in
//     insertion order), not Lua 5.1's hash order, so cjson.encode of an
//     object and cmsgpack.pack of a map with several keys may list them in
//     another order.
//   - cjson.null is a userdata with a protected metatable (for tostring's
//     "userdata: (nil)"): getmetatable(cjson.null) is false, not nil.
//   - luaL_argerror's "calling 'f' on bad self" form for obj:f() calls is
//     not produced: gopher-lua does not record that a call was a method call.
//   - struct.pack with missing arguments after more than 8 KB of output:
//     the C code then reads its own buffer pieces off the stack as the
//     missing arguments; here they are "no value".
//
// A state that must reach the C limits (cmsgpack.unpack of up to 7999
// values, struct.unpack of up to ~8000 items) needs a registry that can
// grow to hold that many values (lua.Options RegistryMaxSize).
package lualib

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Open registers cjson, cmsgpack, bit and struct as globals of L, as Redis
// does when it creates its Lua state, and, when the package library is open,
// as package.loaded entries so that require finds them (luaL_register does
// the same for the C versions).
func Open(L *lua.LState) {
	register(L, "cjson", newCJSON(L))
	register(L, "cmsgpack", newCMsgpack(L))
	register(L, "bit", newBit(L))
	register(L, "struct", newStruct(L))
}

// checkLimit raises Lua's memory error when the state's string limit
// (lua.Options.ConcatLimit: HotKV's script memory limit) refuses a result
// of n bytes: the encoders build theirs outside any Lua instruction, so a
// table holding one big string many times could otherwise ask for more
// memory than the machine has.
func checkLimit(L *lua.LState, n int) {
	if lim := L.Options.ConcatLimit; lim != nil && !lim(n) {
		L.RaiseError("not enough memory")
	}
}

// OpenCJSON, OpenCMsgpack, OpenBit and OpenStruct are the libraries' loaders
// (luaopen_*): each pushes a fresh module table and returns 1, so they can be
// given to L.PreloadModule.
func OpenCJSON(L *lua.LState) int    { L.Push(newCJSON(L)); return 1 }
func OpenCMsgpack(L *lua.LState) int { L.Push(newCMsgpack(L)); return 1 }
func OpenBit(L *lua.LState) int      { L.Push(newBit(L)); return 1 }
func OpenStruct(L *lua.LState) int   { L.Push(newStruct(L)); return 1 }

func register(L *lua.LState, name string, mod *lua.LTable) {
	L.SetGlobal(name, mod)
	if pkg, ok := L.GetGlobal("package").(*lua.LTable); ok {
		if loaded, ok := pkg.RawGetString("loaded").(*lua.LTable); ok {
			loaded.RawSetString(name, mod)
		}
	}
}

func newModule(L *lua.LState, funcs map[string]lua.LGFunction) *lua.LTable {
	t := L.CreateTable(0, len(funcs)+4)
	// Register in a fixed order so that pairs() over the module is stable.
	names := make([]string, 0, len(funcs))
	for name := range funcs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.RawSetString(name, L.NewFunction(funcs[name]))
	}
	return t
}

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack fails when a C
// function's frame would hold more than this many values. The C libraries
// turn that into errors (and limits) that this package reproduces by
// counting the values the C code would have on its stack.
const maxCStack = 8000

// checkStack reports whether lua_checkstack(L, n) succeeds for a C frame
// holding top values.
func checkStack(top, n int) bool { return n <= maxCStack && top+n <= maxCStack }

// ---------------------------------------------------------------------------
// Errors, as lauxlib raises them.

// luaError raises msg the way luaL_error does: prefixed with the position of
// the calling Lua code ("source:line: "), or bare when the caller is not a
// Lua function (pcall, or Go).
func luaError(L *lua.LState, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	L.Error(lua.LString(where(L)+msg), 0)
}

// rawError raises msg with no position, as lua_error and the Lua core do
// when the current function is a C function ("table index is nil").
func rawError(L *lua.LState, msg string) {
	L.Error(lua.LString(msg), 0)
}

// where is luaL_where(L, 1).
func where(L *lua.LState) string {
	dbg, ok := L.GetStack(1)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil {
		return ""
	}
	if dbg.What == "G" || dbg.CurrentLine <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
}

// calleeName is the name luaL_argerror gives the running function: how the
// calling Lua code named it, or "?" when it was not called from Lua code.
func calleeName(L *lua.LState) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return "?"
	}
	if _, err := L.GetInfo("n", dbg, nil); err != nil {
		return "?"
	}
	if caller, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("S", caller, nil); err == nil && caller.What == "G" {
			return "?"
		}
	} else {
		return "?"
	}
	name := dbg.Name
	if name == "" || name == "(anonymous)" || name == "main chunk" || name == "corountine" ||
		strings.HasPrefix(name, "<") {
		return "?"
	}
	return name
}

// argError is luaL_argerror.
func argError(L *lua.LState, n int, msg string) {
	luaError(L, "bad argument #%d to '%s' (%s)", n, calleeName(L), msg)
}

// typeError is luaL_typerror.
func typeError(L *lua.LState, n int, tname string) {
	argError(L, n, tname+" expected, got "+typeName(L, n))
}

// typeName is luaL_typename: lua_typename(lua_type(L, n)), "no value" past
// the top of the stack.
func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() || n < 1 {
		return "no value"
	}
	return luaTypeName(L.Get(n))
}

func luaTypeName(v lua.LValue) string {
	switch v.Type() {
	case lua.LTNil:
		return "nil"
	case lua.LTBool:
		return "boolean"
	case lua.LTNumber:
		return "number"
	case lua.LTString:
		return "string"
	case lua.LTTable:
		return "table"
	case lua.LTFunction:
		return "function"
	case lua.LTUserData:
		return "userdata"
	case lua.LTThread:
		return "thread"
	}
	return v.Type().String()
}

// ---------------------------------------------------------------------------
// Argument access with the C API's conversions.

// arg returns argument n, LNil past the top.
func arg(L *lua.LState, n int) lua.LValue {
	if n > L.GetTop() {
		return lua.LNil
	}
	return L.Get(n)
}

// isNoneOrNil is lua_isnoneornil.
func isNoneOrNil(L *lua.LState, n int) bool { return arg(L, n) == lua.LNil }

// toNumber is lua_tonumber: numbers, and strings Lua 5.1 converts
// (luaO_str2d: strtod over the whole string, surrounding spaces allowed).
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return str2d(string(x))
	}
	return 0, false
}

// str2d is luaO_str2d on a Lua string (seen as the C string up to its first
// NUL byte).
func str2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	v, end := strtod(s, 0)
	if end == 0 {
		return 0, false
	}
	if end < len(s) && (s[end] == 'x' || s[end] == 'X') {
		// strtoul(s, 16) stops at the same 'x' glibc's strtod stopped at.
		return 0, false
	}
	for end < len(s) && isSpace(s[end]) {
		end++
	}
	if end != len(s) {
		return 0, false
	}
	return v, true
}

// toLString is lua_tolstring: strings, and numbers formatted with "%.14g".
func toLString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return fmtG(float64(x), 14), true
	}
	return "", false
}

// checkLString is luaL_checklstring.
func checkLString(L *lua.LState, n int) string {
	s, ok := toLString(arg(L, n))
	if !ok {
		typeError(L, n, "string")
	}
	return s
}

// checkNumber is luaL_checknumber.
func checkNumber(L *lua.LState, n int) float64 {
	f, ok := toNumber(arg(L, n))
	if !ok {
		typeError(L, n, "number")
	}
	return f
}

// checkInteger is luaL_checkinteger: lua_tointeger truncates the number to a
// 64-bit integer (lua_Integer is ptrdiff_t).
func checkInteger(L *lua.LState, n int) int64 {
	return doubleToInt64(checkNumber(L, n))
}

// optInteger is luaL_optinteger.
func optInteger(L *lua.LState, n int, def int64) int64 {
	if isNoneOrNil(L, n) {
		return def
	}
	return checkInteger(L, n)
}

// ---------------------------------------------------------------------------
// C numeric conversions on x86-64.

// doubleToInt64 is a C cast (int64_t)d: cvttsd2si, which yields INT64_MIN
// for NaN and out-of-range values.
func doubleToInt64(d float64) int64 {
	if d != d || d >= 9223372036854775808.0 || d < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(d)
}

// doubleToInt32 is a C cast (int)d: cvttsd2si with a 32-bit destination.
func doubleToInt32(d float64) int32 {
	if d != d || d >= 2147483648.0 || d <= -2147483649.0 {
		return math.MinInt32
	}
	return int32(d)
}

// doubleToUint64 is a C cast (uint64_t)d as GCC compiles it for x86-64.
func doubleToUint64(d float64) uint64 {
	if !(d >= 9223372036854775808.0) { // also NaN
		return uint64(doubleToInt64(d))
	}
	return uint64(doubleToInt64(d-9223372036854775808.0)) ^ (1 << 63)
}

// fmtG is C's printf("%.<prec>g", f) as glibc prints it.
func fmtG(f float64, prec int) string {
	switch {
	case f != f:
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}

// ---------------------------------------------------------------------------
// strtod, as glibc's in the C locale.

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z')
}

func hasPrefixFold(s string, i int, prefix string) bool {
	if len(s)-i < len(prefix) {
		return false
	}
	return strings.EqualFold(s[i:i+len(prefix)], prefix)
}

// strtod parses a number at s[start:] as glibc's strtod does and returns it
// with the index just past it; end == start when nothing was converted.
// Bytes past len(s) read as the C string's terminating NUL.
func strtod(s string, start int) (val float64, end int) {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	i := start
	for isSpace(at(i)) {
		i++
	}
	neg := false
	if c := at(i); c == '+' || c == '-' {
		neg = c == '-'
		i++
	}
	sign := func(v float64) float64 {
		if neg {
			return -v
		}
		return v
	}
	switch {
	case hasPrefixFold(s, i, "inf"):
		i += 3
		if hasPrefixFold(s, i, "inity") {
			i += 5
		}
		return sign(math.Inf(1)), i
	case hasPrefixFold(s, i, "nan"):
		i += 3
		bits := uint64(0x7ff8000000000000)
		if at(i) == '(' {
			j := i + 1
			for c := at(j); isAlnum(c) || c == '_'; c = at(j) {
				j++
			}
			if at(j) == ')' {
				// "nan(n)": glibc puts n, when it is a number in C syntax
				// (strtoull base 0), in the mantissa.
				if mant, ok := parseNaNPayload(s[i+1 : j]); ok {
					bits |= mant & 0x7ffffffffffff
				}
				i = j + 1
			}
		}
		if neg {
			bits |= 1 << 63
		}
		return math.Float64frombits(bits), i
	case at(i) == '0' && at(i+1)|0x20 == 'x' &&
		(isHexDigit(at(i+2)) || (at(i+2) == '.' && isHexDigit(at(i+3)))):
		return strtodHex(s, i+2, neg)
	}
	digits := 0
	j := i
	for isDigit(at(j)) {
		j++
		digits++
	}
	if at(j) == '.' {
		j++
		for isDigit(at(j)) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, start
	}
	if at(j)|0x20 == 'e' {
		k := j + 1
		if c := at(k); c == '+' || c == '-' {
			k++
		}
		if isDigit(at(k)) {
			for isDigit(at(k)) {
				k++
			}
			j = k
		}
	}
	v, _ := strconv.ParseFloat(s[i:j], 64) // correctly rounded; ±Inf on overflow
	return sign(v), j
}

// parseNaNPayload parses s whole as strtoull(s, &end, 0) would (decimal,
// 0x hexadecimal or 0 octal, saturating at 2^64-1); "" gives 0.
func parseNaNPayload(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' && isHexDigit(s[2]):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	overflow := false
	for i := 0; i < len(s); i++ {
		d := uint64(hexDigitValue(s[i]))
		if hexDigitValue(s[i]) < 0 || d >= base {
			return 0, false
		}
		if v > (math.MaxUint64-d)/base {
			overflow = true
		}
		v = v*base + d
	}
	if overflow {
		v = math.MaxUint64
	}
	return v, true
}

// strtodHex parses the hexadecimal significand at s[i:] (just past "0x") and
// its optional binary exponent.
func strtodHex(s string, i int, neg bool) (float64, int) {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	var mant strings.Builder
	mant.WriteString("0x")
	j := i
	for isHexDigit(at(j)) {
		mant.WriteByte(at(j))
		j++
	}
	if j == i {
		mant.WriteByte('0')
	}
	mant.WriteByte('.')
	if at(j) == '.' {
		j++
		for isHexDigit(at(j)) {
			mant.WriteByte(at(j))
			j++
		}
	}
	mant.WriteString("0p")
	exp := "0"
	if at(j)|0x20 == 'p' {
		k := j + 1
		if c := at(k); c == '+' || c == '-' {
			k++
		}
		if isDigit(at(k)) {
			for isDigit(at(k)) {
				k++
			}
			exp = s[j+1 : k]
			j = k
		}
	}
	mant.WriteString(exp)
	v, _ := strconv.ParseFloat(mant.String(), 64)
	if neg {
		v = -v
	}
	return v, j
}

// errReadonly is the error of a write to a read-only table, Redis's.
const errReadonly = "Attempt to modify a readonly table"

// readonlyKey marks the metatable of a read-only table lualib makes.
const readonlyKey = "__hotkv_readonly"

// readonlyProxy returns an empty table that reads through to real and
// refuses writes ("Attempt to modify a readonly table"); its metatable is
// hidden and cannot be replaced. rawset is refused by the sandbox, which
// asks IsReadonly.
func readonlyProxy(L *lua.LState, real *lua.LTable) *lua.LTable {
	proxy := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", real)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	mt.RawSetString(readonlyKey, lua.LTrue)
	L.SetMetatable(proxy, mt)
	return proxy
}

// IsReadonly reports whether t is a read-only table made by these
// libraries (cjson's array metatable): the sandbox refuses rawset on it.
func IsReadonly(t *lua.LTable) bool {
	mt, ok := t.Metatable.(*lua.LTable)
	return ok && mt.RawGetString(readonlyKey) == lua.LTrue
}
