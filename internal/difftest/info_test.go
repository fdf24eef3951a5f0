package difftest

import (
	"strings"
	"testing"
)

// infoFields are the field names of an INFO reply, in order.
func infoFields(reply string) []string {
	var out []string
	for _, line := range strings.Split(reply, "\r\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "$") {
			out = append(out, k)
		}
	}
	return out
}

// INFO's sections list Redis 8.6's fields in Redis's order (their values are
// the server's own). HotKV's own fields (go_*) come after Redis's and are
// left out; fields that need what HotKV has not built yet are listed.
func TestDiffInfoFields(t *testing.T) {
	p := newPair(t)
	// the reference listens on a Unix socket only, HotKV on TCP
	hotkvOnly := func(f string) bool {
		return strings.HasPrefix(f, "go_") || strings.HasPrefix(f, "hotkv_") || strings.HasPrefix(f, "listener")
	}
	for _, section := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu"} {
		hk, rd := p.do("INFO", section)
		var hf []string
		for _, f := range infoFields(hk) {
			if !hotkvOnly(f) {
				hf = append(hf, f)
			}
		}
		var rf []string
		for _, f := range infoFields(rd) {
			if !strings.HasPrefix(f, "listener") {
				rf = append(rf, f)
			}
		}
		if strings.Join(hf, ",") != strings.Join(rf, ",") {
			t.Errorf("INFO %s fields\n hotkv %v\n redis %v", section, hf, rf)
		}
	}
}

// INFO's section titles, in Redis's order, for the default, all and
// everything sets and a few named ones.
func TestDiffInfoSections(t *testing.T) {
	p := newPair(t)
	titles := func(r string) string {
		var out []string
		for _, line := range strings.Split(r, "\r\n") {
			if strings.HasPrefix(line, "# ") && line != "# Locks" { // HotKV's own, in all
				out = append(out, line)
			}
		}
		return strings.Join(out, ",")
	}
	for _, args := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"},
		{"INFO", "hotkeys", "cpu"}, {"INFO", "threads"}, {"INFO", "errorstats", "latencystats", "commandstats"}} {
		hk, rd := p.do(args...)
		if titles(hk) != titles(rd) {
			t.Errorf("%v\n hotkv %s\n redis %s", args, titles(hk), titles(rd))
		}
	}
}
