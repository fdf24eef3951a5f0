package config

import (
	"path/filepath"
	"testing"
)

// server.c main(): the command line is appended to the file's text.
func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "hotkv.conf", "port 7000\nsave 900 1\nmaxmemory 1mb\n")
	tests := []struct {
		args []string
		file string
		want map[string]string
	}{
		{nil, "", map[string]string{"port": "6379"}},
		{[]string{conf}, conf, map[string]string{"port": "7000", "save": "900 1", "maxmemory": "1048576"}},
		// A later --port overrides the file; a --save adds to the file's save
		// lines and --save '' clears them (both checked against redis-server).
		{[]string{conf, "--port", "7001", "--maxmemory", "2mb"}, conf, map[string]string{"port": "7001", "maxmemory": "2097152", "save": "900 1"}},
		{[]string{conf, "--port", "7001", "--save", ""}, conf, map[string]string{"port": "7001", "save": ""}},
		{[]string{conf, "--save", "300", "10"}, conf, map[string]string{"save": "900 1 300 10"}},
		{[]string{"--port", "7002"}, "", map[string]string{"port": "7002"}},
		{[]string{"--save", ""}, "", map[string]string{"save": ""}},
		{[]string{"--save", "900", "1", "--save", "300", "10"}, "", map[string]string{"save": "900 1 300 10"}},
		{[]string{"--save", "900 1"}, "", map[string]string{"save": "900 1"}},
		{[]string{"--save"}, "", map[string]string{"save": ""}},
		{[]string{"--save", "--port", "7003"}, "", map[string]string{"save": "", "port": "7003"}},
		{[]string{"--requirepass", "--secret"}, "", map[string]string{"requirepass": "--secret"}},
		{[]string{"--requirepass", `a b"c\d`}, "", map[string]string{"requirepass": `a b"c\d`}},
		{[]string{"--port 7004"}, "", map[string]string{"port": "7004"}},
		{[]string{"--bind", "127.0.0.1", "::1"}, "", map[string]string{"bind": "127.0.0.1 ::1"}},
		{[]string{"--BIND", "::1"}, "", map[string]string{"bind": "::1"}},
		{[]string{"--lua-time-limit", "10"}, "", map[string]string{"busy-reply-threshold": "10"}},
		{[]string{"--databases", "2", "--daemonize", "no"}, "", map[string]string{"databases": "2"}},
	}
	for _, tt := range tests {
		c := New()
		file, err := c.ParseArgs(tt.args)
		if err != nil {
			t.Errorf("ParseArgs(%q): %v", tt.args, err)
			continue
		}
		if file != tt.file || c.File() != tt.file {
			t.Errorf("ParseArgs(%q) file = %q, File() = %q, want %q", tt.args, file, c.File(), tt.file)
		}
		for name, v := range tt.want {
			if got, _ := c.Get(name); got != v {
				t.Errorf("ParseArgs(%q): %s = %q, want %q", tt.args, name, got, v)
			}
		}
	}
}

// Errors in options carry line numbers past the file's text, as in Redis
// (verified against redis-server): the options follow the file and a newline.
func TestParseArgsErrors(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "hotkv.conf", "port 7000\n")
	missing := filepath.Join(dir, "missing.conf")
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"--foo", "bar"}, fatal(2, `foo "bar"`, "Bad directive or wrong number of arguments")},
		{[]string{conf, "--port", "1", "--foo"}, fatal(4, "foo", "Bad directive or wrong number of arguments")},
		{[]string{conf, "--port", "x"}, fatal(3, `port "x"`, "argument couldn't be parsed into an integer")},
		{[]string{"--port", "1", "2"}, fatal(2, `port "1" "2"`, "wrong number of arguments")},
		// a multi-word parameter with no value gets its own check (introspection.tcl)
		{[]string{"--shutdown-on-sigint"}, fatal(2, "shutdown-on-sigint", "argument(s) must be one of the following: default, save, nosave, now, force")},
		{[]string{"--shutdown-on-sigint", "now force", "--shutdown-on-sigterm"}, fatal(3, "shutdown-on-sigterm", "argument(s) must be one of the following: default, save, nosave, now, force")},
		{[]string{"--proc-title-template", "{nosuch}"}, fatal(2, `proc-title-template "{nosuch}"`, "template format is invalid or contains unknown variables")},
		{[]string{"7000"}, "Fatal error, can't open config file '" + absPath(t, "7000") + "': No such file or directory"},
		{[]string{missing}, "Fatal error, can't open config file '" + missing + "': No such file or directory"},
		{[]string{"-"}, "reading the configuration from standard input is not supported"},
		{[]string{"--port", "1", "-"}, "reading the configuration from standard input is not supported"},
	}
	for _, tt := range tests {
		c := New()
		_, err := c.ParseArgs(tt.args)
		if err == nil || err.Error() != tt.err {
			t.Errorf("ParseArgs(%q):\n got %v\nwant %s", tt.args, err, tt.err)
		}
		if c.Int("port") != 6379 || c.File() != "" {
			t.Errorf("ParseArgs(%q) changed the config on error", tt.args)
		}
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
