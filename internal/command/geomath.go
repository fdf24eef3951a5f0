package command

import (
	"math"
	"math/big"
)

// Correctly rounded sin, cos and asin for the geo distance formulas.
//
// Redis calls the C library's sin, cos and asin (glibc: results within a tiny
// fraction of an ulp, almost always the correctly rounded double). Go's math
// package is off by an ulp or more now and then, which STOREDIST results and
// radius edges show (ZRANGE ... WITHSCORES prints every bit). These compute the
// functions in double-double arithmetic (about 104 bits) and round once, so they
// return the correctly rounded result except for arguments whose exact result
// lies within ~2^-100 of a rounding boundary.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

// ddAdd is the accurate double-double sum (relative error ~2^-104 of the result).
func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func ddNeg(a dd) dd { return dd{-a.hi, -a.lo} }

func ddMul(a, b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func ddMulD(a dd, b float64) dd {
	p := twoProd(a.hi, b)
	p.lo += a.lo * b
	return quickTwoSum(p.hi, p.lo)
}

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddNeg(ddMulD(b, q1)))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddNeg(ddMulD(b, q2)))
	q3 := r.hi / b.hi
	q := quickTwoSum(q1, q2)
	return ddAdd(q, dd{q3, 0})
}

func ddDivD(a dd, b float64) dd { return ddDiv(a, dd{b, 0}) }

// piO2 is pi/2 in three doubles (about 160 bits), for argument reduction.
var piO2 [3]float64

func init() {
	const piDigits = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798"
	p, _, err := big.ParseFloat(piDigits, 10, 400, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	p.Quo(p, big.NewFloat(2).SetPrec(400))
	for i := range piO2 {
		f, _ := p.Float64()
		piO2[i] = f
		p.Sub(p, new(big.Float).SetPrec(400).SetFloat64(f))
	}
}

// ddSinCosSmall returns sin(r) and cos(r) for |r| <= pi/4 by their Taylor series.
func ddSinCosSmall(r dd) (s, c dd) {
	r2 := ddMul(r, r)
	s, c = r, dd{1, 0}
	term := r
	for i := 1; i < 40; i++ {
		term = ddDivD(ddMul(term, r2), float64((2*i)*(2*i+1)))
		if i%2 == 1 {
			s = ddAdd(s, ddNeg(term))
		} else {
			s = ddAdd(s, term)
		}
		if math.Abs(term.hi) < 1e-36*math.Abs(s.hi) {
			break
		}
	}
	term = dd{1, 0}
	for i := 1; i < 40; i++ {
		term = ddDivD(ddMul(term, r2), float64((2*i-1)*(2*i)))
		if i%2 == 1 {
			c = ddAdd(c, ddNeg(term))
		} else {
			c = ddAdd(c, term)
		}
		if math.Abs(term.hi) < 1e-36 {
			break
		}
	}
	return s, c
}

// ddSinCos returns sin(x) and cos(x) in double-double for |x| < 2^28.
func ddSinCos(x dd) (s, c dd) {
	k := math.Round(x.hi * (2 / math.Pi))
	r := x
	if k != 0 {
		r = ddAdd(r, ddNeg(twoProd(k, piO2[0])))
		r = ddAdd(r, ddNeg(twoProd(k, piO2[1])))
		r = ddAdd(r, ddNeg(twoProd(k, piO2[2])))
	}
	s, c = ddSinCosSmall(r)
	switch int64(k) & 3 {
	case 1:
		s, c = c, ddNeg(s)
	case 2:
		s, c = ddNeg(s), ddNeg(c)
	case 3:
		s, c = ddNeg(c), s
	}
	return s, c
}

const geoTrigMax = 1 << 28

// geoSin is sin(x) rounded to nearest.
func geoSin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= geoTrigMax {
		return math.Sin(x)
	}
	s, _ := ddSinCos(dd{x, 0})
	return s.hi + s.lo
}

// geoCos is cos(x) rounded to nearest.
func geoCos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= geoTrigMax {
		return math.Cos(x)
	}
	_, c := ddSinCos(dd{x, 0})
	return c.hi + c.lo
}

// ddAsinSmall refines asin(v) for 0 <= v <= 1/2 by Newton's method on sin.
func ddAsinSmall(v dd) dd {
	y := dd{math.Asin(v.hi + v.lo), 0}
	for i := 0; i < 3; i++ {
		s, c := ddSinCos(y)
		y = ddAdd(y, ddDiv(ddAdd(v, ddNeg(s)), c))
	}
	return y
}

// geoAsin is asin(x) rounded to nearest.
func geoAsin(x float64) float64 {
	switch {
	case math.IsNaN(x) || x > 1 || x < -1:
		return math.NaN()
	case x == 0:
		return x
	case x < 0:
		return -geoAsin(-x)
	case x <= 0.5:
		y := ddAsinSmall(dd{x, 0})
		return y.hi + y.lo
	}
	// asin(x) = pi/2 - 2 asin(sqrt((1-x)/2)); 1-x is exact for x in [1/2, 1]
	z := (1 - x) / 2
	sq := math.Sqrt(z)
	root := dd{sq, math.FMA(-sq, sq, z) / (2 * sq)}
	if sq == 0 {
		root = dd{}
	}
	t := ddAsinSmall(root)
	y := ddAdd(ddAdd(dd{piO2[0], 0}, dd{piO2[1], 0}), ddNeg(ddMulD(t, 2)))
	return y.hi + y.lo
}
