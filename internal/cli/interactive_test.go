package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// term is hotkv-cli running on a pseudo-terminal, driven like a user.
type term struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	mark int // expect searches after this offset
	done chan struct{}
}

func startTerm(t *testing.T, home string, args ...string) *term {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=xterm", "HOTKVCLI_HISTFILE=")
	cmd.Env = append(cmd.Env, childEnv...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, ptmx: ptmx, cmd: cmd, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				close(tm.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ptmx.Close()
	})
	return tm
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// expect waits until want appears after the mark, then moves the mark past it.
func (tm *term) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tm.mu.Lock()
		got := tm.out.String()
		tm.mu.Unlock()
		if i := strings.Index(got[tm.mark:], want); i >= 0 {
			tm.mark += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("did not see %q; terminal shows after the last match:\n%q", want, got[tm.mark:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tm *term) wait() int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(10 * time.Second):
		tm.t.Fatal("hotkv-cli did not exit")
	}
	err := tm.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

// TestInteractive drives the shell through a pseudo-terminal: the prompt with
// address and database, commands and their replies, TAB completion, the
// inline hint from COMMAND DOCS, help, history recall and the history file
// (without AUTH lines), and history surviving a restart.
func TestInteractive(t *testing.T) {
	srv := hotkvtest.Start(t)
	_, port := splitAddr(t, srv.Addr)
	home := t.TempDir()
	prompt := "hotkv 127.0.0.1:" + port + "[2]> "

	tm := startTerm(t, home, "-h", "127.0.0.1", "-p", port, "-n", "2")
	tm.expect(prompt)
	tm.send("set greeting hello\r")
	tm.expect("\r\nOK\r\n")
	tm.expect(prompt)
	tm.send("get greeting\r")
	tm.expect("\r\n\"hello\"\r\n")

	// TAB completes the command name, in the case it was typed.
	tm.send("ech\t")
	tm.expect(prompt + "echo")
	tm.send(" hi\r")
	tm.expect("\r\n\"hi\"\r\n")

	// The hint after "get " is the argument syntax, in grey.
	tm.send("get ")
	tm.expect("\x1b[0;90;49mkey\x1b[0m")
	tm.send("\x15") // Ctrl-U: clear the line

	// Up arrow recalls the previous line.
	tm.send("\x1b[A")
	tm.expect(prompt + "echo hi")
	tm.send("\r")
	tm.expect("\r\n\"hi\"\r\n")

	tm.send("help get\r")
	tm.expect("\x1b[1mGET\x1b[0m \x1b[90mkey\x1b[0m\r")
	tm.expect("summary:\x1b[0m Returns the string value of a key.")
	tm.send("help @connection\r")
	tm.expect("\x1b[1mPING\x1b[0m")

	tm.send("select 0\r")
	tm.expect("hotkv 127.0.0.1:" + port + "> ")
	tm.send("multi\r")
	tm.expect("hotkv 127.0.0.1:" + port + "(TX)> ")
	tm.send("discard\r")
	tm.expect("hotkv 127.0.0.1:" + port + "> ")

	tm.send("auth secret-password\r")
	tm.expect("(error) ")
	tm.send("quit\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	hist, err := os.ReadFile(filepath.Join(home, ".hotkv_history"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"set greeting hello", "get greeting", "echo hi", "help get", "quit"} {
		if !strings.Contains(string(hist), line+"\n") {
			t.Errorf("history file lacks %q:\n%s", line, hist)
		}
	}
	if strings.Contains(string(hist), "secret-password") {
		t.Errorf("AUTH went into the history file:\n%s", hist)
	}

	// A new session finds the history.
	tm = startTerm(t, home, "-h", "127.0.0.1", "-p", port)
	tm.expect("hotkv 127.0.0.1:" + port + "> ")
	tm.send("\x1b[A\x1b[A")
	tm.expect("discard")
	tm.send("\x04") // Ctrl-D on a line that is not empty does nothing...
	tm.send("\x15\x04")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestInteractiveNotConnected: with no server the prompt says so, and a
// command reports the connection error.
func TestInteractiveNotConnected(t *testing.T) {
	tm := startTerm(t, t.TempDir(), "-p", "1")
	tm.expect("not connected> ")
	tm.send("ping\r")
	tm.expect("Could not connect to HotKV at 127.0.0.1:1: Connection refused")
	tm.expect("not connected> ")
	tm.send("exit\r")
	tm.wait()
}

// TestInteractivePubSubCtrlC: SUBSCRIBE streams messages until Ctrl-C, which
// returns to the prompt on a fresh connection (redis-cli's behaviour).
func TestInteractivePubSubCtrlC(t *testing.T) {
	srv := hotkvtest.Start(t)
	_, port := splitAddr(t, srv.Addr)
	tm := startTerm(t, t.TempDir(), "-p", port)
	prompt := "hotkv 127.0.0.1:" + port + "> "
	tm.expect(prompt)
	tm.send("subscribe news\r")
	tm.expect("Reading messages... (press Ctrl-C to quit)\r\n")
	tm.expect("3) (integer) 1\r\n")
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("PUBLISH", "news", "hello")
	tm.expect("1) \"message\"\r\n2) \"news\"\r\n3) \"hello\"\r\n")
	_ = tm.cmd.Process.Signal(syscall.SIGINT)
	tm.expect(prompt)
	tm.send("ping\r")
	tm.expect("PONG")
	tm.send("quit\r")
	tm.wait()
}
