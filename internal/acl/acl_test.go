package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// a small table: get (read, string, fast), set (write, string, slow; keys
// written), config with get and set, publish and subscribe, auth (no auth).
func testCommands() *Commands {
	key := func(f KeyFlags) func(argv [][]byte, buf []KeyRef) []KeyRef {
		return func(argv [][]byte, buf []KeyRef) []KeyRef {
			if len(argv) > 1 {
				buf = append(buf, KeyRef{Pos: 1, Flags: f})
			}
			return buf
		}
	}
	chans := func(f ChanFlags, one bool) func(argv [][]byte, buf []ChanRef) []ChanRef {
		return func(argv [][]byte, buf []ChanRef) []ChanRef {
			end := len(argv)
			if one {
				end = min(end, 2)
			}
			for i := 1; i < end; i++ {
				buf = append(buf, ChanRef{Pos: i, Flags: f})
			}
			return buf
		}
	}
	cat := func(names ...string) uint64 {
		var f uint64
		for _, n := range names {
			f |= CategoryFlag(n)
		}
		return f
	}
	top := []*Command{
		{ID: 0, Name: "get", Categories: cat("read", "string", "fast"), Keys: key(KeyAccess)},
		{ID: 1, Name: "set", Categories: cat("write", "string", "slow"), Keys: key(KeyUpdate)},
		{ID: 2, Name: "config", Categories: cat("slow"), Subs: []*Command{
			{ID: 3, Name: "config|get", Categories: cat("admin", "slow", "dangerous")},
			{ID: 4, Name: "config|set", Categories: cat("admin", "slow", "dangerous")},
		}},
		{ID: 5, Name: "publish", Categories: cat("pubsub", "fast"), Channels: chans(ChanPublish, true)},
		{ID: 6, Name: "psubscribe", Categories: cat("pubsub", "slow"), Channels: chans(ChanSubscribe|ChanPattern, false)},
		{ID: 7, Name: "auth", Categories: cat("fast", "connection"), NoAuth: true},
		{ID: 8, Name: "select", Categories: cat("fast", "connection")},
	}
	return NewCommands(top, 9)
}

func argv(words ...string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

func set(t *testing.T, a *ACL, name string, rules ...string) {
	t.Helper()
	if err := a.SetUser(name, rules); err != nil {
		t.Fatalf("SETUSER %s %q: %v", name, rules, err)
	}
}

func TestDefaultUser(t *testing.T) {
	a := New(testCommands())
	if got := a.Default.Describe(); got != "on nopass sanitize-payload ~* &* +@all" {
		t.Errorf("default = %q", got)
	}
	if a.RequireAuth() || !a.Default.AllPerms() {
		t.Error("the default user needs no password and may do anything")
	}
	a.SetDefaultPassword("s3cret")
	if !a.RequireAuth() || a.Authenticate("default", []byte("x")) != nil || a.Authenticate("default", []byte("s3cret")) != a.Default {
		t.Error("requirepass")
	}
	a.SetDefaultPassword("")
	if a.RequireAuth() {
		t.Error("requirepass cleared")
	}
}

func TestDescribeAndRules(t *testing.T) {
	a := New(testCommands())
	for _, c := range []struct {
		rules []string
		want  string
	}{
		{nil, "off sanitize-payload resetchannels -@all"},
		{[]string{"on", "~k*", "%R~r*", "%W~w*", "%RW~rw*", "&c*", "+@string", "-set"},
			"on sanitize-payload ~k* %R~r* %W~w* ~rw* resetchannels &c* -@all +@string -set"},
		// a later rule on a command replaces earlier ones on it and its subcommands
		{[]string{"reset", "+config|get", "+config", "-config"}, "off sanitize-payload resetchannels -@all -config"},
		{[]string{"reset", "+@all", "-@string", "+get"}, "off sanitize-payload resetchannels +@all -@string +get"},
		{[]string{"reset", "+select|0", "+select|1", "+select|0"}, "off sanitize-payload resetchannels -@all +select|1 +select|0"},
		{[]string{"reset", "allkeys", "allchannels", "allcommands", "nopass"}, "off nopass sanitize-payload ~* &* +@all"},
		{[]string{"reset", "%R~x", "%W~x"}, "off sanitize-payload ~x resetchannels -@all"},
		{[]string{"reset", "(~a +get)", "(", "&b", "+set", ")"}, "off sanitize-payload resetchannels -@all (~a resetchannels -@all +get) (resetchannels &b -@all +set)"},
		{[]string{"clearselectors", "skip-sanitize-payload"}, "off skip-sanitize-payload resetchannels -@all"},
	} {
		set(t, a, "u", c.rules...)
		if got := a.User("u").Describe(); got != c.want {
			t.Errorf("%q: %q, want %q", c.rules, got, c.want)
		}
	}
	set(t, a, "p", ">one", ">two", ">one", "<two")
	if got := a.User("p").Passwords(); len(got) != 1 || got[0] != HashPassword([]byte("one")) {
		t.Errorf("passwords = %q", got)
	}
}

func TestRuleErrors(t *testing.T) {
	a := New(testCommands())
	set(t, a, "u", "on", "~x")
	before := a.User("u").Describe()
	for _, c := range []struct {
		rule, want string
	}{
		{"bogus", "Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{"+nosuch", "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"},
		{"-@nosuch", "Error in ACL SETUSER modifier '-@nosuch': Unknown command or category name in ACL"},
		{"+config|get|x", "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{"+select|", "Error in ACL SETUSER modifier '+select|': Syntax error"},
		{"<nope", "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist"},
		{"#short", "Error in ACL SETUSER modifier '#short': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{"%Q~x", "Error in ACL SETUSER modifier '%Q~x': Syntax error"},
		{"(~a", "Unmatched parenthesis in acl selector starting at '(~a'."},
	} {
		err := a.SetUser("u", []string{"+get", c.rule})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.rule, err, c.want)
		}
	}
	if err := a.SetUser("u", []string{"allkeys", "~y"}); err == nil || !strings.Contains(err.Error(), "'allkeys' flag") {
		t.Errorf("pattern after allkeys: %v", err)
	}
	if got := a.User("u").Describe(); got != before {
		t.Errorf("a failed SETUSER changed the user: %q", got)
	}
}

func TestCheck(t *testing.T) {
	a := New(testCommands())
	cmds := a.Commands()
	set(t, a, "u", "on", "nopass", "~app:*", "%R~ro:*", "&news", "+get", "+set", "+publish", "+psubscribe", "+config|get", "+select|0")
	u := a.User("u")
	var sc Scratch
	for _, c := range []struct {
		cmd  string
		args []string
		r    Reason
		pos  int
	}{
		{"get", []string{"get", "app:1"}, OK, 0},
		{"get", []string{"get", "ro:1"}, OK, 0},
		{"set", []string{"set", "ro:1", "v"}, DeniedKey, 1},
		{"get", []string{"get", "other"}, DeniedKey, 1},
		{"config|get", []string{"config", "get", "x"}, OK, 0},
		{"config|set", []string{"config", "set", "x", "y"}, DeniedCmd, 0},
		{"publish", []string{"publish", "news", "m"}, OK, 0},
		{"publish", []string{"publish", "sports", "m"}, DeniedChannel, 1},
		{"psubscribe", []string{"psubscribe", "news"}, OK, 0},
		{"psubscribe", []string{"psubscribe", "n*"}, DeniedChannel, 1}, // a pattern must equal a permitted one
		{"auth", []string{"auth", "x"}, OK, 0},                         // no-auth commands are never denied
		{"select", []string{"select", "0"}, OK, 0},
		{"select", []string{"select", "1"}, DeniedCmd, 0},
	} {
		r, pos := u.Check(cmds.Lookup(c.cmd), argv(c.args...), &sc)
		if r != c.r || pos != c.pos {
			t.Errorf("%q: %v at %d, want %v at %d", c.args, r, pos, c.r, c.pos)
		}
	}
	// one selector of several suffices; the denial reported is the worst
	set(t, a, "v", "on", "nopass", "+get", "~a", "(~b +get)")
	v := a.User("v")
	for _, k := range []string{"a", "b"} {
		if r, _ := v.Check(cmds.Lookup("get"), argv("get", k), &sc); r != OK {
			t.Errorf("get %s: %v", k, r)
		}
	}
	if r, pos := v.Check(cmds.Lookup("get"), argv("get", "c"), &sc); r != DeniedKey || pos != 1 {
		t.Errorf("get c: %v %d", r, pos)
	}
	if !v.CheckKey([]byte("b"), KeyAccess) || v.CheckKey([]byte("c"), KeyAccess) {
		t.Error("CheckKey")
	}
	set(t, a, "w", "on", "+get", "%R~*")
	if !a.User("w").CheckUnrestrictedKeys(cmds.Lookup("get"), argv("get", "x"), KeyAccess, &sc) ||
		v.CheckUnrestrictedKeys(cmds.Lookup("get"), argv("get", "a"), KeyAccess, &sc) {
		t.Error("CheckUnrestrictedKeys")
	}
}

func TestHooks(t *testing.T) {
	a := New(testCommands())
	var deleted []string
	var revoked []string
	a.Hooks = Hooks{
		Deleted: func(u *User) { deleted = append(deleted, u.Name) },
		ChannelsRevoked: func(u *User, allowed func([]byte, bool) bool) {
			revoked = append(revoked, u.Name)
			if !allowed([]byte("a"), false) || allowed([]byte("b"), false) {
				t.Error("allowed: a only")
			}
		},
	}
	set(t, a, "s", "on", "&a", "&b")
	set(t, a, "s", "&c") // more channels: nothing revoked
	set(t, a, "s", "resetchannels", "&a")
	if strings.Join(revoked, ",") != "s" {
		t.Errorf("revoked = %q", revoked)
	}
	if n := a.DelUser([]string{"s", "nosuch"}); n != 1 || strings.Join(deleted, ",") != "s" {
		t.Errorf("DelUser = %d, deleted %q", n, deleted)
	}
}

func TestLog(t *testing.T) {
	a := New(testCommands())
	a.Add(DeniedCmd, CtxToplevel, "get", "u", "c1", 1000, 3)
	a.Add(DeniedCmd, CtxToplevel, "get", "u", "c2", 2000, 3) // grouped
	a.Add(DeniedKey, CtxMulti, "k", "u", "c3", 3000, 3)
	if e := a.Log.Entries; len(e) != 2 || e[1].Count != 2 || e[1].ClientInfo != "c2" || e[0].Object != "k" {
		t.Fatalf("grouping: %+v", *e[1])
	}
	a.Add(DeniedCmd, CtxToplevel, "get", "u", "c4", 62001, 3)   // over 60 s after the last update: a new entry
	a.Add(DeniedAuth, CtxToplevel, "AUTH", "x", "c6", 62002, 3) // the oldest goes (3 kept)
	e := a.Log.Entries
	if len(e) != 3 || e[0].Reason != DeniedAuth || e[0].EntryID != 3 || e[1].Count != 1 || e[1].EntryID != 2 || e[2].Object != "k" {
		for _, x := range e {
			t.Logf("%+v", *x)
		}
		t.Fatal("log")
	}
	if a.Stats.Cmd != 3 || a.Stats.Key != 1 || a.Stats.Auth != 1 {
		t.Errorf("stats = %+v", a.Stats)
	}
	a.Add(DeniedCmd, CtxLua, "set", "u", "", 1, 0) // acllog-max-len 0: counted, not kept
	if len(a.Log.Entries) != 0 || a.Stats.Cmd != 4 {
		t.Error("max len 0")
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	a := New(testCommands())
	set(t, a, "alice", "on", ">pw", "~app:*", "+get", "(~x +set)")
	if err := a.SaveFile(path, "t"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "user alice on sanitize-payload #" + HashPassword([]byte("pw")) +
		" ~app:* resetchannels -@all +get (~x resetchannels -@all +set)\nuser default on nopass sanitize-payload ~* &* +@all\n"
	if string(data) != want {
		t.Errorf("file:\n%s\nwant\n%s", data, want)
	}
	var deleted []string
	b := New(testCommands())
	b.Hooks.Deleted = func(u *User) { deleted = append(deleted, u.Name) }
	set(t, b, "bob", "on")
	alice := b.Default
	if err := b.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if b.FileText() != want || strings.Join(deleted, ",") != "bob" || b.Default != alice {
		t.Errorf("loaded %q, deleted %q", b.FileText(), deleted)
	}
	// errors: nothing changes
	bad := "user carol on\nuser carol off\nuser dave +nosuch ~x\nfoo bar\nuser eve bogus bogus2\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err := b.LoadFile(path)
	wantErr := "WARNING: Duplicate user 'carol' found on line 2. " + path + ":3: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		path + ":4 should start with user keyword followed by the username. " + path + ":5: Syntax error. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != wantErr {
		t.Errorf("err = %v\nwant  %s", err, wantErr)
	}
	if b.FileText() != want {
		t.Error("a failed load changed the users")
	}
	// a file without the default user gets Redis's
	_ = os.WriteFile(path, []byte("user zed on nopass +@all\n"), 0o644)
	if err := b.LoadFile(path); err != nil || b.Default.Describe() != "on nopass sanitize-payload ~* &* +@all" || b.User("alice") != nil {
		t.Errorf("load without default: %v %q", err, b.FileText())
	}
}

func TestValidateUserLine(t *testing.T) {
	rules, _, err := ValidateUserLine([]string{"user", "u", "on", "+nosuchcmd", "(~x", "+get)"})
	if err != nil || strings.Join(rules, "|") != "on|+nosuchcmd|(~x +get)" {
		t.Errorf("%q %v", rules, err)
	}
	if _, bad, err := ValidateUserLine([]string{"user", "u", "on", "bogus"}); err == nil || bad != 1 {
		t.Errorf("bogus: %d %v", bad, err)
	}
}

// The check of a restricted user's command: a command bit, a key matched
// against a pattern; no allocation.
func BenchmarkCheckRestricted(b *testing.B) {
	a := New(testCommands())
	if err := a.SetUser("app", []string{"on", "nopass", "~app:*", "+@read", "+@write"}); err != nil {
		b.Fatal(err)
	}
	u, cmd := a.User("app"), a.Commands().Lookup("set")
	args := argv("set", "app:000000012345", "v")
	var sc Scratch
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := u.Check(cmd, args, &sc); r != OK {
			b.Fatal(r)
		}
	}
}
