package hotkvtest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Update rewrites golden files with the replies HotKV gives (`go test -update`);
// review the diff before committing.
var Update = flag.Bool("update", false, "rewrite golden files with the actual replies")

// RunGolden runs a golden command script against a fresh server with a fake clock.
//
// The format is the one of shared/reference/redis-transcript.md:
//
//	# comment                  ignored (kept on -update)
//	> SET k "a b"              a command; words are shell-quoted ("..." with \ escapes, '...' literal);
//	                           @BIG:<n>:<c> stands for n copies of the character c
//	< +OK\r\n                  the exact reply bytes, Python-escaped (\r \n \t \\ \xHH)
//	! advance <ms>             move the fake clock forward
//	! conn <name>              send the following commands on connection <name> (made on first use)
//	! raw <escaped bytes>      send raw bytes on the current connection; the `<` lines that
//	                           follow are the replies read for them
//	! closed                   the server must have closed the current connection
//
// Every command's reply is compared byte for byte with its `<` line(s) (several
// `<` lines are several replies, e.g. after a pipelined raw write). Active expiry
// is off at the start (DEBUG SET-ACTIVE-EXPIRE 0), so that keys expire only
// lazily, when the script reads them, whatever the background cron does; a script
// may turn it back on.
func RunGolden(t *testing.T, path string, startMs int64, opts ...Option) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := Start(t, append([]Option{WithFakeClock(startMs), WithSnapshotProbe()}, opts...)...)
	if r := Dial(t, srv.Addr).Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); r != "+OK\r\n" {
		t.Fatalf("turning active expiry off: %q", r)
	}
	conns := map[string]*Conn{}
	cur := "main"
	conn := func() *Conn {
		if conns[cur] == nil {
			conns[cur] = Dial(t, srv.Addr)
		}
		return conns[cur]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out []string
	pending := 0 // replies expected for the last command or raw write
	lineNo := 0
	readExpected := func(want string) {
		got, err := conn().ReadReply()
		if err != nil {
			t.Errorf("%s:%d: reading reply: %v (want %q)", path, lineNo, err, want)
			got = "<error: " + err.Error() + ">"
		}
		if got != want && !*Update {
			t.Errorf("%s:%d:\n got  %s\n want %s", path, lineNo, Escape(got), Escape(want))
		}
		out = append(out, "< "+Escape(got))
	}
	for i := 0; i < len(lines); i++ {
		lineNo = i + 1
		ln := lines[i]
		switch {
		case strings.HasPrefix(ln, "> "):
			args, err := SplitArgs(ln[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, lineNo, err)
			}
			conn().Write(EncodeCommand(args...))
			out = append(out, ln)
			pending = 0
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "< ") {
				i++
				lineNo = i + 1
				pending++
				readExpected(Unescape(lines[i][2:]))
			}
			if pending == 0 {
				t.Fatalf("%s:%d: command without an expected reply", path, lineNo)
			}
		case strings.HasPrefix(ln, "! advance "):
			ms, err := strconv.ParseInt(strings.TrimSpace(ln[len("! advance "):]), 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, lineNo, err)
			}
			srv.Clock.Advance(time.Duration(ms) * time.Millisecond)
			out = append(out, ln)
		case strings.HasPrefix(ln, "! conn "):
			cur = strings.TrimSpace(ln[len("! conn "):])
			out = append(out, ln)
		case strings.HasPrefix(ln, "! raw "):
			conn().Write([]byte(Unescape(ln[len("! raw "):])))
			out = append(out, ln)
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "< ") {
				i++
				lineNo = i + 1
				readExpected(Unescape(lines[i][2:]))
			}
		case ln == "! closed":
			_ = conn().c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if b, err := conn().br.ReadByte(); err == nil {
				t.Errorf("%s:%d: connection still open (read %q)", path, lineNo, b)
			}
			delete(conns, cur)
			out = append(out, ln)
		case strings.HasPrefix(ln, "< "):
			t.Fatalf("%s:%d: reply line without a command", path, lineNo)
		default:
			out = append(out, ln)
		}
	}
	if *Update {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// SplitArgs splits a command line shell-style: "..." with backslash escapes (\" \\
// \n \r \t \xHH), '...' literal, and @BIG:<n>:<c> expanded.
func SplitArgs(s string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return args, nil
		}
		var b strings.Builder
		quoted := false
		for i < len(s) && s[i] != ' ' {
			switch s[i] {
			case '"':
				quoted = true
				i++
				for {
					if i >= len(s) {
						return nil, fmt.Errorf("unbalanced quotes in %q", s)
					}
					if s[i] == '"' {
						i++
						break
					}
					if s[i] == '\\' && i+1 < len(s) {
						u := Unescape(s[i:min(i+4, len(s))])
						if s[i+1] == 'x' && i+3 < len(s) {
							b.WriteString(u[:1])
							i += 4
							continue
						}
						b.WriteString(Unescape(s[i : i+2]))
						i += 2
						continue
					}
					b.WriteByte(s[i])
					i++
				}
			case '\'':
				quoted = true
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("unbalanced quotes in %q", s)
				}
				b.WriteString(s[i+1 : i+1+j])
				i += j + 2
			default:
				b.WriteByte(s[i])
				i++
			}
		}
		arg := b.String()
		if !quoted && strings.HasPrefix(arg, "@BIG:") {
			parts := strings.SplitN(arg, ":", 3)
			n, err := strconv.Atoi(parts[1])
			if err != nil || len(parts) != 3 || len(parts[2]) != 1 {
				return nil, fmt.Errorf("bad @BIG in %q", arg)
			}
			arg = strings.Repeat(parts[2], n)
		}
		args = append(args, arg)
	}
}

// Escape renders bytes the way the golden files show them (Python style).
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\r':
			b.WriteString(`\r`)
		case ch == '\n':
			b.WriteString(`\n`)
		case ch == '\t':
			b.WriteString(`\t`)
		case ch == '\\':
			b.WriteString(`\\`)
		case ch < 0x20 || ch >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// Unescape is Escape's inverse (also accepts \' and \").
func Unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 < len(s) {
				v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
				if err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
