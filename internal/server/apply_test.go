package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
)

// applyServer is a server that only applies units: no listener, no cron (the
// active expiry cycle would draw from the random source on its own time).
func applyServer(t *testing.T, clk clock.Clock) *Server {
	t.Helper()
	cfg := config.New()
	if _, err := cfg.ParseArgs([]string{"--dir", t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	return New(cfg, Options{Clock: clk, Seed: 7, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// recorder is a propagation target that keeps the stream as Redis's
// replication link encodes it: SELECT when the database changes.
type recorder struct {
	db     int
	stream [][][]byte
}

func (r *recorder) Propagate(db int, argv [][]byte) {
	if db >= 0 && db != r.db {
		r.stream = append(r.stream, [][]byte{[]byte("SELECT"), []byte(fmt.Sprint(db))})
		r.db = db
	}
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		cp[i] = bytes.Clone(a)
	}
	r.stream = append(r.stream, cp)
}

func (r *recorder) UnitDone() {}

func digest(t *testing.T, s *Server) string {
	t.Helper()
	return string(s.Apply(Unit{Cmds: [][][]byte{{[]byte("DEBUG"), []byte("DIGEST")}}}).Replies)
}

func argvOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// TestApplyDeterminism is the determinism test of the one execution path: for
// every command group, 10,000 random commands in units of one to five (a
// random time and seed each, RESP2 then RESP3) are applied to two fresh
// servers, which must give the same replies, unit by unit, and the same
// DEBUG DIGEST. The stream the first one propagates, applied to a third,
// must give the same dataset too: what a replica or the AOF replays is what
// the commands did.
func TestApplyDeterminism(t *testing.T) {
	groups := make([]string, 0, len(groupGens))
	for g := range groupGens {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	const perGroup = 10_000
	for _, proto := range []int{2, 3} {
		for gi, group := range groups {
			t.Run(fmt.Sprintf("%s/resp%d", group, proto), func(t *testing.T) {
				clk := clock.NewFake(1_700_000_000_000)
				a, b, replica := applyServer(t, clk), applyServer(t, clk), applyServer(t, clk)
				rec := &recorder{db: -1}
				a.eng.Lock()
				a.AddPropagationTarget(rec, 3)
				a.eng.Unlock()
				r := rand.New(rand.NewPCG(uint64(gi), uint64(proto)))
				g := gen{r}
				mk := groupGens[group]
				now := int64(1_700_000_000_000)
				db, rdb := 0, 0
				for n := 0; n < perGroup; {
					u := Unit{DB: db, NowMs: now, Seed: r.Uint64(), Proto: proto}
					for k := 1 + r.IntN(5); k > 0 && n < perGroup; k-- {
						u.Cmds = append(u.Cmds, argvOf(mk(g)))
						n++
					}
					if r.IntN(50) == 0 {
						u.Cmds = append(u.Cmds, argvOf([]string{"SELECT", g.pick("0", "1")}))
					}
					rec.stream = rec.stream[:0]
					// b's random source moves between units (its own active
					// expiry, eviction): a unit draws from its seed all the same
					b.eng.Lock()
					for k := r.IntN(3); k > 0; k-- {
						b.eng.Rand()
					}
					b.eng.Unlock()
					ra, rb := a.Apply(u), b.Apply(u)
					if !bytes.Equal(ra.Replies, rb.Replies) || ra.DB != rb.DB {
						t.Fatalf("unit %q at %d: the servers differ:\n%q\n%q", u.Cmds, now, ra.Replies, rb.Replies)
					}
					db = ra.DB
					for _, cmds := range UnitsFromStream(rec.stream) {
						rr := replica.Apply(Unit{DB: rdb, Cmds: cmds, NowMs: now, Proto: 2})
						if replyErrors(t, rr.Replies) > 0 {
							t.Fatalf("the replica refused the propagated %q: %q", cmds, rr.Replies)
						}
						rdb = rr.DB
					}
					now += int64(r.IntN(400))
				}
				da, db2, dr := digest(t, a), digest(t, b), digest(t, replica)
				if da != db2 {
					t.Fatalf("DEBUG DIGEST differs: %q and %q", da, db2)
				}
				if strings.Contains(da, strings.Repeat("0", 40)) {
					t.Fatalf("empty dataset at the end: the generator of %s builds nothing", group)
				}
				if dr != da {
					t.Fatalf("the replica of the propagated stream differs: DEBUG DIGEST %q, source %q", dr, da)
				}
			})
		}
	}
}

// replyErrors counts the top-level error replies in b, a sequence of replies.
func replyErrors(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for len(b) > 0 {
		isErr := b[0] == '-' || b[0] == '!'
		rest, ok := skipReply(b)
		if !ok {
			t.Fatalf("malformed reply %q", b)
		}
		if isErr {
			n++
		}
		b = rest
	}
	return n
}

// skipReply returns what follows the first reply of b.
func skipReply(b []byte) ([]byte, bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, false
	}
	line, rest := b[1:i], b[i+2:]
	count := func() (int, bool) {
		var n int
		_, err := fmt.Sscan(string(line), &n)
		return n, err == nil
	}
	switch b[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return rest, true
	case '$', '!', '=', '|':
		n, ok := count()
		if !ok {
			return nil, false
		}
		if n < 0 {
			return rest, true
		}
		if len(rest) < n+2 {
			return nil, false
		}
		if b[0] == '|' { // attributes: n pairs, then the value
			return skipN(rest, 2*n+1)
		}
		return rest[n+2:], true
	case '*', '~', '>':
		n, ok := count()
		if !ok {
			return nil, false
		}
		return skipN(rest, max(n, 0))
	case '%':
		n, ok := count()
		if !ok {
			return nil, false
		}
		return skipN(rest, 2*n)
	}
	return nil, false
}

func skipN(b []byte, n int) ([]byte, bool) {
	for ; n > 0; n-- {
		var ok bool
		if b, ok = skipReply(b); !ok {
			return nil, false
		}
	}
	return b, true
}
