package resp

import (
	"math"
	"strconv"
	"testing"
)

func TestWriter(t *testing.T) {
	cases := []struct {
		name       string
		write      func(w *Writer)
		resp2, rp3 string
	}{
		{"simple", func(w *Writer) { w.SimpleString("OK") }, "+OK\r\n", "+OK\r\n"},
		{"simple CRLF", func(w *Writer) { w.SimpleString("a\r\nb") }, "+a  b\r\n", "+a  b\r\n"},
		{"error", func(w *Writer) { w.Error("ERR unknown command 'x'") }, "-ERR unknown command 'x'\r\n", "-ERR unknown command 'x'\r\n"},
		{"error CRLF", func(w *Writer) { w.Error("\r\nERR a\r\nb\n\r\n") }, "-ERR a  b\r\n", "-ERR a  b\r\n"},
		{"int", func(w *Writer) { w.Int(-42) }, ":-42\r\n", ":-42\r\n"},
		{"int min", func(w *Writer) { w.Int(math.MinInt64) }, ":-9223372036854775808\r\n", ":-9223372036854775808\r\n"},
		{"bulk", func(w *Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"bulk empty", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"bulk string", func(w *Writer) { w.BulkString("hello") }, "$5\r\nhello\r\n", "$5\r\nhello\r\n"},
		{"bulk int", func(w *Writer) { w.BulkInt(-17) }, "$3\r\n-17\r\n", "$3\r\n-17\r\n"},
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"array", func(w *Writer) { w.ArrayLen(3) }, "*3\r\n", "*3\r\n"},
		{"map", func(w *Writer) { w.MapLen(2) }, "*4\r\n", "%2\r\n"},
		{"set", func(w *Writer) { w.SetLen(5) }, "*5\r\n", "~5\r\n"},
		{"push", func(w *Writer) { w.PushLen(3) }, "*3\r\n", ">3\r\n"},
		{"attribute", func(w *Writer) { w.AttributeLen(1) }, "", "|1\r\n"},
		{"double", func(w *Writer) { w.Double(426.7) }, "$5\r\n426.7\r\n", ",426.7\r\n"},
		{"double int", func(w *Writer) { w.Double(3) }, "$1\r\n3\r\n", ",3\r\n"},
		{"double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double nan", func(w *Writer) { w.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		{"double exp", func(w *Writer) { w.Double(5e-324) }, "$6\r\n5e-324\r\n", ",5e-324\r\n"},
		{"true", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(w *Writer) { w.Bool(false) }, ":0\r\n", "#f\r\n"},
		{"bignum", func(w *Writer) { w.BigNumber("12345678901234567890") }, "$20\r\n12345678901234567890\r\n", "(12345678901234567890\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("txt", "hi\n") }, "$3\r\nhi\n\r\n", "=7\r\ntxt:hi\n\r\n"},
		{"verbatim short fmt", func(w *Writer) { w.Verbatim("md", "x") }, "$1\r\nx\r\n", "=5\r\nmd :x\r\n"},
		{"verbatim long fmt", func(w *Writer) { w.Verbatim("markdown", "") }, "$0\r\n\r\n", "=4\r\nmar:\r\n"},
		{"raw", func(w *Writer) { w.Raw([]byte("+PONG\r\n")) }, "+PONG\r\n", "+PONG\r\n"},
	}
	for _, c := range cases {
		for proto, want := range map[int]string{0: c.resp2, 2: c.resp2, 3: c.rp3} {
			w := Writer{Buf: []byte("<"), Proto: proto}
			c.write(&w)
			if got := string(w.Buf[1:]); got != want || w.Buf[0] != '<' {
				t.Errorf("%s (RESP%d) = %q, want %q", c.name, proto, got, want)
			}
		}
	}
	w := Writer{Proto: 2}
	if w.AttributeLen(1) || len(w.Buf) != 0 {
		t.Error("AttributeLen in RESP2")
	}
	w.Proto = 3
	if !w.AttributeLen(1) {
		t.Error("AttributeLen in RESP3")
	}
}

func writeReplies(w *Writer) {
	w.ArrayLen(7)
	w.SimpleString("OK")
	w.Error("ERR something")
	w.Int(1234567)
	w.Bulk([]byte("value"))
	w.Null()
	w.Double(3.25)
	w.MapLen(1)
	w.BulkString("k")
	w.Bool(true)
	w.Verbatim("txt", "text")
	w.BigNumber("1")
	w.BulkInt(99)
}

func TestWriterAllocs(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := Writer{Buf: make([]byte, 0, 512), Proto: proto}
		if n := testing.AllocsPerRun(100, func() {
			w.Buf = w.Buf[:0]
			writeReplies(&w)
		}); n != 0 {
			t.Errorf("RESP%d: %v allocations", proto, n)
		}
	}
}

func BenchmarkWriter(b *testing.B) {
	w := Writer{Buf: make([]byte, 0, 4096), Proto: 3}
	b.ReportAllocs()
	for b.Loop() {
		w.Buf = w.Buf[:0]
		writeReplies(&w)
	}
}

// Int and Bulk's headers against strconv, across the one-append fast path's
// edges (0..99) and beyond it.
func TestHeaderDigits(t *testing.T) {
	for _, n := range []int64{0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 1 << 40, -1, -9, -10, -99, -100, math.MinInt64, math.MaxInt64} {
		var w Writer
		w.Int(n)
		if want := ":" + strconv.FormatInt(n, 10) + "\r\n"; string(w.Buf) != want {
			t.Fatalf("Int(%d) = %q, want %q", n, w.Buf, want)
		}
	}
	for n := 0; n < 130; n++ {
		var w Writer
		w.Buf = make([]byte, 3, 5) // growing mid-header
		w.Bulk(make([]byte, n))
		if want := "\x00\x00\x00$" + strconv.Itoa(n) + "\r\n" + string(make([]byte, n)) + "\r\n"; string(w.Buf) != want {
			t.Fatalf("Bulk of %d bytes = %q", n, w.Buf)
		}
	}
}
