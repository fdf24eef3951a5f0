package config

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// config.c configGetCommand, Redis 7+.
func TestMatch(t *testing.T) {
	c := New()
	tests := []struct {
		patterns []string
		want     [][2]string
	}{
		// An exact name is answered under the name as given.
		{[]string{"PORT"}, [][2]string{{"PORT", "6379"}}},
		{[]string{"port", "PORT"}, [][2]string{{"port", "6379"}}},
		{[]string{"PORT", "p?rt"}, [][2]string{{"PORT", "6379"}}},
		{[]string{"p?rt", "PORT", "port"}, [][2]string{{"port", "6379"}}},
		// An alias is a name of its own.
		{[]string{"lua-time-limit"}, [][2]string{{"lua-time-limit", "5000"}}},
		{[]string{"slave-read*"}, [][2]string{{"slave-read-only", "yes"}}},
		{[]string{"*read-only"}, [][2]string{{"replica-read-only", "yes"}, {"slave-read-only", "yes"}}},
		{[]string{"busy-reply-threshold", "lua-time-limit"}, [][2]string{{"busy-reply-threshold", "5000"}, {"lua-time-limit", "5000"}}},
		// Patterns fold case.
		{[]string{"MAXMEMORY-P*"}, [][2]string{{"maxmemory-policy", "noeviction"}}},
		{[]string{"[bp]ind"}, [][2]string{{"bind", "127.0.0.1"}}},
		{[]string{"nosuch"}, nil},
		{[]string{"nosuch*"}, nil},
		{[]string{""}, nil},
		{[]string{"save", "appendonly"}, [][2]string{{"save", ""}, {"appendonly", "no"}}},
	}
	for _, tt := range tests {
		if got := c.Match(tt.patterns...); !slices.Equal(got, tt.want) {
			t.Errorf("Match(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
	}

	all := c.Match("*")
	names := make(map[string]bool)
	for _, kv := range all {
		if names[kv[0]] {
			t.Errorf("%s listed twice", kv[0])
		}
		names[kv[0]] = true
	}
	hidden := 0
	for _, rn := range reg.names {
		if reg.defs[rn.idx].flags&fHidden != 0 {
			hidden++
			if names[rn.name] {
				t.Errorf("CONFIG GET * lists the hidden %s", rn.name)
			}
			if got := c.Match(rn.name); len(got) != 1 {
				t.Errorf("CONFIG GET %s (hidden) by its name: %v", rn.name, got)
			}
		}
	}
	if hidden < 3 || len(all) != len(reg.names)-hidden {
		t.Errorf("CONFIG GET * gave %d names, want %d (%d hidden)", len(all), len(reg.names)-hidden, hidden)
	}
	for _, n := range []string{"lua-time-limit", "busy-reply-threshold", "slaveof", "replicaof", "hash-max-ziplist-entries", "list-max-ziplist-size"} {
		if !names[n] {
			t.Errorf("CONFIG GET * lacks %s", n)
		}
	}
	if v, _ := c.Get("LUA-TIME-LIMIT"); v != "5000" {
		t.Errorf("Get(LUA-TIME-LIMIT) = %q", v)
	}
}

// config.c configSetCommand: argument checks, in order, before anything is set.
func TestSetErrors(t *testing.T) {
	tests := []struct {
		pairs [][2]string
		err   string
	}{
		{[][2]string{{"foo", "1"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[][2]string{{"foo", "1"}, {"databases", "2"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[][2]string{{"databases", "2"}, {"foo", "1"}}, failed("databases", "can't set immutable config")},
		{[][2]string{{"Databases", "2"}}, failed("Databases", "can't set immutable config")},
		{[][2]string{{"port", "1"}, {"foo", "1"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[][2]string{{"port", "1"}, {"PORT", "2"}}, failed("PORT", "duplicate parameter")},
		{[][2]string{{"maxmemory", "1"}, {"port", "x"}, {"port", "y"}}, failed("port", "duplicate parameter")},
		{[][2]string{{"maxmemory", "1mb"}, {"port", "x"}}, failed("port", "argument couldn't be parsed into an integer")},
		{[][2]string{{"daemonize", "yes"}}, failed("daemonize", "can't set immutable config")},
		{[][2]string{{"dir", "/"}}, failed("dir", "can't set protected config")},
	}
	for _, tt := range tests {
		c := New()
		err := c.Set(tt.pairs...)
		if err == nil || err.Error() != tt.err {
			t.Errorf("Set(%q) = %v, want %q", tt.pairs, err, tt.err)
		}
		// Nothing changed.
		if c.Int("maxmemory") != 0 || c.Int("port") != 6379 {
			t.Errorf("Set(%q) changed values", tt.pairs)
		}
	}
}

func TestSetMany(t *testing.T) {
	c := New()
	err := c.Set([2]string{"maxmemory", "1mb"}, [2]string{"maxmemory-policy", "allkeys-lru"},
		[2]string{"save", "900 1"}, [2]string{"slave-read-only", "no"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("maxmemory") != 1<<20 || c.String("maxmemory-policy") != "allkeys-lru" ||
		c.String("save") != "900 1" || c.Bool("replica-read-only") {
		t.Error("values not set")
	}
	// A parameter by its name and by its alias is not a duplicate: both
	// apply, in order (as in Redis, where they are separate entries).
	if err := c.Set([2]string{"lua-time-limit", "100"}, [2]string{"busy-reply-threshold", "200"}); err != nil {
		t.Fatal(err)
	}
	if c.Int("busy-reply-threshold") != 200 {
		t.Errorf("busy-reply-threshold = %d", c.Int("busy-reply-threshold"))
	}
	// CONFIG SET with no pairs is refused by arity before it gets here.
	if err := New().Set(); err != nil {
		t.Errorf("Set() = %v", err)
	}
}

func TestHooks(t *testing.T) {
	c := New()
	var calls []string
	c.OnChange("port", func(v string) error {
		if c.Int("port") != mustAtoi(t, v) {
			t.Errorf("hook sees Int(port) = %d, value %s", c.Int("port"), v)
		}
		calls = append(calls, "port="+v)
		return nil
	})
	c.OnChange("lua-time-limit", func(v string) error { calls = append(calls, "busy="+v); return nil })
	c.OnChange("bind", func(v string) error { calls = append(calls, "bind="+v); return nil })

	mustSet(t, c, "port", "7000")
	mustSet(t, c, "port", "7000")              // unchanged: no hook
	mustSet(t, c, "bind", "127.0.0.1")         // special: always applied
	mustSet(t, c, "busy-reply-threshold", "1") // hook registered through the alias
	want := []string{"port=7000", "bind=127.0.0.1", "busy=1"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls = %q, want %q", calls, want)
	}
}

func TestHookFailureRollsBack(t *testing.T) {
	c := New()
	var calls []string
	c.OnChange("maxmemory", func(v string) error { calls = append(calls, "maxmemory="+v); return nil })
	c.OnChange("port", func(v string) error {
		calls = append(calls, "port="+v)
		if v == "1" {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})
	c.OnChange("hz", func(v string) error { calls = append(calls, "hz="+v); return nil })

	err := c.Set([2]string{"maxmemory", "1mb"}, [2]string{"PORT", "1"}, [2]string{"hz", "20"})
	if want := failed("port", "Unable to listen on this port. Check server logs."); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if c.Int("maxmemory") != 0 || c.Int("port") != 6379 || c.Int("hz") != 10 {
		t.Errorf("not rolled back: maxmemory %d port %d hz %d", c.Int("maxmemory"), c.Int("port"), c.Int("hz"))
	}
	// maxmemory's hook ran, then port's failed; maxmemory's hook is told the
	// old value again; hz's never ran.
	want := []string{"maxmemory=1048576", "port=1", "maxmemory=0"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls = %q, want %q", calls, want)
	}
}

// Readers never lock and may run while writers commit; run with -race.
func TestConcurrentAccess(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_ = c.Set([2]string{"maxmemory", strconv.Itoa(i)}, [2]string{"save", strconv.Itoa(w+1) + " 1"})
			}
		}(w)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_ = c.Int("maxmemory")
				_, _ = c.Get("save")
				_ = c.Match("max*")
				_ = c.Save()
			}
		}()
	}
	wg.Wait()
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
