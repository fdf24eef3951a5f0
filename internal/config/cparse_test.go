package config

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// sds.c sdssplitargs: quoting rules of redis.conf lines.
func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"   \t ", nil, true},
		{"port 6379", []string{"port", "6379"}, true},
		{"  save   900  1 ", []string{"save", "900", "1"}, true},
		{`requirepass "a b"`, []string{"requirepass", "a b"}, true},
		{`requirepass 'a b'`, []string{"requirepass", "a b"}, true},
		{`x ""`, []string{"x", ""}, true},
		{`x ''`, []string{"x", ""}, true},
		{`x "a\nb\r\t\b\a\"\\\q"`, []string{"x", "a\nb\r\t\b\a\"\\q"}, true},
		{`x "\x41\x7a\xZZ"`, []string{"x", "AzxZZ"}, true},
		{`x 'it\'s' "\'"`, []string{"x", "it's", "'"}, true},
		{`x 'a\nb'`, []string{"x", `a\nb`}, true},
		{`a"b c"d`, nil, false}, // closing quote must be followed by a blank
		{`a"b c" d`, []string{"ab c", "d"}, true},
		{`x "abc`, nil, false},
		{`x 'abc`, nil, false},
		{`x "abc\`, nil, false},
		{"a\vb", []string{"a\vb"}, true}, // \v separates only between arguments
		{"\va", []string{"a"}, true},
		{"a\x00b c", []string{"a"}, true}, // a C string ends at NUL
	}
	for _, tt := range tests {
		got, ok := splitArgs(tt.in)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReprRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uo\te`, "\n\r\t\a\b", "\x01\x7f\xff é", "a b"} {
		r := repr(s)
		got, ok := splitArgs(r)
		if !ok || len(got) != 1 || got[0] != s {
			t.Errorf("splitArgs(repr(%q)=%s) = %q, %v", s, r, got, ok)
		}
	}
	if got := repr("a\"\\\x01\xff"); got != `"a\"\\\x01\xff"` {
		t.Errorf("repr = %s", got)
	}
}

// util.c memtoull.
func TestMemtoull(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"", 0, true},   // no digits: strtoull gives 0 and Redis accepts it
		{"mb", 0, true}, // a unit alone is 0 too
		{"100", 100, true},
		{"007", 7, true},
		{"1b", 1, true},
		{"1k", 1000, true},
		{"1K", 1000, true},
		{"1kb", 1024, true},
		{"1KB", 1024, true},
		{"1kB", 1024, true},
		{"1m", 1000000, true},
		{"1mb", 1 << 20, true},
		{"1g", 1000000000, true},
		{"1gb", 1 << 30, true},
		{"3Gb", 3 << 30, true},
		{"-1", 0, false},
		{"1x", 0, false},
		{"1 kb", 0, false},
		{" 1", 0, false},
		{"1.5mb", 0, false},
		{"1tb", 0, false},
		{"18446744073709551615", math.MaxUint64, true},
		{"99999999999999999999999", math.MaxUint64, true}, // strtoull saturates
		{"18446744073709551615kb", 0, false},              // val*mul overflows
		{"17179869184gb", 0, false},
		{"17179869183gb", 17179869183 << 30, true},
		{"100\x00junk", 100, true},
		{"\u212akb", 0, false}, // the Kelvin sign is not a k
	}
	for _, tt := range tests {
		got, ok := memtoull(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("memtoull(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := memtoull(strings.Repeat("0", 127)); !ok {
		t.Error("memtoull refused 127 digits")
	}
	if _, ok := memtoull(strings.Repeat("0", 128)); ok {
		t.Error("memtoull accepted 128 digits")
	}
}

// util.c string2ll.
func TestString2ll(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"007", 0, false},
		{"+5", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
		{"1e3", 0, false},
		{"000000000000000000001", 0, false}, // 21 bytes
	}
	for _, tt := range tests {
		got, ok := string2ll(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("string2ll(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCStrtoll(t *testing.T) {
	tests := []struct {
		in       string
		base     int
		want     int64
		end      int
		overflow bool
	}{
		{"", 10, 0, 0, false},
		{"  -12x", 10, -12, 5, false},
		{"+7", 10, 7, 2, false},
		{"abc", 10, 0, 0, false},
		{" ", 10, 0, 0, false},
		{"-", 10, 0, 0, false},
		{"777", 8, 0o777, 3, false},
		{"78", 8, 7, 1, false},
		{"99999999999999999999", 10, math.MaxInt64, 20, true},
		{"-99999999999999999999", 10, math.MinInt64, 21, true},
		{"-9223372036854775808", 10, math.MinInt64, 20, false},
	}
	for _, tt := range tests {
		v, end, of := cStrtoll(tt.in, tt.base)
		if v != tt.want || end != tt.end || of != tt.overflow {
			t.Errorf("cStrtoll(%q, %d) = %d, %d, %v; want %d, %d, %v", tt.in, tt.base, v, end, of, tt.want, tt.end, tt.overflow)
		}
	}
}

func TestFormatHelpers(t *testing.T) {
	for in, want := range map[float64]string{50: "50", 99.9: "99.9", 99.99999999: "100", 0.0000001: "0", 12.5: "12.5", 0: "0"} {
		if got := formatPercentile(in); got != want {
			t.Errorf("formatPercentile(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[uint64]string{0: "0", 1: "1", 1023: "1023", 1024: "1kb", 1536: "1536", 3 << 20: "3mb", 1 << 30: "1gb", 1<<30 + 1024: "1048577kb"} {
		if got := formatMemory(in); got != want {
			t.Errorf("formatMemory(%d) = %q, want %q", in, got, want)
		}
	}
	if got := asciiLower("PoRT-\u212a"); got != "port-\u212a" {
		t.Errorf("asciiLower = %q", got)
	}
}
