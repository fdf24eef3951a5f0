package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestClientTotals: CLIENT INFO's qbuf of the client asking, and its
// tot-net-in, tot-net-out and tot-cmds
// (Redis 8) on both transports: the bytes read from and written to the
// connection, and the commands run on its behalf, EXEC's and its scripts'
// included, refused ones not, the running one not yet (the figures
// redis-server 8.6.3 gives for the same session).
func TestClientTotals(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		c := hotkvtest.Dial(t, srv.Addr)
		field := func(info, name string) int64 {
			t.Helper()
			for _, f := range strings.Fields(info) {
				if v, ok := strings.CutPrefix(f, name+"="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
			}
			t.Fatalf("no %s in %q", name, info)
			return 0
		}
		first := c.Do("CLIENT", "INFO")
		// the client asking: its request (26 bytes) is still in its query
		// buffer, as in Redis (unit/introspection's CLIENT LIST test)
		if q := field(first, "qbuf"); q != 26 {
			t.Fatalf("CLIENT INFO's own qbuf=%d, want 26", q)
		}
		if in, out, cmds := field(first, "tot-net-in"), field(first, "tot-net-out"), field(first, "tot-cmds"); in != 26 || out != 0 || cmds != 0 {
			t.Fatalf("first CLIENT INFO: tot-net-in=%d tot-net-out=%d tot-cmds=%d, want 26 0 0", in, out, cmds)
		}
		sent, got := int64(26), int64(len(first))
		do := func(args ...string) {
			sent += int64(len(hotkvtest.EncodeCommand(args...)))
			got += int64(len(c.Do(args...)))
		}
		do("SET", "a", "1")
		do("GET", "a")
		do("GETX") // unknown: not run
		do("MULTI")
		do("SET", "b", "1")
		do("INCR", "b")
		do("EXEC")
		do("EVAL", "redis.call('set','c','1'); return redis.call('get','c')", "0")
		sent += int64(len(hotkvtest.EncodeCommand("CLIENT", "INFO")))
		info := c.Do("CLIENT", "INFO")
		// SET GET, MULTI SET INCR EXEC (queued ones run once, in EXEC:
		// MULTI, EXEC, SET, INCR), the first CLIENT INFO, EVAL and its
		// two calls: 10, as redis-server 8.6.3 counts
		if in, out, cmds := field(info, "tot-net-in"), field(info, "tot-net-out"), field(info, "tot-cmds"); in != sent || out != got || cmds != 10 {
			t.Fatalf("tot-net-in=%d tot-net-out=%d tot-cmds=%d, want %d %d 10", in, out, cmds, sent, got)
		}
	})
}
