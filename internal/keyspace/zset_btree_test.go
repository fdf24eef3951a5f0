package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// checkTree checks a big set's B+tree against its contract (zset_btree.go):
// every leaf at one depth and none empty but a lone root; every inner node
// with two children or more; each child's count the items under it and each
// separator the smallest of them; the leaves linked both ways in strict order;
// length and node counters right; the dict holding exactly the tree's members
// with their scores.
func checkTree(t *testing.T, zh *ZSet) {
	t.Helper()
	z := zh.boxed()
	if z == nil {
		if n, ok := zh.e().compactCount(); ok && n != (&zsetObj{lp: zh.e().compactBytes()}).countLP() {
			t.Fatalf("inline zset: count %d for %d members", n, (&zsetObj{lp: zh.e().compactBytes()}).countLP())
		}
		return
	}
	if z.big == nil {
		return
	}
	tr := &z.big.tree
	var leaves []*zbtLeaf
	inners := 0
	type least struct {
		s float64
		m string
	}
	var walk func(in *zbtInner, lf *zbtLeaf, depth int) (int, least)
	walk = func(in *zbtInner, lf *zbtLeaf, depth int) (int, least) {
		if lf != nil {
			if in != nil || depth != tr.height {
				t.Fatalf("leaf at depth %d of height %d (inner %v)", depth, tr.height, in != nil)
			}
			if lf.n == 0 && tr.height > 0 {
				t.Fatal("empty leaf below the root")
			}
			for j := lf.n; j < zbtLeafMax; j++ {
				if lf.members[j] != "" {
					t.Fatalf("leaf keeps a member past its end at %d", j)
				}
			}
			leaves = append(leaves, lf)
			if lf.n == 0 {
				return 0, least{}
			}
			return lf.n, least{lf.scores[0], lf.members[0]}
		}
		if in == nil || depth >= tr.height {
			t.Fatalf("inner node missing or at depth %d of height %d", depth, tr.height)
		}
		inners++
		if in.n < 2 {
			t.Fatalf("inner node at depth %d with %d children", depth, in.n)
		}
		total := 0
		var min0 least
		for i := 0; i < in.n; i++ {
			if (in.leaves[i] != nil) != (depth == tr.height-1) {
				t.Fatalf("child %d at depth %d: leaf %v, height %d", i, depth, in.leaves[i] != nil, tr.height)
			}
			c, lo := walk(in.inner[i], in.leaves[i], depth+1)
			if int(in.counts[i]) != c {
				t.Fatalf("count of child %d at depth %d: %d, holds %d", i, depth, in.counts[i], c)
			}
			if i == 0 {
				min0 = lo
			} else if in.scores[i] != lo.s || in.members[i] != lo.m {
				t.Fatalf("separator %d at depth %d: %v %q, smallest %v %q", i, depth, in.scores[i], in.members[i], lo.s, lo.m)
			}
			total += c
		}
		for i := in.n; i < zbtInnerMax; i++ {
			if in.inner[i] != nil || in.leaves[i] != nil || in.members[i] != "" {
				t.Fatalf("inner node keeps a child past its end at %d", i)
			}
		}
		return total, min0
	}
	var total int
	if tr.height == 0 {
		total, _ = walk(nil, tr.rootLeaf, 0)
	} else {
		total, _ = walk(tr.root, nil, 0)
	}
	if total != tr.length || tr.length != z.big.dict.Len() {
		t.Fatalf("length %d, items %d, dict %d", tr.length, total, z.big.dict.Len())
	}
	if len(leaves) != tr.leafCount || inners != tr.innerCount {
		t.Fatalf("node counters %d/%d, nodes %d/%d", tr.leafCount, tr.innerCount, len(leaves), inners)
	}
	if tr.head != leaves[0] || tr.tail != leaves[len(leaves)-1] || tr.head.prev != nil || tr.tail.next != nil {
		t.Fatal("head or tail")
	}
	for i, l := range leaves {
		if i > 0 && l.prev != leaves[i-1] || i < len(leaves)-1 && l.next != leaves[i+1] {
			t.Fatalf("leaf %d's links", i)
		}
	}
	var ps float64
	var pm string
	first := true
	tr.each(func(s float64, m string) {
		if !first && !zbtLess(ps, pm, s, m) {
			t.Fatalf("order: %v %q before %v %q", ps, pm, s, m)
		}
		if v, ok := z.big.dict.GetString(m); !ok || *v != s {
			t.Fatalf("dict has %q as %v %v, tree %v", m, v, ok, s)
		}
		ps, pm, first = s, m, false
	})
}

// checkModelQuick compares a big set with the model in O(n) plus a sample of
// ranks, rank windows and score ranges (checkZSet compares everything).
func checkModelQuick(t *testing.T, z *ZSet, m zmodel, rng *rand.Rand) {
	t.Helper()
	checkTree(t, z)
	want := m.sorted()
	if a, b := entriesString(z.Entries(nil)), entriesString(want); a != b {
		t.Fatalf("entries differ: %d members, want %d", z.Len(), len(want))
	}
	if len(want) == 0 {
		return
	}
	for k := 0; k < 40; k++ {
		i := rng.IntN(len(want))
		if r, s, ok := z.Rank(want[i].Member, false); !ok || r != i || s != want[i].Score {
			t.Fatalf("Rank(%s) = %d %v %v, want %d", want[i].Member, r, s, ok, i)
		}
		start := rng.IntN(len(want))
		end := min(len(want)-1, start+rng.IntN(200))
		var got []ZEntry
		z.RangeByRank(start, end, rng.IntN(2) == 0, func(mb []byte, s float64) { got = append(got, ZEntry{mb, s}) })
		if len(got) != end-start+1 {
			t.Fatalf("RangeByRank(%d, %d): %d members", start, end, len(got))
		}
		lo := want[rng.IntN(len(want))].Score
		r := &ScoreRange{Min: lo, Max: lo + float64(rng.IntN(50)), MinEx: rng.IntN(2) == 0}
		n := 0
		for _, e := range want {
			if r.gteMin(e.Score) && r.lteMax(e.Score) {
				n++
			}
		}
		if c := z.CountByScore(r); c != n {
			t.Fatalf("CountByScore %+v = %d, want %d", r, c, n)
		}
		off := rng.IntN(5)
		if c := z.RangeByScore(r, off, -1, rng.IntN(2) == 0, func([]byte, float64) {}); c != max(0, n-off) {
			t.Fatalf("RangeByScore %+v offset %d: %d, want %d", r, off, c, max(0, n-off))
		}
	}
}

// The tree against the model through every way it changes, at sizes that give
// it two and three levels: random inserts, moves (in place and across leaves),
// increments, deletions down to a few members, pops at both ends, ascending
// and descending loads (the split that starts a leaf of its own), score and
// rank range deletions small (leaf by leaf, emptying some) and large (a rebuild), scores
// with many ties (members then decide the order).
func TestZSetTreeModel(t *testing.T) {
	ks := New(1, 11)
	lim := ZLimits{} // big from the first member
	z := ks.NewZSet(1, 1, lim)
	m := zmodel{}
	rng := rand.New(rand.NewPCG(11, 12))
	name := func(i int) []byte { return fmt.Appendf(nil, "m%06d", i) }
	add := func(i int, score float64) {
		z.Add(name(i), score, 0, lim)
		m[string(name(i))] = score
	}
	del := func(i int) {
		_, ok := m[string(name(i))]
		if z.Delete(name(i)) != ok {
			t.Fatalf("Delete(%s) != %v", name(i), ok)
		}
		delete(m, string(name(i)))
	}
	phase := func(what string) {
		t.Helper()
		checkModelQuick(t, z, m, rng)
		t.Logf("%s: %d members, height %d, %d leaves, %d inner", what, z.Len(), z.boxed().big.tree.height,
			z.boxed().big.tree.leafCount, z.boxed().big.tree.innerCount)
	}
	// Random inserts with ties (scores 0..999 for 30,000 members).
	for i := 0; i < 30000; i++ {
		add(i, float64(rng.IntN(1000)))
		if i%7000 == 0 {
			checkTree(t, z)
		}
	}
	phase("random inserts")
	if z.boxed().big.tree.height < 2 {
		t.Fatalf("height %d: the test wants inner levels", z.boxed().big.tree.height)
	}
	// Moves, in place (half a step between integral scores) and anywhere, and
	// increments.
	for k := 0; k < 20000; k++ {
		i := rng.IntN(30000)
		cur, ok := m[string(name(i))]
		switch {
		case !ok:
			add(i, float64(rng.IntN(1000)))
		case k%3 == 0:
			add(i, cur+0.25)
		case k%3 == 1:
			add(i, float64(rng.IntN(1000)))
		default:
			out, ns := z.Add(name(i), 1.5, ZAddIncr, lim)
			if out != ZUpdated || ns != cur+1.5 {
				t.Fatalf("ZINCRBY: %d %v, want %v", out, ns, cur+1.5)
			}
			m[string(name(i))] = ns
		}
	}
	phase("moves")
	// Range deletions: small ones (item by item) and one of a third (rebuild).
	for k := 0; k < 30; k++ {
		lo := float64(rng.IntN(1000))
		deleteScoreRange(t, z, m, &ScoreRange{Min: lo, Max: lo + float64(rng.IntN(3))})
	}
	phase("small score range deletions")
	w := m.sorted()
	a := len(w) / 3
	for _, e := range w[a : 2*a] {
		delete(m, string(e.Member))
	}
	if n := z.DeleteByRank(a, 2*a-1); n != a {
		t.Fatalf("DeleteByRank = %d", n)
	}
	phase("a third deleted by rank")
	for k := 0; k < 40; k++ { // runs within a leaf, and across whole leaves
		w := m.sorted()
		a := rng.IntN(len(w) - 300)
		b := a + rng.IntN([]int{40, 300}[k%2])
		for _, e := range w[a : b+1] {
			delete(m, string(e.Member))
		}
		z.DeleteByRank(a, b)
	}
	phase("rank range deletions")
	// Deletions at random down to a handful: merges and borrowing at every
	// level, the root shrinking back to a leaf.
	left := make([]int, 0, len(m))
	for mem := range m {
		left = append(left, atoiTest(mem[1:]))
	}
	rng.Shuffle(len(left), func(i, j int) { left[i], left[j] = left[j], left[i] })
	for _, i := range left[:len(left)-5] {
		del(i)
		if len(m)%2500 == 0 {
			checkTree(t, z)
		}
	}
	phase("deleted down to five")
	if z.boxed().big.tree.height != 0 {
		t.Fatalf("height %d with five members", z.boxed().big.tree.height)
	}
	// Ascending then descending loads, one leaf started at each end.
	for i := 0; i < 12000; i++ {
		add(100000+i, 2000+float64(i))
	}
	phase("ascending load")
	for i := 0; i < 12000; i++ {
		add(200000+i, -float64(i))
	}
	phase("descending load")
	tr := &z.boxed().big.tree
	if fill := float64(tr.length) / float64(tr.leafCount*zbtLeafMax); fill < 0.9 {
		t.Errorf("leaves %.2f full after ordered loads, want >= 0.9", fill)
	}
	// Pops at both ends, and a whole-set rank deletion.
	w = m.sorted()
	for k := 0; k < 5000; k++ {
		max := k%2 == 0
		var got string
		z.Pop(max, func(mb []byte, _ float64) { got = string(mb) })
		e := w[0]
		if max {
			e, w = w[len(w)-1], w[:len(w)-1]
		} else {
			w = w[1:]
		}
		if got != string(e.Member) {
			t.Fatalf("Pop(%v) = %s, want %s", max, got, e.Member)
		}
		delete(m, got)
	}
	phase("pops")
	checkZSet(t, z, m)
	c := z.Clone().(*ZSet)
	checkZSet(t, c, m)
	if n := z.DeleteByRank(0, z.Len()-1); n != len(m) || z.Len() != 0 {
		t.Fatalf("DeleteByRank(all) = %d, Len %d", n, z.Len())
	}
	checkTree(t, z)
	checkZSet(t, c, m)
}

// deleteScoreRange is ZREMRANGEBYSCORE on the set and the model; the counts
// must agree.
func deleteScoreRange(t *testing.T, z *ZSet, m zmodel, r *ScoreRange) {
	t.Helper()
	want := 0
	for mem, s := range m {
		if r.gteMin(s) && r.lteMax(s) {
			delete(m, mem)
			want++
		}
	}
	if n := z.DeleteByScore(r); n != want {
		t.Fatalf("DeleteByScore %+v = %d, want %d", r, n, want)
	}
}

func atoiTest(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// A bulk build (conversion from a listpack, the *STORE commands, COPY) gives a
// valid tree at every size around the node capacities.
func TestZSetTreeBuild(t *testing.T) {
	ks := New(1, 3)
	for _, n := range []int{0, 1, zbtLeafMax - 1, zbtLeafMax, zbtLeafMax + 1, 2 * zbtLeafFill, 2*zbtLeafFill + 1,
		zbtLeafFill * zbtInnerFill, zbtLeafFill*zbtInnerFill + 1, 200000} {
		entries := make([]ZEntry, n)
		m := zmodel{}
		for i := range entries {
			entries[i] = ZEntry{fmt.Appendf(nil, "m%07d", i), float64(i / 3)}
			m[string(entries[i].Member)] = entries[i].Score
		}
		z := ks.NewZSetSorted(entries, ZLimits{})
		if n == 0 {
			continue
		}
		checkTree(t, z)
		if n < 5000 {
			checkZSet(t, z, m)
		}
		c := z.Clone().(*ZSet)
		checkTree(t, c)
	}
}

// Deletions at random from a three-level tree down to one leaf: merges and
// borrowing on every inner level, the root shrinking level by level.
func TestZSetTreeShrinks(t *testing.T) {
	ks := New(1, 5)
	const n = 200000
	entries := make([]ZEntry, n)
	for i := range entries {
		entries[i] = ZEntry{fmt.Appendf(nil, "m%07d", i), float64(i)}
	}
	z := ks.NewZSetSorted(entries, ZLimits{})
	tr := &z.boxed().big.tree
	if tr.height != 3 {
		t.Fatalf("height %d, want 3", tr.height)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	order := rng.Perm(n)
	heights := map[int]bool{}
	for k, i := range order[:n-10] {
		if !z.Delete(entries[i].Member) {
			t.Fatalf("Delete(%s) = false", entries[i].Member)
		}
		heights[tr.height] = true
		if k%40000 == 0 || n-k < 5000 && k%500 == 0 {
			checkTree(t, z)
		}
	}
	checkTree(t, z)
	if tr.height != 0 || !heights[1] || !heights[2] {
		t.Fatalf("height %d at the end, seen %v", tr.height, heights)
	}
	m := zmodel{}
	for _, i := range order[n-10:] {
		m[string(entries[i].Member)] = entries[i].Score
	}
	checkZSet(t, z, m)
}

// A leaf and an inner node fill their allocation size classes (1,536 and
// 3,072 bytes), and a member's dict entry is 32 bytes.
func TestZSetTreeNodeSizes(t *testing.T) {
	if n := unsafe.Sizeof(zbtLeaf{}); n > 1536 || n < 1536-64 {
		t.Errorf("leaf is %d bytes, want just under 1536", n)
	}
	if n := unsafe.Sizeof(zbtInner{}); n > 3072 || n < 3072-320 {
		t.Errorf("inner node is %d bytes, want under 3072", n)
	}
	if n := dictEntrySize[float64](12); n != 32 {
		t.Errorf("dict entry with a 12-byte member is %d bytes, want 32", n)
	}
}

// A rank range deletion that empties the first leaf under an inner node (not
// the tree's first leaf) merges it with its right sibling and renames the
// separator above it, and one that ends inside a leaf renames that leaf's.
func TestZSetTreeRunEmptiesFirstLeaf(t *testing.T) {
	ks := New(1, 9)
	entries := make([]ZEntry, 10000)
	m := zmodel{}
	for i := range entries {
		entries[i] = ZEntry{fmt.Appendf(nil, "m%05d", i), float64(i)}
		m[string(entries[i].Member)] = entries[i].Score
	}
	z := ks.NewZSetSorted(entries, ZLimits{})
	tr := &z.boxed().big.tree
	if tr.height != 2 {
		t.Fatalf("height %d", tr.height)
	}
	if tr.root.n < 3 {
		t.Fatalf("root with %d children", tr.root.n)
	}
	// Exactly the first leaf under the root's second child, then that leaf and
	// five more items under its third child.
	for c, extra := range []int{0, 5} {
		start := 0
		for i := 0; i <= c; i++ {
			start += int(tr.root.counts[i])
		}
		k := tr.root.inner[c+1].leaves[0].n + extra
		if n := z.DeleteByRank(start, start+k-1); n != k {
			t.Fatalf("DeleteByRank = %d", n)
		}
		w := m.sorted()
		for _, e := range w[start : start+k] {
			delete(m, string(e.Member))
		}
		checkTree(t, z)
	}
	checkZSet(t, z, m)
}

// FuzzZSetTree drives a big set with operations decoded from the input, three
// bytes each (operation, a, b), in batches large enough to build trees of
// several levels, and checks the tree's contract and every member, in order,
// against a model after each operation.
func FuzzZSetTree(f *testing.F) {
	f.Add([]byte{0, 200, 50, 6, 100, 80, 2, 30, 90, 7, 100, 80, 1, 7, 3, 3, 100, 20, 5, 9, 9, 4, 1, 2})
	f.Add([]byte{6, 255, 255, 6, 255, 255, 2, 0, 255, 7, 255, 255, 3, 0, 250})
	f.Add([]byte{0, 255, 255, 0, 255, 255, 4, 9, 200, 1, 255, 255, 2, 100, 120})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 90 {
			return
		}
		ks := New(1, 13)
		lim := ZLimits{}
		z := ks.NewZSet(1, 1, lim)
		m := zmodel{}
		next := 0 // member names: a counter
		for i := 0; i+2 < len(in); i += 3 {
			op, a, b := in[i]%8, int(in[i+1]), int(in[i+2])
			w := m.sorted()
			switch op {
			case 0, 6, 7: // a batch of new members: tied, ascending or descending scores
				for k := 0; k < 8*(b+1); k++ {
					s := float64((a*k + b) % 37)
					if op == 6 {
						s = float64(next)
					} else if op == 7 {
						s = -float64(next)
					}
					mem := fmt.Appendf(nil, "k%05d", (next*7919)%100000)
					next++
					if _, dup := m[string(mem)]; !dup {
						z.Add(mem, s, 0, lim)
						m[string(mem)] = s
					}
				}
			case 1: // delete every a-th member from b on
				for k := b % max(1, len(w)); k < len(w); k += a%16 + 1 {
					z.Delete(w[k].Member)
					delete(m, string(w[k].Member))
				}
			case 2: // a rank range
				if len(w) > 0 {
					lo := a * len(w) / 256
					hi := min(len(w)-1, lo+b*len(w)/256)
					z.DeleteByRank(lo, hi)
					for _, e := range w[lo : hi+1] {
						delete(m, string(e.Member))
					}
				}
			case 3: // a score range
				deleteScoreRange(t, z, m, &ScoreRange{Min: float64(a % 40), Max: float64(a%40 + b%5), MinEx: b&8 != 0})
			case 4: // moves: every a-th member to a new score
				for k := b % max(1, len(w)); k < len(w); k += a%16 + 1 {
					s := float64((k * b) % 41)
					z.Add(w[k].Member, s, 0, lim)
					m[string(w[k].Member)] = s
				}
			case 5: // pops at either end
				for k := 0; k < a && z.Len() > 0; k++ {
					z.Pop(k%2 == 0, func(mb []byte, _ float64) { delete(m, string(mb)) })
				}
			}
			checkTree(t, z)
			if a, b := entriesString(z.Entries(nil)), entriesString(m.sorted()); a != b {
				t.Fatalf("after op %d (%d %d %d): entries differ", i/3, op, in[i+1], in[i+2])
			}
		}
		if z.Len() < 300 {
			checkZSet(t, z, m)
		}
	})
}
