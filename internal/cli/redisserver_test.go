package cli_test

import (
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// startRedis runs redis-server on a unix socket (no TCP port to collide on)
// for the test, or skips when it is not installed.
func startRedis(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH: the comparison on Redis's own replies is skipped")
	}
	sock := filepath.Join(t.TempDir(), "redis.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelpMatchesRedisCLI: against Redis (whose COMMAND DOCS carries the
// argument specs) help for commands, subcommands, containers and groups is
// byte for byte redis-cli's.
func TestHelpMatchesRedisCLI(t *testing.T) {
	redis := redisCLI(t)
	hotkv := hotkvCLI(t)
	sock := startRedis(t)
	for _, q := range [][]string{
		{"help", "set"}, {"help", "SET"}, {"help", "client"}, {"help", "client", "kill"},
		{"help", "config", "set"}, {"help", "@hyperloglog"}, {"help", "@generic"},
		{"help", "migrate"}, {"help", "zadd"}, {"help", "georadius"}, {"help", "nosuchcommand"},
	} {
		args := append([]string{"-s", sock}, q...)
		want := redis.run(t, runOpts{}, args...)
		got := hotkv.run(t, runOpts{}, args...)
		if want.stdout == "" && q[1] != "nosuchcommand" {
			t.Fatalf("%q: redis-cli printed nothing", q)
		}
		compareRuns(t, want, got)
	}
}

// TestRedisRepliesRendering: Redis's own deep replies (COMMAND DOCS, XINFO
// STREAM FULL, CONFIG GET *) render as redis-cli renders them.
func TestRedisRepliesRendering(t *testing.T) {
	redis := redisCLI(t)
	hotkv := hotkvCLI(t)
	sock := startRedis(t)
	in := script([]string{
		`FLUSHALL`,
		`COMMAND DOCS set zadd client xadd`,
		`COMMAND INFO get set`,
		`XADD st 1-1 a 1 b 2`,
		`XADD st 2-1 c 3`,
		`XINFO STREAM st FULL`,
		`XRANGE st - +`,
		`CONFIG GET maxmemory*`,
		`FLUSHALL`,
	})
	for _, proto := range []string{"-2", "-3"} {
		for _, tty := range []bool{true, false} {
			o := runOpts{stdin: in, tty: tty}
			compareRuns(t, redis.run(t, o, "-s", sock, proto), hotkv.run(t, o, "-s", sock, proto))
		}
	}
}
