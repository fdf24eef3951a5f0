package command_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// t_zset.c zrandmemberWithCountCommand: every code path, per encoding; the
// replies depend on chance, so they are checked for shape, membership, scores,
// distinctness and coverage instead of a golden transcript.
func TestZrandmemberPaths(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	score := map[string]string{}
	var all []string
	for i := 0; i < 60; i++ {
		m := "m" + strconv.Itoa(i)
		all = append(all, m)
		score[m] = strconv.Itoa(i*2 - 30)
	}
	for _, entries := range []string{"128", "0"} {
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", entries)
		c.Do("DEL", "z")
		for _, m := range all {
			c.Do("ZADD", "z", score[m], m)
		}
		enc := c.Do("OBJECT", "ENCODING", "z")
		// CASE 1: a negative count repeats members, with their scores
		res := bulks(t, c.Do("ZRANDMEMBER", "z", "-200", "WITHSCORES"))
		if len(res) != 400 {
			t.Fatalf("%s -200 WITHSCORES: %d items", enc, len(res))
		}
		var ms []string
		for i := 0; i < len(res); i += 2 {
			if score[res[i]] != res[i+1] {
				t.Fatalf("%s: %s came with score %s", enc, res[i], res[i+1])
			}
			ms = append(ms, res[i])
		}
		if isDistinct(ms) {
			t.Errorf("%s -200: no repeats in 200 picks of 60", enc)
		}
		// CASE 2: a count covering the set is the whole set, highest score first
		res = bulks(t, c.Do("ZRANDMEMBER", "z", "60"))
		want := slices.Clone(all)
		slices.Reverse(want)
		if !slices.Equal(res, want) {
			t.Errorf("%s 60: %v", enc, res)
		}
		// CASE 2.5 (listpack), 3 (50 of 60) and 4 (5 of 60): distinct members,
		// every one reached eventually
		for _, n := range []int{50, 5, 1} {
			seen := map[string]bool{}
			for i := 0; i < 1200/n; i++ {
				res := bulks(t, c.Do("ZRANDMEMBER", "z", strconv.Itoa(n)))
				if len(res) != n || !isDistinct(res) || !within(res, all) {
					t.Fatalf("%s %d: %v", enc, n, res)
				}
				for _, m := range res {
					seen[m] = true
				}
			}
			if len(seen) != len(all) {
				t.Errorf("%s %d: only %d of %d members ever returned", enc, n, len(seen), len(all))
			}
		}
		// no count: one member
		if r := c.Do("ZRANDMEMBER", "z"); !within(bulks(t, "*1\r\n"+r), all) {
			t.Errorf("%s: ZRANDMEMBER z = %q", enc, r)
		}
	}
}
