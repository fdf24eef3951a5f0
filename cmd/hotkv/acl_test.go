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
		done <- run(ctx, append([]string{conf, "--port", itoa(freePort(t)), "--bind", "127.0.0.1"}, args...), &out, &out, ready)
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
		code := run(context.Background(), []string{conf, "--port", itoa(freePort(t)), "--dir", dir}, &out, &out, nil)
		if code != 1 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%q: exit %d, output %s", c.conf, code, out.String())
		}
	}
}

// Protected mode: while the default user has no password, a client that is
// not on loopback gets Redis's DENIED reply and is closed; with a password
// (or protected-mode no) it is served.
func TestProtectedMode(t *testing.T) {
	var ip net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP
			break
		}
	}
	if ip == nil {
		t.Skip("no non-loopback IPv4 address on this machine to connect from")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "hotkv.conf")
	if err := os.WriteFile(conf, []byte("loglevel warning\nbind 0.0.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	local, br, _, _ := startConf(t, conf, "--dir", dir, "--bind", "0.0.0.0")
	_, port, _ := net.SplitHostPort(local.RemoteAddr().String())
	remote := func() string {
		c, err := net.Dial("tcp", net.JoinHostPort(ip.String(), port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("PING\r\n"))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	if r := remote(); !strings.HasPrefix(r, "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.") {
		t.Fatalf("from %s: %q", ip, r)
	}
	if r := send(t, local, br, "PING"); r != "+PONG" {
		t.Fatalf("loopback: %q", r)
	}
	if r := send(t, local, br, "CONFIG SET requirepass pw"); r != "+OK" {
		t.Fatal(r)
	}
	if r := remote(); r != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("with a password: %q", r)
	}
	send(t, local, br, "AUTH pw")
	send(t, local, br, "CONFIG SET requirepass \"\"")
	if r := send(t, local, br, "CONFIG SET protected-mode no"); r != "+OK" {
		t.Fatal(r)
	}
	if r := remote(); r != "+PONG\r\n" {
		t.Fatalf("protected-mode no: %q", r)
	}
}

// rename-command: the command answers to its new name only; "" takes it
// away; ACL rules keep the original names; an unknown command stops the start.
func TestRenameCommand(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "hotkv.conf")
	text := "loglevel warning\nrename-command FLUSHALL wipe-everything-3c1f\nrename-command CONFIG \"\"\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, br, _, _ := startConf(t, conf, "--dir", dir)
	if r := send(t, c, br, "FLUSHALL"); !strings.HasPrefix(r, "-ERR unknown command 'FLUSHALL'") {
		t.Fatal(r)
	}
	if r := send(t, c, br, "CONFIG GET port"); !strings.HasPrefix(r, "-ERR unknown command 'CONFIG'") {
		t.Fatal(r)
	}
	if r := send(t, c, br, "wipe-everything-3c1f"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "ACL SETUSER ops on nopass +flushall"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "AUTH ops x"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "wipe-everything-3c1f"); r != "+OK" {
		t.Fatalf("the renamed FLUSHALL under +flushall: %q", r)
	}
	bad := filepath.Join(dir, "bad.conf")
	_ = os.WriteFile(bad, []byte("rename-command NOSUCH x\n"), 0o644)
	var out bytes.Buffer
	if code := run(context.Background(), []string{bad, "--port", itoa(freePort(t)), "--dir", dir}, &out, &out, nil); code != 1 ||
		!strings.Contains(out.String(), "No such command in rename-command") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}
