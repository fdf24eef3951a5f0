package keyspace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// listKS returns a keyspace whose list-max-listpack-size is fill.
func listKS(fill int64) *Keyspace {
	ks := New(1, 1)
	ks.Limits.ListMaxListpackSize = func() int64 { return fill }
	return ks
}

// view is the list's listObj: the boxed one or a copy of the inline form.
func (l *List) view() *listObj {
	t := new(listObj)
	return l.open(t)
}

func (l *List) numNodes() int     { return l.view().numNodes() }
func (l *List) node(i int) *qnode { return l.view().node(i) }

func listElems(l *List) []string {
	var out []string
	l.Range(func(v []byte) bool {
		out = append(out, string(v))
		return true
	})
	return out
}

// checkList verifies a list against its model and its own invariants: node
// counts add up, no node is empty, plain nodes hold one element, every node's
// size is what Redis's listpack (or plain node) would take, a listpack has one
// node at most.
func checkList(t *testing.T, l *List, model []string, what string) {
	t.Helper()
	if got := listElems(l); strings.Join(got, "|") != strings.Join(model, "|") || l.Len() != len(model) {
		t.Fatalf("%s: elements %q (len %d), want %q", what, got, l.Len(), model)
	}
	total := 0
	for i := range l.numNodes() {
		n := l.node(i)
		if n.count <= 0 {
			t.Fatalf("%s: node %d is empty", what, i)
		}
		total += int(n.count)
		want := lpEmptyBytes
		cnt := 0
		for p := int(n.off); p < len(n.b); {
			var v []byte
			v, p = n.entryAt(p)
			cnt++
			if n.plain {
				want = len(v)
			} else {
				want += lpEntrySize(v)
			}
		}
		if cnt != int(n.count) || n.sz != want {
			t.Fatalf("%s: node %d count %d (entries %d) sz %d, want sz %d", what, i, n.count, cnt, n.sz, want)
		}
		if n.plain && n.count != 1 {
			t.Fatalf("%s: plain node %d holds %d elements", what, i, n.count)
		}
	}
	if total != l.Len() {
		t.Fatalf("%s: nodes hold %d elements, Len %d", what, total, l.Len())
	}
	if o := l.view(); o.enc == ListListpack && o.numNodes() > 1 {
		t.Fatalf("%s: listpack with %d nodes", what, o.numNodes())
	}
	// a listpack is inline, with its header; a quicklist is boxed
	if inline := l.Enc != compactBoxed; inline != (l.Encoding() == "listpack") {
		t.Fatalf("%s: %s inline=%v", what, l.Encoding(), inline)
	}
	if l.Enc != compactBoxed && l.n > 0 {
		b := l.e().compactBytes()
		n := l.node(0)
		if int(n.hd) != listHdr || n.off < listHdr || int(n.off) > len(b) || &b[0] != &n.b[0] {
			t.Fatalf("%s: inline node hd %d off %d len %d", what, n.hd, n.off, len(b))
		}
		if c, ok := l.e().compactCount(); !ok || c != l.Len() {
			t.Fatalf("%s: inline count %d (%v), Len %d", what, c, ok, l.Len())
		}
	}
	// every element by index, and iteration both ways from a middle element
	for i, m := range model {
		if v, ok := l.Index(i); !ok || string(v) != m {
			t.Fatalf("%s: Index(%d) = %q, want %q", what, i, v, m)
		}
	}
	if len(model) > 0 {
		mid := len(model) / 2
		it := l.Iter(mid, false)
		for i := mid; i < len(model); i++ {
			if v := it.Next(); string(v) != model[i] {
				t.Fatalf("%s: forward iteration at %d = %q, want %q", what, i, v, model[i])
			}
		}
		it = l.Iter(mid, true)
		for i := mid; i >= 0; i-- {
			if v := it.Next(); string(v) != model[i] {
				t.Fatalf("%s: reverse iteration at %d = %q, want %q", what, i, v, model[i])
			}
		}
	}
}

// TestLpEntrySize checks the listpack entry sizes against listpack.c's
// encodings: integers by magnitude, strings by length class, plus back-lengths.
func TestLpEntrySize(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
	}{
		{"0", 2}, {"127", 2}, {"128", 3}, {"-1", 3}, {"-4096", 3}, {"4095", 3}, {"4096", 4},
		{"-32768", 4}, {"32767", 4}, {"32768", 5}, {"8388607", 5}, {"-8388609", 6},
		{"2147483647", 6}, {"2147483648", 10}, {"9223372036854775807", 10},
		{"-9223372036854775808", 10}, {"9223372036854775808", 21}, // not an int64: a string
		{"", 2}, {"a", 3}, {"-0", 4}, {"01", 4}, {"+1", 4}, {" 1", 4},
		{strings.Repeat("x", 63), 65}, {strings.Repeat("x", 64), 67}, {strings.Repeat("x", 125), 128},
		{strings.Repeat("x", 126), 130}, {strings.Repeat("x", 4095), 4099}, {strings.Repeat("x", 4096), 4103},
		{strings.Repeat("x", 16377), 16384}, {strings.Repeat("x", 16378), 16386},
	} {
		if got := lpEntrySize([]byte(tc.v)); got != tc.want {
			t.Errorf("lpEntrySize(%.20q len %d) = %d, want %d", tc.v, len(tc.v), got, tc.want)
		}
	}
}

// TestListConversions walks the listpack <-> quicklist rules of t_list.c.
func TestListConversions(t *testing.T) {
	// count-limited: a 4th element of 3 converts; shrinking back needs one node
	// of at most 3/2 = 1 element
	ks := listKS(3)
	l := ks.NewList()
	for _, v := range []string{"a", "b", "c"} {
		l.TryGrow(ks, 1, 1)
		l.Push([]byte(v), false)
	}
	if l.Encoding() != "listpack" {
		t.Fatalf("3 elements with fill 3: %s", l.Encoding())
	}
	l.TryGrow(ks, 1, 1)
	l.Push([]byte("d"), false)
	if l.Encoding() != "quicklist" || l.numNodes() != 2 {
		t.Fatalf("4 elements with fill 3: %s with %d nodes", l.Encoding(), l.numNodes())
	}
	l.Pop(false) // [a b c] in one node: 3 > 1
	l.TryShrink()
	if l.Encoding() != "quicklist" {
		t.Fatal("converted back above half the limit")
	}
	l.DelRange(1, 2)
	l.TryShrink()
	if l.Encoding() != "listpack" {
		t.Fatal("one element in one node did not convert back")
	}

	// size-limited (-1: 4096 bytes): the listpack bytes plus the new strings
	ks = listKS(-1)
	l = ks.NewList()
	l.TryGrow(ks, 4089, 1) // 7 + 4089 = 4096: fits
	if l.Encoding() != "listpack" {
		t.Fatal("4096 bytes converted")
	}
	l.TryGrow(ks, 4090, 1)
	if l.Encoding() != "quicklist" || l.Len() != 0 || l.numNodes() != 0 {
		t.Fatal("4097 bytes did not convert to an empty quicklist")
	}
	// fill 0 counts as 1 entry, fill -6 as -5 (64kb)
	ks = listKS(0)
	l = ks.NewList()
	l.TryGrow(ks, 1, 1)
	l.Push([]byte("a"), false)
	l.TryGrow(ks, 1, 1)
	if l.Encoding() != "quicklist" {
		t.Fatal("fill 0 kept 2 elements in a listpack")
	}
	ks = listKS(-6)
	l = ks.NewList()
	l.TryGrow(ks, 60000, 1)
	l.Push(bytes.Repeat([]byte("x"), 60000), false)
	l.TryGrow(ks, 5536, 1)
	if l.Encoding() != "quicklist" || l.Fill() != -5 {
		t.Fatalf("fill -6: %s fill %d", l.Encoding(), l.Fill())
	}
}

// TestListQuicklistNodes checks node filling, plain nodes and splits.
func TestListQuicklistNodes(t *testing.T) {
	ks := listKS(2)
	l := ks.NewList()
	l.TryGrow(ks, 0, 3) // straight to a quicklist of fill 2
	for i := range 5 {
		l.Push([]byte(strconv.Itoa(i)), false)
	}
	if l.numNodes() != 3 {
		t.Fatalf("5 elements with fill 2: %d nodes", l.numNodes())
	}
	checkList(t, l, []string{"0", "1", "2", "3", "4"}, "push")
	// LINSERT in a full node's middle splits it and merges what fits
	l.Insert([]byte("0"), []byte("x"), true)
	checkList(t, l, []string{"0", "x", "1", "2", "3", "4"}, "insert")
	// an element past 8kb gets its own node whatever the fill
	big := strings.Repeat("b", sizeSafetyLimit+1)
	l.Push([]byte(big), true)
	if !l.node(0).plain {
		t.Fatal("a large element did not get a plain node")
	}
	checkList(t, l, []string{big, "0", "x", "1", "2", "3", "4"}, "plain")
	l.Set(0, []byte("small"))
	if l.node(0).plain {
		t.Fatal("LSET of a small value kept the plain node")
	}
	checkList(t, l, []string{"small", "0", "x", "1", "2", "3", "4"}, "set small")
	l.Set(3, []byte(big))
	checkList(t, l, []string{"small", "0", "x", big, "2", "3", "4"}, "set large")
	// the packed threshold makes every element of that size plain
	ks.ListPackedThreshold = 2
	l.Push([]byte("yy"), false)
	if !l.node(l.numNodes() - 1).plain {
		t.Fatal("packed threshold ignored")
	}
	ks.ListPackedThreshold = 0
}

// TestListModel runs random operations against a slice model under several
// fills and packed thresholds, checking contents and node invariants.
func TestListModel(t *testing.T) {
	for _, fill := range []int64{-2, -1, 1, 2, 3, 5, 0} {
		for _, thr := range []uint64{0, 4} {
			t.Run(fmt.Sprintf("fill%d_thr%d", fill, thr), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(fill+10), thr))
				ks := listKS(fill)
				ks.ListPackedThreshold = thr
				l := ks.NewList()
				var model []string
				val := func() string {
					switch rng.IntN(6) {
					case 0:
						return strconv.Itoa(rng.IntN(300) - 100)
					case 1:
						return strings.Repeat("L", 100+rng.IntN(9000))
					case 2:
						return strconv.FormatInt(rng.Int64(), 10)
					}
					return strings.Repeat(string(rune('a'+rng.IntN(4))), rng.IntN(6))
				}
				for step := range 3000 {
					what := ""
					switch op := rng.IntN(10); {
					case op < 2: // push
						v := val()
						front := rng.IntN(2) == 0
						l.TryGrow(ks, len(v), 1)
						l.Push([]byte(v), front)
						if front {
							model = append([]string{v}, model...)
						} else {
							model = append(model, v)
						}
						what = "push"
					case op < 3: // push several (LPUSH/RPUSH)
						var vals [][]byte
						front := rng.IntN(2) == 0
						for range 1 + rng.IntN(6) {
							v := val()
							vals = append(vals, []byte(v))
							if front {
								model = append([]string{v}, model...)
							} else {
								model = append(model, v)
							}
						}
						l.PushAll(ks, vals, front)
						what = "pushall"
					case op < 5 && len(model) > 0: // pop
						front := rng.IntN(2) == 0
						got := string(l.Pop(front))
						want := model[len(model)-1]
						if front {
							want, model = model[0], model[1:]
						} else {
							model = model[:len(model)-1]
						}
						if got != want {
							t.Fatalf("step %d: pop %q, want %q", step, got, want)
						}
						l.TryShrink()
						what = "pop"
					case op == 5 && len(model) > 0: // insert
						pivot := model[rng.IntN(len(model))]
						v := val()
						after := rng.IntN(2) == 0
						l.TryGrow(ks, len(v), 1)
						if !l.Insert([]byte(pivot), []byte(v), after) {
							t.Fatalf("step %d: pivot not found", step)
						}
						for i, m := range model {
							if m == pivot {
								if after {
									i++
								}
								model = append(model[:i], append([]string{v}, model[i:]...)...)
								break
							}
						}
						what = "insert"
					case op == 6 && len(model) > 0: // set
						i := rng.IntN(len(model))
						v := val()
						l.TryGrow(ks, len(v), 1)
						l.Set(i-len(model)*rng.IntN(2), []byte(v))
						model[i] = v
						l.TryShrink()
						what = "set"
					case op == 7 && len(model) > 0: // rem
						v := model[rng.IntN(len(model))]
						cnt := rng.IntN(5) - 2
						got := l.Rem(cnt, []byte(v))
						removed := 0
						if cnt >= 0 {
							var keep []string
							for _, m := range model {
								if m == v && (cnt == 0 || removed < cnt) {
									removed++
									continue
								}
								keep = append(keep, m)
							}
							model = keep
						} else {
							for i := len(model) - 1; i >= 0 && removed < -cnt; i-- {
								if model[i] == v {
									model = append(model[:i:i], model[i+1:]...)
									removed++
								}
							}
						}
						if got != removed {
							t.Fatalf("step %d: rem %d, want %d", step, got, removed)
						}
						l.TryShrink()
						what = "rem"
					case op == 8 && len(model) > 0: // delrange
						s := rng.IntN(len(model))
						n := rng.IntN(len(model) - s + 1)
						l.DelRange(s, n)
						model = append(model[:s:s], model[s+n:]...)
						l.TryShrink()
						what = "delrange"
					case op == 9:
						c := l.Clone().(*List)
						checkList(t, c, model, "clone")
						if c.Encoding() != l.Encoding() || c.numNodes() != l.numNodes() {
							t.Fatal("clone changed the structure")
						}
						what = "clone"
					}
					if len(model) == 0 {
						l = ks.NewList() // an empty list is deleted
					}
					checkList(t, l, model, fmt.Sprintf("step %d (%s)", step, what))
				}
			})
		}
	}
}

// TestListPushPopAllocs: pushing and popping at the ends of a list whose end
// node has room allocates nothing (the LPUSH/RPOP benchmark workloads).
func TestListPushPopAllocs(t *testing.T) {
	ks := New(1, 1)
	l := ks.NewList()
	v := []byte("xxx")
	for range 2000 {
		l.TryGrow(ks, 3, 1)
		l.Push(v, false)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		l.TryGrow(ks, 3, 1)
		l.Push(v, true)
		l.Pop(false)
		l.TryShrink()
	})
	if allocs != 0 {
		t.Fatalf("push/pop allocates %v per op", allocs)
	}
}

// The third and later end nodes of a list start at the size the full one
// reached, with their room on the side the pushes come from, so they fill
// without reallocating.
func TestListNewEndNodeStartsAtSize(t *testing.T) {
	v := [][]byte{[]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")}
	for _, front := range []bool{false, true} {
		ks := New(1, 1)
		l := ks.DBs[0].SetObject([]byte("l"), KindList, (*List)(nil)).Obj().(*List)
		for l.boxed() == nil || l.boxed().numNodes() < 3 {
			l.PushAll(ks, v, front)
		}
		o := l.boxed()
		end := 0
		if !front {
			end = 2
		}
		n := o.node(end)
		buf := unsafe.SliceData(n.b[:cap(n.b)])
		for o.numNodes() == 3 {
			if unsafe.SliceData(o.node(end).b[:cap(o.node(end).b)]) != buf {
				t.Fatalf("front=%v: the new end node reallocated at %d elements", front, o.node(end).count)
			}
			l.PushAll(ks, v, front)
		}
	}
}
