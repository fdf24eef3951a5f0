// Package difftest sends the same command streams to HotKV and to a real
// redis-server and compares the reply bytes. The server is the reference,
// Redis 8.6.3 (hotkvtest.RedisRef: .ci/redis-ref.sh builds it, CI caches it);
// the tests skip with a message when it is not built. Debian's 7.0 on PATH
// (startRedis70) is used only for what only it has: payloads of an older
// Redis.
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

// startRedis runs the reference redis-server on a unix socket in a temp dir
// until the test ends.
func startRedis(t *testing.T) string {
	t.Helper()
	return startRedisBin(t, hotkvtest.RedisRefOrSkip(t))
}

// startRedis70 is startRedis with Debian's redis-server 7.0.
func startRedis70(t *testing.T) string {
	t.Helper()
	return startRedisBin(t, hotkvtest.Redis70OrSkip(t))
}

func startRedisBin(t *testing.T, bin string) string {
	t.Helper()
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
	t              *testing.T
	hk, rd         net.Conn
	hkbr, rdbr     *bufio.Reader
	hkAddr, rdSock string
}

func newPair(t *testing.T) *pair {
	return newPairWith(t, startRedis(t))
}

// newPair70 pairs HotKV with Debian's redis-server 7.0.
func newPair70(t *testing.T) *pair {
	return newPairWith(t, startRedis70(t))
}

func newPairWith(t *testing.T, sock string) *pair {
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
	return &pair{t: t, hk: hk, rd: rd, hkbr: bufio.NewReader(hk), rdbr: bufio.NewReader(rd), hkAddr: srv.Addr, rdSock: sock}
}

// another is a second connection to each of p's servers.
func (p *pair) another() *pair {
	hk, err := net.Dial("tcp", p.hkAddr)
	if err != nil {
		p.t.Fatal(err)
	}
	rd, err := net.Dial("unix", p.rdSock)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { _ = hk.Close(); _ = rd.Close() })
	return &pair{t: p.t, hk: hk, rd: rd, hkbr: bufio.NewReader(hk), rdbr: bufio.NewReader(rd), hkAddr: p.hkAddr, rdSock: p.rdSock}
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
