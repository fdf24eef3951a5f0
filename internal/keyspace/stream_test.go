package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// The stream against a model (a sorted slice of live entries): appends with
// changing field sets under several node limits, deletions, exact trims and
// ranges both ways; every listpack stays a valid Redis stream listpack whose
// header counts match, and nodes stay in ID order.
func TestStreamAgainstModel(t *testing.T) {
	type ent struct {
		id StreamID
		fv []string
	}
	for _, lim := range []StreamLimits{{MaxBytes: 4096, MaxEntries: 100}, {MaxBytes: 100, MaxEntries: 3}, {MaxBytes: 0, MaxEntries: 1}, {MaxBytes: 60, MaxEntries: 0}} {
		r := rand.New(rand.NewPCG(3, uint64(lim.MaxEntries)))
		s := NewStream(DefaultStreamLimits)
		var model []ent
		next := StreamID{1, 0}
		for i := 0; i < 3000; i++ {
			switch op := r.IntN(10); {
			case op < 6:
				n := 1 + r.IntN(3)
				var fv []string
				for j := 0; j < n; j++ {
					fv = append(fv, "f"+strconv.Itoa(r.IntN(2)*j), strconv.Itoa(r.IntN(1000)-500))
				}
				if r.IntN(10) == 0 {
					fv[1] = string(make([]byte, r.IntN(300)))
				}
				b := make([][]byte, len(fv))
				for j := range fv {
					b[j] = []byte(fv[j])
				}
				if !s.Append(next, b, lim) {
					t.Fatal("append failed")
				}
				model = append(model, ent{next, fv})
				next.Seq += uint64(1 + r.IntN(3))
				if r.IntN(4) == 0 {
					next = StreamID{next.Ms + 1, 0}
				}
			case op < 8 && len(model) > 0:
				k := r.IntN(len(model))
				if s.Delete([]StreamID{model[k].id}) != 1 {
					t.Fatalf("delete %v", model[k].id)
				}
				model = slices.Delete(model, k, k+1)
			case op < 9:
				maxlen := int64(r.IntN(60))
				s.Trim(&TrimArgs{Strategy: TrimMaxLen, MaxLen: maxlen})
				if int64(len(model)) > maxlen {
					model = model[int64(len(model))-maxlen:]
				}
			default:
				if len(model) > 0 {
					min := model[r.IntN(len(model))].id
					s.Trim(&TrimArgs{Strategy: TrimMinID, MinID: min})
					k := slices.IndexFunc(model, func(e ent) bool { return e.id.Cmp(min) >= 0 })
					model = model[k:]
				}
			}
			if s.Len() != uint64(len(model)) {
				t.Fatalf("len %d, model %d", s.Len(), len(model))
			}
			if i%50 == 0 || i == 2999 {
				for _, rev := range []bool{false, true} {
					var got []ent
					var sc []byte
					s.Range(StreamID{}, MaxStreamID, rev, func(e *StreamEntry) bool {
						var fv []string
						sc = e.Fields(sc, func(f, v []byte) { fv = append(fv, string(f), string(v)) })
						got = append(got, ent{e.ID, fv})
						return true
					})
					if rev {
						slices.Reverse(got)
					}
					if len(got) != len(model) {
						t.Fatalf("range %d entries, model %d", len(got), len(model))
					}
					for j := range got {
						if got[j].id != model[j].id || !slices.Equal(got[j].fv, model[j].fv) {
							t.Fatalf("entry %d: %v %v, model %v %v", j, got[j].id, got[j].fv, model[j].id, model[j].fv)
						}
					}
				}
				var live int64
				for k, n := range s.nodes {
					if k > 0 && s.nodes[k-1].master.Cmp(n.master) >= 0 {
						t.Fatal("nodes out of order")
					}
					c, _ := lpInt(n.lp, lpHdrSize)
					live += c
					if int(uint32(n.lp[0])|uint32(n.lp[1])<<8|uint32(n.lp[2])<<16|uint32(n.lp[3])<<24) != len(n.lp) {
						t.Fatal("listpack total bytes")
					}
				}
				if live != int64(len(model)) {
					t.Fatalf("node counts %d, model %d", live, len(model))
				}
			}
		}
	}
}

// The chunked PEL against a sorted slice: inserts anywhere, removals, finds
// and ascents from any ID.
func TestPELAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var p PEL
	var model []uint64
	for i := 0; i < 20000; i++ {
		id := uint64(r.IntN(3000))
		k, found := slices.BinarySearch(model, id)
		if r.IntN(3) > 0 {
			if p.Insert(&StreamNACK{ID: StreamID{id, 0}}) == found {
				t.Fatalf("insert %d: found %v", id, found)
			}
			if !found {
				model = slices.Insert(model, k, id)
			}
		} else {
			if (p.Remove(StreamID{id, 0}) != nil) != found {
				t.Fatalf("remove %d", id)
			}
			if found {
				model = slices.Delete(model, k, k+1)
			}
		}
		if p.Len() != len(model) {
			t.Fatalf("len %d model %d", p.Len(), len(model))
		}
		if i%500 == 0 {
			var got []uint64
			from := uint64(r.IntN(3000))
			p.Ascend(StreamID{from, 0}, func(n *StreamNACK) bool { got = append(got, n.ID.Ms); return true })
			k, _ := slices.BinarySearch(model, from)
			if !slices.Equal(got, model[k:]) {
				t.Fatalf("ascend from %d: %v, model %v", from, got, model[k:])
			}
		}
	}
}
