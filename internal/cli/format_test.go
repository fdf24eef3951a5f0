package cli

import (
	"bufio"
	"strings"
	"testing"
)

func parse(t *testing.T, wire string) *Reply {
	t.Helper()
	r, err := ReadReply(bufio.NewReader(strings.NewReader(wire)))
	if err != nil {
		t.Fatalf("parse %q: %v", wire, err)
	}
	return r
}

// Renderings checked against redis-cli 7.0's source (cliFormatReplyTTY,
// cliFormatReplyRaw) and, in redisdiff_test.go, against redis-cli itself.
func TestFormatTTY(t *testing.T) {
	cases := []struct{ wire, want string }{
		{"+OK\r\n", "OK\n"},
		{"-ERR bad\r\n", "(error) ERR bad\n"},
		{"!8\r\nERR a\x00bc\r\n", "(error) ERR a\n"}, // printed with %s: stops at NUL
		{":-42\r\n", "(integer) -42\n"},
		{"$5\r\na\"b\\c\r\n", `"a\"b\\c"` + "\n"},
		{"$7\r\n\x00\xff\t\n\r\a\b\r\n", `"\x00\xff\t\n\r\a\b"` + "\n"},
		{"$-1\r\n", "(nil)\n"},
		{"*-1\r\n", "(nil)\n"},
		{"_\r\n", "(nil)\n"},
		{"*0\r\n", "(empty array)\n"},
		{"%0\r\n", "(empty hash)\n"},
		{"~0\r\n", "(empty set)\n"},
		{">0\r\n", "(empty push)\n"},
		{",3.14\r\n", "(double) 3.14\n"},
		{",inf\r\n", "(double) inf\n"},
		{"#t\r\n", "(true)\n"},
		{"#f\r\n", "(false)\n"},
		{"(123456789012345678901234567890\r\n", "(big number) 123456789012345678901234567890\n"},
		{"=15\r\ntxt:Some string\r\n", "Some string\n"},
		{"*2\r\n*2\r\n:1\r\n*1\r\n$1\r\na\r\n*0\r\n", "1) 1) (integer) 1\n   2) 1) \"a\"\n2) (empty array)\n"},
		{"~2\r\n$1\r\na\r\n$1\r\nb\r\n", "1~ \"a\"\n2~ \"b\"\n"},
		{"%2\r\n$1\r\na\r\n*2\r\n:1\r\n:2\r\n$1\r\nb\r\n*1\r\n:3\r\n",
			"1# \"a\" => \n   1) (integer) 1\n   2) (integer) 2\n2# \"b\" => 1) (integer) 3\n"},
		{">2\r\n$3\r\nfoo\r\n:1\r\n", "1) \"foo\"\n2) (integer) 1\n"},
		// An attribute is skipped; the reply after it is shown.
		{"|1\r\n$3\r\nkey\r\n:9\r\n$4\r\nreal\r\n", "\"real\"\n"},
	}
	for _, c := range cases {
		if got := string(FormatTTY(nil, parse(t, c.wire), "")); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.wire, got, c.want)
		}
	}
}

// Index width grows with the element count and nested prefixes follow it.
func TestFormatTTYIndexWidth(t *testing.T) {
	var b strings.Builder
	b.WriteString("*11\r\n")
	for i := 0; i < 10; i++ {
		b.WriteString(":7\r\n")
	}
	b.WriteString("*2\r\n:1\r\n:2\r\n")
	got := string(FormatTTY(nil, parse(t, b.String()), ""))
	want := " 1) (integer) 7\n"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "11) 1) (integer) 1\n    2) (integer) 2\n") {
		t.Errorf("got %q", got)
	}
}

func TestFormatRaw(t *testing.T) {
	cases := []struct{ wire, want string }{
		{"+OK\r\n", "OK"},
		{"-ERR bad\r\n", "ERR bad\n"},
		{":5\r\n", "5"},
		{"$3\r\na\x00b\r\n", "a\x00b"},
		{"$-1\r\n", ""},
		{"#t\r\n", "(true)"},
		{",1.5\r\n", "1.5"},
		{"*3\r\n$1\r\na\r\n*0\r\n$1\r\nb\r\n", "a||b"},
		{"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n", "a 1|b 2"},
	}
	for _, c := range cases {
		if got := string(FormatRaw(nil, parse(t, c.wire), "|")); got != c.want {
			t.Errorf("%q: got %q, want %q", c.wire, got, c.want)
		}
	}
}

func TestFormatCSV(t *testing.T) {
	got := string(FormatCSV(nil, parse(t, "*4\r\n$2\r\na,\r\n:1\r\n$-1\r\n#f\r\n")))
	if want := `"a,",1,NULL,false`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInvalidatePush(t *testing.T) {
	r := parse(t, ">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n")
	if !isInvalidate(r) {
		t.Fatal("not recognised as an invalidation")
	}
	if got := string(FormatInvalidateTTY(nil, r)); got != "-> invalidate: 'a', 'b'\n" {
		t.Errorf("got %q", got)
	}
}

func TestReadReplyErrors(t *testing.T) {
	for _, wire := range []string{"?x\r\n", ":abc\r\n", "$5\r\nab\r\n", "#x\r\n", "=3\r\nabc\r\n", "+OK\n"} {
		if _, err := ReadReply(bufio.NewReader(strings.NewReader(wire))); err == nil {
			t.Errorf("%q: no error", wire)
		}
	}
	_, err := ReadReply(bufio.NewReader(strings.NewReader("|1\r\n")))
	if err != ErrServerClosed {
		t.Errorf("truncated reply: %v", err)
	}
	_, err = ReadReply(bufio.NewReader(strings.NewReader("|1\r\n")))
	if err == nil || err.Error() != "Server closed the connection" {
		t.Errorf("got %v", err)
	}
	_, err = ReadReply(bufio.NewReader(strings.NewReader("?\r\n")))
	if err == nil || err.Error() != `Protocol error, got "?" as reply type byte` {
		t.Errorf("got %v", err)
	}
}

// SplitArgs is sdssplitargs: the cases of Redis's own unit test plus the
// error cases.
func TestSplitArgs(t *testing.T) {
	cases := []struct {
		line string
		want []string
		ok   bool
	}{
		{"", []string{}, true},
		{"   ", []string{}, true},
		{"set a b", []string{"set", "a", "b"}, true},
		{"  set\t a\r\n", []string{"set", "a"}, true},
		{`"a b" 'c d'`, []string{"a b", "c d"}, true},
		{`"\x41\x4a\n\r\t\b\a\q\\\""`, []string{"AJ\n\r\t\b\aq\\\""}, true},
		{`"\x4" "\xzz"`, []string{"x4", "xzz"}, true},
		{`'it\'s' 'a\b'`, []string{"it's", `a\b`}, true},
		{`ab"cd ef"gh`, nil, false},
		{`ab"cd ef" gh`, []string{"abcd ef", "gh"}, true},
		{`"unterminated`, nil, false},
		{`'unterminated`, nil, false},
		{`"x"y`, nil, false},
		{`""`, []string{""}, true},
		{"a\x00b c", []string{"a"}, true},
	}
	for _, c := range cases {
		got, ok := SplitArgs(c.line)
		if ok != c.ok || (ok && strings.Join(got, "\x1f") != strings.Join(c.want, "\x1f")) || (ok && len(got) != len(c.want)) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestPrompt(t *testing.T) {
	cases := []struct {
		host   string
		port   int
		socket string
		db     int
		multi  bool
		want   string
	}{
		{"127.0.0.1", 6379, "", 0, false, "hotkv> "},
		{"127.0.0.1", 6379, "", 2, false, "hotkv[2]> "},
		{"10.0.0.5", 7000, "", 0, false, "hotkv 10.0.0.5:7000> "},
		{"10.0.0.5", 7000, "", 3, true, "hotkv 10.0.0.5:7000[3](TX)> "},
		{"::1", 6379, "", 0, false, "hotkv [::1]:6379> "},
		{"127.0.0.1", 6379, "/tmp/hotkv.sock", 0, false, "hotkv /tmp/hotkv.sock> "},
	}
	for _, c := range cases {
		if got := prompt(c.host, c.port, c.socket, c.db, c.multi); got != c.want {
			t.Errorf("prompt(%+v) = %q, want %q", c, got, c.want)
		}
	}
}

func TestParseURI(t *testing.T) {
	cases := []struct {
		uri              string
		host, user, auth string
		port, db         int
		bad              bool
	}{
		{"redis://", "127.0.0.1", "", "", 6379, 0, false},
		{"redis://h.example:7000/3", "h.example", "", "", 7000, 3, false},
		{"REDIS://pw@h", "h", "", "pw", 6379, 0, false},
		{"redis://al%69ce:p%40ss@h:1/0", "h", "alice", "p@ss", 1, 0, false},
		{"redis://[::1]:7001/2", "::1", "", "", 7001, 2, false},
		{"redis:///5", "127.0.0.1", "", "", 6379, 5, false},
		{"http://h", "", "", "", 0, 0, true},
		{"redis://a%4@h", "", "", "", 0, 0, true},
	}
	for _, c := range cases {
		cfg := &Config{Host: DefaultHost, Port: DefaultPort}
		err := parseURI(c.uri, cfg)
		if c.bad {
			if err == nil {
				t.Errorf("%s: accepted", c.uri)
			}
			continue
		}
		if err != nil || cfg.Host != c.host || cfg.Port != c.port || cfg.DB != c.db || cfg.User != c.user || cfg.Auth != c.auth {
			t.Errorf("%s: %+v %v", c.uri, cfg, err)
		}
	}
}

func TestSensitive(t *testing.T) {
	for _, l := range []string{"AUTH pw", "auth u pw", "ACL SETUSER u on", "CONFIG SET requirepass x",
		"CONFIG SET maxmemory 1 masterauth x", "HELLO 3 AUTH u p", "HELLO 3 SETNAME n AUTH u p",
		"MIGRATE h 1 k 0 100 AUTH pw"} {
		argv, _ := SplitArgs(l)
		if !sensitive(argv) {
			t.Errorf("%q should stay out of the history", l)
		}
	}
	for _, l := range []string{"SET auth x", "CONFIG SET maxmemory 1", "HELLO 3", "HELLO 3 SETNAME n",
		"MIGRATE h 1 k 0 100 KEYS auth"} {
		argv, _ := SplitArgs(l)
		if sensitive(argv) {
			t.Errorf("%q should be in the history", l)
		}
	}
}
