package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM with save points configured saves the dataset before exiting, and
// the next start loads it (shutdown-on-sigterm "default", as Redis).
func TestSigtermSavesAndRestartLoads(t *testing.T) {
	dir := t.TempDir()
	cmd, stderr, c := startServerProcess(t, "--dir", dir, "--save", "3600 1")
	br := bufio.NewReader(c)
	if _, err := c.Write([]byte("SET k v\r\n")); err != nil {
		t.Fatal(err)
	}
	if l, _ := br.ReadString('\n'); l != "+OK\r\n" {
		t.Fatalf("SET: %q", l)
	}
	_ = c.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr)
	}
	for _, want := range []string{"Received SIGTERM scheduling shutdown...", "Saving the final RDB snapshot before exiting.", "DB saved on disk"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, stderr)
		}
	}
	cmd2, stderr2, c2 := startServerProcess(t, "--dir", dir)
	br2 := bufio.NewReader(c2)
	if _, err := c2.Write([]byte("GET k\r\n")); err != nil {
		t.Fatal(err)
	}
	l, _ := br2.ReadString('\n')
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	_ = cmd2.Wait() // stderr2 is complete after Wait
	if l != "$1\r\n" {
		t.Fatalf("GET after restart: %q\n%s", l, stderr2)
	}
	if !strings.Contains(stderr2.String(), "DB loaded from disk") {
		t.Fatalf("no load logged:\n%s", stderr2)
	}
}

// SIGTERM whose save fails leaves the server running (Redis cancels the
// shutdown); SIGINT with shutdown-on-sigint "nosave" then stops it.
func TestSigtermWithAFailedSaveKeepsRunning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, stderr, c := startServerProcess(t, "--dir", dir, "--save", "3600 1", "--shutdown-on-sigint", "nosave")
	defer func() { _ = cmd.Process.Kill() }()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	br := bufio.NewReader(c)
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatalf("%v\n%s", err, stderr) // the server's log says why it went
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if l, _ := br.ReadString('\n'); l != "+PONG\r\n" {
		t.Fatalf("PING after the failed shutdown: %q\n%s", l, stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit after SIGINT nosave\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "Error trying to save the DB, can't exit.") {
		t.Fatalf("log:\n%s", stderr)
	}
}

// A dump.rdb that does not load stops the start with exit status 1, as
// redis-server does.
func TestCorruptDumpAtStartupExits(t *testing.T) {
	for name, data := range map[string]string{
		"garbage":   "this is not an RDB file",
		"truncated": "REDIS0012\xfa\x09redis-ver",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code := run(ctx, []string{"--port", itoa(freePort(t)), "--bind", "127.0.0.1", "--dir", dir}, &stderr, &stderr, nil)
			if code != 1 {
				t.Fatalf("exit code %d, want 1\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "Fatal error loading the DB, check server logs. Exiting.") {
				t.Fatalf("log:\n%s", stderr.String())
			}
		})
	}
}
