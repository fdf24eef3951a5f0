package server

import (
	"strconv"
	"testing"
)

// redis-benchmark's set commands (SADD, SPOP, SISMEMBER) allocate nothing on a
// compact set, and on a hashtable set only what a new member needs.
func TestSetHotPathAllocs(t *testing.T) {
	s, cl := newBenchServer(t)
	run(s, cl, args("SADD", "lp", "element:__rand_int__", "a", "b"))
	run(s, cl, args("SADD", "is", "1", "2", "3"))
	big := []string{"SADD", "ht"}
	for i := 0; i < 3000; i++ {
		big = append(big, "element:"+strconv.Itoa(i))
	}
	run(s, cl, args(big...))
	for _, c := range []struct {
		name string
		cmds [][][]byte
		max  float64
	}{
		{"SADD_dup_listpack", [][][]byte{args("SADD", "lp", "element:__rand_int__")}, 0},
		{"SADD_dup_hashtable", [][][]byte{args("SADD", "ht", "element:7")}, 0},
		{"SISMEMBER_listpack", [][][]byte{args("SISMEMBER", "lp", "b")}, 0},
		{"SISMEMBER_intset", [][][]byte{args("SISMEMBER", "is", "2")}, 0},
		{"SISMEMBER_hashtable", [][][]byte{args("SISMEMBER", "ht", "element:150")}, 0},
		{"SPOP+SADD_listpack", [][][]byte{args("SPOP", "lp"), args("SADD", "lp", "a", "b", "element:__rand_int__")}, 0},
		{"SPOP+SADD_intset", [][][]byte{args("SPOP", "is"), args("SADD", "is", "1", "2", "3")}, 0},
		{"SPOP_hashtable", [][][]byte{args("SPOP", "ht")}, 0},
		{"SPOP_count_hashtable", [][][]byte{args("SPOP", "ht", "2")}, 0},
		// a new hashtable member is one entry and one key string
		{"SREM+SADD_hashtable", [][][]byte{args("SREM", "ht", "element:1", "element:2"), args("SADD", "ht", "element:1", "element:2")}, 4},
	} {
		for _, a := range c.cmds {
			run(s, cl, a)
		}
		n := testing.AllocsPerRun(500, func() {
			for _, a := range c.cmds {
				run(s, cl, a)
			}
		})
		if n > c.max {
			t.Errorf("%s: %.1f allocations, want <= %v", c.name, n, c.max)
		}
	}
}
