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
