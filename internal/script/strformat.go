package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// string.format as Lua 5.1's str_format (lstrlib.c), which Redis runs:
// gopher-lua hands the format to Go's fmt.Sprintf, whose verbs, argument
// checks and widths are not C's (a width of 5000 made a 5000-byte item, %u
// and a bad option printed "%!u(...)", %s of a table printed its address).
// Here each item is scanned as scanformat does (flags at most 5, width and
// precision at most two digits each: the output of one item is bounded),
// its argument is checked as luaL_checknumber / luaL_checklstring do, and
// it is formatted as glibc's sprintf formats it.

const formatFlags = "-+ #0"

// fmtSpec is one scanned item: its flags, width and precision (-1: none).
type fmtSpec struct {
	flags      string
	width      int
	prec       int
	conversion byte
}

func (f *fmtSpec) has(flag byte) bool { return strings.IndexByte(f.flags, flag) >= 0 }

// strFormat is string.format.
func strFormat(L *lua.LState) int {
	format := checkLString(L, 1, "format")
	top := L.GetTop()
	arg := 1
	var b []byte
	for i := 0; i < len(format); {
		c := format[i]
		if c != '%' {
			b = append(b, c)
			i++
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b = append(b, '%')
			i++
			continue
		}
		arg++
		if arg > top {
			argError(L, arg, "format", "no value")
		}
		spec, next := scanFormat(L, format, i)
		i = next
		switch spec.conversion {
		case 'c':
			item := []byte{byte(int32(checkNumber(L, arg, "format")))}
			b = appendPadded(b, &spec, cutNUL(item))
		case 'd', 'i':
			b = appendInt(b, &spec, cInt64(checkNumber(L, arg, "format")))
		case 'o', 'u', 'x', 'X':
			b = appendUint(b, &spec, cUint64(checkNumber(L, arg, "format")))
		case 'e', 'E', 'f', 'g', 'G':
			b = appendFloat(b, &spec, checkNumber(L, arg, "format"))
		case 'q':
			b = appendQuoted(b, checkLString(L, arg, "format"))
		case 's':
			s := checkLString(L, arg, "format")
			if spec.prec < 0 && len(s) >= 100 {
				b = append(b, s...) // too long to format: kept whole, as Lua does
				break
			}
			item := cutNUL([]byte(s))
			if spec.prec >= 0 && len(item) > spec.prec {
				item = item[:spec.prec]
			}
			b = appendPadded(b, &spec, item)
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", spec.conversion)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// scanFormat is scanformat: the item starting at format[i] (after its '%').
func scanFormat(L *lua.LState, format string, i int) (fmtSpec, int) {
	at := func(j int) byte {
		if j < len(format) {
			return format[j]
		}
		return 0
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	start := i
	for at(i) != 0 && strings.IndexByte(formatFlags, at(i)) >= 0 {
		i++
	}
	if i-start >= len(formatFlags)+1 {
		L.RaiseError("invalid format (repeated flags)")
	}
	spec := fmtSpec{flags: format[start:i], width: -1, prec: -1}
	digits := func() int {
		n := -1
		for k := 0; k < 2 && isDigit(at(i)); k++ {
			n = max(n, 0)*10 + int(at(i)-'0')
			i++
		}
		return n
	}
	spec.width = digits()
	if at(i) == '.' {
		i++
		spec.prec = max(digits(), 0)
	}
	if isDigit(at(i)) {
		L.RaiseError("invalid format (width or precision too long)")
	}
	spec.conversion = at(i)
	return spec, i + 1
}

// cutNUL is what sprintf's C strings keep: the bytes before the first NUL.
func cutNUL(b []byte) []byte {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return b[:i]
	}
	return b
}

// appendPadded appends item padded with spaces to the width, on the left
// unless the '-' flag is set.
func appendPadded(b []byte, spec *fmtSpec, item []byte) []byte {
	pad := spec.width - len(item)
	if pad <= 0 {
		return append(b, item...)
	}
	if spec.has('-') {
		return append(append(b, item...), strings.Repeat(" ", pad)...)
	}
	return append(append(b, strings.Repeat(" ", pad)...), item...)
}

// goVerb is spec as a Go fmt directive with the verb v (fmt's flags, width
// and precision are C's for these verbs).
func goVerb(spec *fmtSpec, v byte) string {
	var sb strings.Builder
	sb.WriteByte('%')
	sb.WriteString(spec.flags)
	if spec.width >= 0 {
		sb.WriteString(strconv.Itoa(spec.width))
	}
	if spec.prec >= 0 {
		sb.WriteByte('.')
		sb.WriteString(strconv.Itoa(spec.prec))
	}
	sb.WriteByte(v)
	return sb.String()
}

func appendInt(b []byte, spec *fmtSpec, n int64) []byte {
	return fmtAppend(b, goVerb(spec, 'd'), n)
}

func appendUint(b []byte, spec *fmtSpec, n uint64) []byte {
	verb := spec.conversion
	if verb == 'u' {
		verb = 'd'
	}
	if n == 0 && (verb == 'x' || verb == 'X') && spec.has('#') {
		// C's alternate form adds 0x only to a value that is not 0
		s := *spec
		s.flags = strings.ReplaceAll(s.flags, "#", "")
		return fmtAppend(b, goVerb(&s, verb), n)
	}
	return fmtAppend(b, goVerb(spec, verb), n)
}

func appendFloat(b []byte, spec *fmtSpec, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// glibc: inf, -inf, nan, -nan (upper case for E and G), no zero padding
		word := "inf"
		if math.IsNaN(f) {
			word = "nan"
		}
		if spec.conversion == 'E' || spec.conversion == 'G' {
			word = strings.ToUpper(word)
		}
		switch {
		case math.Signbit(f):
			word = "-" + word
		case spec.has('+'):
			word = "+" + word
		case spec.has(' '):
			word = " " + word
		}
		return appendPadded(b, spec, []byte(word))
	}
	s := *spec
	if s.prec < 0 && (s.conversion == 'g' || s.conversion == 'G') {
		s.prec = 6 // C's default precision; Go's %g would print the shortest form
	}
	return fmtAppend(b, goVerb(&s, s.conversion), f)
}

func fmtAppend(b []byte, verb string, v any) []byte { return fmt.Appendf(b, verb, v) }

// appendQuoted is addquoted: the string between double quotes, with '"',
// '\' and newlines escaped by a backslash, CR as \r and NUL as \000.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b = append(b, '\\', c)
		case '\r':
			b = append(b, `\r`...)
		case 0:
			b = append(b, `\000`...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// cInt64 is C's (long long) cast of a double on x86-64: truncation, and
// the "indefinite integer" (the smallest int64) for NaN and out of range.
func cInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cUint64 is C's (unsigned long long) cast of a double as gcc compiles it
// on x86-64: below 2^63 through the signed conversion (so -1 is 2^64-1),
// from 2^63 by subtracting 2^63 first.
func cUint64(f float64) uint64 {
	if f < 1<<63 {
		return uint64(cInt64(f))
	}
	return uint64(cInt64(f-(1<<63))) ^ (1 << 63)
}

// checkNumber is luaL_checknumber: a number, or a string that converts to
// one; otherwise "bad argument #arg to 'fn' (number expected, got <type>)".
func checkNumber(L *lua.LState, arg int, fn string) float64 {
	switch v := L.Get(arg).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := strToNumber(string(v)); ok {
			return f
		}
	}
	argError(L, arg, fn, "number expected, got "+typeName(L, arg))
	return 0
}

// checkLString is luaL_checklstring: a string, or a number as its "%.14g"
// text; otherwise "bad argument #arg to 'fn' (string expected, got <type>)".
func checkLString(L *lua.LState, arg int, fn string) string {
	switch v := L.Get(arg).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return v.String() // lua_tolstring's %.14g (the gopher-lua patch)
	}
	argError(L, arg, fn, "string expected, got "+typeName(L, arg))
	return ""
}

// argError is luaL_argerror.
func argError(L *lua.LState, arg int, fn, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", arg, fn, msg)
}

// typeName is luaL_typename: "no value" past the arguments.
func typeName(L *lua.LState, arg int) string {
	if arg > L.GetTop() {
		return "no value"
	}
	return L.Get(arg).Type().String()
}

// strToNumber is luaO_str2d: strtod, or a hexadecimal integer after 0x,
// with surrounding white space.
func strToNumber(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false
	}
	neg := false
	h := t
	if h[0] == '-' || h[0] == '+' {
		neg = h[0] == '-'
		h = h[1:]
	}
	if len(h) > 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		n, err := strconv.ParseUint(h[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		if neg {
			return -float64(n), true
		}
		return float64(n), true
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !strings.Contains(err.Error(), "value out of range") {
		return 0, false
	}
	return f, true
}
