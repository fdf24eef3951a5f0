package resp

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// readAll parses every command of input, delivered chunk bytes at a time,
// and returns them with the error that ended parsing.
func readAll(t testing.TB, input string, chunk int, lim *Limits, unauth bool) ([][]string, error) {
	r := NewReader(&chunkReader{[]byte(input), chunk}, lim)
	r.SetUnauthenticated(unauth)
	var cmds [][]string
	for {
		argv, err := r.ReadCommand()
		if err != nil {
			return cmds, err
		}
		cmd := make([]string, len(argv))
		for i, a := range argv {
			cmd[i] = string(a)
		}
		cmds = append(cmds, cmd)
		if len(cmds) > 10000 {
			t.Fatal("too many commands")
		}
	}
}

func sameCmds(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func errText(err error) string {
	var pe *ProtocolError
	switch {
	case err == nil:
		return "<nil>"
	case errors.As(err, &pe):
		return pe.Msg
	}
	return err.Error()
}

type readerCase struct {
	name  string
	in    string
	want  [][]string
	err   string // ProtocolError text, or the error's text
	lim   func(*Limits)
	unath bool
}

var (
	eof      = io.EOF.Error()
	unexpEOF = io.ErrUnexpectedEOF.Error()
	big64K   = strings.Repeat("A", 70000)
)

func cmds(c ...[]string) [][]string { return c }
func cmd(a ...string) []string      { return a }

var readerCases = []readerCase{
	// Multibulk, the tests of Redis's tests/unit/protocol.tcl first.
	{name: "ping", in: "*1\r\n$4\r\nPING\r\n", want: cmds(cmd("PING")), err: eof},
	{name: "empty query", in: "\r\n*1\r\n$4\r\nPING\r\n", want: cmds(cmd("PING")), err: eof},
	{name: "negative count", in: "*-10\r\n*1\r\n$4\r\nPING\r\n", want: cmds(cmd("PING")), err: eof},
	{name: "zero count", in: "*0\r\n*-1\r\n", err: eof},
	{name: "count over INT_MAX", in: "*3000000000\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count INT_MAX+1", in: "*2147483648\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count INT_MAX waits", in: "*2147483647\r\n", err: unexpEOF},
	{name: "count 20000000 waits", in: "*20000000\r\n$1\r\na\r\n", err: unexpEOF},
	{name: "wrong payload header", in: "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", err: "Protocol error: expected '$', got 'f'"},
	{name: "negative bulk", in: "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n", err: "Protocol error: invalid bulk length"},
	{name: "bulk over max", in: "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n", err: "Protocol error: invalid bulk length"},
	{name: "bulk 4GB", in: "*1\r\n$4294967296\r\n", err: "Protocol error: invalid bulk length"},
	{name: "bulk max ok waits", in: "*1\r\n$536870912\r\nab", err: unexpEOF},
	{name: "bulk not a number", in: "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n", err: "Protocol error: invalid bulk length"},
	{name: "no bulk after count", in: "*1\r\nfoo\r\n", err: "Protocol error: expected '$', got 'f'"},
	{name: "count garbage", in: "*abc\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count -0", in: "*-0\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count leading zero", in: "*01\r\n$1\r\na\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count plus", in: "*+1\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count space", in: "* 1\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "count empty", in: "*\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "bulk -0", in: "*1\r\n$-0\r\n", err: "Protocol error: invalid bulk length"},
	{name: "bulk empty", in: "*1\r\n$\r\n", err: "Protocol error: invalid bulk length"},
	{name: "bulk leading zero", in: "*1\r\n$01\r\na\r\n", err: "Protocol error: invalid bulk length"},
	{name: "count ends at first CR", in: "*1\n$4\r\nPING\r\n", err: "Protocol error: invalid multibulk length"},
	{name: "byte after CR unchecked", in: "*1\rX$4\rYPING\r\n", want: cmds(cmd("PING")), err: eof},
	{name: "payload CRLF unchecked", in: "*2\r\n$1\r\naXY$1\r\nbZZ", want: cmds(cmd("a", "b")), err: eof},
	{name: "empty bulk", in: "*2\r\n$0\r\n\r\n$0\r\n\r\n", want: cmds(cmd("", "")), err: eof},
	{name: "CR as header byte", in: "*2\r\n$3\r\nGET\r\n\r\n", err: "Protocol error: expected '$', got ' '"},
	{name: "LF as header byte", in: "*1\r\n\n\r\n", err: "Protocol error: expected '$', got ' '"},
	{name: "high byte as header byte", in: "*1\r\n\xff\r\n", err: "Protocol error: expected '$', got '\xff'"},
	{name: "binary payload", in: "*1\r\n$6\r\n\r\n\x00\xff\r\n\r\n", want: cmds(cmd("\r\n\x00\xff\r\n")), err: eof},
	{name: "partial header", in: "*2\r\n$3\r\nGET\r\n$3", err: unexpEOF},
	{name: "partial after CR", in: "*1\r", err: unexpEOF},
	{name: "partial payload", in: "*1\r\n$3\r\nGE", err: unexpEOF},
	{name: "pipeline", in: "*1\r\n$4\r\nPING\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		want: cmds(cmd("PING"), cmd("PING"), cmd("GET", "k")), err: eof},
	// strchr semantics: a NUL hides the line terminator after it.
	{name: "NUL in count hides CR", in: "*1\x00\r\n$1\r\na\r\n", err: unexpEOF},
	{name: "NUL in bulk header hides CR", in: "*1\r\n$1\x00\r\na\r\n", err: unexpEOF},
	{name: "NUL in inline line hides LF", in: "GET a\x00\r\nPING\r\n", err: unexpEOF},
	{name: "desync NUL", in: "\x00" + big64K, err: "Protocol error: too big inline request"},
	{name: "desync *NUL", in: "*\x00" + big64K, err: "Protocol error: too big mbulk count string"},
	{name: "desync $NUL", in: "$\x00" + big64K, err: "Protocol error: too big inline request"},
	{name: "too big count", in: "*" + strings.Repeat("1", 70000), err: "Protocol error: too big mbulk count string"},
	{name: "too big bulk count", in: "*1\r\n$" + strings.Repeat("1", 70000), err: "Protocol error: too big bulk count string"},
	{name: "too big inline", in: big64K, err: "Protocol error: too big inline request"},
	{name: "inline at limit waits", in: strings.Repeat("A", 65536), err: unexpEOF},

	// Inline requests.
	{name: "inline", in: "SET a b\r\nGET a\n", want: cmds(cmd("SET", "a", "b"), cmd("GET", "a")), err: eof},
	{name: "inline LF only", in: "PING\nPING\n", want: cmds(cmd("PING"), cmd("PING")), err: eof},
	{name: "blank lines", in: "\n\r\n   \r\n\t\nPING\n", want: cmds(cmd("PING")), err: eof},
	{name: "CR CR LF", in: "\r\r\n", err: eof},
	{name: "inline no LF", in: "PING", err: unexpEOF},
	{name: "double quotes", in: "SET a \"b c\"\r\n", want: cmds(cmd("SET", "a", "b c")), err: eof},
	{name: "hex escape", in: "\"\\x41\\x4a\\x4A\\x00\"\n", want: cmds(cmd("AJJ\x00")), err: eof},
	{name: "bad hex escape", in: "\"\\xZZ\" \"\\x4\"\n", want: cmds(cmd("xZZ", "x4")), err: eof},
	{name: "escapes", in: "\"\\n\\r\\t\\b\\a\\\\\\\"\\q\\'\"\n", want: cmds(cmd("\n\r\t\b\a\\\"q'")), err: eof},
	{name: "single quotes", in: "'it\\'s' 'a\\nb' 'x\"y'\n", want: cmds(cmd("it's", "a\\nb", "x\"y")), err: eof},
	{name: "empty quoted", in: "SET \"\" ''\n", want: cmds(cmd("SET", "", "")), err: eof},
	{name: "quote inside word", in: "a\"b c\" d'e f'\n", want: cmds(cmd("ab c", "de f")), err: eof},
	{name: "unbalanced double", in: "GET \"x\r\n", err: "Protocol error: unbalanced quotes in request"},
	{name: "unbalanced single", in: "GET 'x\n", err: "Protocol error: unbalanced quotes in request"},
	{name: "quote then letter", in: "\"a\"b\n", err: "Protocol error: unbalanced quotes in request"},
	{name: "squote then letter", in: "'a'b\n", err: "Protocol error: unbalanced quotes in request"},
	{name: "quote then vtab ok", in: "\"a\"\vb\n", want: cmds(cmd("a", "b")), err: eof},
	{name: "trailing backslash", in: "\"a\\\n", err: "Protocol error: unbalanced quotes in request"},
	{name: "blanks", in: "\ta\vb\fc\rd e\n", want: cmds(cmd("a\vb\fc", "d", "e")), err: eof},
	{name: "inline dollar", in: "$3\r\n", want: cmds(cmd("$3")), err: eof},
	{name: "inline then multibulk", in: "PING\r\n*1\r\n$4\r\nECHO\r\n", want: cmds(cmd("PING"), cmd("ECHO")), err: eof},

	// Limits.
	{name: "unauth count", in: "*11\r\n", err: "Protocol error: unauthenticated multibulk length", unath: true},
	{name: "unauth count 10", in: "*10\r\n", err: unexpEOF, unath: true},
	{name: "unauth bulk", in: "*1\r\n$16385\r\n", err: "Protocol error: unauthenticated bulk length", unath: true},
	{name: "unauth bulk 16384", in: "*1\r\n$16384\r\n", err: unexpEOF, unath: true},
	{name: "unauth invalid first", in: "*1\r\n$600000000\r\n", err: "Protocol error: invalid bulk length", unath: true},
	{name: "unauth negative count", in: "*-5\r\nPING\r\n", want: cmds(cmd("PING")), err: eof, unath: true},
	{name: "max bulk lowered", in: "*1\r\n$11\r\n", err: "Protocol error: invalid bulk length",
		lim: func(l *Limits) { l.MaxBulkLen.Store(10) }},
	{name: "max bulk exact", in: "*1\r\n$10\r\n0123456789\r\n", want: cmds(cmd("0123456789")), err: eof,
		lim: func(l *Limits) { l.MaxBulkLen.Store(10) }},
	{name: "query buffer", in: "*1\r\n$200\r\n" + strings.Repeat("x", 202), err: ErrQueryBufferLimit.Error(),
		lim: func(l *Limits) { l.MaxQueryBuf.Store(100) }},
	// docs/decisions/0005: the whole pending command counts, parsed
	// arguments included.
	{name: "query buffer many args", in: "*50\r\n" + strings.Repeat("$30\r\n"+strings.Repeat("y", 30)+"\r\n", 50), err: ErrQueryBufferLimit.Error(),
		lim: func(l *Limits) { l.MaxQueryBuf.Store(1000) }},
	{name: "query buffer two big args", in: "*2\r\n$40000\r\n" + strings.Repeat("x", 40002) + "$40000\r\n" + strings.Repeat("x", 40002), err: ErrQueryBufferLimit.Error(),
		lim: func(l *Limits) { l.MaxQueryBuf.Store(70000) }},
	{name: "query buffer fits", in: "*2\r\n$40000\r\n" + strings.Repeat("x", 40002) + "$1\r\nx\r\n", want: cmds(cmd(strings.Repeat("x", 40000), "x")), err: eof,
		lim: func(l *Limits) { l.MaxQueryBuf.Store(70000) }},
	{name: "query buffer big bulk", in: "*1\r\n$100000\r\n" + strings.Repeat("x", 100002), err: ErrQueryBufferLimit.Error(),
		lim: func(l *Limits) { l.MaxQueryBuf.Store(50000) }},
}

func TestReader(t *testing.T) {
	for _, tc := range readerCases {
		chunks := []int{1 << 30, 1, 2, 3, 7, 100}
		if len(tc.in) > 20000 {
			chunks = []int{1 << 30, 1, 4093}
		}
		for _, chunk := range chunks {
			lim := NewLimits()
			if tc.lim != nil {
				tc.lim(lim)
			}
			got, err := readAll(t, tc.in, chunk, lim, tc.unath)
			if !sameCmds(got, tc.want) || errText(err) != tc.err {
				t.Errorf("%s (chunk %d):\n got %q, %q\nwant %q, %q", tc.name, chunk, got, errText(err), tc.want, tc.err)
			}
		}
	}
}

// TestReaderEveryBoundary delivers a pipeline in two reads split at every
// offset, and one byte at a time.
func TestReaderEveryBoundary(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n" +
		"GET \"k e\\x79\" 'x'\r\n\r\n*0\r\n" +
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n" +
		"PING\n"
	want := cmds(cmd("SET", "key", "va\r\nl"), cmd("GET", "k ey", "x"), cmd("ECHO", ""), cmd("PING"))
	for i := 0; i <= len(in); i++ {
		r := NewReader(io.MultiReader(strings.NewReader(in[:i]), strings.NewReader(in[i:])), nil)
		var got [][]string
		for {
			argv, err := r.ReadCommand()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("split %d: %v", i, err)
				}
				break
			}
			c := []string{}
			for _, a := range argv {
				c = append(c, string(a))
			}
			got = append(got, c)
		}
		if !sameCmds(got, want) {
			t.Fatalf("split %d: got %q", i, got)
		}
	}
	got, err := readAll(t, in, 1, nil, false)
	if !sameCmds(got, want) || err != io.EOF {
		t.Fatalf("one byte at a time: %q %v", got, err)
	}
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)), nil)
	for range want {
		if _, err := r.ReadCommand(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReaderBigBulk(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n" + string(payload) + "\r\n*1\r\n$4\r\nPING\r\n"
	for _, chunk := range []int{1 << 30, 1, 4096, 65536} {
		if chunk == 1 && testing.Short() {
			continue
		}
		r := NewReader(&chunkReader{[]byte(in), chunk}, nil)
		argv, err := r.ReadCommand()
		if err != nil || len(argv) != 3 || !bytes.Equal(argv[2], payload) || string(argv[1]) != "k" {
			t.Fatalf("chunk %d: %v %d", chunk, err, len(argv))
		}
		argv, err = r.ReadCommand()
		if err != nil || len(argv) != 1 || string(argv[0]) != "PING" {
			t.Fatalf("chunk %d: after big: %q %v", chunk, argv, err)
		}
		if len(r.buf) != defaultBufSize || r.big != nil {
			t.Fatalf("chunk %d: buffer not back to default: %d", chunk, len(r.buf))
		}
	}
}

func TestReaderManyArgs(t *testing.T) {
	// A request larger than the buffer made of small arguments grows the
	// buffer, which shrinks back at the next request.
	var sb strings.Builder
	sb.WriteString("*5001\r\n$4\r\nMSET\r\n")
	var want []string
	want = append(want, "MSET")
	for i := range 5000 {
		a := strings.Repeat(string(rune('a'+i%26)), 1+i%40)
		sb.WriteString("$" + itoa(len(a)) + "\r\n" + a + "\r\n")
		want = append(want, a)
	}
	sb.WriteString("PING\r\n")
	for _, chunk := range []int{1 << 30, 1, 1000} {
		got, err := readAll(t, sb.String(), chunk, nil, false)
		if err != io.EOF || !sameCmds(got, cmds(want, cmd("PING"))) {
			t.Fatalf("chunk %d: %v, %d commands", chunk, err, len(got))
		}
	}
}

func itoa(n int) string { return string(AppendInt(nil, int64(n))) }

// TestReaderHugeClaimsDoNotAllocate checks that invalid lengths and counts
// are rejected, and valid counts accepted, without allocating for them. (A
// valid bulk length is allocated in full once its header is parsed, as
// Redis does.)
func TestReaderHugeClaimsDoNotAllocate(t *testing.T) {
	inputs := []string{
		"*1\r\n$4294967296\r\n",
		"*1\r\n$536870913\r\n",
		"*2147483647\r\n$1\r\na\r\n",
		"*3000000000\r\n",
	}
	for _, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := NewReader(strings.NewReader(in), nil)
		r.ReadCommand()
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%q allocated %d bytes", in, n)
		}
	}
}

func TestReaderBigBulkCappedByQueryBuffer(t *testing.T) {
	lim := NewLimits()
	lim.MaxQueryBuf.Store(1 << 20)
	r := NewReader(strings.NewReader("*1\r\n$500000000\r\nabc"), lim)
	if _, err := r.ReadCommand(); err != io.ErrUnexpectedEOF {
		t.Fatal(err)
	}
	if len(r.big)+r.p != 1<<20+1 {
		t.Fatalf("big bulk buffer is %d bytes", len(r.big))
	}
	// Raising the limit lets the bulk grow again.
	lim.MaxQueryBuf.Store(2 << 20)
	r.rd = strings.NewReader(strings.Repeat("x", 3<<20))
	for {
		if _, err := r.ReadCommand(); err != nil {
			if err != ErrQueryBufferLimit {
				t.Fatal(err)
			}
			break
		}
	}
	if len(r.big)+r.p != 2<<20+1 {
		t.Fatalf("big bulk buffer is %d bytes", len(r.big))
	}
}

func TestTryCommandAndBuffered(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(pr, nil)
	if _, ok, err := r.TryCommand(); ok || err != nil || r.Buffered() != 0 {
		t.Fatal("empty reader")
	}
	go pw.Write([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*1\r\n$4\r\nEC"))
	argv, err := r.ReadCommand()
	if err != nil || len(argv) != 2 {
		t.Fatal(argv, err)
	}
	if r.Buffered() != len("PING\r\n*1\r\n$4\r\nEC") {
		t.Fatalf("Buffered = %d", r.Buffered())
	}
	argv, ok, err := r.TryCommand()
	if !ok || err != nil || string(argv[0]) != "PING" {
		t.Fatal(argv, ok, err)
	}
	if _, ok, err := r.TryCommand(); ok || err != nil || r.Buffered() != 10 {
		t.Fatal("partial command", ok, err, r.Buffered())
	}
	go pw.Write([]byte("HO\r\n"))
	argv, err = r.ReadCommand()
	if err != nil || string(argv[0]) != "ECHO" || r.Buffered() != 0 {
		t.Fatal(argv, err)
	}
	pw.Close()
	if _, err := r.ReadCommand(); err != io.EOF {
		t.Fatal(err)
	}
}

func TestReaderStickyErrorAndReset(t *testing.T) {
	r := NewReader(strings.NewReader("*x\r\nPING\r\n"), nil)
	_, err1 := r.ReadCommand()
	_, err2 := r.ReadCommand()
	_, _, err3 := r.TryCommand()
	if err1 == nil || err1 != err2 || err2 != err3 {
		t.Fatal(err1, err2, err3)
	}
	r.Reset(strings.NewReader("PING\r\n"))
	if argv, err := r.ReadCommand(); err != nil || string(argv[0]) != "PING" {
		t.Fatal(argv, err)
	}
}

// errAfterReader returns its data together with err.
type errAfterReader struct {
	data []byte
	err  error
}

func (e *errAfterReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	if len(e.data) == 0 {
		return n, e.err
	}
	return n, nil
}

func TestReaderTransientError(t *testing.T) {
	timeout := errors.New("timeout")
	src := &errAfterReader{[]byte("PING\r\n*1\r\n$4\r\nEC"), timeout}
	r := NewReader(src, nil)
	if argv, err := r.ReadCommand(); err != nil || string(argv[0]) != "PING" {
		t.Fatal(argv, err)
	}
	if _, err := r.ReadCommand(); err != timeout {
		t.Fatal(err)
	}
	src.data, src.err = []byte("HO\r\n"), io.EOF
	if argv, err := r.ReadCommand(); err != nil || string(argv[0]) != "ECHO" {
		t.Fatal(argv, err)
	}
	if _, err := r.ReadCommand(); err != io.EOF {
		t.Fatal(err)
	}
}

func TestReaderNoProgress(t *testing.T) {
	r := NewReader(iotest.ErrReader(nil), nil)
	if _, err := r.ReadCommand(); err != io.ErrNoProgress {
		t.Fatal(err)
	}
}

func TestArgvCapacityClipped(t *testing.T) {
	r := NewReader(strings.NewReader("*2\r\n$1\r\na\r\n$1\r\nb\r\n"), nil)
	argv, err := r.ReadCommand()
	if err != nil {
		t.Fatal(err)
	}
	_ = append(argv[0], 'X')
	if string(argv[1]) != "b" {
		t.Fatal("append to an argument overwrote the next one")
	}
}

func TestProtocolErrorText(t *testing.T) {
	if (&ProtocolError{"x"}).Error() != "x" {
		t.Fatal()
	}
	if e := expectedDollar('\n'); e.Msg != "Protocol error: expected '$', got ' '" {
		t.Fatal(e.Msg)
	}
}
