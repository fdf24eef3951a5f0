package acl

import (
	"slices"
	"strings"
	"testing"
)

// FuzzSetUser feeds arbitrary rules to ACL SETUSER. It must not panic, a
// failed call must leave the user as it was, and a user's description
// (ACL LIST) must rebuild the same user: the same description and the same
// command bitmap (Redis checks the latter and panics when they differ).
func FuzzSetUser(f *testing.F) {
	for _, s := range []string{
		"on >pw ~app:* +@read +@write -flushall",
		"reset %R~r* %W~w* &c* +config|get +select|0 -@dangerous",
		"(~x +get) ( %R~y +set ) clearselectors allkeys allchannels",
		"nopass resetpass #" + strings.Repeat("ab", 32) + " !" + strings.Repeat("ab", 32),
		"+@all -@string +get -config +config|set nocommands +@hash",
		"~* ~x &* &y %X~z (", "skip-sanitize-payload off on reset",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		a := New(testCommands())
		set := func(name string, rules []string) error { return a.SetUser(name, rules) }
		if err := set("u", []string{"on", "~k", "+get"}); err != nil {
			t.Fatal(err)
		}
		before := a.User("u").Describe()
		words := strings.Fields(rules)
		if err := set("u", words); err != nil {
			if a.User("u").Describe() != before {
				t.Fatalf("%q failed (%v) but changed the user", words, err)
			}
			return
		}
		u := a.User("u")
		desc := u.Describe()
		if !describesBack(u) {
			return
		}
		if err := set("copy", []string{"reset"}); err != nil {
			t.Fatal(err)
		}
		merged, _ := mergeSelectorArgs(strings.Split(desc, " "))
		if err := set("copy", merged); err != nil {
			t.Fatalf("description %q does not load: %v", desc, err)
		}
		c := a.User("copy")
		if c.Describe() != desc {
			t.Fatalf("description %q reloads as %q", desc, c.Describe())
		}
		for i, s := range u.selectors {
			if !slices.Equal(s.cmds, c.selectors[i].cmds) {
				t.Fatalf("%q: selector %d's commands differ after reloading %q", words, i, desc)
			}
		}
	})
}

// FuzzLoadFile loads arbitrary ACL file text: no panic; a failed load
// changes nothing, and a loaded file's users save to text that loads to the
// same users.
func FuzzLoadFile(f *testing.F) {
	for _, s := range []string{
		"user alice on >pw ~app:* +@read\nuser default on nopass ~* &* +@all\n",
		"user a on\nuser a off\n", "foo\n\n\t\nuser b (~x +get\n", "user c on (~x +get) &c*\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := New(testCommands())
		if err := a.SetUser("keep", []string{"on", "+get"}); err != nil {
			t.Fatal(err)
		}
		before := a.FileText()
		if err := a.load("f", text); err != nil {
			if a.FileText() != before {
				t.Fatalf("failed load (%v) changed the users", err)
			}
			return
		}
		saved := a.FileText()
		for _, u := range a.users {
			if !describesBack(u) {
				return
			}
		}
		b := New(testCommands())
		if err := b.load("f", saved); err != nil {
			t.Fatalf("saved text %q does not load: %v", saved, err)
		}
		if b.FileText() != saved {
			t.Fatalf("saved %q reloads as %q", saved, b.FileText())
		}
	})
}

// describesBack reports whether u's description reads back as u: not when
// a selector's pattern holds a parenthesis (it ends or starts a selector
// when read, in Redis as here) or NUL (a selector's text is a C string).
func describesBack(u *User) bool {
	if len(u.selectors) == 1 {
		return true
	}
	for _, s := range u.selectors {
		for _, k := range s.keys {
			if strings.ContainsAny(k.pattern, "()\x00") {
				return false
			}
		}
		for _, c := range s.channels {
			if strings.ContainsAny(c, "()\x00") {
				return false
			}
		}
	}
	return true
}
