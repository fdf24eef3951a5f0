package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

func infoStat(t *testing.T, c *hotkvtest.Conn, name string) string {
	t.Helper()
	for _, l := range strings.Split(c.Do("INFO", "stats"), "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO stats", name)
	return ""
}

// BLESS protects under every policy, and hotkv_blessed_keys counts them.
func TestBlessProtectsUnderEveryPolicy(t *testing.T) {
	settleHeap(t)
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-ttl", "volatile-random"} {
		t.Run(policy, func(t *testing.T) {
			srv := hotkvtest.Start(t, hotkvtest.WithConfig("maxmemory-policy", policy))
			c := hotkvtest.Dial(t, srv.Addr)
			for i := 0; i < 50; i++ {
				k := fmt.Sprintf("keep:%d", i)
				c.Do("SET", k, "v", "PX", "600000")
				do(t, c, ":1\r\n", "BLESS", "SET", k, "NO-EVICT")
			}
			if got := infoStat(t, c, "hotkv_blessed_keys"); got != "50" {
				t.Fatalf("hotkv_blessed_keys = %s", got)
			}
			val := strings.Repeat("x", 4<<10)
			for i := 0; i < 3000; i++ {
				c.Write(hotkvtest.EncodeCommand("SET", fmt.Sprintf("c:%d", i), val, "PX", "600000"))
			}
			for i := 0; i < 3000; i++ {
				_, _ = c.ReadReply()
			}
			do(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "4mb")
			c.Do("SET", "trigger", "x") // evicts down to the limit
			for i := 0; i < 50; i++ {
				do(t, c, ":1\r\n", "EXISTS", fmt.Sprintf("keep:%d", i))
			}
			if infoStat(t, c, "evicted_keys") == "0" {
				t.Fatal("nothing was evicted")
			}
		})
	}
}

// The protection survives a restart from the AOF: the stream carries BLESS
// SET, and a rewrite starts the new incremental file with one per blessed key.
func TestBlessSurvivesAOFRestart(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, aofOpts(dir, "always", hotkvtest.WithConfig("protect-locks-from-eviction", "yes"))...)
	c := hotkvtest.Dial(t, a.Addr)
	c.Do("SET", "plain", "v")
	do(t, c, ":1\r\n", "BLESS", "SET", "plain", "NO-EVICT")
	do(t, c, "+OK\r\n", "SET", "lock:a", "tok", "NX", "PX", "600000")
	do(t, c, "*1\r\n$8\r\nNO-EVICT\r\n", "BLESS", "GET", "lock:a")
	check := func(addr string) {
		t.Helper()
		d := hotkvtest.Dial(t, addr)
		do(t, d, "*1\r\n$8\r\nNO-EVICT\r\n", "BLESS", "GET", "plain")
		do(t, d, "*1\r\n$8\r\nNO-EVICT\r\n", "BLESS", "GET", "lock:a")
	}
	check(hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...).Addr)
	do(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
	waitField(t, c, "aof_rewrite_in_progress", "0")
	check(hotkvtest.Start(t, aofOpts(copyDir(t, dir), "always")...).Addr)
}
