package cli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hotkv/hotkv/internal/cli"
)

// The test binary doubles as hotkv-cli: with HOTKV_CLI_AS_MAIN=1 it runs
// cli.Main on its arguments, so tests drive the real program as a process
// (on a pseudo-terminal when they need one) without building it first.
func TestMain(m *testing.M) {
	if os.Getenv("HOTKV_CLI_AS_MAIN") == "1" {
		os.Exit(cli.Main(os.Args[1:], cli.OSEnv()))
	}
	os.Exit(m.Run())
}

// childEnv makes a child the CLI; under -race it skips the race runtime's
// one-second sleep at exit.
var childEnv = []string{"HOTKV_CLI_AS_MAIN=1", "GORACE=atexit_sleep_ms=0"}

// program is a CLI to run: hotkv-cli (this test binary) or redis-cli.
type program struct {
	name string
	path string
	env  []string
}

func hotkvCLI(t *testing.T) program {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return program{name: "hotkv-cli", path: exe, env: childEnv}
}

// redisCLI returns redis-cli, or skips the test when it is not installed.
func redisCLI(t *testing.T) program {
	t.Helper()
	path, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not on PATH: the comparison with redis-cli's rendering is skipped")
	}
	return program{name: "redis-cli", path: path}
}

// result is what one run printed.
type result struct {
	stdout, stderr string
	code           int
}

// runOpts says how to run a program.
type runOpts struct {
	stdin string
	tty   bool // stdout is a pseudo-terminal (redis-cli's terminal rendering)
	// stopAfter ends a program that runs until interrupted (--stat): it is
	// killed after this long, and what it printed is the result
	stopAfter time.Duration
}

// run runs p with args; stdout goes to a pseudo-terminal with tty (its output
// then has the terminal's \r\n line ends, for both programs alike).
func (p program) run(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	cmd := exec.Command(p.path, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=dumb")
	cmd.Env = append(cmd.Env, p.env...)
	cmd.Stdin = strings.NewReader(o.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	var copyDone sync.WaitGroup
	if o.tty {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer ptmx.Close()
		_ = pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200})
		cmd.Stdout = tty
		copyDone.Add(1)
		go func() {
			defer copyDone.Done()
			_, _ = io.Copy(&stdout, ptmx) // ends with EIO once the child is gone
		}()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
	} else {
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	limit := 60 * time.Second
	if o.stopAfter > 0 {
		limit = o.stopAfter
	}
	select {
	case err = <-done:
	case <-time.After(limit):
		if o.stopAfter > 0 {
			_ = cmd.Process.Kill()
			<-done
			copyDone.Wait()
			return result{stdout: stdout.String(), stderr: stderr.String(), code: -1}
		}
		_ = cmd.Process.Kill()
		t.Fatalf("%s %q did not finish", p.name, args)
	}
	copyDone.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}
