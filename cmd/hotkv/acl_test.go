package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startConf runs the server on conf plus args and returns a connection, or
// the exit code and output when it stops on its own.
func startConf(t *testing.T, conf string, args ...string) (net.Conn, *bufio.Reader, chan int, *bytes.Buffer) {
	t.Helper()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		done <- run(ctx, append([]string{conf, "--port", "0", "--bind", "127.0.0.1"}, args...), &out, &out, ready)
	}()
	select {
	case addr := <-ready:
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, bufio.NewReader(c), done, &out
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	return nil, nil, done, &out
}

// The config file's user lines create the users at start-up, and CONFIG
// REWRITE writes the users back as user lines (Redis's
// rewriteConfigUserOption).
func TestConfigUsersAndRewrite(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "hotkv.conf")
	text := "loglevel warning\nuser alice on >pw ~a:* +get\nuser default on nopass ~* &* +@all -debug\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, br, _, _ := startConf(t, conf, "--dir", dir)
	if r := send(t, c, br, "AUTH alice pw"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "SET a:1 x"); r != "-NOPERM User alice has no permissions to run the 'set' command" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "AUTH default x"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "ACL SETUSER bob on nopass +ping"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "CONFIG REWRITE"); r != "+OK" {
		t.Fatal(r)
	}
	data, _ := os.ReadFile(conf)
	for _, want := range []string{
		"user alice on sanitize-payload #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a:* resetchannels -@all +get\n",
		"user bob on nopass sanitize-payload resetchannels -@all +ping\n",
		"user default on nopass sanitize-payload ~* &* +@all -debug\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, data)
		}
	}
	if strings.Count(string(data), "user ") != 3 {
		t.Errorf("rewritten file:\n%s", data)
	}
}

// Users in the config file and an aclfile together, or a rule that cannot
// be applied, stop the start (exit 1), as in Redis.
func TestBadUsersStopTheStart(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ conf, want string }{
		{"user alice on\naclfile users.acl\n", "define either an ACL file or declare users directly"},
		{"aclfile nosuch.acl\n", "Aborting Redis startup because of ACL errors: Error loading ACLs, opening file"},
		{"user alice on +nosuchcommand\n", "Critical error while loading ACLs"},
	} {
		conf := filepath.Join(dir, "bad.conf")
		if err := os.WriteFile(conf, []byte("loglevel warning\n"+c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		code := run(context.Background(), []string{conf, "--port", "0", "--dir", dir}, &out, &out, nil)
		if code != 1 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%q: exit %d, output %s", c.conf, code, out.String())
		}
	}
}
