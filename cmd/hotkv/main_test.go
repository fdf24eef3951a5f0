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

func send(t *testing.T, c net.Conn, br *bufio.Reader, cmd string) string {
	t.Helper()
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(line, "\r\n")
}

// `hotkv hotkv.conf --port N`: the file is read, a later option overrides it,
// SHUTDOWN stops the server gracefully with exit code 0.
func TestRunWithConfigFileAndFlags(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "hotkv.conf")
	if err := os.WriteFile(conf, []byte("# test\nport 1\ndatabases 4\nrequirepass s3cret\nloglevel warning\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(context.Background(), []string{conf, "--port", itoa(port), "--bind", "127.0.0.1"}, &stderr, &stderr, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("exited %d: %s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if r := send(t, c, br, "PING"); r != "-NOAUTH Authentication required." {
		t.Fatal(r)
	}
	if r := send(t, c, br, "AUTH s3cret"); r != "+OK" {
		t.Fatal(r)
	}
	if r := send(t, c, br, "SELECT 4"); r != "-ERR DB index is out of range" {
		t.Fatalf("databases from the file: %q", r)
	}
	if r := send(t, c, br, "CONFIG GET port"); r != "*2" {
		t.Fatal(r)
	}
	_, _ = br.ReadString('\n')
	_, _ = br.ReadString('\n')
	_, _ = br.ReadString('\n')
	if r, _ := br.ReadString('\n'); strings.TrimSpace(r) != itoa(port) {
		t.Fatalf("--port must override the file: %q", r)
	}
	_, _ = c.Write([]byte("SHUTDOWN\r\n"))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN did not stop the server")
	}
}

func TestBadConfigFails(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--port", "notaport"}, &bytes.Buffer{}, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "FATAL CONFIG FILE ERROR") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
}

// SIGTERM (the context here) stops the server gracefully.
func TestGracefulStopOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--port", itoa(freePort(t)), "--loglevel", "warning"}, &bytes.Buffer{}, &bytes.Buffer{}, ready)
	}()
	<-ready
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// --pprof-addr is HotKV's own process option: it never reaches the config parser
// (which would reject it as an unknown redis.conf directive).
func TestTakePprofAddr(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		rest       []string
		addr       string
		shouldFail bool
	}{
		{[]string{"--port", "7000"}, []string{"--port", "7000"}, "", false},
		{[]string{"conf", "--pprof-addr", "127.0.0.1:6060", "--port", "7000"}, []string{"conf", "--port", "7000"}, "127.0.0.1:6060", false},
		{[]string{"--pprof-addr=:6061"}, []string{}, ":6061", false},
		{[]string{"--port", "7000", "--pprof-addr"}, nil, "", true},
	} {
		rest, addr, err := takePprofAddr(tc.args)
		if (err != nil) != tc.shouldFail {
			t.Fatalf("%q: err %v", tc.args, err)
		}
		if tc.shouldFail {
			continue
		}
		if addr != tc.addr || strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
			t.Errorf("%q: got %q %q, want %q %q", tc.args, rest, addr, tc.rest, tc.addr)
		}
	}
}

// --busy-poll-us is HotKV's own option too: 50 µs unless given, 0 turns it off.
func TestTakeBusyPoll(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
		d    time.Duration
		fail bool
	}{
		{[]string{"--port", "7000"}, []string{"--port", "7000"}, 50 * time.Microsecond, false},
		{[]string{"--busy-poll-us", "0", "--port", "7000"}, []string{"--port", "7000"}, 0, false},
		{[]string{"--busy-poll-us=200"}, []string{}, 200 * time.Microsecond, false},
		{[]string{"--busy-poll-us", "-1"}, nil, 0, true},
		{[]string{"--busy-poll-us", "5000"}, nil, 0, true},
		{[]string{"--busy-poll-us"}, nil, 0, true},
	} {
		rest, d, err := takeBusyPoll(tc.args)
		if (err != nil) != tc.fail {
			t.Fatalf("%q: err %v", tc.args, err)
		}
		if !tc.fail && (d != tc.d || strings.Join(rest, " ") != strings.Join(tc.rest, " ")) {
			t.Errorf("%q: got %q %v, want %q %v", tc.args, rest, d, tc.rest, tc.d)
		}
	}
}
