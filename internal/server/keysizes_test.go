package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/clock"
)

// The keysizes histogram (INFO keysizes) is kept as keys change, never by a
// scan: after every unit of random commands of every group (in two
// databases, with MOVE, COPY, RENAME, SWAPDB, FLUSHDB, expiry and hash field
// expiry mixed in), each database's histogram must equal the one recomputed
// from its keys.
func TestKeysizesFollowEveryCommand(t *testing.T) {
	groups := make([]string, 0, len(groupGens))
	for g := range groupGens {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for gi, group := range groups {
		t.Run(group, func(t *testing.T) {
			clk := clock.NewFake(1_700_000_000_000)
			s := applyServer(t, clk)
			r := rand.New(rand.NewPCG(uint64(gi), 99))
			g := gen{r}
			mk := groupGens[group]
			now := int64(1_700_000_000_000)
			db := 0
			keyOf := func() string {
				if a := mk(g); len(a) > 1 {
					return a[1]
				}
				return "k"
			}
			for n := 0; n < 3000; n++ {
				u := Unit{DB: db, NowMs: now, Seed: r.Uint64(), Proto: 2}
				u.Cmds = append(u.Cmds, argvOf(mk(g)))
				switch r.IntN(60) {
				case 0:
					u.Cmds = append(u.Cmds, argvOf([]string{"SELECT", g.pick("0", "1")}))
				case 1:
					u.Cmds = append(u.Cmds, argvOf([]string{"SWAPDB", "0", "1"}))
				case 2:
					u.Cmds = append(u.Cmds, argvOf([]string{"MOVE", keyOf(), "1"}))
				case 3:
					k := keyOf()
					u.Cmds = append(u.Cmds, argvOf([]string{"COPY", k, k + "c", "DB", g.pick("0", "1"), "REPLACE"}))
				case 4:
					u.Cmds = append(u.Cmds, argvOf([]string{"RENAME", keyOf(), keyOf()}))
				case 5:
					u.Cmds = append(u.Cmds, argvOf([]string{"FLUSHDB"}))
				case 6:
					u.Cmds = append(u.Cmds, argvOf([]string{"PEXPIRE", keyOf(), "1"}))
				}
				res := s.Apply(u)
				db = res.DB
				now += int64(r.IntN(50))
				s.eng.Lock()
				if r.IntN(20) == 0 {
					s.eng.ActiveExpireCycle(1 << 30)
				}
				for _, d := range s.ks.DBs {
					if !d.VerifyKeysizes() {
						s.eng.Unlock()
						t.Fatalf("after %q: db%d keysizes %v, recomputed differently", u.Cmds, d.ID, brief(d.Keysizes()))
					}
				}
				s.eng.Unlock()
			}
			// the stream built something
			var total int64
			for _, d := range s.ks.DBs {
				h := d.Keysizes()
				for _, row := range h {
					for _, c := range row {
						total += c
					}
				}
			}
			if total == 0 && group != "stream" {
				t.Fatalf("nothing counted")
			}
		})
	}
}

func brief(h [5][64]int64) string {
	var b strings.Builder
	for t, row := range h {
		for i, c := range row {
			if c != 0 {
				fmt.Fprintf(&b, "%d/%d=%d ", t, i, c)
			}
		}
	}
	return b.String()
}
