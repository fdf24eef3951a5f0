package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestMigrate: MIGRATE from one HotKV to another, over a real connection:
// the key moves with its TTL (COPY keeps it here), a key the target has is
// refused without REPLACE, KEYS moves what exists, NOKEY when nothing does,
// the target's errors and an unreachable target are reported as Redis
// reports them, the connection is kept for the next MIGRATE
// (migrate_cached_sockets), and AUTH reaches a target with a password.
func TestMigrate(t *testing.T) {
	dst := hotkvtest.Start(t)
	src := hotkvtest.Start(t)
	host, port, _ := net.SplitHostPort(dst.Addr)
	c := hotkvtest.Dial(t, src.Addr)
	d := hotkvtest.Dial(t, dst.Addr)
	mig := func(args ...string) string {
		return c.Do(append([]string{"MIGRATE", host, port}, args...)...)
	}
	expect := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	c.Do("SET", "a", "1", "EX", "100")
	expect("MIGRATE a", mig("a", "0", "1000"), "+OK\r\n")
	expect("EXISTS a here", c.Do("EXISTS", "a"), ":0\r\n")
	expect("GET a there", d.Do("GET", "a"), "$1\r\n1\r\n")
	if ttl := d.Do("TTL", "a"); ttl != ":100\r\n" && ttl != ":99\r\n" {
		t.Fatalf("TTL a there: %q", ttl)
	}
	c.Do("SET", "a", "2")
	expect("MIGRATE onto a key", mig("a", "0", "1000"), "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n")
	expect("kept after the error", c.Do("EXISTS", "a"), ":1\r\n")
	expect("MIGRATE REPLACE COPY", mig("a", "0", "1000", "COPY", "REPLACE"), "+OK\r\n")
	expect("COPY keeps it", c.Do("GET", "a"), "$1\r\n2\r\n")
	expect("replaced there", d.Do("GET", "a"), "$1\r\n2\r\n")
	c.Do("MSET", "k1", "1", "k2", "2")
	expect("MIGRATE KEYS to db 3", mig("", "3", "1000", "KEYS", "k1", "nokey", "k2"), "+OK\r\n")
	expect("moved", c.Do("EXISTS", "k1", "k2"), ":0\r\n")
	d.Do("SELECT", "3")
	expect("in db 3", d.Do("MGET", "k1", "k2"), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n")
	expect("NOKEY", mig("nokey", "0", "1000"), "+NOKEY\r\n")
	expect("KEYS after a key", mig("x", "0", "1000", "KEYS", "a"),
		"-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string\r\n")
	if info := c.Do("INFO", "stats"); !strings.Contains(info, "migrate_cached_sockets:1\r\n") {
		t.Fatalf("INFO stats after MIGRATEs to one target lacks migrate_cached_sockets:1")
	}
	// a target that refuses the connection: Redis sees it when it writes
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closed, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	expect("unreachable", c.Do("MIGRATE", "127.0.0.1", closed, "a", "0", "200"),
		"-IOERR error or timeout writing to target instance\r\n")
	// a target with a password (a new connection: the cached one to dst
	// stays authenticated, as connections do when requirepass changes)
	sec := hotkvtest.Start(t, hotkvtest.WithConfig("requirepass", "sec"))
	host, port, _ = net.SplitHostPort(sec.Addr)
	expect("MIGRATE without AUTH", mig("a", "0", "1000", "REPLACE"),
		"-ERR Target instance replied with error: NOAUTH Authentication required.\r\n")
	expect("wrong password", mig("a", "0", "1000", "REPLACE", "AUTH", "bad"),
		"-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.\r\n")
	expect("AUTH", mig("a", "0", "1000", "REPLACE", "AUTH", "sec"), "+OK\r\n")
	c.Do("SET", "a", "3")
	expect("AUTH2 default", mig("a", "0", "1000", "COPY", "REPLACE", "AUTH2", "default", "sec"), "+OK\r\n")
}

// TestPropagationMigrate: MIGRATE goes to replicas as DEL of the keys the
// target took (nothing with COPY, nothing for NOKEY).
func TestPropagationMigrate(t *testing.T) {
	dst := hotkvtest.Start(t)
	host, port, _ := net.SplitHostPort(dst.Addr)
	srv := startStreamServer(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("MSET", "a", "1", "b", "2", "c", "3")
	r := attachStream(t, srv.Addr, "SYNC")
	for _, a := range [][]string{
		{"MIGRATE", host, port, "a", "0", "1000"},
		{"MIGRATE", host, port, "b", "0", "1000", "COPY"},
		{"MIGRATE", host, port, "nokey", "0", "1000"},
		{"MIGRATE", host, port, "", "0", "1000", "REPLACE", "KEYS", "b", "c"},
	} {
		if got := cl.Do(a...); got != "+OK\r\n" && got != "+NOKEY\r\n" {
			t.Fatalf("%v: %q", a, got)
		}
	}
	r.expect("SELECT 0", "DEL a", "DEL b c")
}
