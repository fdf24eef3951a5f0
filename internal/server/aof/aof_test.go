package aof

import (
	"bytes"
	"github.com/hotkv/hotkv/internal/resp"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// The manifest and the command parser: Redis's formats and error texts, and
// fuzzing (neither may panic or loop; what parses round-trips).

func TestManifestFormatAndParse(t *testing.T) {
	m := &manifest{}
	offset := int64(0)
	a := &AOF{fileName: "appendonly.aof", d: Deps{ReplOffset: func() int64 { return offset }}}
	m.newBase(a, true)
	m.newIncr(a)
	offset = 42
	m.newIncr(a)
	m.retireIncrs()
	m.newBase(a, false)
	m.incrs[0].endOffset = 50
	// incremental files start at master_repl_offset; a history file keeps
	// its offsets, as Redis's aofInfoFormat writes them
	want := "file appendonly.aof.2.base.aof seq 2 type b\n" +
		"file appendonly.aof.1.base.rdb seq 1 type h\n" +
		"file appendonly.aof.1.incr.aof seq 1 type h startoffset 0\n" +
		"file appendonly.aof.2.incr.aof seq 2 type i startoffset 42 endoffset 50\n"
	if got := string(m.format()); got != want {
		t.Fatalf("format:\n%s\nwant:\n%s", got, want)
	}
	p, err := parseManifest([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if string(p.format()) != want || p.baseSeq != 2 || p.incrSeq != 2 {
		t.Fatalf("round trip: %q (base %d, incr %d)", p.format(), p.baseSeq, p.incrSeq)
	}
	// a name with a space is quoted as sdscatrepr quotes it, and read back
	q := &manifest{base: &fileInfo{name: "my aof.1.base.rdb", seq: 1, typ: typeBase, startOffset: -1, endOffset: -1}}
	if got := string(q.format()); got != "file \"my aof.1.base.rdb\" seq 1 type b\n" {
		t.Fatalf("quoted: %q", got)
	}
	if r, err := parseManifest(q.format()); err != nil || r.base.name != "my aof.1.base.rdb" {
		t.Fatalf("quoted round trip: %v %+v", err, r)
	}
}

func TestManifestErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"", "Found an empty AOF manifest"},
		{"file a seq 1 type b\n\n", "Invalid AOF manifest file format"},
		{"file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"},
		{"file a seq 2 type i\nfile b seq 1 type i\n", "Found a non-monotonic sequence number"},
		{"file a seq 1 type x\n", "Unknown AOF file type"},
		{"file a seq 1\n", "Invalid AOF manifest file format"},
		{"file a seq 1 type b x\n", "Invalid AOF manifest file format"},
		{"file a seq 1 type b", "The AOF manifest file contains too long line"},
		{"file " + strings.Repeat("a", 1100) + " seq 1 type b\n", "The AOF manifest file contains too long line"},
		{"file a/b seq 1 type b\n", "File can't be a path, just a filename"},
		{"name a seq 1 type b\n", "Invalid AOF manifest file format"},
	} {
		_, err := parseManifest([]byte(c.in))
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		}
	}
	// comments and Redis 8's offsets are read
	m, err := parseManifest([]byte("# c\nfile x.1.incr.aof seq 1 type i startoffset 0 endoffset 7\n"))
	if err != nil || m.incrs[0].startOffset != 0 || m.incrs[0].endOffset != 7 {
		t.Fatalf("%v %+v", err, m)
	}
}

func FuzzManifest(f *testing.F) {
	f.Add([]byte("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"))
	f.Add([]byte("file \"a b\" seq 3 type h startoffset 1\n# x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			return
		}
		out := m.format()
		m2, err := parseManifest(out)
		if err != nil {
			if len(out) == 0 {
				return // only comments: nothing to write back
			}
			t.Fatalf("%q formatted as %q, which does not parse: %v", data, out, err)
		}
		if !bytes.Equal(m2.format(), out) {
			t.Fatalf("round trip: %q -> %q", out, m2.format())
		}
	})
}

var sample = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n#TS:1700000000\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n" +
	"*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n*3\r\n$3\r\nSET\r\n$0\r\n\r\n$2\r\n\r\n\r\n"

// parseAll parses data to the end: the commands, and how it ended.
func parseAll(data []byte) ([][][]byte, parseResult) {
	p := parser{data: data}
	var cmds [][][]byte
	for i := 0; i < len(data)+2; i++ {
		argv, res := p.next()
		if res != parseOK {
			return cmds, res
		}
		cmds = append(cmds, argv)
	}
	panic("the parser does not advance")
}

func TestParserPrefixes(t *testing.T) {
	full, res := parseAll([]byte(sample))
	if res != parseEOF || len(full) != 6 {
		t.Fatalf("%d commands, %v", len(full), res)
	}
	// every prefix parses as whole commands then EOF (at a boundary) or a
	// short read (inside a command), never as a different command
	for cut := 0; cut <= len(sample); cut++ {
		cmds, res := parseAll([]byte(sample[:cut]))
		if res == parseBad {
			t.Fatalf("cut %d: bad format", cut)
		}
		for i, c := range cmds {
			if !equalArgv(c, full[i]) {
				t.Fatalf("cut %d: command %d = %q, want %q", cut, i, c, full[i])
			}
		}
	}
	if _, res := parseAll([]byte("SET k v\r\n")); res != parseBad {
		t.Fatalf("an inline command: %v", res)
	}
}

func equalArgv(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func FuzzParser(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("*99999999999\r\n$1\r\n"))
	f.Add([]byte("*1\r\n$-5\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cmds, _ := parseAll(data)
		// what parsed is a prefix of data, re-encodable
		var out []byte
		for _, c := range cmds {
			out = resp.AppendCommand(out, c...)
		}
		if len(cmds) > 0 && len(out) == 0 {
			t.Fatal("commands without bytes")
		}
	})
}

func TestRewriteLimited(t *testing.T) {
	a := &AOF{d: Deps{Log: discardLog()}}
	if a.rewriteLimited() {
		t.Fatal("limited without failures")
	}
	a.failures = 3
	if !a.rewriteLimited() || a.limitDelayMin != 1 {
		t.Fatalf("after 3 failures: delay %d", a.limitDelayMin)
	}
	if !a.rewriteLimited() {
		t.Fatal("retried before the delay passed")
	}
	a.limitNext = 1 // the delay passed
	if a.rewriteLimited() {
		t.Fatal("not retried after the delay")
	}
	if !a.rewriteLimited() || a.limitDelayMin != 2 {
		t.Fatalf("the next delay is %d minutes, want 2", a.limitDelayMin)
	}
	for i := 0; i < 10; i++ {
		a.limitNext = 1
		a.rewriteLimited()
		a.rewriteLimited()
	}
	if a.limitDelayMin != 60 {
		t.Fatalf("delay %d, want the 60-minute cap", a.limitDelayMin)
	}
	a.failures = 0
	if a.rewriteLimited() || a.limitDelayMin != 0 {
		t.Fatal("a success resets the limit")
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The group commit's hand-off between the event loops and the writer under
// appendfsync always: a unit that ends inside a loop's cycle is left to its
// CycleEnd (no wake-up of the writer per cycle); one that ends outside every
// cycle, or after the cycle's CycleEnd, wakes the writer.
func TestCycleHandOff(t *testing.T) {
	seq := uint64(0)
	a := &AOF{kick: make(chan struct{}, 1), loops: true, d: Deps{UnitSeq: func() uint64 { return seq }}}
	a.policy.Store(fsyncAlways)
	woken := func() bool {
		select {
		case <-a.kick:
			return true
		default:
			return false
		}
	}
	unit := func() { seq++; a.UnitDone() }

	unit() // the cron's unit, no loop in a cycle
	if !woken() {
		t.Fatal("a unit outside every cycle did not wake the writer")
	}
	a.synced.Store(seq)

	a.CycleStart()
	unit() // the loop's own command
	if woken() {
		t.Fatal("a unit inside a cycle woke the writer")
	}
	a.synced.Store(seq) // what CycleEnd does when it fsyncs
	a.CycleDone()
	if woken() || a.inCycle.Load() != 0 {
		t.Fatalf("a cycle that left nothing woke the writer (inCycle %d)", a.inCycle.Load())
	}

	a.CycleStart()
	a.synced.Store(seq) // CycleEnd found nothing more
	unit()              // a blocked client's pipeline resumed among the pushes
	if woken() {
		t.Fatal("woken inside the cycle")
	}
	a.CycleDone()
	if !woken() {
		t.Fatal("a unit after CycleEnd was left without an fsync")
	}

	// two loops: the unit is left to the one still in its cycle
	a.synced.Store(seq)
	a.CycleStart()
	a.CycleStart()
	a.CycleDone()
	unit()
	if woken() {
		t.Fatal("woken while a loop is in its cycle")
	}

	// without event loops (goroutine mode) every unit wakes the writer
	a.loops = false
	unit()
	if !woken() {
		t.Fatal("goroutine mode: not woken")
	}
}
