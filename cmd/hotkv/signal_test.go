package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary run as the real server (HOTKV_RUN_MAIN=1), so
// that a test can send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("HOTKV_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// SIGTERM and SIGINT stop the process gracefully: exit code 0, the shutdown
// logged, clients disconnected.
func TestGracefulShutdownOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stderr, c := startServerProcess(t)
			defer c.Close()
			if _, err := c.Write([]byte("PING\r\n")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, _ := c.Read(buf); string(buf[:n]) != "+PONG\r\n" {
				t.Fatalf("PING: %q", buf[:n])
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %v: %v\n%s", sig, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no exit after %v", sig)
			}
			if !strings.Contains(stderr.String(), "ready to exit, bye bye") {
				t.Fatalf("shutdown not logged:\n%s", stderr.String())
			}
			if n, err := c.Read(buf); err == nil {
				t.Fatalf("client still connected after shutdown: %q", buf[:n])
			}
		})
	}
}

// SIGTERM while a script spins: the script is stopped and the server exits
// (the event loop running the script checks for the shutdown).
func TestSignalStopsABusyScript(t *testing.T) {
	cmd, stderr, c := startServerProcess(t)
	defer c.Close()
	script := "while true do end"
	req := "*3\r\n$4\r\nEVAL\r\n$" + strconv.Itoa(len(script)) + "\r\n" + script + "\r\n$1\r\n0\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no exit after SIGTERM with a busy script\n%s", stderr.String())
	}
}

// startServerProcess runs this test binary as the real server on a free port
// and returns it, its stderr and a connection to it.
func startServerProcess(t *testing.T, extra ...string) (*exec.Cmd, *bytes.Buffer, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(os.Args[0], append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, extra...)...)
	cmd.Env = append(os.Environ(), "HOTKV_RUN_MAIN=1")
	stderr := &bytes.Buffer{} // the log (standard output) and standard error
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var c net.Conn
	for i := 0; i < 200; i++ {
		if c, err = net.Dial("tcp", ln.Addr().String()); err == nil {
			return cmd, stderr, c
		}
		time.Sleep(25 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	t.Fatalf("server did not start: %v\n%s", err, stderr.String())
	return nil, nil, nil
}
