package command_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// respElems splits a RESP2 array or RESP3 map reply into its top-level elements
// (raw bytes each).
func respElems(t *testing.T, r string) []string {
	t.Helper()
	var skip func(pos int) int
	skip = func(pos int) int {
		i := strings.Index(r[pos:], "\r\n")
		line := r[pos : pos+i]
		pos += i + 2
		n, _ := strconv.Atoi(line[1:])
		switch line[0] {
		case '$':
			if n >= 0 {
				pos += n + 2
			}
		case '*', '~', '%':
			if line[0] == '%' {
				n *= 2
			}
			for j := 0; j < n; j++ {
				pos = skip(pos)
			}
		}
		return pos
	}
	i := strings.Index(r, "\r\n")
	n, err := strconv.Atoi(r[1:i])
	if err != nil {
		t.Fatalf("not an aggregate: %q", r[:min(len(r), 40)])
	}
	if r[0] == '%' {
		n *= 2
	}
	var out []string
	pos := i + 2
	for j := 0; j < n; j++ {
		end := skip(pos)
		out = append(out, r[pos:end])
		pos = end
	}
	if pos != len(r) {
		t.Fatalf("trailing bytes after %d elements", n)
	}
	return out
}

// TestCommandDocsAll: COMMAND DOCS with no argument lists every top-level
// command of the table once (in RESP2 a flat array, in RESP3 a map), each with
// the same entry as COMMAND DOCS <name>; unknown names are skipped.
func TestCommandDocsAll(t *testing.T) {
	srv := hotkvtest.Start(t)
	table := command.NewTable()
	for _, proto := range []string{"2", "3"} {
		c := hotkvtest.Dial(t, srv.Addr)
		c.Do("HELLO", proto)
		all := c.Do("COMMAND", "DOCS")
		want, n := "*", 2*table.Len() // RESP2: a flat array of name/doc pairs
		if proto == "3" {
			want, n = "%", table.Len()
		}
		if !strings.HasPrefix(all, want+strconv.Itoa(n)+"\r\n") {
			t.Fatalf("RESP%s: COMMAND DOCS header %q, want %s%d", proto, all[:min(len(all), 10)], want, n)
		}
		el := respElems(t, all)
		seen := map[string]bool{}
		for i := 0; i+1 < len(el); i += 2 {
			name := strings.SplitN(el[i], "\r\n", 3)[1]
			if seen[name] {
				t.Errorf("%s listed twice", name)
			}
			seen[name] = true
			if table.Lookup([]byte(name)) == nil {
				t.Errorf("%s is not a command of the table", name)
			}
			one := c.Do("COMMAND", "DOCS", name, "no-such-command")
			head := "*2\r\n"
			if proto == "3" {
				head = "%1\r\n"
			}
			if one != head+el[i]+el[i+1] {
				t.Errorf("RESP%s: COMMAND DOCS %s differs from its entry in COMMAND DOCS", proto, name)
			}
		}
		if len(seen) != table.Len() {
			t.Errorf("RESP%s: %d commands, table has %d", proto, len(seen), table.Len())
		}
		if r := c.Do("COMMAND", "DOCS", "no-such-command"); r != want+"0\r\n" {
			t.Errorf("RESP%s: unknown command: %q", proto, r)
		}
	}
}
