package command_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// bulks parses a flat RESP2 array (or set) of bulk strings.
func bulks(t *testing.T, r string) []string {
	t.Helper()
	if r == "" || (r[0] != '*' && r[0] != '~') {
		t.Fatalf("not an array: %q", r)
	}
	parts := strings.Split(r, "\r\n")
	n, _ := strconv.Atoi(parts[0][1:])
	out := make([]string, 0, n)
	for i := 1; len(out) < n; i += 2 {
		out = append(out, parts[i+1])
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func isDistinct(s []string) bool {
	c := sortedCopy(s)
	return len(slices.Compact(c)) == len(s)
}

func within(s, of []string) bool {
	for _, m := range s {
		if !slices.Contains(of, m) {
			return false
		}
	}
	return true
}

// setFixtures creates one set of 50 members per encoding and returns their
// members by key.
func setFixtures(t *testing.T, c *hotkvtest.Conn) map[string][]string {
	t.Helper()
	fx := map[string][]string{}
	for _, enc := range []string{"intset", "listpack", "hashtable"} {
		var ms []string
		for i := 0; i < 50; i++ {
			switch enc {
			case "intset":
				ms = append(ms, strconv.Itoa(i*3-20))
			case "listpack":
				ms = append(ms, "m"+strconv.Itoa(i))
			default:
				ms = append(ms, "member:"+strconv.Itoa(i)+":"+strings.Repeat("x", 60))
			}
		}
		c.Do(append([]string{"SADD", enc}, ms...)...)
		if got := c.Do("OBJECT", "ENCODING", enc); !strings.Contains(got, enc) {
			t.Fatalf("fixture %s has encoding %q", enc, got)
		}
		fx[enc] = ms
	}
	return fx
}

// t_set.c srandmemberWithCountCommand: every code path, per encoding.
func TestSrandmemberPaths(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	for key, all := range setFixtures(t, c) {
		// PATH 1: a negative count repeats members
		res := bulks(t, c.Do("SRANDMEMBER", key, "-100"))
		if len(res) != 100 || !within(res, all) || isDistinct(res) {
			t.Errorf("%s -100: %d members, within=%v distinct=%v", key, len(res), within(res, all), isDistinct(res))
		}
		// PATH 2: a count covering the set is the whole set
		for _, n := range []string{"50", "100"} {
			if res := bulks(t, c.Do("SRANDMEMBER", key, n)); !slices.Equal(sortedCopy(res), sortedCopy(all)) {
				t.Errorf("%s %s: %v", key, n, res)
			}
		}
		// PATH 2.5 (listpack), 3 (45 of 50) and 4 (5 of 50): distinct members, all
		// reached eventually
		for _, n := range []int{45, 5, 1} {
			seen := map[string]bool{}
			for i := 0; i < 1500/n; i++ {
				res := bulks(t, c.Do("SRANDMEMBER", key, strconv.Itoa(n)))
				if len(res) != n || !isDistinct(res) || !within(res, all) {
					t.Fatalf("%s %d: %v", key, n, res)
				}
				for _, m := range res {
					seen[m] = true
				}
			}
			if len(seen) != len(all) {
				t.Errorf("%s %d: %d calls reached %d of %d members", key, n, 1500/n, len(seen), len(all))
			}
		}
		if got := c.Do("SCARD", key); got != ":50\r\n" {
			t.Errorf("SRANDMEMBER changed %s: SCARD %q", key, got)
		}
	}
}

// t_set.c spopWithCountCommand: case 2 (few popped) and case 3 (most popped:
// the rest moves to a new set, a listpack unless the set was an intset), per
// encoding; popped and kept members partition the set.
func TestSpopCountPaths(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	for _, n := range []int{1, 2, 8, 30, 45, 49} {
		for key, all := range setFixtures(t, c) {
			popped := bulks(t, c.Do("SPOP", key, strconv.Itoa(n)))
			kept := bulks(t, c.Do("SMEMBERS", key))
			if len(popped) != n || len(kept) != 50-n || !isDistinct(popped) ||
				!slices.Equal(sortedCopy(append(popped, kept...)), sortedCopy(all)) {
				t.Errorf("SPOP %s %d: popped %v kept %v", key, n, popped, kept)
			}
			// the rebuilt set of case 3 is a listpack, but these members are too
			// long for one: every encoding stays
			if got := c.Do("OBJECT", "ENCODING", key); !strings.Contains(got, key) {
				t.Errorf("SPOP %s %d: encoding %q", key, n, got)
			}
			c.Do("DEL", key)
		}
	}
	// a hashtable of short members rebuilt by case 3 becomes a listpack
	var short []string
	for i := 0; i < 200; i++ {
		short = append(short, "s"+strconv.Itoa(i))
	}
	c.Do(append([]string{"SADD", "short"}, short...)...)
	if popped := bulks(t, c.Do("SPOP", "short", "195")); len(popped) != 195 || !isDistinct(popped) {
		t.Errorf("SPOP short 195: %d popped", len(popped))
	}
	if got := c.Do("OBJECT", "ENCODING", "short"); got != "$8\r\nlistpack\r\n" || c.Do("SCARD", "short") != ":5\r\n" {
		t.Errorf("after SPOP short 195: %q", got)
	}
	// single pops drain every encoding
	for key, all := range setFixtures(t, c) {
		var popped []string
		for range all {
			r := c.Do("SPOP", key)
			popped = append(popped, strings.Split(r, "\r\n")[1])
		}
		if !slices.Equal(sortedCopy(popped), sortedCopy(all)) || c.Do("EXISTS", key) != ":0\r\n" {
			t.Errorf("SPOP %s one by one: %v", key, popped)
		}
	}
}

// SSCAN of a hashtable set: the cursor walk reports every member, COUNT bounds
// a call, and members present throughout are reported even as the set grows.
func TestSscanHashtable(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	var all []string
	for i := 0; i < 500; i++ {
		all = append(all, "k"+strconv.Itoa(i))
	}
	c.Do(append([]string{"SADD", "h"}, all...)...)
	seen := map[string]bool{}
	cursor, calls := "0", 0
	for {
		r := c.Do("SSCAN", "h", cursor, "COUNT", "20")
		parts := strings.Split(r, "\r\n")
		cursor = parts[2]
		ms := bulks(t, strings.Join(parts[3:], "\r\n"))
		if len(ms) > 60 {
			t.Fatalf("SSCAN COUNT 20 returned %d members", len(ms))
		}
		for _, m := range ms {
			seen[m] = true
		}
		if calls++; calls == 3 {
			for i := 500; i < 2000; i++ { // grow the table mid-scan
				c.Do("SADD", "h", "k"+strconv.Itoa(i))
			}
		}
		if cursor == "0" {
			break
		}
	}
	for _, m := range all {
		if !seen[m] {
			t.Fatalf("SSCAN missed %s", m)
		}
	}
	if calls < 10 {
		t.Errorf("SSCAN COUNT 20 finished 500+ members in %d calls", calls)
	}
}
