package introspect

import (
	"strings"
	"testing"
)

func args(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func join(a [][]byte) string {
	ss := make([]string, len(a))
	for i, b := range a {
		ss[i] = string(b)
	}
	return strings.Join(ss, " ")
}

// Entries keep 32 arguments (the last saying how many more there were) and
// 128 bytes of each, as Redis's slowlogCreateEntry (slowlog.tcl's trimming
// tests), and copies of them.
func TestNewSlowEntryTrims(t *testing.T) {
	var many []string
	for i := 0; i < 33; i++ {
		many = append(many, string(rune('a'+i%26)))
	}
	got := NewSlowEntry(args(append([]string{"sadd", "set"}, many...)...))
	if len(got) != 32 || string(got[31]) != "... (4 more arguments)" || string(got[30]) != many[28] {
		t.Fatalf("%d args, last %q", len(got), got[len(got)-1])
	}
	if got := NewSlowEntry(args(many[:30]...)); len(got) != 30 || string(got[29]) != many[29] {
		t.Fatalf("30 arguments kept as %d", len(got))
	}
	if got := NewSlowEntry(args(many[:32]...)); len(got) != 32 || string(got[31]) != many[31] {
		t.Fatalf("32 arguments kept as %q", join(got))
	}
	long := strings.Repeat("A", 129)
	in := args("sadd", "set", long, strings.Repeat("B", 128))
	got = NewSlowEntry(in)
	if want := strings.Repeat("A", 128) + "... (1 more bytes)"; string(got[2]) != want || string(got[3]) != string(in[3]) {
		t.Fatalf("trimmed to %q / %d bytes", got[2], len(got[3]))
	}
	in[0][0] = 'X'
	if string(got[0]) != "sadd" {
		t.Fatal("the entry shares the command's bytes")
	}
}

// The log keeps the newest max-len entries, newest first, with increasing
// IDs that RESET does not restart.
func TestSlowlogRing(t *testing.T) {
	var l Slowlog
	for i := 0; i < 5; i++ {
		l.Push(SlowEntry{Args: args("cmd", string(rune('0'+i)))}, 3)
	}
	if l.Len() != 3 {
		t.Fatalf("len %d", l.Len())
	}
	got := l.Newest(-1)
	if len(got) != 3 || got[0].ID != 4 || got[2].ID != 2 || string(got[0].Args[1]) != "4" {
		t.Fatalf("%+v", got)
	}
	if n := len(l.Newest(1)); n != 1 {
		t.Fatalf("Newest(1) = %d", n)
	}
	if n := len(l.Newest(0)); n != 0 {
		t.Fatalf("Newest(0) = %d", n)
	}
	l.Push(SlowEntry{}, 1)
	if l.Len() != 1 || l.Newest(5)[0].ID != 5 {
		t.Fatal("max-len 1 kept more")
	}
	l.Reset()
	l.Push(SlowEntry{}, 10)
	if l.Len() != 1 || l.Newest(1)[0].ID != 6 {
		t.Fatal("the IDs restarted after RESET")
	}
}

// An event keeps one sample a second (its worst), SeriesLen seconds, and
// its all-time maximum; RESET matches names in any case.
func TestLatencySeries(t *testing.T) {
	var l Latency
	l.Add("command", 120, 1000)
	l.Add("command", 300, 1000)
	l.Add("command", 200, 1000)
	l.Add("expire-cycle", 30, 1001)
	s, _ := l.Get("command")
	if got := s.Samples(); len(got) != 1 || got[0] != (Sample{1000, 300}) || s.Max != 300 {
		t.Fatalf("%+v max %d", got, s.Max)
	}
	for i := int64(1); i <= SeriesLen+5; i++ {
		l.Add("command", 100+i, 1000+i)
	}
	s, _ = l.Get("command")
	got := s.Samples()
	if len(got) != SeriesLen || got[0].Time != 1006 || got[len(got)-1] != (Sample{1165, 265}) || s.Latest() != got[len(got)-1] || s.Max != 300 {
		t.Fatalf("%d samples, first %+v, last %+v, max %d", len(got), got[0], got[len(got)-1], s.Max)
	}
	if _, ok := l.Get("COMMAND"); ok {
		t.Fatal("lookups are exact, as Redis's dict")
	}
	if n := l.Reset("EXPIRE-CYCLE", false); n != 1 || len(l.All()) != 1 {
		t.Fatalf("reset %d, %d left", n, len(l.All()))
	}
	if n := l.Reset("", true); n != 1 || len(l.All()) != 0 {
		t.Fatalf("reset all %d", n)
	}
}

// LATENCY GRAPH's sparkline, byte for byte as redis-server 8.6.3 drew it
// for four samples (DEBUG SLEEP 0.1, 0.3, 0.2, 0.06 a second apart, drawn
// two seconds after the last).
func TestLatencyGraphAsRedis(t *testing.T) {
	var l Latency
	for i, ms := range []int64{100, 300, 200, 60} {
		l.Add("command", ms, 1796319455+int64(i))
	}
	want := "command - high 300 ms, low 60 ms (all time high 300 ms)\n" +
		strings.Repeat("-", 80) + "\n" +
		" #  \n" +
		" |o \n" +
		" || \n" +
		"#||_\n" +
		"    \n" +
		"5432\n" +
		"ssss\n"
	s, _ := l.Get("command")
	if got := s.Graph(1796319460); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// Labels past a minute, an hour and a day; more samples than the 80
// columns wrap into a second block.
func TestLatencyGraphLabelsAndWrap(t *testing.T) {
	var l Latency
	now := int64(10_000_000)
	for i := int64(0); i < 90; i++ {
		l.Add("e", 10+i, now-200_000+i*2000)
	}
	s, _ := l.Get("e")
	g := s.Graph(now)
	if !strings.Contains(g, "e - high 99 ms, low 10 ms (all time high 99 ms)\n") {
		t.Fatal(g[:80])
	}
	blocks := strings.Split(strings.SplitN(g, "\n", 3)[2], "\n\n")
	if len(blocks) != 2 {
		t.Fatalf("%d blocks:\n%s", len(blocks), g)
	}
	if !strings.Contains(g, "d") || !strings.Contains(g, "h") {
		t.Fatalf("labels without days or hours:\n%s", g)
	}
}

// LATENCY DOCTOR's fixed texts: latency monitoring off and never on, on
// with no events, and the advice an event brings.
func TestLatencyDoctorTexts(t *testing.T) {
	var l Latency
	if got := l.Doctor(DoctorInput{}); !strings.HasPrefix(got, "I'm sorry, Dave, I can't do that.") {
		t.Fatal(got)
	}
	if got := l.Doctor(DoctorInput{ThresholdMs: 100}); !strings.HasPrefix(got, "Dave, no latency spike was observed") {
		t.Fatal(got)
	}
	l.Add("command", 250, 100)
	l.Add("command", 150, 104)
	got := l.Doctor(DoctorInput{NowSec: 105, ThresholdMs: 100, SlowerThanUs: 10000, SlowlogMaxLen: 128})
	want := "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n" +
		"1. command: 2 latency spikes (average 200ms, mean deviation 50ms, period 2.50 sec). Worst all time event 250ms.\n" +
		"\nI have a few advices for you:\n\n" +
		"- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n" +
		"- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got = l.Doctor(DoctorInput{NowSec: 105, ThresholdMs: 100, SlowerThanUs: -1})
	if !strings.Contains(got, "'CONFIG SET slowlog-log-slower-than 100000'. If the Slow log is disabled") {
		t.Fatal(got)
	}
}

// MONITOR's line: seconds and zero-padded microseconds, the database and
// the client, each argument quoted as sdscatrepr.
func TestMonitorLine(t *testing.T) {
	got := string(MonitorLine(nil, 1700000000_000042, 3, "127.0.0.1:5000", args("set", "k\n\"x\\", "\x00\xff ok")))
	want := "+1700000000.000042 [3 127.0.0.1:5000] \"set\" \"k\\n\\\"x\\\\\" \"\\x00\\xff ok\"\r\n"
	if got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
	if got := string(MonitorLine(nil, 1700000000_123456, 0, "lua", args("ping"))); got != "+1700000000.123456 [0 lua] \"ping\"\r\n" {
		t.Fatalf("%q", got)
	}
}
