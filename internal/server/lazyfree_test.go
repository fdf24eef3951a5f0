package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// INFO lazyfreed_objects counts what Redis 8 frees in its background thread:
// a value of more than 64 allocations deleted by UNLINK (or DEL with
// lazyfree-lazy-user-del), every key of an asynchronous flush (ASYNC, or a
// plain FLUSHALL/FLUSHDB of a client that may block, which Redis 8 runs in
// the background), and more than 64 functions or scripts flushed
// asynchronously; a small value, DEL, and a flush inside MULTI count nothing.
func TestLazyfreedObjects(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	lazyfreed := func() int {
		t.Helper()
		for _, l := range strings.Split(c.Do("INFO", "memory"), "\r\n") {
			if v, ok := strings.CutPrefix(l, "lazyfreed_objects:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("no lazyfreed_objects in INFO memory")
		return 0
	}
	big := func(key string) {
		args := []string{"SADD", key}
		for i := range 200 {
			args = append(args, "m"+strconv.Itoa(i))
		}
		c.Do(args...)
	}
	steps := []struct {
		do   func()
		want int
	}{
		{func() { c.Do("CONFIG", "RESETSTAT") }, 0},
		{func() { big("a"); c.Do("UNLINK", "a") }, 1},
		{func() { c.Do("SADD", "small", "x"); c.Do("UNLINK", "small") }, 1},
		{func() { big("b"); c.Do("DEL", "b") }, 1},
		{func() { c.Do("CONFIG", "SET", "lazyfree-lazy-user-del", "yes"); big("b"); c.Do("DEL", "b") }, 2},
		{func() { c.Do("MSET", "k1", "1", "k2", "2", "k3", "3"); c.Do("FLUSHALL") }, 5},
		{func() { c.Do("MSET", "k1", "1", "k2", "2"); c.Do("FLUSHDB", "ASYNC") }, 7},
		{func() { c.Do("MSET", "k1", "1", "k2", "2"); c.Do("MULTI"); c.Do("FLUSHALL"); c.Do("EXEC") }, 7},
		{func() {
			for i := range 70 {
				c.Do("FUNCTION", "LOAD", "#!lua name=l"+strconv.Itoa(i)+"\nredis.register_function('f"+strconv.Itoa(i)+"', function() return 1 end)")
			}
			c.Do("FUNCTION", "FLUSH", "ASYNC")
		}, 7 + 70 + 1},
		{func() { c.Do("EVAL", "return 1", "0"); c.Do("SCRIPT", "FLUSH", "ASYNC") }, 78},
	}
	for i, s := range steps {
		s.do()
		if got := lazyfreed(); got != s.want {
			t.Fatalf("step %d: lazyfreed_objects %d, want %d", i, got, s.want)
		}
	}
}
