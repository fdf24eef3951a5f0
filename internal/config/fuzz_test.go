package config

import (
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary configuration text to the loader: it must never
// panic, and a text that loads must leave every parameter printable and, for
// mutable ones, accepted back by CONFIG SET. The session is sandboxed: include
// reads nothing and logfile is not opened.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"port 7000\nsave 900 1\nsave 300 10\n",
		"# comment\n\n  bind 127.0.0.1 ::1 \r\n",
		`requirepass "a\x00b\n" ` + "\nmasteruser 'x\\'y'",
		`save "900 \"1"`,
		"client-output-buffer-limit normal 1mb 2mb 3 replica 1 2 3",
		"maxmemory 99999999999999999999gb\nmaxmemory-clients 10%",
		"notify-keyspace-events KEA\nlatency-tracking-info-percentiles \"50 99.9\"",
		"include x.conf\nlua-replicate-commands yes\nsentinel\n",
		"unixsocketperm 0777\nhz 100000\nslaveof 127.0.0.1 6379",
		"port \"7000\nfoo",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c := New()
		s := c.newSession()
		s.sandbox = true
		if err := s.loadString(text); err != nil {
			if _, ok := err.(*LoadError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		s.commit(c)
		loadString(t, c, "enable-protected-configs yes") // let dir and dbfilename through
		for _, p := range c.Params() {
			v, ok := c.Get(p.Name)
			if !ok {
				t.Fatalf("Get(%s) failed", p.Name)
			}
			if !p.Mutable || p.Name == "dir" {
				continue
			}
			if p.Name == "save" && strings.Contains(v, "-") {
				continue // changes above 2^31 wrap negative in Redis too
			}
			if err := c.Set([2]string{p.Name, v}); err != nil {
				t.Fatalf("CONFIG SET %s %q (its own value): %v", p.Name, v, err)
			}
			if again, _ := c.Get(p.Name); again != v {
				t.Fatalf("%s: %q became %q", p.Name, v, again)
			}
		}
	})
}

// FuzzSplitArgs checks sdssplitargs never panics and that repr round-trips
// what it returns.
func FuzzSplitArgs(f *testing.F) {
	for _, seed := range []string{`a "b c" 'd\'e'`, `"\x4`, `"a"b`, "x\x00y", `"\\"`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, ok := splitArgs(line)
		if !ok {
			return
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = repr(a)
		}
		again, ok := splitArgs(strings.Join(quoted, " "))
		if !ok || len(again) != len(args) {
			t.Fatalf("re-split of %q: %q, %v", args, again, ok)
		}
		for i := range args {
			if again[i] != args[i] {
				t.Fatalf("arg %d: %q became %q", i, args[i], again[i])
			}
		}
	})
}

// FuzzSet checks that CONFIG SET of any value to any parameter never panics,
// and that a value it accepts prints back to a value it accepts unchanged.
func FuzzSet(f *testing.F) {
	f.Add(uint8(0), "7000")
	f.Add(uint8(5), "1gb")
	f.Add(uint8(40), "18446744073709551615")
	f.Add(uint8(60), "KEA")
	f.Add(uint8(70), "900 1 300 10")
	f.Fuzz(func(t *testing.T, n uint8, val string) {
		c := New()
		loadString(t, c, "enable-protected-configs yes")
		d := &reg.defs[int(n)%len(reg.defs)]
		if d.flags&fImmutable != 0 || d.name == "dir" {
			return
		}
		if err := c.Set([2]string{d.name, val}); err != nil {
			if !strings.HasPrefix(err.Error(), "ERR CONFIG SET failed (possibly related to argument '"+d.name+"') - ") {
				t.Fatalf("unexpected error text: %v", err)
			}
			return
		}
		v, _ := c.Get(d.name)
		if d.name == "save" && strings.Contains(v, "-") {
			return
		}
		if err := c.Set([2]string{d.name, v}); err != nil {
			t.Fatalf("CONFIG SET %s %q (after %q): %v", d.name, v, val, err)
		}
		if again, _ := c.Get(d.name); again != v {
			t.Fatalf("%s: %q became %q", d.name, v, again)
		}
	})
}
