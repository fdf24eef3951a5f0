package resp

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseInt(t *testing.T) {
	cases := []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false}, {"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false}, {"-99999999999999999999", 0, false},
		{"", 0, false}, {"-", 0, false}, {"+1", 0, false}, {"-0", 0, false},
		{"00", 0, false}, {"01", 0, false}, {"-01", 0, false}, {" 1", 0, false},
		{"1 ", 0, false}, {"1a", 0, false}, {"1.0", 0, false}, {"1e3", 0, false},
		{"0x10", 0, false}, {"--1", 0, false}, {"1\x00", 0, false},
		{"000000000000000000001", 0, false},
	}
	for _, c := range cases {
		v, ok := ParseInt([]byte(c.in))
		if v != c.v || ok != c.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, v, ok, c.v, c.ok)
		}
	}
}

func TestAppendInt(t *testing.T) {
	for _, n := range []int64{0, -1, 42, math.MaxInt64, math.MinInt64} {
		b := AppendInt([]byte("x"), n)
		v, ok := ParseInt(b[1:])
		if !ok || v != n || b[0] != 'x' {
			t.Errorf("AppendInt(%d) = %q", n, b)
		}
	}
}

func TestParseFloat(t *testing.T) {
	cases := []struct {
		in string
		v  float64
		ok bool
	}{
		{"1", 1, true}, {"-1.5", -1.5, true}, {"+.5", .5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"1E+3", 1000, true}, {"-0", math.Copysign(0, -1), true},
		{"0x10", 16, true}, {"0x1.8p1", 3, true}, {"-0X.8", -.5, true},
		{"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true}, {"+INF", math.Inf(1), true},
		{"3e-324", 5e-324, true}, {"1e308", 1e308, true},
		{"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"\t1", 0, false},
		{"nan", 0, false}, {"-nan", 0, false}, {"NaN(1)", 0, false},
		{"1e400", 0, false}, {"-1e400", 0, false}, {"1e-400", 0, false}, {"2e-324", 0, false},
		{"1e", 0, false}, {"1e+", 0, false}, {".", 0, false}, {"e5", 0, false},
		{"0x", 0, false}, {"0x1p", 0, false}, {"1_000", 0, false}, {"1\x00", 0, false},
		{"infinit", 0, false}, {"infx", 0, false}, {"1..2", 0, false}, {"--1", 0, false},
	}
	for _, c := range cases {
		v, ok := ParseFloat([]byte(c.in))
		if ok != c.ok || math.Float64bits(v) != math.Float64bits(c.v) {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v, %v", c.in, v, ok, c.v, c.ok)
		}
	}
}

// readGolden returns the tab- or space-separated fields of a testdata file,
// skipping comments.
func readGolden(t *testing.T, name, sep string) [][]string {
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.SplitN(line, sep, 3))
		}
	}
	return rows
}

func unhexString(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseGolden compares ParseFloat with glibc's strtod behind Redis's
// string2d, and ParseLongDouble (printed by AppendText) with strtold behind
// string2ld and ld2string, on inputs recorded in testdata/parse.golden.
func TestParseGolden(t *testing.T) {
	rows := readGolden(t, "parse.golden", "\t")
	if len(rows) < 1000 {
		t.Fatalf("only %d rows", len(rows))
	}
	for _, row := range rows {
		in := unhexString(t, row[0])
		got := "no"
		if f, ok := ParseFloat(in); ok {
			got = fmt.Sprintf("ok %016x", math.Float64bits(f))
		}
		if got != row[1] {
			t.Errorf("ParseFloat(%q) = %s, want %s", in, got, row[1])
		}
		got = "no"
		if x, ok := ParseLongDouble(in); ok {
			got = "ok " + string(x.AppendText(nil))
		}
		if got != row[2] {
			t.Errorf("ParseLongDouble(%q) = %s, want %s", in, got, row[2])
		}
	}
}

func BenchmarkParseInt(b *testing.B) {
	in := []byte("-1234567890123")
	b.ReportAllocs()
	for b.Loop() {
		ParseInt(in)
	}
}

func BenchmarkParseFloat(b *testing.B) {
	in := []byte("3.14159265358979")
	b.ReportAllocs()
	for b.Loop() {
		ParseFloat(in)
	}
}
