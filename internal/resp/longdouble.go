package resp

import (
	"math"
	"math/big"
	"strconv"
)

// LongDouble is a value of C's long double as Redis computes with it on
// x86-64: the x87 extended format, with a 64-bit significand and exponents
// up to ±16383. INCRBYFLOAT and HINCRBYFLOAT parse both operands as long
// doubles, add them and print the sum with ld2string(LD_STR_HUMAN); doing
// the same with LongDouble reproduces Redis's results digit for digit,
// which float64 arithmetic cannot (Redis turns "10.5" + "0.1" into "10.6"
// and 1234 + 0.1 into "1234.09999999999999998").
//
// The zero value is +0. LongDouble values are immutable and safe to copy.
// They are backed by math/big and allocate; they are meant for these two
// commands, not for hot paths. Subnormal values (below about 3.4e-4932)
// are kept with a full 64-bit significand, a difference from the x87
// that no realistic input reaches.
type LongDouble struct {
	f   *big.Float // nil means +0; otherwise finite or ±Inf, precision <= 64
	nan bool
}

// Extended-precision limits: 2^ldMaxExp is the first power of two that
// overflows, 2^-ldSubExp the smallest subnormal.
const (
	ldPrec     = 64
	ldMaxExp   = 16384
	ldSubExp   = 16445
	ldMaxChars = 5 * 1024 // MAX_LONG_DOUBLE_CHARS
)

// ParseLongDouble parses b like Redis's string2ld (strtold with its extra
// checks): the grammar of ParseFloat, at most 5119 bytes, rounded to the
// nearest long double. ok is false where Redis answers "value is not a
// valid float": empty input, a leading space, trailing bytes, NaN, and
// values that overflow the long double range or underflow to zero.
// "inf" and "infinity" are accepted.
func ParseLongDouble(b []byte) (x LongDouble, ok bool) {
	if len(b) >= ldMaxChars {
		return x, false
	}
	n, ok := scanFloat(b)
	if !ok || n.kind == numNaN {
		return x, false
	}
	switch {
	case n.kind == numInf:
		return LongDouble{f: new(big.Float).SetInf(n.neg)}, true
	case n.zero:
		return LongDouble{f: new(big.Float)}.withSign(n.neg), true
	}
	// The value is mant * 10^e10 (decimal) or mant * 2^e2 (hex), exactly.
	var mant big.Int
	digits := make([]byte, 0, len(n.digits))
	for _, c := range n.digits {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	frac := int64(len(digits) - n.point)
	if n.kind == numHex {
		mant.SetString(string(digits), 16)
		e2 := n.exp - 4*frac
		top := int64(mant.BitLen()) + e2 // value < 2^top
		if top > ldMaxExp+1 || top < -ldSubExp-1 {
			return x, false // overflow, or underflow to zero: ERANGE
		}
		f, ok := roundLD(func(z *big.Float) {
			z.SetInt(&mant)
			z.SetMantExp(z, int(e2))
		})
		return LongDouble{f: f}.withSign(n.neg), ok
	}
	mant.SetString(string(digits), 10)
	e10 := n.exp - frac
	mag := int64(len(mant.String())) + e10 // value < 10^mag
	if mag > 4933+1 || mag < -4951-1 {
		return x, false
	}
	numI, denI := &mant, big.NewInt(1)
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(e10)), nil)
	if e10 >= 0 {
		numI = new(big.Int).Mul(&mant, pow)
	} else {
		denI = pow
	}
	// SetInt on a zero-precision Float is exact; Quo rounds once.
	num, den := new(big.Float).SetInt(numI), new(big.Float).SetInt(denI)
	f, ok := roundLD(func(z *big.Float) { z.Quo(num, den) })
	return LongDouble{f: f}.withSign(n.neg), ok
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// roundLD evaluates set, a correctly rounded operation on an exact
// positive or zero value, at long double precision, redoing it at reduced
// precision for subnormal results. ok is false on overflow and on
// underflow to zero (strtold's ERANGE cases).
func roundLD(set func(z *big.Float)) (*big.Float, bool) {
	z := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven)
	set(z)
	if z.Sign() == 0 {
		return z, true
	}
	exp := z.MantExp(nil)
	if exp > ldMaxExp {
		return z, false
	}
	if p := exp + ldSubExp; p < ldPrec {
		if p < 1 {
			// Below the smallest subnormal s = 2^-16445: the value rounds
			// to s if it exceeds s/2, else to zero. p == 0 means it is in
			// [s/2, s); z is its 64-bit rounding, whose accuracy tells
			// which side of an exact s/2 the true value lies on.
			half := new(big.Float).SetMantExp(big.NewFloat(0.5), -ldSubExp)
			c := z.Cmp(half)
			if p < 0 || c < 0 || c == 0 && z.Acc() != big.Below {
				return z, false
			}
			return new(big.Float).SetMantExp(big.NewFloat(1), -ldSubExp), true
		}
		z = new(big.Float).SetPrec(uint(p)).SetMode(big.ToNearestEven)
		set(z)
	}
	return z, true
}

func (x LongDouble) withSign(neg bool) LongDouble {
	if x.f != nil && neg != x.f.Signbit() {
		x.f = new(big.Float).Neg(x.f)
	}
	return x
}

// IsNaN reports whether x is a NaN, as inf + -inf gives.
func (x LongDouble) IsNaN() bool { return x.nan }

// IsInf reports whether x is +Inf or -Inf.
func (x LongDouble) IsInf() bool { return !x.nan && x.f != nil && x.f.IsInf() }

// Float64 returns x rounded to the nearest float64.
func (x LongDouble) Float64() float64 {
	if x.nan {
		return math.NaN()
	}
	if x.f == nil {
		return 0
	}
	f, _ := x.f.Float64()
	return f
}

// Add returns x + y rounded like the x87 does: to the nearest long double,
// ±Inf beyond the range, NaN for inf + -inf.
func (x LongDouble) Add(y LongDouble) LongDouble {
	if x.nan || y.nan {
		return LongDouble{nan: true}
	}
	xf, yf := x.big(), y.big()
	if xf.IsInf() && yf.IsInf() && xf.Signbit() != yf.Signbit() {
		return LongDouble{nan: true}
	}
	z, ok := roundLD(func(z *big.Float) { z.Add(xf, yf) })
	if !ok && z.Sign() != 0 && !z.IsInf() {
		if z.MantExp(nil) > ldMaxExp {
			z = new(big.Float).SetInf(z.Signbit())
		} else {
			z = new(big.Float).SetPrec(ldPrec) // below the subnormals: 0
		}
	}
	return LongDouble{f: z}
}

// Big returns a copy of x as a big.Float of long double precision (NaN, which
// big.Float cannot hold, gives zero: check IsNaN first).
func (x LongDouble) Big() *big.Float { return new(big.Float).Copy(x.big()) }

func (x LongDouble) big() *big.Float {
	if x.f == nil {
		return new(big.Float)
	}
	return x.f
}

// AppendText appends x as Redis's ld2string(LD_STR_HUMAN) prints it, the
// text INCRBYFLOAT stores and replies: "inf", "-inf" or "nan", otherwise
// printf("%.17Lf") with the trailing zeros of the fraction, and then a
// trailing point, removed, and "-0" written "0". So 3e3 gives "3000",
// 10.5+0.1 "10.6", and 1e-20 "0".
func (x LongDouble) AppendText(dst []byte) []byte {
	switch {
	case x.nan:
		return append(dst, "nan"...)
	case x.IsInf() && x.f.Signbit():
		return append(dst, "-inf"...)
	case x.IsInf():
		return append(dst, "inf"...)
	}
	if x.f == nil || x.f.MantExp(nil) < -57 {
		// |x| < 2^-58 < 5e-18 prints as ±0.00000000000000000, that is
		// "0"; skip expanding up to 16000 decimals to find that out.
		return append(dst, '0')
	}
	start := len(dst)
	dst = x.f.Append(dst, 'f', 17)
	return trimFraction(dst, start)
}

// trimFraction drops the trailing zeros of the fraction in dst[start:] and
// then a trailing point, and turns "-0" into "0".
func trimFraction(dst []byte, start int) []byte {
	s := dst[start:]
	hasPoint := false
	for _, c := range s {
		if c == '.' {
			hasPoint = true
			break
		}
	}
	if hasPoint {
		for len(s) > 0 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
	}
	if len(s) == 2 && s[0] == '-' && s[1] == '0' {
		s = s[1:]
		dst[start] = '0'
		return dst[:start+1]
	}
	return dst[:start+len(s)]
}

// AppendLongDouble appends f the way ld2string(LD_STR_HUMAN) would print
// the long double a Redis user meant by f, for callers that only have a
// float64. f is taken to stand for a decimal number: its shortest
// round-trip form, or that form rounded to 15 significant digits when this
// is within 2 ulps of f, which undoes float64 rounding noise (10.5+0.1 and
// 0.1+0.2 give "10.6" and "0.3" as in Redis). That decimal is converted to
// a long double and printed. Results match Redis whenever the decimal is
// what Redis's long double arithmetic produced; for exact INCRBYFLOAT
// results, use LongDouble.
func AppendLongDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		return append(dst, '0')
	}
	var tmp [64]byte
	text := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if sigDigits(text) > 15 {
		alt := strconv.AppendFloat(tmp[len(text):len(text)], f, 'e', 14, 64)
		if g, err := strconv.ParseFloat(string(alt), 64); err == nil && ulpsApart(f, g) <= 2 {
			text = alt
		}
	}
	x, _ := ParseLongDouble(text)
	return x.AppendText(dst)
}

// sigDigits counts the mantissa digits of a strconv 'e' format number.
func sigDigits(text []byte) int {
	n := 0
	for _, c := range text {
		if c == 'e' {
			break
		}
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

// ulpsApart returns how many float64 steps separate a and b, which must be
// finite and of the same sign.
func ulpsApart(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}
