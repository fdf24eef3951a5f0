package resp

import (
	"math"
	"math/big"
	"strconv"
	"testing"
)

func TestFormatDouble(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {3, "3"}, {-3, "-3"},
		{426.7, "426.7"}, {0.1, "0.1"}, {-1.5, "-1.5"}, {1.0 / 3, "0.3333333333333333"},
		{5e-324, "5e-324"}, {1e21, "1e+21"}, {1e20, "1e+20"}, {1e18, "1000000000000000000"},
		{1 << 62, "4611686018427387904"}, {1 << 63, "9223372036854776000"}, {-(1 << 63), "-9223372036854776000"},
		{1e19, "1e+19"}, {123e18, "1.23e+20"}, {123456789e10, "1234567890000000000"}, {1e-6, "0.000001"}, {1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"}, {123456789.123, "123456789.123"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{2.5e-100, "2.5e-100"}, {1e100, "1e+100"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	}
	for _, c := range cases {
		if got := string(FormatDouble(nil, c.f)); got != c.want {
			t.Errorf("FormatDouble(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

// TestFormatDoubleGolden compares FormatDouble with Redis's d2string (its
// fpconv_dtoa.c compiled from source) on values recorded in
// testdata/d2string.golden.
func TestFormatDoubleGolden(t *testing.T) {
	rows := readGolden(t, "d2string.golden", " ")
	if len(rows) < 1500 {
		t.Fatalf("only %d rows", len(rows))
	}
	for _, row := range rows {
		bits, err := strconv.ParseUint(row[0], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(bits)
		if got := string(FormatDouble(nil, f)); got != row[1] {
			t.Errorf("FormatDouble(%v [%s]) = %s, want %s", f, row[0], got, row[1])
		}
	}
}

// TestFormatDoubleRoundTrips checks Grisu2's guarantee on many values:
// the text parses back to the same double.
func TestFormatDoubleRoundTrips(t *testing.T) {
	x := uint64(0x9E3779B97F4A7C15)
	for range 200000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := math.Float64frombits(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := FormatDouble(nil, f)
		g, err := strconv.ParseFloat(string(s), 64)
		if err != nil || g != f {
			t.Fatalf("FormatDouble(%v) = %s, which parses as %v (%v)", f, s, g, err)
		}
	}
}

// TestPowersTen checks the transcribed table: every entry must be the
// normalised 64-bit fraction of its power of ten, within one unit.
func TestPowersTen(t *testing.T) {
	for i, p := range powersTen {
		e := firstPower + i*stepPowers
		want := new(big.Float).SetPrec(256)
		pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
		if e >= 0 {
			want.SetInt(pow)
		} else {
			want.Quo(new(big.Float).SetPrec(256).SetInt64(1), new(big.Float).SetPrec(256).SetInt(pow))
		}
		got := new(big.Float).SetPrec(256).SetMantExp(new(big.Float).SetUint64(p.frac), p.exp)
		diff := new(big.Float).Sub(got, want)
		ulp := new(big.Float).SetMantExp(big.NewFloat(1), p.exp)
		if diff.Abs(diff).Cmp(ulp) > 0 || p.frac>>63 != 1 {
			t.Errorf("powersTen[%d] is not 1e%d", i, e)
		}
	}
}

func BenchmarkFormatDouble(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = FormatDouble(buf[:0], 426.7)
		buf = FormatDouble(buf[:0], 1.0/3)
	}
}
