package resp

import (
	"math"
	"strconv"
	"unsafe"
)

// ParseInt parses b exactly like Redis's string2ll: an optional '-', then
// decimal digits without leading zeros, fitting an int64. It rejects the
// empty string, '+', spaces, "-0", "01", and anything of 21 bytes or more.
// Every accepted input is the canonical text of the value, so
// AppendInt(nil, v) reproduces b.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	if len(b) <= 18 { // at most 10^18-1: no overflow to test for
		for _, c := range b {
			d := uint64(c - '0')
			if d > 9 {
				return 0, false
			}
			v = v*10 + d
		}
		if neg {
			return -int64(v), true
		}
		return int64(v), true
	}
	for _, c := range b {
		d := uint64(c - '0')
		if d > 9 {
			return 0, false
		}
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to MinInt64, as intended
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// AppendInt appends the decimal text of n, as Redis's ll2string writes it.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// ParseFloat parses b like Redis's string2d, which getDoubleFromObject uses
// for scores and other double arguments: strtod must consume all of b, and
// b must not start with a space. Accepted, as by strtod: an optional sign,
// then decimal digits with an optional point and e-exponent, or a 0x hex
// mantissa with an optional p-exponent, or inf / infinity in any case.
// Rejected: empty input, NaN in any form, values that overflow to ±Inf,
// and nonzero values that underflow to zero. It does not allocate, except
// on the error path of an overflowing or very long hex input.
func ParseFloat(b []byte) (float64, bool) {
	n, ok := scanFloat(b)
	if !ok || n.kind == numNaN {
		return 0, false
	}
	if n.kind == numInf {
		if n.neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	s := b
	if n.kind == numHex && !n.hasExp {
		// Go's syntax requires the p exponent that C's makes optional.
		var tmp [64]byte
		if len(b)+2 <= len(tmp) {
			s = append(append(tmp[:0], b...), 'p', '0')
		} else {
			s = append(append([]byte(nil), b...), 'p', '0')
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
	if err != nil || (f == 0 && !n.zero) {
		return 0, false // ERANGE: overflow, or underflow to zero
	}
	return f, true
}

// Kinds of number scanFloat recognises.
const (
	numDec = iota
	numHex
	numInf
	numNaN
)

// floatText describes a string that matches strtod's grammar in full.
type floatText struct {
	kind   int
	neg    bool
	hasExp bool // hex: a p exponent is present
	zero   bool // every mantissa digit is 0
	// Decimal and hex: digits holds the mantissa digits, point is how many
	// of them precede the radix point, and exp the exponent (saturated).
	digits []byte
	point  int
	exp    int64
}

// scanFloat checks that all of b is one number in strtod's grammar (and
// that b does not start with a space, which string2d/string2ld reject). It
// does not convert anything.
func scanFloat(b []byte) (n floatText, ok bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return n, false
	}
	i := 0
	if b[0] == '+' || b[0] == '-' {
		n.neg = b[0] == '-'
		i++
	}
	rest := b[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		n.kind = numInf
		return n, len(rest) == len("infinity")
	case hasPrefixFold(rest, "inf"):
		n.kind = numInf
		return n, len(rest) == len("inf")
	case hasPrefixFold(rest, "nan"):
		// "nan" or "nan(n-char-sequence)": a NaN, rejected by the caller.
		n.kind = numNaN
		return n, true
	}
	isDigit := func(c byte) bool { return c-'0' <= 9 }
	base := byte('e')
	if len(rest) > 2 && rest[0] == '0' && rest[1]|0x20 == 'x' {
		// strtod only takes the 0x if a hex digit follows it (or the point).
		j := 2
		if j < len(rest) && rest[j] == '.' {
			j++
		}
		if j < len(rest) && isHex(rest[j]) {
			n.kind, isDigit, base = numHex, isHex, 'p'
			i += 2
		}
	}
	// Mantissa: digits [. digits], at least one digit.
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	n.point = i - start
	intEnd := i
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	n.digits = b[start:i]
	nd := n.point + (i - intEnd)
	if i > intEnd {
		nd-- // the point
	}
	if nd == 0 {
		return n, false
	}
	n.zero = true
	for _, c := range n.digits {
		if c != '0' && c != '.' {
			n.zero = false
			break
		}
	}
	// Exponent: strtod consumes it only if well formed; else it stops
	// before the 'e' or 'p', which leaves bytes over.
	if i < len(b) && b[i]|0x20 == base {
		j := i + 1
		neg := false
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			neg = b[j] == '-'
			j++
		}
		if j == len(b) || b[j]-'0' > 9 {
			return n, false
		}
		for ; j < len(b) && b[j]-'0' <= 9; j++ {
			if n.exp < 1e15 {
				n.exp = n.exp*10 + int64(b[j]-'0')
			}
		}
		if neg {
			n.exp = -n.exp
		}
		n.hasExp = true
		i = j
	}
	return n, i == len(b)
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if b[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}
