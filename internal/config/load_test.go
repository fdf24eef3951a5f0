package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fatal is Redis's configuration error text for a line.
func fatal(line int, text, reason string) string {
	return "*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\n" +
		"Reading the configuration file, at line " + strconv.Itoa(line) + "\n>>> '" + text + "'\n" + reason
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "hotkv.conf", `# HotKV test configuration
   # an indented comment

PORT 7000
bind 127.0.0.1 ::1
requirepass "p@ss word\x21"
masteruser 'it\'s'
maxmemory 1GB
maxmemory-clients 5%
proto-max-bulk-len 2mb
hash-max-ziplist-entries 64
slave-read-only no
lua-time-limit 100
loglevel WARNING
notify-keyspace-events Ex
databases 4
daemonize no
unixsocketperm 700
save 900 1
save 300 10
client-output-buffer-limit normal 1mb 2mb 3 pubsub 4kb 5kb 6
latency-tracking-info-percentiles "50 99.5"
hz 0
list-max-ziplist-entries 512
lua-replicate-commands yes
sentinel
replica-lazy-flush yes`+"\r\n")
	c := New()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"port":                              "7000",
		"bind":                              "127.0.0.1 ::1",
		"requirepass":                       "p@ss word!",
		"masteruser":                        "it's",
		"maxmemory":                         "1073741824",
		"maxmemory-clients":                 "5%",
		"proto-max-bulk-len":                "2097152",
		"hash-max-listpack-entries":         "64",
		"replica-read-only":                 "no",
		"busy-reply-threshold":              "100",
		"loglevel":                          "warning",
		"notify-keyspace-events":            "xE",
		"databases":                         "4",
		"unixsocketperm":                    "700",
		"save":                              "900 1 300 10", // a file's save lines add up
		"client-output-buffer-limit":        "normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 4096 5120 6",
		"latency-tracking-info-percentiles": "50 99.5",
		"hz":                                "1", // clamped
		"replica-lazy-flush":                "yes",
	}
	for name, v := range want {
		if got, _ := c.Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
	if c.File() != path {
		t.Errorf("File() = %q, want %q", c.File(), path)
	}
}

func TestLoadSaveQuirks(t *testing.T) {
	tests := []struct{ text, want string }{
		{"save 900 1\nsave 300 10", "900 1 300 10"},
		{`save "900 1 300 10"`, "900 1 300 10"}, // one argument holding several words
		{`save ""`, ""},
		{"save", ""},
		// save "" clears, even after other lines; a bare save only replaces
		// the rules when it is the first save line.
		{"save 900 1\nsave \"\"", ""},
		{"save 900 1\nsave \"\"\nsave 300 10", "300 10"},
		{"save \"\"\nsave 900 1", "900 1"},
		{"save 900 1\nsave", "900 1"},
		{`save "900 \"1"`, ""}, // unbalanced quotes inside the value: no words
	}
	for _, tt := range tests {
		c := New()
		mustSet(t, c, "save", "5 5") // the value before the load is replaced
		loadString(t, c, tt.text)
		if got := c.String("save"); got != tt.want {
			t.Errorf("%q: save = %q, want %q", tt.text, got, tt.want)
		}
	}
	c := New()
	loadString(t, c, `bind "127.0.0.1 ::1"`)
	if got := c.String("bind"); got != "127.0.0.1 ::1" {
		t.Errorf("bind = %q", got)
	}
}

// config.c loadServerConfigFromString's errors, as redis-server prints them.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		text string
		err  string
	}{
		{"port 7000\n  # comment\nfoo bar", fatal(3, "foo bar", "Bad directive or wrong number of arguments")},
		{"port \"7000", fatal(1, `port "7000`, "Unbalanced quotes in configuration line")},
		{"port 7000 8000", fatal(1, "port 7000 8000", "wrong number of arguments")},
		{"port", fatal(1, "port", "wrong number of arguments")},
		{"port 7000 # trailing comment", fatal(1, "port 7000 # trailing comment", "wrong number of arguments")},
		{"  save 900  \t", fatal(1, "save 900", "Invalid save parameters")},
		{"maxmemory 1x", fatal(1, "maxmemory 1x", "argument must be a memory value")},
		{"port 70000", fatal(1, "port 70000", "argument must be between 0 and 65535 inclusive")},
		{"appendonly maybe", fatal(1, "appendonly maybe", "argument must be 'yes' or 'no'")},
		{"user alice on >pw\nuser alice off", fatal(2, "user alice off", "Error in user declaration 'alice': Duplicate user found. A user can only be defined once in config files")},
		{"user bob on badrule", fatal(1, "user bob on badrule", "Error in user declaration 'bob': Syntax error")},
		{"unixsocketperm 1000", fatal(1, "unixsocketperm 1000", "argument must be between 0 and 777 inclusive")},
		{"unixsocketperm 8", fatal(1, "unixsocketperm 8", "argument couldn't be parsed as an octal number")},
		{"replicaof localhost", fatal(1, "replicaof localhost", "wrong number of arguments")},
		{"replicaof localhost 70000", fatal(1, "replicaof localhost 70000", "Invalid master port")},
		{"dir /nonexistent/hotkv", fatal(1, "dir /nonexistent/hotkv", "No such file or directory")},
		{"list-max-ziplist-entries 1 2", fatal(1, "list-max-ziplist-entries 1 2", "Bad directive or wrong number of arguments")},
		{"include", fatal(1, "include", "Bad directive or wrong number of arguments")},
		{"loadmodule /x.so", fatal(1, "loadmodule /x.so", "HotKV does not support the 'loadmodule' directive")},
		{"search.timeout", fatal(1, "search.timeout", "Module config specified without value")},
		{"search.timeout 5", fatal(1, "search.timeout 5", "HotKV does not support module configuration")},
		{"sentinel monitor m 127.0.0.1 6379 2", fatal(1, "sentinel monitor m 127.0.0.1 6379 2", "sentinel directive while not in sentinel mode")},
		{"logfile /nonexistent/hotkv.log", "*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\nCan't open the log file: No such file or directory"},
	}
	for _, tt := range tests {
		c := New()
		s := c.newSession()
		err := s.loadString(tt.text)
		var le *LoadError
		if !errors.As(err, &le) || err.Error() != tt.err {
			t.Errorf("load %q:\n got %v\nwant %s", tt.text, err, tt.err)
		}
	}
}

func TestLoadFileAtomic(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.conf", "port 7000\n")
	bad := writeFile(t, dir, "bad.conf", "maxmemory 1mb\nport 1\nfoo\n")
	c := New()
	if err := c.LoadFile(good); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(bad); err == nil {
		t.Fatal("bad file loaded")
	}
	if c.Int("maxmemory") != 0 || c.Int("port") != 7000 || c.File() != good {
		t.Errorf("failed load changed things: maxmemory %d port %d file %s", c.Int("maxmemory"), c.Int("port"), c.File())
	}
	missing := filepath.Join(dir, "missing.conf")
	err := c.LoadFile(missing)
	if want := "Fatal error, can't open config file '" + missing + "': No such file or directory"; err == nil || err.Error() != want {
		t.Errorf("missing file: %v", err)
	}
}

func TestLoadInclude(t *testing.T) {
	dir := t.TempDir()
	confd := filepath.Join(dir, "conf.d")
	if err := os.Mkdir(confd, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, confd, "b.conf", "maxmemory 2mb\n")
	writeFile(t, confd, "a.conf", "maxmemory 1mb\nport 7001") // no final newline
	writeFile(t, dir, "inner.conf", "hz 20\ninclude "+repr(filepath.Join(dir, "inner2.conf"))+"\n")
	writeFile(t, dir, "inner2.conf", "timeout 30\n")
	main := writeFile(t, dir, "main.conf", strings.Join([]string{
		"port 7000",
		"include " + filepath.Join(dir, "inner.conf"),
		"include " + filepath.Join(confd, "*.conf"),
		"include " + filepath.Join(dir, "empty.d", "*.conf"), // no match: ignored
		"hz 30",
	}, "\n"))
	c := New()
	err := c.LoadFile(main)
	// a.conf has no final newline, so its last line and b.conf's first are
	// one line, "port 7001maxmemory 2mb", as in Redis (fgets concatenation).
	if want := fatal(2, "port 7001maxmemory 2mb", "wrong number of arguments"); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	writeFile(t, confd, "a.conf", "maxmemory 1mb\nport 7001\n")
	if err := c.LoadFile(main); err != nil {
		t.Fatal(err)
	}
	if c.Int("port") != 7001 || c.Int("maxmemory") != 2<<20 || c.Int("hz") != 30 || c.Int("timeout") != 30 {
		t.Errorf("port %d maxmemory %d hz %d timeout %d", c.Int("port"), c.Int("maxmemory"), c.Int("hz"), c.Int("timeout"))
	}

	// An error in an included file is reported with that file's line number.
	writeFile(t, dir, "inner2.conf", "timeout 30\nbogus\n")
	if err := New().LoadFile(main); err == nil || err.Error() != fatal(2, "bogus", "Bad directive or wrong number of arguments") {
		t.Errorf("nested error: %v", err)
	}
	// A missing include is fatal with the path as written.
	missing := filepath.Join(dir, "missing.conf")
	p := writeFile(t, dir, "m.conf", "include "+missing)
	if err := New().LoadFile(p); err == nil || err.Error() != "Fatal error, can't open config file '"+missing+"': No such file or directory" {
		t.Errorf("missing include: %v", err)
	}
	// An include loop stops.
	loop := filepath.Join(dir, "loop.conf")
	writeFile(t, dir, "loop.conf", "include "+loop)
	if err := New().LoadFile(loop); err == nil || !strings.Contains(err.Error(), "Too many nested include directives") {
		t.Errorf("include loop: %v", err)
	}
	// A relative include is relative to the dir read so far, where Redis,
	// having chdir()ed, would look.
	rel := writeFile(t, dir, "rel.conf", "dir "+repr(confd)+"\ninclude b.conf\n")
	c = New()
	if err := c.LoadFile(rel); err != nil || c.Int("maxmemory") != 2<<20 {
		t.Errorf("relative include: %v, maxmemory %d", err, c.Int("maxmemory"))
	}
}

func TestLoadLogfile(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hotkv.log")
	c := New()
	loadString(t, c, "logfile "+repr(log))
	if _, err := os.Stat(log); err != nil {
		t.Errorf("logfile not created: %v", err)
	}
	if c.String("logfile") != log {
		t.Errorf("logfile = %q", c.String("logfile"))
	}
}
