package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Redis's test harness starts redis-server with a file built from
// tests/assets/default.conf (testdata/redis-test-default.conf is a copy),
// reads the log on standard output for " PID: <pid>" followed by "Server
// initialized", then waits for "Ready to accept", and connects over TCP or
// the Unix socket. HotKV must do all of it as redis-server does.
func TestStartsAsRedisTestHarnessExpects(t *testing.T) {
	for _, base := range []string{"redis-test-default.conf", "redis-test-minimal.conf"} {
		t.Run(base, func(t *testing.T) {
			dir := t.TempDir()
			conf, err := os.ReadFile(filepath.Join("testdata", base))
			if err != nil {
				t.Fatal(err)
			}
			port := freePort(t)
			sock := filepath.Join(dir, "socket")
			pidfile := filepath.Join(dir, "redis.pid")
			// the harness appends its directives after the file's
			extra := "dir " + dir + "\nport " + strconv.Itoa(port) + "\nunixsocket " + sock +
				"\nunixsocketperm 700\npidfile " + pidfile + "\nbind 127.0.0.1\n"
			path := filepath.Join(dir, "redis.conf")
			if err := os.WriteFile(path, append(conf, extra...), 0o644); err != nil {
				t.Fatal(err)
			}
			var log hotkvtest.SyncBuffer
			cmd := exec.Command(os.Args[0], path)
			cmd.Env = append(os.Environ(), "HOTKV_RUN_MAIN=1")
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			pid := cmd.Process.Pid
			started := regexp.MustCompile(`(?s) PID: ` + strconv.Itoa(pid) + `\b.*Server initialized.*Ready to accept connections tcp\n.*Ready to accept connections unix\n`)
			deadline := time.Now().Add(10 * time.Second)
			for !started.MatchString(log.String()) {
				if time.Now().After(deadline) {
					t.Fatalf("start-up lines missing:\n%s", log.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			line := regexp.MustCompile(`(?m)^` + strconv.Itoa(pid) + `:M \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} \* Server initialized$`)
			if !line.MatchString(log.String()) {
				t.Fatalf("not Redis's line format:\n%s", log.String())
			}
			if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o700 || st.Mode()&os.ModeSocket == 0 {
				t.Fatalf("socket file: %v %v", st, err)
			}
			if b, err := os.ReadFile(pidfile); err != nil || string(b) != strconv.Itoa(pid)+"\n" {
				t.Fatalf("pid file %q %v", b, err)
			}
			c, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			if got := send(t, c, br, "PING"); got != "+PONG" {
				t.Fatalf("PING over the socket: %q", got)
			}
			info := bulk(t, c, br, "CLIENT INFO")
			if !strings.Contains(info, "addr="+sock+":0 laddr="+sock+":0 ") || !strings.Contains(info, " flags=U ") {
				t.Fatalf("CLIENT INFO: %q", info)
			}
			srvInfo := bulk(t, c, br, "INFO SERVER")
			for _, want := range []string{
				"listener0:name=tcp,bind=127.0.0.1,port=" + strconv.Itoa(port) + "\r\n",
				"listener1:name=unix,bind=" + sock + "\r\n",
			} {
				if !strings.Contains(srvInfo, want) {
					t.Fatalf("INFO lacks %q:\n%s", want, srvInfo)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit: %v\n%s", err, log.String())
			}
			for _, f := range []string{sock, pidfile} {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("%s left behind (%v)", f, err)
				}
			}
		})
	}
}

// A busy port is reported with the line the harness looks for before it
// retries on another port.
func TestBusyPortLogsFailedListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := exec.Command(os.Args[0], "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
	cmd.Env = append(os.Environ(), "HOTKV_RUN_MAIN=1")
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "Failed listening on port "+strconv.Itoa(port)+" (tcp), aborting.") {
		t.Fatalf("exit %d:\n%s", cmd.ProcessState.ExitCode(), out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// bulk sends cmd and reads a bulk string reply.
func bulk(t *testing.T, c net.Conn, br *bufio.Reader, cmd string) string {
	t.Helper()
	head := send(t, c, br, cmd)
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	if err != nil || head[0] != '$' {
		t.Fatalf("%s: %q", cmd, head)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}
