package command

import (
	"bytes"
	"testing"
)

func splitWords(b []byte) [][]byte {
	var out [][]byte
	for _, f := range bytes.Fields(b) {
		out = append(out, f)
	}
	return out
}

// The parsed options never hold a combination Redis rejects, whatever the order.
func checkSetOpts(t *testing.T, args [][]byte, kind cmdKind) {
	o, ok := parseSetOpts(args, kind)
	if !ok {
		return
	}
	f := o.flags
	bits := func(m setFlags) int {
		n := 0
		for ; m != 0; m &= m - 1 {
			n++
		}
		return n
	}
	switch {
	case f&optNX != 0 && f&optXX != 0:
		t.Fatalf("%q: NX and XX", args)
	case bits(f&optExpire) > 1:
		t.Fatalf("%q: two expire kinds", args)
	case f&optKeepTTL != 0 && f&optExpire != 0:
		t.Fatalf("%q: KEEPTTL with an expire", args)
	case bits(f&optCond) > 1:
		t.Fatalf("%q: two conditions", args)
	case (f&optExpire != 0) != (o.expireArg != nil):
		t.Fatalf("%q: expire flag without its value", args)
	case (f&optCond != 0) != (o.condArg != nil):
		t.Fatalf("%q: condition without its value", args)
	case kind != kindSet && f&(optGet|optCond) != 0:
		t.Fatalf("%q: GET or a condition outside SET", args)
	case kind == kindGetex && f&(optNX|optXX|optKeepTTL) != 0:
		t.Fatalf("%q: NX/XX/KEEPTTL in GETEX", args)
	case kind != kindGetex && f&optPersist != 0:
		t.Fatalf("%q: PERSIST outside GETEX", args)
	}
}

// redis-lock-commands.md §1.2: the order-dependent cases.
func TestParseSetOptsOrder(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"NX", true}, {"NX XX", false}, {"XX NX", false}, {"nx nx", true}, {"GET GET", true},
		{"EX 10 EX 20", true}, {"EX 10 PX 100", false}, {"EX 10 KEEPTTL", false}, {"KEEPTTL EX 10", false},
		{"EX", false}, {"PERSIST", false}, {"IFEQ a IFNE b", false}, {"IFEQ a IFEQ b", true},
		{"NX IFEQ a", false}, {"XX IFEQ a", false}, {"IFEQ a NX", true}, {"IFEQ a XX", true},
		{"IFEQ", false}, {"XX KEEPTTL IFEQ tok", false}, {"PX 60000 IFEQ tok", true}, {"IFDEQ a IFDNE b", false},
	}
	for _, c := range cases {
		o, ok := parseSetOpts(splitWords([]byte(c.in)), kindSet)
		if ok != c.ok {
			t.Errorf("SET k v %s: ok=%v, want %v", c.in, ok, c.ok)
		}
		if c.in == "EX 10 EX 20" && string(o.expireArg) != "20" {
			t.Errorf("last EX must win, got %q", o.expireArg)
		}
	}
	if _, ok := parseSetOpts(splitWords([]byte("PERSIST")), kindGetex); !ok {
		t.Error("GETEX PERSIST")
	}
	if _, ok := parseSetOpts(splitWords([]byte("GET")), kindMsetex); ok {
		t.Error("MSETEX GET must be a syntax error")
	}
}

func FuzzParseSetOpts(f *testing.F) {
	for _, s := range []string{"NX PX 30000", "IFEQ a NX", "XX KEEPTTL", "GET EXAT 1", "PERSIST", "IFDEQ 0123456789abcdef GET PXAT 5"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, line []byte, k uint8) {
		checkSetOpts(t, splitWords(line), cmdKind(k%3))
	})
}

// expireArgToAbs: Redis's getExpireMillisecondsOrReply validation.
func TestExpireArgToAbs(t *testing.T) {
	const now = 1_700_000_000_000
	cases := []struct {
		arg       string
		sec, abs  bool
		want      int64
		wantError string
	}{
		{"10", true, false, now + 10_000, ""},
		{"10", false, false, now + 10, ""},
		{"0", true, false, 0, "ERR invalid expire time in 'set' command"},
		{"-1", false, true, 0, "ERR invalid expire time in 'set' command"},
		{"1.5", true, false, 0, "ERR value is not an integer or out of range"},
		{"9223372036854775807", true, false, 0, "ERR invalid expire time in 'set' command"},
		{"9223372036854774", true, false, 0, "ERR invalid expire time in 'set' command"},
		{"9223372036854775807", false, true, 9223372036854775807, ""},
		{"1", true, true, 1000, ""},
	}
	for _, c := range cases {
		got, msg := expireArgToAbs([]byte(c.arg), c.sec, c.abs, now, "set")
		if got != c.want || msg != c.wantError {
			t.Errorf("%s sec=%v abs=%v: %d %q", c.arg, c.sec, c.abs, got, msg)
		}
	}
}
