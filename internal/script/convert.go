package script

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
)

// maxReplyDepth bounds the nesting of a script's reply (a self-referencing table
// would recurse forever); deeper levels become Redis's "reached lua stack limit".
const maxReplyDepth = 2000

// luaToResp appends the Lua value v to w as Redis's luaReplyToRedisReply does:
// strings are bulk strings, numbers integers (truncated), booleans 1/nil in RESP2
// scripts and booleans in RESP3 ones, tables with err/ok/double/big_number/
// verbatim_string/map/set fields the matching reply, other tables arrays up to
// the first nil, anything else nil.
func luaToResp(L *lua.LState, v lua.LValue, run *Run, w *resp.Writer, depth int) {
	if depth > maxReplyDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		if run.Resp == 2 {
			if v {
				w.Int(1)
			} else {
				w.Null()
			}
		} else {
			w.Bool(bool(v))
		}
	case lua.LNumber:
		w.Int(luaNumberToInt(float64(v)))
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			w.Error(sanitize(string(s)))
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			w.SimpleString(sanitize(string(s)))
			return
		}
		if n, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.Double(float64(n))
			return
		}
		if s, ok := v.RawGetString("big_number").(lua.LString); ok {
			w.BigNumber(sanitize(string(s)))
			return
		}
		if vt, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			f, fok := vt.RawGetString("format").(lua.LString)
			s, sok := vt.RawGetString("string").(lua.LString)
			if fok && sok {
				w.Verbatim(string(f), string(s))
				return
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.MapLen(n)
			m.ForEach(func(k, val lua.LValue) {
				luaToResp(L, k, run, w, depth+1)
				luaToResp(L, val, run, w, depth+1)
			})
			return
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			s.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.SetLen(n)
			s.ForEach(func(k, _ lua.LValue) { luaToResp(L, k, run, w, depth+1) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.ArrayLen(n)
		for i := 1; i <= n; i++ {
			luaToResp(L, v.RawGetInt(i), run, w, depth+1)
		}
	default:
		w.Null()
	}
}

// luaNumberToInt is C's (long long) cast of a double: truncation, with NaN and
// out-of-range values giving LLONG_MIN as on x86-64.
func luaNumberToInt(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return -9223372036854775808
	}
	return int64(f)
}

// respToLua converts one RESP reply (as HotKV's writer produced it) into a Lua
// value as Redis's redisProtocolToLuaType does, returning it and the rest of b.
func respToLua(L *lua.LState, b []byte) (lua.LValue, []byte) {
	if len(b) == 0 {
		return lua.LNil, b
	}
	line, rest := splitLine(b[1:])
	switch b[0] {
	case ':':
		n, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(n), rest
	case '$':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		return lua.LString(rest[:n]), rest[n+2:]
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, rest
	case '-':
		t := L.CreateTable(0, 2)
		t.RawSetString("err", lua.LString(errorText("-"+string(line))))
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t, rest
	case '*', '~', '%', '>':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		switch b[0] {
		case '%':
			m := L.CreateTable(0, n)
			for i := 0; i < n; i++ {
				var k, v lua.LValue
				k, rest = respToLua(L, rest)
				v, rest = respToLua(L, rest)
				m.RawSet(k, v)
			}
			t := L.CreateTable(0, 1)
			t.RawSetString("map", m)
			return t, rest
		case '~':
			s := L.CreateTable(0, n)
			for i := 0; i < n; i++ {
				var k lua.LValue
				k, rest = respToLua(L, rest)
				s.RawSet(k, lua.LTrue)
			}
			t := L.CreateTable(0, 1)
			t.RawSetString("set", s)
			return t, rest
		}
		t := L.CreateTable(n, 0)
		for i := 1; i <= n; i++ {
			var v lua.LValue
			v, rest = respToLua(L, rest)
			t.RawSetInt(i, v)
		}
		return t, rest
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), rest
	case ',':
		f, _ := resp.ParseFloat(line)
		switch string(line) {
		case "inf":
			f = posInf
		case "-inf":
			f = negInf
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, rest
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, rest
	case '=':
		n, _ := strconv.Atoi(string(line))
		body := rest[:n]
		rest = rest[n+2:]
		vt := L.CreateTable(0, 2)
		if len(body) >= 4 {
			vt.RawSetString("string", lua.LString(body[4:]))
			vt.RawSetString("format", lua.LString(body[:3]))
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", vt)
		return t, rest
	case '|':
		n, _ := strconv.Atoi(string(line))
		for i := 0; i < 2*n; i++ {
			_, rest = respToLua(L, rest)
		}
		return respToLua(L, rest)
	}
	return lua.LNil, nil
}

func splitLine(b []byte) (line, rest []byte) {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return b[:i], b[i+2:]
		}
	}
	return b, nil
}
