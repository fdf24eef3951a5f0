package introspect

import "strconv"

// Redis's slowlog.h limits: an entry keeps at most 32 arguments (the last
// one then says how many more there were) and 128 bytes of each.
const (
	SlowlogMaxArgs = 32
	SlowlogMaxArg  = 128
)

// SlowEntry is one slow log entry, as SLOWLOG GET returns it.
type SlowEntry struct {
	ID     int64
	Time   int64 // Unix seconds
	DurUs  int64
	Args   [][]byte // trimmed (NewSlowEntry); its own copies
	Peer   string   // the client's ip:port
	Client string   // its name, "" when none
}

// NewSlowEntry builds an entry's arguments from a command's (already
// redacted) as Redis's slowlogCreateEntry: at most SlowlogMaxArgs, the last
// replaced by "... (N more arguments)" when there were more, each cut to
// SlowlogMaxArg bytes followed by "... (N more bytes)". The arguments are
// copied.
func NewSlowEntry(argv [][]byte) [][]byte {
	n := min(len(argv), SlowlogMaxArgs)
	out := make([][]byte, n)
	for j := 0; j < n; j++ {
		a := argv[j]
		switch {
		case n != len(argv) && j == n-1:
			out[j] = []byte("... (" + strconv.Itoa(len(argv)-n+1) + " more arguments)")
		case len(a) > SlowlogMaxArg:
			b := append(make([]byte, 0, SlowlogMaxArg+24), a[:SlowlogMaxArg]...)
			b = append(b, "... ("...)
			b = strconv.AppendInt(b, int64(len(a)-SlowlogMaxArg), 10)
			out[j] = append(b, " more bytes)"...)
		default:
			out[j] = append([]byte(nil), a...)
		}
	}
	return out
}

// Slowlog is the slow log: the newest entry first, at most the max length
// it was last given. Not safe for concurrent use (the engine lock guards
// it).
type Slowlog struct {
	entries []SlowEntry // oldest first
	nextID  int64
}

// Push adds e (its ID is assigned here) and drops the oldest entries past
// maxLen.
func (l *Slowlog) Push(e SlowEntry, maxLen int64) {
	e.ID = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.Trim(maxLen)
}

// Trim drops the oldest entries past maxLen.
func (l *Slowlog) Trim(maxLen int64) {
	if drop := int64(len(l.entries)) - max(maxLen, 0); drop > 0 {
		clear(l.entries[:drop])
		l.entries = append(l.entries[:0], l.entries[drop:]...)
	}
}

// Len is SLOWLOG LEN.
func (l *Slowlog) Len() int { return len(l.entries) }

// Reset is SLOWLOG RESET: the entries go, the IDs go on.
func (l *Slowlog) Reset() {
	clear(l.entries)
	l.entries = l.entries[:0]
}

// Newest returns up to count entries, newest first (count < 0: all).
func (l *Slowlog) Newest(count int) []SlowEntry {
	if count < 0 || count > len(l.entries) {
		count = len(l.entries)
	}
	out := make([]SlowEntry, count)
	for i := range out {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}
