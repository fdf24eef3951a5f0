package resp

import (
	"math"
	"testing"
)

// incrByFloat runs INCRBYFLOAT's arithmetic: "no" for an invalid operand,
// "naninf" for a NaN or infinite sum, else the stored text.
func incrByFloat(a, b []byte) string {
	x, ok1 := ParseLongDouble(a)
	y, ok2 := ParseLongDouble(b)
	if !ok1 || !ok2 {
		return "no"
	}
	z := x.Add(y)
	if z.IsNaN() || z.IsInf() {
		return "naninf"
	}
	return "ok " + string(z.AppendText(nil))
}

func TestIncrByFloat(t *testing.T) {
	cases := []struct{ a, b, want string }{
		// tests/unit/type/incr.tcl
		{"0", "1", "ok 1"},
		{"1", "0.25", "ok 1.25"},
		{"1.5", "1.5", "ok 3"},
		{"17179869184", "1.5", "ok 17179869185.5"},
		{"17179869184", "17179869184", "ok 34359738368"},
		{"    11", "1.0", "no"},
		{"11    ", "1.0", "no"},
		{" 11 ", "1.0", "no"},
		{"0", "+inf", "naninf"},
		{"1", "-1.1", "ok -0.1"},
		{"1\x002", "1", "no"},
		{"0.024390243902439025", "-0.024390243902439025", "ok 0"},
		// Checked against redis-server.
		{"10.5", "0.1", "ok 10.6"},
		{"0.1", "0.2", "ok 0.3"},
		{"1234", "0.1", "ok 1234.09999999999999998"},
		{"3.0e3", "0", "ok 3000"},
		{"5.0e3", "0", "ok 5000"},
		{"0", "1e-20", "ok 0"},
		{"0", "6e-18", "ok 0.00000000000000001"},
		{"0", "-6e-18", "ok -0.00000000000000001"},
		{"0", "5e-18", "ok 0"},
		{"0", "-0x1p-16440", "ok 0"},
		{"0x10", "0.5", "ok 16.5"},
		{"inf", "-inf", "naninf"},
		{"1e4932", "1e4932", "naninf"},
		{"", "1", "no"},
		{"1", "nan", "no"},
	}
	for _, c := range cases {
		if got := incrByFloat([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("%q + %q = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// TestIncrByFloatGolden compares with long double arithmetic and printing
// by glibc on x86-64, recorded in testdata/incrbyfloat.golden.
func TestIncrByFloatGolden(t *testing.T) {
	rows := readGolden(t, "incrbyfloat.golden", "\t")
	if len(rows) < 700 {
		t.Fatalf("only %d rows", len(rows))
	}
	for _, row := range rows {
		a, b := unhexString(t, row[0]), unhexString(t, row[1])
		if got := incrByFloat(a, b); got != row[2] {
			t.Errorf("%q + %q = %s, want %s", a, b, got, row[2])
		}
	}
}

func TestLongDoubleZeroAndFloat64(t *testing.T) {
	var zero LongDouble
	if string(zero.AppendText(nil)) != "0" || zero.Float64() != 0 || zero.IsInf() || zero.IsNaN() {
		t.Fatal("zero value")
	}
	x, _ := ParseLongDouble([]byte("2.5"))
	if x.Float64() != 2.5 || string(zero.Add(x).AppendText(nil)) != "2.5" {
		t.Fatal("2.5")
	}
	n, _ := ParseLongDouble([]byte("-0"))
	if string(n.AppendText(nil)) != "0" {
		t.Fatal("-0 prints 0")
	}
	inf, _ := ParseLongDouble([]byte("-inf"))
	if !inf.IsInf() || string(inf.AppendText(nil)) != "-inf" || !math.IsInf(inf.Float64(), -1) {
		t.Fatal("-inf")
	}
	pinf, _ := ParseLongDouble([]byte("Infinity"))
	nan := inf.Add(pinf)
	if !nan.IsNaN() || string(nan.AppendText(nil)) != "nan" || !math.IsNaN(nan.Float64()) {
		t.Fatal("nan")
	}
}

func TestAppendLongDouble(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{10.5 + 0.1, "10.6"}, {0.1 + 0.2, "0.3"}, {3.0e3, "3000"}, {5.0e3, "5000"},
		{1234 + 0.1, "1234.09999999999999998"}, {17179869185.5, "17179869185.5"},
		{-0.1, "-0.1"}, {1e-20, "0"}, {-1e-20, "0"}, {math.Copysign(0, -1), "0"},
		{1.0 / 3, "0.3333333333333333"}, {123456789012345678, "123456789012345680"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	}
	for _, c := range cases {
		if got := string(AppendLongDouble(nil, c.f)); got != c.want {
			t.Errorf("AppendLongDouble(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func BenchmarkIncrByFloat(b *testing.B) {
	a, c := []byte("10.5"), []byte("0.1")
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		x, _ := ParseLongDouble(a)
		y, _ := ParseLongDouble(c)
		buf = x.Add(y).AppendText(buf[:0])
	}
}
