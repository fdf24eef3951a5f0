package resp

import (
	"math"
	"strconv"
)

// FormatDouble appends f's text as Redis 8's d2string writes it, which is
// what addReplyDouble sends in both protocols:
//
//   - "nan", "inf" and "-inf";
//   - "0" and "-0" for the zeros;
//   - an integer-valued f with |f| <= 2^62 as a plain integer ("3", not
//     "3.0");
//   - anything else as fpconv_dtoa writes it: the digits of Grisu2 (which
//     round-trip, and are the shortest form in all but rare cases), with
//     plain notation for exponents from -6 up to about the digit count
//     ("426.7", "0.0001", "9223372036854776000") and otherwise
//     d[.ddd]e±x with at least one exponent digit ("1e+21", "1.5e-7",
//     "5e-324").
//
// It allocates nothing when dst has 25 bytes of spare capacity.
func FormatDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	// double2ll: integers in [-2^62, 2^62] go through ll2string.
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return fpconvDtoa(dst, f)
}

// The rest of this file is a port of Redis's deps/fpconv/fpconv_dtoa.c
// (Grisu2 by Florian Loitsch, as adapted by night-shift), kept
// operation-for-operation identical, wrap-around included, because its
// output is not always the shortest and must match Redis byte for byte.

// fp is an unnormalised floating point value frac * 2^exp.
type fp struct {
	frac uint64
	exp  int
}

const (
	fracMask  = 0x000FFFFFFFFFFFFF
	expMask   = 0x7FF0000000000000
	hiddenBit = 0x0010000000000000
	signMask  = 0x8000000000000000
	expBias   = 1023 + 52
)

var tens = [20]uint64{
	10000000000000000000, 1000000000000000000, 100000000000000000,
	10000000000000000, 1000000000000000, 100000000000000,
	10000000000000, 1000000000000, 100000000000, 10000000000,
	1000000000, 100000000, 10000000, 1000000, 100000, 10000,
	1000, 100, 10, 1,
}

func buildFp(d float64) fp {
	b := math.Float64bits(d)
	f := fp{frac: b & fracMask, exp: int((b & expMask) >> 52)}
	if f.exp != 0 {
		f.frac += hiddenBit
		f.exp -= expBias
	} else {
		f.exp = -expBias + 1
	}
	return f
}

func normalize(f *fp) {
	for f.frac&hiddenBit == 0 {
		f.frac <<= 1
		f.exp--
	}
	const shift = 64 - 52 - 1
	f.frac <<= shift
	f.exp -= shift
}

func normalizedBoundaries(f fp) (lower, upper fp) {
	upper.frac = f.frac<<1 + 1
	upper.exp = f.exp - 1
	for upper.frac&(hiddenBit<<1) == 0 {
		upper.frac <<= 1
		upper.exp--
	}
	const uShift = 64 - 52 - 2
	upper.frac <<= uShift
	upper.exp -= uShift

	lShift := 1
	if f.frac == hiddenBit {
		lShift = 2
	}
	lower.frac = f.frac<<lShift - 1
	lower.exp = f.exp - lShift
	lower.frac <<= uint(lower.exp - upper.exp)
	lower.exp = upper.exp
	return lower, upper
}

func multiply(a, b fp) fp {
	const lomask = 0x00000000FFFFFFFF
	ahBl := (a.frac >> 32) * (b.frac & lomask)
	alBh := (a.frac & lomask) * (b.frac >> 32)
	alBl := (a.frac & lomask) * (b.frac & lomask)
	ahBh := (a.frac >> 32) * (b.frac >> 32)
	tmp := ahBl&lomask + alBh&lomask + alBl>>32
	tmp += 1 << 31 // round up
	return fp{ahBh + ahBl>>32 + alBh>>32 + tmp>>32, a.exp + b.exp + 64}
}

func roundDigit(digits []byte, n int, delta, rem, kappa, frac uint64) {
	for rem < frac && delta-rem >= kappa &&
		(rem+kappa < frac || frac-rem > rem+kappa-frac) {
		digits[n-1]--
		rem += kappa
	}
}

func generateDigits(f, upper, lower fp, digits []byte, k *int) int {
	wfrac := upper.frac - f.frac
	delta := upper.frac - lower.frac
	one := fp{frac: 1 << uint(-upper.exp), exp: upper.exp}
	shift := uint(-one.exp)
	part1 := upper.frac >> shift
	part2 := upper.frac & (one.frac - 1)

	idx, kappa := 0, 10
	for p := 10; kappa > 0; p++ {
		div := tens[p]
		digit := part1 / div
		if digit != 0 || idx != 0 {
			digits[idx] = byte(digit) + '0'
			idx++
		}
		part1 -= digit * div
		kappa--
		tmp := part1<<shift + part2
		if tmp <= delta {
			*k += kappa
			roundDigit(digits, idx, delta, tmp, div<<shift, wfrac)
			return idx
		}
	}
	for unit := 18; ; unit-- {
		part2 *= 10
		delta *= 10
		kappa--
		digit := uint32(part2 >> shift)
		if digit != 0 || idx != 0 {
			digits[idx] = byte(digit) + '0'
			idx++
		}
		part2 &= one.frac - 1
		if part2 < delta {
			*k += kappa
			roundDigit(digits, idx, delta, part2, one.frac, wfrac*tens[unit])
			return idx
		}
	}
}

func grisu2(d float64, digits []byte, k *int) int {
	w := buildFp(d)
	lower, upper := normalizedBoundaries(w)
	normalize(&w)
	var e int
	cp := cachedPow10(upper.exp, &e)
	w = multiply(w, cp)
	upper = multiply(upper, cp)
	lower = multiply(lower, cp)
	lower.frac++
	upper.frac--
	*k = -e
	return generateDigits(w, upper, lower, digits, k)
}

func emitDigits(dst, digits []byte, k int, neg bool) []byte {
	nd := len(digits)
	exp := abs(k + nd - 1)

	// Plain integer.
	if k >= 0 && exp < nd+7 {
		dst = append(dst, digits...)
		for range k {
			dst = append(dst, '0')
		}
		return dst
	}
	// Decimal without scientific notation.
	if k < 0 && (k > -7 || exp < 4) {
		offset := nd - abs(k)
		if offset <= 0 { // below 1: leading zero
			dst = append(dst, '0', '.')
			for range -offset {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		dst = append(dst, digits[:offset]...)
		dst = append(dst, '.')
		return append(dst, digits[offset:]...)
	}
	// Scientific notation.
	limit := 18
	if neg {
		limit = 17
	}
	nd = min(nd, limit)
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	if k+nd-1 < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	cent := 0
	if exp > 99 {
		cent = exp / 100
		dst = append(dst, byte(cent)+'0')
		exp -= cent * 100
	}
	if exp > 9 {
		dec := exp / 10
		dst = append(dst, byte(dec)+'0')
		exp -= dec * 10
	} else if cent != 0 {
		dst = append(dst, '0')
	}
	return append(dst, byte(exp%10)+'0')
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// fpconvDtoa is fpconv_dtoa for finite nonzero d.
func fpconvDtoa(dst []byte, d float64) []byte {
	neg := math.Float64bits(d)&signMask != 0
	if neg {
		dst = append(dst, '-')
	}
	var digits [18]byte
	k := 0
	n := grisu2(d, digits[:], &k)
	return emitDigits(dst, digits[:n], k, neg)
}

// Cached powers of ten for Grisu (fpconv_powers.h): powersTen[i] is
// 10^(firstPower + i*stepPowers) as a normalised 64-bit fraction.
const (
	nPowers    = 87
	stepPowers = 8
	firstPower = -348
	expMax     = -32
	expMin     = -60
)

func cachedPow10(exp int, k *int) fp {
	const oneLogTen = 0.30102999566398114
	approx := int(float64(-(exp + nPowers)) * oneLogTen)
	idx := (approx - firstPower) / stepPowers
	for {
		current := exp + powersTen[idx].exp + 64
		if current < expMin {
			idx++
			continue
		}
		if current > expMax {
			idx--
			continue
		}
		*k = firstPower + idx*stepPowers
		return powersTen[idx]
	}
}

// AppendFpconv appends Redis's fpconv_dtoa text for f: its sign (the sign
// bit's: "-0", "-inf", "-nan" too), then "0", "inf", "nan", or Grisu's digits
// in fpconv's notation (integers too: 1e10 is "1e+10", unlike FormatDouble).
// DEBUG DIGEST hashes sorted-set scores so; a script's number arguments past
// 2^62 or with a fraction are written so.
func AppendFpconv(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0), f == 0:
		if math.Signbit(f) {
			dst = append(dst, '-')
		}
		switch {
		case math.IsNaN(f):
			return append(dst, "nan"...)
		case f == 0:
			return append(dst, '0')
		}
		return append(dst, "inf"...)
	}
	return fpconvDtoa(dst, f)
}
