package difftest

import (
	"strings"
	"testing"
)

// TestDiffXReadGroupPropagation: XREADGROUP is propagated as what it did
// (XCLAIM per delivery, XGROUP SETID when the group's last ID moved,
// XGROUP CREATECONSUMER for a NOACK consumer), never as itself, so that a
// replica or an AOF replay gets the same PEL whatever the stream holds then.
// HotKV's stream must equal redis-server 8.6.3's (XCLAIM's TIME within 2 s).
func TestDiffXReadGroupPropagation(t *testing.T) {
	hk, rd := attachedSides(t)
	sides := []*replSide{hk, rd}
	cmds := [][]string{
		{"XADD", "s", "1-1", "f", "a"},
		{"XADD", "s", "2-1", "f", "b"},
		{"XADD", "s", "3-1", "f", "c"},
		{"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "bob", "NOACK", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"}, // history: nothing to propagate
		{"XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", ">"}, // nothing new: nothing either
		{"XADD", "s", "4-1", "f", "d"},
		{"XGROUP", "SETID", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "carol", "COUNT", "1", "STREAMS", "s", ">"}, // takes 1-1 over from alice
		{"XREADGROUP", "GROUP", "g", "dave", "CLAIM", "0", "COUNT", "2", "STREAMS", "s", ">"},
		{"XACK", "s", "g", "2-1"},
		{"XREADGROUP", "GROUP", "g", "erin", "NOACK", "STREAMS", "s", ">"},
	}
	for i, c := range cmds {
		h, r := hk.do(t, c...), rd.do(t, c...)
		if h != r && !strings.Contains(strings.Join(c, " "), "CLAIM") {
			t.Fatalf("command %d %q: hotkv %q, redis %q", i, c, h, r)
		}
	}
	const stop = "SET __end__ 1"
	for _, s := range sides {
		s.do(t, strings.Fields(stop)...)
	}
	hs, rs := hk.streamUntil(t, stop), rd.streamUntil(t, stop)
	sameStreams(t, hs, rs)
	n := 0
	for _, c := range hs {
		if strings.EqualFold(c[1], "XREADGROUP") {
			t.Fatalf("XREADGROUP propagated as itself: %q", c)
		}
		if strings.EqualFold(c[1], "XCLAIM") {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no XCLAIM in the stream: %q", hs)
	}
	t.Logf("%d commands propagated, %d XCLAIM, equal to Redis's", len(hs), n)
}
