package resp

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"testing"
)

// This file holds the fuzz targets and, for them, reference versions of
// Redis's parsing written as plainly as possible: they work on the whole
// input at once and allocate freely, so they share no code with the
// incremental, in-place Reader they check.

// refInt is string2ll by its definition: the canonical decimal text of an
// int64.
func refInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		return 0, false
	}
	return v, true
}

// refStrchr is C's strchr on a buffer that ends with a NUL: the index of
// the first c, or -1 if a NUL or the end comes first.
func refStrchr(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			return i
		case 0:
			return -1
		}
	}
	return -1
}

// refSplitArgs is a direct transcription of sdssplitargs, C string
// semantics included.
func refSplitArgs(line string) ([]string, bool) {
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	isx := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	hexv := func(c byte) int { return bytes.IndexByte([]byte("0123456789abcdef"), c|0x20) }
	var out []string
	p := 0
	for {
		for at(p) != 0 && space(at(p)) {
			p++
		}
		if at(p) == 0 {
			return out, true
		}
		inq, insq, done := false, false, false
		var cur []byte
		for !done {
			switch {
			case inq:
				if at(p) == '\\' && at(p+1) == 'x' && isx(at(p+2)) && isx(at(p+3)) {
					cur = append(cur, byte(hexv(at(p+2))*16+hexv(at(p+3))))
					p += 3
				} else if at(p) == '\\' && at(p+1) != 0 {
					p++
					c := at(p)
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, c)
				} else if at(p) == '"' {
					if at(p+1) != 0 && !space(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == 0 {
					return nil, false
				} else {
					cur = append(cur, at(p))
				}
			case insq:
				if at(p) == '\\' && at(p+1) == '\'' {
					p++
					cur = append(cur, '\'')
				} else if at(p) == '\'' {
					if at(p+1) != 0 && !space(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == 0 {
					return nil, false
				} else {
					cur = append(cur, at(p))
				}
			default:
				switch at(p) {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, at(p))
				}
			}
			if at(p) != 0 {
				p++
			}
		}
		out = append(out, string(cur))
	}
}

// refParse is processInputBuffer over a complete input shorter than 64 KiB
// (so the "too big" errors cannot occur). It returns the non-empty
// commands and how parsing ended: with a protocol error's text, with
// io.EOF's when the input ends between requests, or io.ErrUnexpectedEOF's
// when it ends inside one.
func refParse(in string, maxBulk int64, unauth bool) (cmds [][]string, end string) {
	cmds, end = refParseErr(in, maxBulk, unauth)
	if end == "" {
		end = unexpEOF
	}
	return cmds, end
}

func refParseErr(in string, maxBulk int64, unauth bool) (cmds [][]string, perr string) {
	for len(in) > 0 {
		if in[0] != '*' {
			nl := refStrchr(in, '\n')
			if nl < 0 {
				return cmds, ""
			}
			line := in[:nl]
			if nl > 0 && line[nl-1] == '\r' {
				line = line[:nl-1]
			}
			args, ok := refSplitArgs(line)
			if !ok {
				return cmds, "Protocol error: unbalanced quotes in request"
			}
			if len(args) > 0 {
				cmds = append(cmds, args)
			}
			in = in[nl+1:]
			continue
		}
		nl := refStrchr(in, '\r')
		if nl < 0 || nl+1 >= len(in) {
			return cmds, ""
		}
		n, ok := refInt(in[1:nl])
		if !ok || n > math.MaxInt32 {
			return cmds, "Protocol error: invalid multibulk length"
		}
		if n > 10 && unauth {
			return cmds, "Protocol error: unauthenticated multibulk length"
		}
		rest := in[nl+2:]
		var args []string
		for ; n > 0; n-- {
			nl := refStrchr(rest, '\r')
			if nl < 0 || nl+1 >= len(rest) {
				return cmds, ""
			}
			if rest[0] != '$' {
				c := rest[0]
				if c == '\r' || c == '\n' {
					c = ' '
				}
				return cmds, "Protocol error: expected '$', got '" + string([]byte{c}) + "'"
			}
			l, ok := refInt(rest[1:nl])
			if !ok || l < 0 || l > maxBulk {
				return cmds, "Protocol error: invalid bulk length"
			}
			if l > 16384 && unauth {
				return cmds, "Protocol error: unauthenticated bulk length"
			}
			rest = rest[nl+2:]
			if int64(len(rest)) < l+2 {
				return cmds, ""
			}
			args = append(args, rest[:l])
			rest = rest[l+2:]
		}
		if len(args) > 0 {
			cmds = append(cmds, args)
		}
		in = rest
	}
	return cmds, eof
}

func readerSeeds(f *testing.F) {
	for _, c := range readerCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in), byte(1))
		}
	}
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\nabc"), byte(7))
}

// fuzzBulkMax is the bulk length limit the reader fuzzers run under.
const fuzzBulkMax = 1 << 16

// fuzzLimits are the reduced limits the reader fuzzers run under.
func fuzzLimits() *Limits {
	lim := NewLimits()
	lim.MaxBulkLen.Store(fuzzBulkMax)
	lim.MaxQueryBuf.Store(1 << 20)
	return lim
}

// FuzzReader parses arbitrary bytes delivered in chunks of a fuzzed size
// and checks that exactly the commands, and the error, of the reference
// parser come out, under reduced limits. It also checks that any argv,
// encoded as a multibulk request, parses back to itself.
func FuzzReader(f *testing.F) {
	readerSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte, chunk byte) {
		if len(in) >= inlineMax {
			return
		}
		unauth := chunk&0x80 != 0
		got, err := readAll(t, string(in), int(chunk&0x7f)+1, fuzzLimits(), unauth)
		want, end := refParse(string(in), fuzzBulkMax, unauth)
		if !sameCmds(got, want) || errText(err) != end {
			t.Fatalf("input %q:\n got %q %v\nwant %q %v", in, got, errText(err), want, end)
		}
		// Round trip: the bytes split at 0xff make an argv.
		argv := bytes.Split(in, []byte{0xff})
		var enc []byte
		enc = fmt.Appendf(enc, "*%d\r\n", len(argv))
		for _, a := range argv {
			enc = fmt.Appendf(enc, "$%d\r\n%s\r\n", len(a), a)
		}
		back, err := readAll(t, string(enc), int(chunk&0x7f)+1, nil, false)
		if err != io.EOF || len(back) != 1 || len(back[0]) != len(argv) {
			t.Fatalf("round trip of %q: %q %v", argv, back, err)
		}
		for i := range argv {
			if back[0][i] != string(argv[i]) {
				t.Fatalf("round trip of %q: %q", argv, back)
			}
		}
	})
}

// FuzzInline checks the in-place splitArgs against refSplitArgs.
func FuzzInline(f *testing.F) {
	for _, s := range []string{`SET a "b c"`, `"\x41"`, `GET "x`, `'it\'s'`, `a"b c"d`, `"\xZZ" '\n'`, "\ta\vb\r", `"a\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, 0) >= 0 || bytes.IndexByte(line, '\n') >= 0 {
			return // a request line never holds these
		}
		want, wantOK := refSplitArgs(string(line))
		buf := bytes.Clone(line)
		spans, ok := splitArgs(buf, nil)
		if ok != wantOK {
			t.Fatalf("%q: ok = %v, want %v", line, ok, wantOK)
		}
		if !ok {
			return
		}
		if len(spans) != len(want) {
			t.Fatalf("%q: %d args, want %q", line, len(spans), want)
		}
		for i, s := range spans {
			if got := string(buf[s.off : s.off+s.n]); got != want[i] {
				t.Fatalf("%q: arg %d = %q, want %q", line, i, got, want[i])
			}
		}
	})
}

// FuzzParseInt checks ParseInt against strconv: Redis accepts exactly the
// canonical decimal text of an int64.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "+1", "-9223372036854775808", "9223372036854775808", " 1", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseInt(b)
		w, wok := refInt(string(b))
		if ok != wok || v != w {
			t.Fatalf("ParseInt(%q) = %d, %v; strconv says %d, %v", b, v, ok, w, wok)
		}
	})
}

// FuzzFormatDouble checks that FormatDouble's text parses back to the
// same double and that ParseFloat agrees with strconv on it.
func FuzzFormatDouble(f *testing.F) {
	for _, x := range []uint64{0, 1, 0x407aab3333333333, 0x7fefffffffffffff, 0x3ff0000000000001} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		if math.IsNaN(x) {
			return
		}
		s := FormatDouble(nil, x)
		y, ok := ParseFloat(s)
		if !ok || y != x || math.Signbit(x) != math.Signbit(y) {
			t.Fatalf("FormatDouble(%v) = %s, parsed back as %v, %v", x, s, y, ok)
		}
	})
}
