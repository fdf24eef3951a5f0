package server_test

import (
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Over maxmemory, commands that may grow memory get Redis's OOM error; reads,
// deletes and allow-oom scripts run; a transaction that queues while out of
// memory aborts. (Eviction policies are not served yet: every policy refuses as
// noeviction does when nothing can be evicted.)
func TestMaxmemoryRefusesDenyOOMCommands(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("SET", "x", "1")
	if r := c.Do("CONFIG", "SET", "maxmemory", "1"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	oom := "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	for _, cmd := range [][]string{{"SET", "y", "1"}, {"LPUSH", "l", "a"}, {"FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return 1 end)"},
		{"EVAL", "#!lua\nreturn 1", "0"}} {
		if r := c.Do(cmd...); r != oom {
			t.Errorf("%v: %q", cmd, r)
		}
	}
	if r := c.Do("GET", "x"); r != "$1\r\n1\r\n" {
		t.Fatalf("GET: %q", r)
	}
	if r := c.Do("EVAL", "return redis.call('set', 'x', 2)", "0"); !strings.HasPrefix(r, "-OOM command not allowed when used memory > 'maxmemory'. script: ") {
		t.Fatalf("write in a script: %q", r)
	}
	if r := c.Do("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'x', 3)", "0"); r != "+OK\r\n" {
		t.Fatalf("allow-oom script: %q", r)
	}
	// Redis 8: a read queues inside MULTI and runs; a denyoom command is
	// refused there and aborts the transaction
	c.Do("MULTI")
	if r := c.Do("GET", "x"); r != "+QUEUED\r\n" {
		t.Fatalf("queuing a read while out of memory: %q", r)
	}
	if r := c.Do("EXEC"); r != "*1\r\n$1\r\n3\r\n" {
		t.Fatalf("EXEC of a read: %q", r)
	}
	c.Do("MULTI")
	if r := c.Do("SET", "x", "4"); r != oom {
		t.Fatalf("queuing a write while out of memory: %q", r)
	}
	if r := c.Do("EXEC"); !strings.HasPrefix(r, "-EXECABORT") {
		t.Fatalf("EXEC: %q", r)
	}
	if r := c.Do("DEL", "x"); r != ":1\r\n" {
		t.Fatalf("DEL: %q", r)
	}
	c.Do("CONFIG", "SET", "maxmemory", "0")
	if r := c.Do("SET", "y", "1"); r != "+OK\r\n" {
		t.Fatalf("SET after maxmemory 0: %q", r)
	}
}
