package difftest

import "testing"

// SORT on sorted sets (merged after SORT itself): the plain sort, BY nosort in
// rank order with LIMIT and DESC (Redis's ZRANGE-based path), ALPHA, GET, STORE.
func TestDiffSortZSet(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	p.same("ZADD", "z", "3", "c", "1", "a", "2", "b", "10", "j", "5", "e")
	p.same("ZADD", "zn", "1", "30", "2", "20", "3", "10")
	p.same("MSET", "w_a", "9", "w_b", "1", "w_c", "5", "o_a", "A", "o_b", "B")
	for _, args := range [][]string{
		{"SORT", "zn"}, {"SORT", "zn", "DESC"}, {"SORT", "z", "ALPHA"}, {"SORT", "z", "ALPHA", "DESC", "LIMIT", "1", "2"},
		{"SORT", "z", "BY", "nosort"}, {"SORT", "z", "BY", "nosort", "DESC"}, {"SORT", "z", "BY", "nosort", "LIMIT", "1", "3"},
		{"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "3"}, {"SORT", "z", "BY", "w_*", "GET", "#", "GET", "o_*"},
		{"SORT", "z", "BY", "nosort", "STORE", "dst"}, {"LRANGE", "dst", "0", "-1"}, {"SORT_RO", "z", "BY", "nosort", "ALPHA"},
		{"SORT", "z"},
	} {
		p.same(args...)
	}
}
