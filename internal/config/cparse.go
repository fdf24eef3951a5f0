package config

import (
	"errors"
	"github.com/hotkv/hotkv/internal/resp"
	"math"
	"strconv"
	"strings"
	"syscall"
)

// This file ports the C parsers Redis's config code relies on, byte for byte,
// so that HotKV accepts and rejects exactly the same spellings: sdssplitargs and
// sdscatrepr (sds.c), memtoull, string2ll, string2d and trimDoubleString
// (util.c), and the libc pieces they lean on (strtoll, isspace, strcasecmp,
// strerror). Functions that Redis applies to C strings see the argument only up
// to its first NUL byte, as in C; cstr does that cut.

// cstr returns s up to its first NUL byte: what a C function taking a char*
// sees of an argument that may contain NULs.
func cstr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// isSpace is C's isspace in the C locale.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// asciiLower folds ASCII letters only, as C's tolower does in the C locale
// (strings.ToLower would also fold non-ASCII letters such as the Kelvin sign).
// It does not allocate when s has no upper-case letter.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// equalFoldASCII is strcasecmp(a, b) == 0 in the C locale.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// splitArgs is sdssplitargs (resp.SplitArgs) on the line as C sees it (up to
// its first NUL): it splits a configuration line into arguments with Redis's
// quoting rules; ok is false for unbalanced quotes (Redis returns NULL).
func splitArgs(line string) (args []string, ok bool) {
	parts, ok := resp.SplitArgs([]byte(cstr(line)))
	if !ok {
		return nil, false
	}
	args = make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args, true
}

// repr is sdscatrepr: s in double quotes with Redis's escapes, the form CONFIG
// REWRITE writes string values in. splitArgs(repr(s)) == [s] for any s without
// NUL bytes.
func repr(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c <= 0x7e {
				b.WriteByte(c)
			} else {
				const hexdigits = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hexdigits[c>>4])
				b.WriteByte(hexdigits[c&15])
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// memtoull is util.c's memtoull: digits followed by an optional unit (b, k,
// kb, m, mb, g, gb; any case; k/m/g are powers of 1000, kb/mb/gb of 1024).
// Quirks kept from Redis: the empty string and a unit alone ("mb") mean 0, a
// digit run that overflows saturates at 2^64-1 (strtoull's ERANGE is not
// checked), leading zeros are fine, and 128 or more digits are an error.
func memtoull(s string) (uint64, bool) {
	s = cstr(s)
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	var mul uint64
	switch unit := s[i:]; {
	case unit == "" || equalFoldASCII(unit, "b"):
		mul = 1
	case equalFoldASCII(unit, "k"):
		mul = 1000
	case equalFoldASCII(unit, "kb"):
		mul = 1024
	case equalFoldASCII(unit, "m"):
		mul = 1000 * 1000
	case equalFoldASCII(unit, "mb"):
		mul = 1024 * 1024
	case equalFoldASCII(unit, "g"):
		mul = 1000 * 1000 * 1000
	case equalFoldASCII(unit, "gb"):
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 {
		return 0, false
	}
	var val uint64
	for _, c := range []byte(s[:i]) {
		d := uint64(c - '0')
		if val > (math.MaxUint64-d)/10 {
			val = math.MaxUint64 // strtoull saturates; Redis ignores ERANGE
			break
		}
		val = val*10 + d
	}
	if val > math.MaxUint64/mul {
		return 0, false
	}
	return val * mul, true
}

// string2ll is util.c's string2ll: a strict base-10 int64. No sign other than a
// leading '-', no leading zeros ("0" alone is fine, "-0" is not), no blanks,
// at most 20 bytes, no overflow.
func string2ll(s string) (int64, bool) {
	if len(s) == 0 || len(s) >= 21 {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	p := 0
	neg := false
	if s[0] == '-' {
		neg = true
		p++
		if p == len(s) {
			return 0, false
		}
	}
	if s[p] < '1' || s[p] > '9' {
		return 0, false
	}
	var v uint64
	for ; p < len(s); p++ {
		c := s[p]
		if !isDigit(c) {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true // two's complement wrap is the point for -2^63
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// cStrtoll is strtoll(s, &end, base) for base 8 or 10 on a C string: leading
// blanks and one sign are skipped, digits are consumed while they are valid for
// the base. end is the index of the first byte not consumed, 0 when there were
// no digits at all (C sets endptr back to the start). An out-of-range result
// saturates and sets overflow (errno == ERANGE).
func cStrtoll(s string, base int) (v int64, end int, overflow bool) {
	p := 0
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	neg := false
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	start := p
	limit := uint64(math.MaxInt64)
	if neg {
		limit = 1 << 63
	}
	var u uint64
	for p < len(s) && isDigit(s[p]) && int(s[p]-'0') < base {
		d := uint64(s[p] - '0')
		if !overflow {
			if u > (limit-d)/uint64(base) {
				overflow = true
			} else {
				u = u*uint64(base) + d
			}
		}
		p++
	}
	if p == start {
		return 0, 0, false
	}
	switch {
	case overflow && neg:
		return math.MinInt64, p, true
	case overflow:
		return math.MaxInt64, p, true
	case neg:
		return int64(-u), p, false // -2^63 wraps correctly
	}
	return int64(u), p, false
}

// string2d is util.c's string2d: a whole-string float that is not NaN, does not
// overflow, and does not start with a blank.
func string2d(s string) (float64, bool) {
	if len(s) == 0 || isSpace(s[0]) || strings.IndexByte(s, '_') >= 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// formatPercentile is sprintf("%f") followed by trimDoubleString: six decimals
// with trailing zeros (and a trailing '.') removed, so 99.9 prints "99.9" and
// 50 prints "50".
func formatPercentile(f float64) string {
	s := strconv.FormatFloat(f, 'f', 6, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// formatMemory is rewriteConfigFormatMemory: the largest of gb, mb, kb that
// divides the value exactly, else plain bytes. Values are unsigned here (Redis
// prints the value as a signed long long, which only matters above 2^63).
func formatMemory(v uint64) string {
	const kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
	switch {
	case v != 0 && v%gb == 0:
		return strconv.FormatUint(v/gb, 10) + "gb"
	case v != 0 && v%mb == 0:
		return strconv.FormatUint(v/mb, 10) + "mb"
	case v != 0 && v%kb == 0:
		return strconv.FormatUint(v/kb, 10) + "kb"
	}
	return strconv.FormatUint(v, 10)
}

// strerror renders err the way C's strerror renders its errno ("No such file
// or directory"): Go's syscall texts are the same words in lower case.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}

// Repr is sdscatrepr (repr) for the other files Redis writes the same way:
// the AOF manifest quotes a file name with it.
func Repr(s string) string { return repr(s) }
