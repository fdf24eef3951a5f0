// Package difftest sends the same command streams to HotKV and to a real
// redis-server and compares the reply bytes. It needs redis-server on PATH (CI
// installs Debian's 7.0) and skips with a message otherwise. Where Redis 7.0 is
// not the reference (shared/reference/redis8-vs-redis7.md), the streams avoid
// the difference and say so.
package difftest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// startRedis runs redis-server on a unix socket in a temp dir until the test ends.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH: differential tests skipped (CI installs it: apt-get install redis-server)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "yes", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			return sock
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}

// pair is one connection to each server.
type pair struct {
	t          *testing.T
	hk, rd     net.Conn
	hkbr, rdbr *bufio.Reader
}

func newPair(t *testing.T) *pair {
	sock := startRedis(t)
	srv := hotkvtest.Start(t)
	hk, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hk.Close(); _ = rd.Close() })
	return &pair{t: t, hk: hk, rd: rd, hkbr: bufio.NewReader(hk), rdbr: bufio.NewReader(rd)}
}

// do sends args to both and returns both raw replies.
func (p *pair) do(args ...string) (hk, rd string) {
	p.t.Helper()
	cmd := hotkvtest.EncodeCommand(args...)
	if _, err := p.hk.Write(cmd); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.rd.Write(cmd); err != nil {
		p.t.Fatal(err)
	}
	return p.read(p.hk, p.hkbr, args), p.read(p.rd, p.rdbr, args)
}

func (p *pair) read(c net.Conn, br *bufio.Reader, args []string) string {
	p.t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	if err := hotkvtest.ReadReplyFrom(br, &buf); err != nil {
		p.t.Fatalf("%q: %v", args, err)
	}
	return string(buf)
}

// same sends args to both and fails the test if the replies differ.
func (p *pair) same(args ...string) string {
	p.t.Helper()
	hk, rd := p.do(args...)
	if hk != rd {
		p.t.Errorf("%s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
	}
	return hk
}

func fmtArgs(args []string) string { return fmt.Sprintf("%q", args) }
