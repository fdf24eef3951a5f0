package difftest

import (
	"regexp"
	"strings"
	"testing"
)

// HOTKEYS (8.6): the errors, and a session's reply byte for byte where it is
// deterministic: the network bytes charged to each key (request and reply,
// per command, an EXEC's commands and a script's inside EXEC counted as
// Redis counts them), in RESP2 and RESP3. Times are masked.
func TestDiffHotkeysErrors(t *testing.T) {
	p := newPair(t)
	for _, c := range [][]string{
		{"HOTKEYS"}, {"HOTKEYS", "FOO"}, {"HOTKEYS", "HELP"}, {"HOTKEYS", "HELP", "x"},
		{"HOTKEYS", "GET"}, {"HOTKEYS", "STOP"}, {"HOTKEYS", "RESET"}, {"HOTKEYS", "GET", "x"},
		{"HOTKEYS", "STOP", "x"}, {"HOTKEYS", "RESET", "x"},
		{"HOTKEYS", "START"}, {"HOTKEYS", "START", "METRICS"}, {"HOTKEYS", "START", "FOO", "1", "CPU"},
		{"HOTKEYS", "START", "METRICS", "0"}, {"HOTKEYS", "START", "METRICS", "-1"},
		{"HOTKEYS", "START", "METRICS", "3", "CPU", "NET"}, {"HOTKEYS", "START", "METRICS", "x", "CPU"},
		{"HOTKEYS", "START", "METRICS", "2", "CPU"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "NET"},
		{"HOTKEYS", "START", "METRICS", "1", "GPU"}, {"HOTKEYS", "START", "METRICS", "2", "GPU", "NYET"},
		{"HOTKEYS", "START", "METRICS", "2", "CPU", "CPU"}, {"HOTKEYS", "START", "METRICS", "2", "net", "NET"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "0"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "65"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "x"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "0"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "1000001"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "SAMPLE", "0"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "SAMPLE", "2147483648"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS", "2", "0", "5"}, {"HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS"},
		{"HOTKEYS", "START", "METRICS", "1", "CPU", "BOGUS", "1"},
		{"INFO", "hotkeys"},
	} {
		p.same(c...)
	}
	p.same("HOTKEYS", "START", "METRICS", "2", "GPU", "CPU", "COUNT", "5", "SAMPLE", "3", "DURATION", "100")
	p.same("HOTKEYS", "START", "METRICS", "1", "NET")
	p.same("HOTKEYS", "RESET")
	p.same("INFO", "hotkeys")
	p.same("HOTKEYS", "STOP")
	p.same("HOTKEYS", "STOP")
	p.same("INFO", "hotkeys")
	p.same("HOTKEYS", "RESET")
	p.same("HOTKEYS", "GET")
	p.same("INFO", "hotkeys")
}

var hotkeysTimes = regexp.MustCompile(`(collection-start-time-unix-ms|collection-duration-ms|total-cpu-time-user-ms|total-cpu-time-sys-ms|all-commands-all-slots-us)\r\n:\d+`)

// hotkeysMasked is a HOTKEYS GET reply with its times masked.
func hotkeysMasked(r string) string { return hotkeysTimes.ReplaceAllString(r, "$1\r\n:T") }

func TestDiffHotkeysNetBytes(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			p := newPair(t)
			p.do("HELLO", proto)
			p.same("HOTKEYS", "START", "METRICS", "1", "NET", "COUNT", "20")
			p.same("SET", "key1", "value1")
			p.same("SET", "key1", "a-longer-value-for-key1")
			p.same("GET", "key1")
			p.same("MSET", "a", "1", "b", "22", "c", "333")
			p.same("MGET", "a", "b", "c", "nokey")
			p.same("HSET", "h", "f1", "v1", "f2", "v2")
			p.same("HGETALL", "h")
			p.same("PING") // no key: not counted
			p.same("EVAL", "redis.call('set', KEYS[1], 'x'); return redis.call('get', KEYS[1])", "1", "ev")
			p.same("MULTI")
			p.same("SET", "m1", "v")
			p.same("GET", "m1")
			p.same("EVAL", "redis.call('set', KEYS[1], 'y'); redis.call('set', KEYS[1], 'z'); return 1", "1", "m2")
			p.same("INCR", "m1")
			p.same("EXEC")
			p.same("DEL", "a", "b", "nokey")
			p.same("HOTKEYS", "STOP")
			hk, rd := p.do("HOTKEYS", "GET")
			if hotkeysMasked(hk) != hotkeysMasked(rd) {
				t.Errorf("HOTKEYS GET\n hotkv %q\n redis %q", hotkeysMasked(hk), hotkeysMasked(rd))
			}
			if !strings.Contains(hk, "m2") || !strings.Contains(hk, "key1") {
				t.Errorf("keys missing from %q", hk)
			}
			p.same("HOTKEYS", "RESET")
		})
	}
}

// With CPU tracked the reply has the same fields in the same order; the
// times differ, so only the shape is compared (and the lists' keys come
// from the commands that ran).
func TestDiffHotkeysCPUShape(t *testing.T) {
	p := newPair(t)
	p.same("HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "SAMPLE", "1")
	for i := 0; i < 50; i++ {
		p.same("SET", "hot", "v")
	}
	p.same("HOTKEYS", "STOP")
	hk, rd := p.do("HOTKEYS", "GET")
	cut := func(r string) string { // the CPU list and the rest: times
		r = hotkeysMasked(r)
		i := strings.Index(r, "by-cpu-time-us")
		j := strings.Index(r, "by-net-bytes")
		if i < 0 || j < i {
			t.Fatalf("no lists in %q", r)
		}
		return r[:i] + r[j:]
	}
	if cut(hk) != cut(rd) {
		t.Errorf("HOTKEYS GET\n hotkv %q\n redis %q", cut(hk), cut(rd))
	}
	if !strings.Contains(hk, "by-cpu-time-us\r\n*2\r\n$3\r\nhot\r\n:") {
		t.Errorf("the CPU list lacks the one key: %q", hk)
	}
	p.same("INFO", "hotkeys")
	p.same("HOTKEYS", "RESET")
}
