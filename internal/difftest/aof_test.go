package difftest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Cross-loading the append-only file with Redis 8.6.3, both ways (issue 26):
// a directory HotKV wrote loads in redis-server, and one redis-server wrote
// loads in HotKV, to the same DEBUG DIGEST, over a dataset of every type;
// redis-check-aof accepts HotKV's files.

// aofDataset writes every type, the ways the stream rewrites them.
var aofDataset = [][]string{
	{"SET", "str", "hello"},
	{"SET", "lock:job", "tok-1", "NX", "PX", "600000"},
	{"SET", "int", "12345"},
	{"INCRBY", "counter", "41"},
	{"INCRBYFLOAT", "float", "1.5"},
	{"APPEND", "str", " world"},
	{"RPUSH", "list", "a", "b", "c", "d", "1", "2"},
	{"LPOP", "list"},
	{"SADD", "intset", "1", "2", "3", "4", "5"},
	{"SADD", "set", "a", "b", "c", "d"},
	{"SPOP", "set"},
	{"ZADD", "zset", "1", "one", "2.5", "two", "3", "three", "-inf", "neg"},
	{"ZINCRBY", "zset", "10", "one"},
	{"HSET", "hash", "f1", "v1", "f2", "v2", "f3", "v3"},
	{"HPEXPIRE", "hash", "600000", "FIELDS", "1", "f1"},
	{"XADD", "stream", "1-1", "k", "v"},
	{"XADD", "stream", "2-1", "k2", "v2"},
	{"XGROUP", "CREATE", "stream", "g", "0"},
	{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "stream", ">"},
	{"PFADD", "hll", "a", "b", "c"},
	{"SETBIT", "bits", "100", "1"},
	{"EXPIRE", "str", "1000"},
	{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); return redis.call('incr', KEYS[2])", "2", "fromlua", "luacount", "v"},
	{"MULTI"}, {"SET", "tx1", "a"}, {"LPUSH", "tx2", "b"}, {"EXEC"},
	{"SELECT", "3"}, {"SET", "in3", "x"}, {"HSET", "h3", "a", "b"}, {"SELECT", "0"},
	{"FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function(keys, args) return redis.call('set', keys[1], args[1]) end)"},
	{"FCALL", "f", "1", "byfcall", "y"},
}

// rawConn is one RESP connection.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, network, addr string) *rawConn {
	t.Helper()
	var c net.Conn
	var err error
	for i := 0; i < 400; i++ {
		if c, err = net.Dial(network, addr); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{c: c, br: bufio.NewReader(c)}
}

func (r *rawConn) do(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := r.c.Write(hotkvtest.EncodeCommand(args...)); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	if err := hotkvtest.ReadReplyFrom(r.br, &buf); err != nil {
		t.Fatal(err)
	}
	return string(buf)
}

// loaded waits until the server is done loading.
func (r *rawConn) loaded(t *testing.T) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if !strings.HasPrefix(r.do(t, "PING"), "-LOADING") {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("still loading")
}

// startRedisAOF runs redis-server 8.6.3 with appendonly yes in dir.
func startRedisAOF(t *testing.T, bin, dir string, args ...string) *rawConn {
	t.Helper()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, append([]string{"--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "yes",
		"--dir", dir, "--enable-debug-command", "yes", "--loglevel", "warning"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := dialRaw(t, "unix", sock)
	c.loaded(t)
	return c
}

// copyAOFDir copies dir/appendonlydir into a new directory.
func copyAOFDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(dir, "appendonlydir")
	if err := os.MkdirAll(filepath.Join(dst, "appendonlydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "appendonlydir", e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func fill(t *testing.T, c *rawConn) {
	t.Helper()
	for _, a := range aofDataset {
		if r := c.do(t, a...); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %q", a, r)
		}
	}
}

func TestAOFCrossLoadHotKVToRedis(t *testing.T) {
	bin := hotkvtest.RedisRefOrSkip(t)
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble="+preamble, func(t *testing.T) {
			dir := t.TempDir()
			srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("appendonly", "yes"),
				hotkvtest.WithConfig("aof-use-rdb-preamble", preamble))
			hk := dialRaw(t, "tcp", srv.Addr)
			fill(t, hk)
			// a rewrite, then more: a base file of HotKV's and an incr file
			hk.do(t, "BGREWRITEAOF")
			for i := 0; i < 200 && strings.Contains(hk.do(t, "INFO", "persistence"), "aof_rewrite_in_progress:1"); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			hk.do(t, "RPUSH", "list", "after-rewrite")
			hk.do(t, "XADD", "stream", "3-1", "k3", "v3")
			want := hk.do(t, "DEBUG", "DIGEST")
			rdir := copyAOFDir(t, dir)
			check := exec.Command(filepath.Join(filepath.Dir(bin), "redis-check-aof"),
				filepath.Join(rdir, "appendonlydir", "appendonly.aof.manifest"))
			if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), "All AOF files and manifest are valid") {
				t.Fatalf("redis-check-aof: %v\n%s", err, out)
			}
			rd := startRedisAOF(t, bin, rdir)
			if got := rd.do(t, "DEBUG", "DIGEST"); got != want {
				t.Fatalf("Redis loaded digest %q, HotKV had %q", got, want)
			}
			if got := rd.do(t, "GET", "byfcall"); got != "$1\r\ny\r\n" {
				t.Fatalf("byfcall = %q", got)
			}
		})
	}
}

func TestAOFCrossLoadRedisToHotKV(t *testing.T) {
	bin := hotkvtest.RedisRefOrSkip(t)
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble="+preamble, func(t *testing.T) {
			dir := t.TempDir()
			rd := startRedisAOF(t, bin, dir, "--aof-use-rdb-preamble", preamble)
			fill(t, rd)
			rd.do(t, "BGREWRITEAOF")
			for i := 0; i < 500 && strings.Contains(rd.do(t, "INFO", "persistence"), "aof_rewrite_in_progress:1"); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // the rewrite's done handler runs in Redis's cron
			rd.do(t, "RPUSH", "list", "after-rewrite")
			rd.do(t, "SET", "tail", "x")
			want := rd.do(t, "DEBUG", "DIGEST")
			hdir := copyAOFDir(t, dir)
			srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", hdir), hotkvtest.WithConfig("appendonly", "yes"))
			hk := dialRaw(t, "tcp", srv.Addr)
			hk.loaded(t)
			if got := hk.do(t, "DEBUG", "DIGEST"); got != want {
				t.Fatalf("HotKV loaded digest %q, Redis had %q", got, want)
			}
		})
	}
}
