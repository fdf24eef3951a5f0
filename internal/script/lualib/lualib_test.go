package lualib

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// A luaCase is a Lua snippet (the body of a function, on line 1 of chunk
// "user_script" as Redis compiles scripts) and what it gives: its pcall
// results as serialise below prints them. The expectations were taken from
// redis-server (EVAL of the same wrapped snippet); TestAgainstRedis checks
// them, and this package, against a live server when LUALIB_REDIS_ADDR is
// set (e.g. LUALIB_REDIS_ADDR=127.0.0.1:6379).
type luaCase struct {
	name string
	src  string
	want string
}

// serialiser is Lua code, identical in Redis's Lua 5.1 and gopher-lua, that
// turns pcall results into a deterministic string: numbers exactly (integers
// with %.0f, others %.17g), strings quoted with \xHH escapes for bytes
// outside printable ASCII, tables with their entries sorted by key (then by
// text), cjson.null as "null".
// It is kept on one line so the snippet after it starts on line 1.
const serialiser = `local __hex = "0123456789abcdef" ` +
	`local function __num(v) if v ~= v then return "nan" elseif v == 1/0 then return "inf" elseif v == -1/0 then return "-inf" ` +
	`elseif v == 0 and 1/v < 0 then return "-0" elseif v == math.floor(v) then return string.format("%.0f", v) end return string.format("%.17g", v) end ` +
	`local function __str(s) local o = {} for i = 1, #s do local b = string.byte(s, i) ` +
	`if b == 34 or b == 92 then o[#o+1] = "\\" .. string.char(b) elseif b >= 32 and b < 127 then o[#o+1] = string.char(b) ` +
	`else o[#o+1] = "\\x" .. string.sub(__hex, math.floor(b/16)+1, math.floor(b/16)+1) .. string.sub(__hex, b%16+1, b%16+1) end end ` +
	`return '"' .. table.concat(o) .. '"' end ` +
	`local __ser ` +
	`local function __cmp(a, b) local ta, tb = type(a.k), type(b.k) if ta ~= tb then return ta < tb end ` +
	`if (ta == "number" or ta == "string") and a.k ~= b.k then return a.k < b.k end return a.s < b.s end ` +
	`__ser = function(v, depth) local t = type(v) if t == "number" then return __num(v) elseif t == "string" then return __str(v) ` +
	`elseif t == "table" then if depth > 40 then return "{...}" end local es = {} for k, x in pairs(v) do es[#es+1] = {k = k, s = __ser(k, depth+1) .. "=" .. __ser(x, depth+1)} end ` +
	`table.sort(es, __cmp) local o = {} for i, e in ipairs(es) do o[i] = e.s end return "{" .. table.concat(o, ", ") .. "}" ` +
	`elseif t == "userdata" and v == cjson.null then return "null" end return t == "nil" and "nil" or t == "boolean" and tostring(v) or t end ` +
	`local function __all(...) local o = {} for i = 1, select("#", ...) do o[i] = __ser((select(i, ...)), 0) end return table.concat(o, ", ") end ` +
	`return __all(pcall(function() `

// wrap makes the script run for a snippet.
func wrap(src string) string { return serialiser + src + "\nend))" }

// newState makes a state with the standard libraries and these, with room
// on its stack for the C libraries' limits (8000 values in one call).
func newState() *lua.LState {
	L := lua.NewState(lua.Options{RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 80})
	Open(L)
	return L
}

// runLua runs a snippet on a fresh state with the libraries open.
func runLua(t testing.TB, src string) string {
	t.Helper()
	L := newState()
	defer L.Close()
	fn, err := L.Load(strings.NewReader(wrap(src)), "user_script")
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatalf("run %q: %v", src, err)
	}
	return L.Get(-1).String()
}

func runCases(t *testing.T, cases []luaCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runLua(t, c.src); got != c.want {
				t.Errorf("%s\n got: %s\nwant: %s", c.src, got, c.want)
			}
		})
	}
}

func allCases() map[string][]luaCase {
	return map[string][]luaCase{
		"cjson":    cjsonCases,
		"cmsgpack": cmsgpackCases,
		"bit":      bitCases,
		"struct":   structCases,
	}
}

// resetRedisCJSON restores the global cjson configuration in Redis, which
// persists between scripts there.
const resetRedisCJSON = `cjson.encode_sparse_array(false, 2, 10) cjson.encode_max_depth(1000) cjson.decode_max_depth(1000) ` +
	`cjson.encode_number_precision(14) cjson.encode_keep_buffer(true) cjson.encode_invalid_numbers(false) cjson.decode_invalid_numbers(true)`

// TestAgainstRedis runs every case on a live redis-server and checks that
// Redis, this package and the recorded expectation agree. With
// LUALIB_PRINT=1 it prints Redis's results instead of failing, to record
// new cases.
func TestAgainstRedis(t *testing.T) {
	addr := os.Getenv("LUALIB_REDIS_ADDR")
	if addr == "" {
		t.Skip("LUALIB_REDIS_ADDR not set")
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	eval := func(script string) (string, error) {
		var b strings.Builder
		fmt.Fprintf(&b, "*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n", len(script), script)
		if _, err := io.WriteString(conn, b.String()); err != nil {
			t.Fatal(err)
		}
		return readReply(t, rd)
	}
	print := os.Getenv("LUALIB_PRINT") != ""
	for lib, cases := range allCases() {
		for _, c := range cases {
			if _, err := eval(resetRedisCJSON); err != nil {
				t.Fatalf("reset: %v", err)
			}
			want, err := eval(wrap(c.src))
			if err != nil {
				t.Errorf("%s/%s: redis error %v", lib, c.name, err)
				continue
			}
			if print {
				if want != c.want {
					fmt.Printf("LUALIB_WANT\t%s\t%s\t%s\n", lib, c.name, strconv.Quote(want))
				}
				continue
			}
			if want != c.want {
				t.Errorf("%s/%s: recorded expectation differs from redis\n%s\nredis: %s\n want: %s", lib, c.name, c.src, want, c.want)
			}
			if got := runLua(t, c.src); got != want {
				t.Errorf("%s/%s: differs from redis\n%s\n  got: %s\nredis: %s", lib, c.name, c.src, got, want)
			}
		}
	}
}

func readReply(t *testing.T, rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf[:n]), nil
	case '-':
		return "", fmt.Errorf("%s", line[1:])
	case '+', ':':
		return line[1:], nil
	}
	t.Fatalf("unexpected reply %q", line)
	return "", nil
}

// requireLuaError fails unless err is an error raised in Lua (gopher-lua
// turns a Go panic in a library function into an ApiErrorPanic).
func requireLuaError(t *testing.T, err error) {
	t.Helper()
	ae, ok := err.(*lua.ApiError)
	if !ok || ae.Type != lua.ApiErrorRun {
		t.Fatalf("not a Lua error: %v", err)
	}
}

// ---------------------------------------------------------------------------
// The C-emulating helpers.

func TestFmtG(t *testing.T) {
	// Expectations from glibc's printf.
	for _, c := range []struct {
		f    float64
		prec int
		want string
	}{
		{0.1, 14, "0.1"},
		{1.0 / 3, 14, "0.33333333333333"},
		{100, 14, "100"},
		{1e14, 14, "1e+14"},
		{123456789012345, 14, "1.2345678901234e+14"},
		{123456789012355, 14, "1.2345678901236e+14"},
		{99999999999999.5, 14, "1e+14"},
		{0.0001, 14, "0.0001"},
		{0.00001, 14, "1e-05"},
		{math.Copysign(0, -1), 14, "-0"},
		{1e300, 14, "1e+300"},
		{-1.7976931348623157e308, 14, "-1.7976931348623e+308"},
		{5e-324, 14, "4.9406564584125e-324"},
		{2.5, 1, "2"},
		{3.5, 1, "4"},
		{0.15, 1, "0.1"},
		{1234.5, 3, "1.23e+03"},
		{1e5, 1, "1e+05"},
	} {
		if got := fmtG(c.f, c.prec); got != c.want {
			t.Errorf("fmtG(%v, %d) = %q, want %q", c.f, c.prec, got, c.want)
		}
	}
}

func TestStrtod(t *testing.T) {
	// Expectations from glibc's strtod.
	for _, c := range []struct {
		s    string
		want float64
		end  int
	}{
		{"1", 1, 1},
		{"-5e3", -5000, 4},
		{"1e", 1, 1},
		{"1e+", 1, 1},
		{"1.", 1, 2},
		{".5", 0.5, 2},
		{".", 0, 0},
		{"-", 0, 0},
		{"+1", 1, 2},
		{"0x1F", 31, 4},
		{"0x", 0, 1},
		{"0x.8", 0.5, 4},
		{"0x1p4", 16, 5},
		{"0x1p", 1, 3},
		{"inf", inf, 3},
		{"-Infinity", -inf, 9},
		{"infinit", inf, 3},
		{"1e400", inf, 5},
		{"1e-400", 0, 6},
		{"  7", 7, 3},
		{"12abc", 12, 2},
	} {
		got, end := strtod(c.s, 0)
		if got != c.want || end != c.end {
			t.Errorf("strtod(%q) = %v, %d; want %v, %d", c.s, got, end, c.want, c.end)
		}
	}
	for _, s := range []string{"nan", "NaN", "-nan", "nan(123)", "nan(x"} {
		got, end := strtod(s, 0)
		if got == got {
			t.Errorf("strtod(%q) = %v, want NaN", s, got)
		}
		if want := map[string]int{"nan(123)": 8, "-nan": 4}[s]; want != 0 && end != want {
			t.Errorf("strtod(%q) end %d, want %d", s, end, want)
		}
	}
}

var inf = 1 / zero

var zero = 0.0

func TestConversions(t *testing.T) {
	if got := doubleToUint64(18446744073709551616.0); got != 0 {
		t.Errorf("(uint64)2^64 = %d", got)
	}
	if got := doubleToUint64(9223372036854777856.0); got != 0x8000000000000800 {
		t.Errorf("(uint64)(2^63+2048) = %#x", got)
	}
	if got := doubleToUint64(inf - inf); got != 1<<63 {
		t.Errorf("(uint64)NaN = %#x", got)
	}
	if got := doubleToInt64(-1e30); got != -1<<63 {
		t.Errorf("(int64)-1e30 = %d", got)
	}
	if got := doubleToInt32(2147483648.0); got != -1<<31 {
		t.Errorf("(int)2^31 = %d", got)
	}
	for s, want := range map[string]float64{" 10 ": 10, "0x10": 16, "1e2": 100, "5\x00zz": 5, "inf": inf} {
		if got, ok := str2d(s); !ok || got != want {
			t.Errorf("str2d(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", " ", "0x", "1x", "abc", "1 2", "\x005"} {
		if got, ok := str2d(s); ok {
			t.Errorf("str2d(%q) = %v, want failure", s, got)
		}
	}
}

func TestOpenRegistersModules(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	for _, name := range []string{"cjson", "cmsgpack", "bit", "struct"} {
		g, ok := L.GetGlobal(name).(*lua.LTable)
		if !ok {
			t.Fatalf("global %s is %v", name, L.GetGlobal(name))
		}
		if err := L.DoString(`assert(require("` + name + `") == ` + name + `)`); err != nil {
			t.Errorf("require %s: %v", name, err)
		}
		_ = g
	}
	// The loaders work with PreloadModule too, each call making a new table.
	L2 := lua.NewState()
	defer L2.Close()
	L2.PreloadModule("cjson", OpenCJSON)
	L2.PreloadModule("cmsgpack", OpenCMsgpack)
	L2.PreloadModule("bit", OpenBit)
	L2.PreloadModule("struct", OpenStruct)
	if err := L2.DoString(`
		local cj = require("cjson")
		assert(cj.encode({1, cj.null}) == "[1,null]")
		assert(require("cmsgpack").pack(1) == "\1")
		assert(require("bit").band(3, 5) == 1)
		assert(require("struct").pack(">h", 1) == "\0\1")`); err != nil {
		t.Error(err)
	}
}
