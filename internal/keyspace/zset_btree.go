package keyspace

// The order of a sorted set's big encoding (OBJECT ENCODING "skiplist", as in
// Redis): an order-statistic B+tree of (score, member) items, in place of
// Redis's zskiplist. A skiplist search on a set far larger than the CPU caches
// waits for a load from memory at nearly every step (two dozen for 100,000
// members); the tree's search reads a few contiguous arrays per level and has
// two or three levels, so a score update (a search to unlink, one to insert)
// waits for a handful of loads instead of forty or fifty. See decision 0034.
//
// Items live in leaves, in order, linked both ways for walks. An inner node
// keeps, per child, the number of items under it (ranks in O(log n)) and, for
// every child but the first, a separator: a copy of the smallest item under
// that child. Separators are exact (always a current item), so that a range
// predicate evaluated on one means what it means on the items. A node that a
// deletion takes below a quarter of its capacity merges with a sibling or
// takes items from one (only the splits at either end of the order make
// smaller nodes: a leaf of one item, an inner node of two children). The
// member strings are the set's dict keys (shared bytes, not copies).

const (
	zbtLeafMax   = 62 // a leaf is 1,512 bytes: the 1,536-byte size class
	zbtLeafMin   = zbtLeafMax / 4
	zbtLeafFill  = zbtLeafMax * 7 / 8 // items per leaf in a bulk build
	zbtInnerMax  = 64
	zbtInnerMin  = zbtInnerMax / 4
	zbtInnerFill = zbtInnerMax * 7 / 8
	zbtMaxHeight = 24 // inner levels; 16^24 items is beyond any set
)

type zbtLeaf struct {
	n          int
	prev, next *zbtLeaf
	scores     [zbtLeafMax]float64
	members    [zbtLeafMax]string
}

// zbtInner is an inner node. Child i is inner[i] (or, on the lowest inner
// level, leaves[i]) and holds counts[i] items; for i >= 1, (scores[i],
// members[i]) is the smallest of them. Slot 0's separator is not kept.
type zbtInner struct {
	n       int
	counts  [zbtInnerMax]uint32
	scores  [zbtInnerMax]float64
	members [zbtInnerMax]string
	inner   [zbtInnerMax]*zbtInner
	leaves  [zbtInnerMax]*zbtLeaf
}

type zbtree struct {
	root       *zbtInner // height > 0
	rootLeaf   *zbtLeaf  // height == 0
	height     int       // inner levels above the leaves
	head, tail *zbtLeaf
	length     int
	leafCount  int // nodes, for MEMORY USAGE
	innerCount int
}

// zbtPath is a descent: node[d] is the inner node on level d (0 the root) and
// idx[d] the child taken; before counts the items left of the leaf reached
// (when the descent was asked for it).
type zbtPath struct {
	node   [zbtMaxHeight]*zbtInner
	idx    [zbtMaxHeight]int
	before int
}

func zbtLess(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

func newZbtree() zbtree {
	l := &zbtLeaf{}
	return zbtree{rootLeaf: l, head: l, tail: l, leafCount: 1}
}

// --- nodes --------------------------------------------------------------------

// lowerBound is the position of the first item >= (score, member).
func (l *zbtLeaf) lowerBound(score float64, member string) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if zbtLess(l.scores[m], l.members[m], score, member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (l *zbtLeaf) insertAt(j int, score float64, member string) {
	copy(l.scores[j+1:l.n+1], l.scores[j:l.n])
	copy(l.members[j+1:l.n+1], l.members[j:l.n])
	l.scores[j], l.members[j] = score, member
	l.n++
}

// route is the child whose items (score, member) is among or would join: the
// last child whose separator is <= it.
func (n *zbtInner) route(score float64, member string) int {
	lo, hi := 1, n.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !zbtLess(score, member, n.scores[m], n.members[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// items is the number of items under children from..to-1.
func (n *zbtInner) items(from, to int) int {
	s := 0
	for _, c := range n.counts[from:to] {
		s += int(c)
	}
	return s
}

func (n *zbtInner) sum() int { return n.items(0, n.n) }

// insertKid puts a child of cnt items whose smallest item is (score, member)
// at position i.
func (n *zbtInner) insertKid(i int, score float64, member string, cnt int, in *zbtInner, lf *zbtLeaf) {
	copy(n.counts[i+1:n.n+1], n.counts[i:n.n])
	copy(n.scores[i+1:n.n+1], n.scores[i:n.n])
	copy(n.members[i+1:n.n+1], n.members[i:n.n])
	copy(n.inner[i+1:n.n+1], n.inner[i:n.n])
	copy(n.leaves[i+1:n.n+1], n.leaves[i:n.n])
	n.counts[i], n.scores[i], n.members[i], n.inner[i], n.leaves[i] = uint32(cnt), score, member, in, lf
	n.n++
}

func (n *zbtInner) removeKid(i int) {
	copy(n.counts[i:n.n-1], n.counts[i+1:n.n])
	copy(n.scores[i:n.n-1], n.scores[i+1:n.n])
	copy(n.members[i:n.n-1], n.members[i+1:n.n])
	copy(n.inner[i:n.n-1], n.inner[i+1:n.n])
	copy(n.leaves[i:n.n-1], n.leaves[i+1:n.n])
	n.n--
	n.members[n.n], n.inner[n.n], n.leaves[n.n] = "", nil, nil
}

// moveKids moves k children of src starting at from to dst at position at.
func moveKids(dst *zbtInner, at int, src *zbtInner, from, k int) {
	copy(dst.counts[at+k:dst.n+k], dst.counts[at:dst.n])
	copy(dst.scores[at+k:dst.n+k], dst.scores[at:dst.n])
	copy(dst.members[at+k:dst.n+k], dst.members[at:dst.n])
	copy(dst.inner[at+k:dst.n+k], dst.inner[at:dst.n])
	copy(dst.leaves[at+k:dst.n+k], dst.leaves[at:dst.n])
	copy(dst.counts[at:at+k], src.counts[from:from+k])
	copy(dst.scores[at:at+k], src.scores[from:from+k])
	copy(dst.members[at:at+k], src.members[from:from+k])
	copy(dst.inner[at:at+k], src.inner[from:from+k])
	copy(dst.leaves[at:at+k], src.leaves[from:from+k])
	dst.n += k
	copy(src.counts[from:src.n-k], src.counts[from+k:src.n])
	copy(src.scores[from:src.n-k], src.scores[from+k:src.n])
	copy(src.members[from:src.n-k], src.members[from+k:src.n])
	copy(src.inner[from:src.n-k], src.inner[from+k:src.n])
	copy(src.leaves[from:src.n-k], src.leaves[from+k:src.n])
	src.n -= k
	clear(src.members[src.n : src.n+k])
	clear(src.inner[src.n : src.n+k])
	clear(src.leaves[src.n : src.n+k])
}

// moveItems moves k items of src starting at from to dst at position at.
func moveItems(dst *zbtLeaf, at int, src *zbtLeaf, from, k int) {
	copy(dst.scores[at+k:dst.n+k], dst.scores[at:dst.n])
	copy(dst.members[at+k:dst.n+k], dst.members[at:dst.n])
	copy(dst.scores[at:at+k], src.scores[from:from+k])
	copy(dst.members[at:at+k], src.members[from:from+k])
	dst.n += k
	copy(src.scores[from:src.n-k], src.scores[from+k:src.n])
	copy(src.members[from:src.n-k], src.members[from+k:src.n])
	src.n -= k
	clear(src.members[src.n : src.n+k])
}

// --- descents -----------------------------------------------------------------

// find descends to the leaf where (score, member) is or would go and returns
// it with the item's position there; p records the path, and p.before the
// items left of the leaf when withRank is set.
func (t *zbtree) find(score float64, member string, p *zbtPath, withRank bool) (*zbtLeaf, int) {
	p.before = 0
	if t.height == 0 {
		return t.rootLeaf, t.rootLeaf.lowerBound(score, member)
	}
	n := t.root
	for d := 0; ; d++ {
		i := n.route(score, member)
		p.node[d], p.idx[d] = n, i
		if withRank {
			p.before += n.items(0, i)
		}
		if d == t.height-1 {
			l := n.leaves[i]
			return l, l.lowerBound(score, member)
		}
		n = n.inner[i]
	}
}

// findRank descends to the item of 0-based rank r (0 <= r < length).
func (t *zbtree) findRank(r int, p *zbtPath) (*zbtLeaf, int) {
	p.before = 0
	if t.height == 0 {
		return t.rootLeaf, r
	}
	n := t.root
	for d := 0; ; d++ {
		i := 0
		for i < n.n-1 && r >= int(n.counts[i]) {
			r -= int(n.counts[i])
			p.before += int(n.counts[i])
			i++
		}
		p.node[d], p.idx[d] = n, i
		if d == t.height-1 {
			return n.leaves[i], r
		}
		n = n.inner[i]
	}
}

// at returns the position of the item of 0-based rank r (0 <= r < length).
func (t *zbtree) at(r int) (*zbtLeaf, int) {
	var p zbtPath
	return t.findRank(r, &p)
}

// rank is the 0-based rank of (score, member), which must be in the tree.
func (t *zbtree) rank(score float64, member string) int {
	var p zbtPath
	_, j := t.find(score, member, &p, true)
	return p.before + j
}

// countWhile is the number of items at the start of the order for which out
// holds (out must hold on a prefix of the order and fail after it; for any
// other predicate the answer depends on the tree's shape).
func (t *zbtree) countWhile(out func(member string, score float64) bool) int {
	l, before := t.rootLeaf, 0
	if t.height > 0 {
		n := t.root
		for d := 0; ; d++ {
			i := firstFailing(1, n.n, func(m int) bool { return out(n.members[m], n.scores[m]) }) - 1
			before += n.items(0, i)
			if d == t.height-1 {
				l = n.leaves[i]
				break
			}
			n = n.inner[i]
		}
	}
	return before + firstFailing(0, l.n, func(m int) bool { return out(l.members[m], l.scores[m]) })
}

// firstFailing is the first i in [lo, hi) for which holds(i) is false, or hi;
// holds must be true up to some i and false from there.
func firstFailing(lo, hi int, holds func(int) bool) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if holds(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// --- insert -------------------------------------------------------------------

// insert adds (score, member), which must not be in the tree.
func (t *zbtree) insert(score float64, member string) {
	var p zbtPath
	l, j := t.find(score, member, &p, false)
	for d := 0; d < t.height; d++ {
		p.node[d].counts[p.idx[d]]++
	}
	t.length++
	if l.n < zbtLeafMax {
		l.insertAt(j, score, member)
		return
	}
	// Split the leaf. At the ends of the order (ascending or descending
	// loads, such as time-stamped scores) the new item starts a leaf of its
	// own, so that leaves behind the growing end stay full.
	s := zbtLeafMax / 2
	switch {
	case j == zbtLeafMax && l.next == nil:
		s = zbtLeafMax
	case j == 0 && l.prev == nil:
		s = 0
	}
	r := &zbtLeaf{prev: l, next: l.next}
	t.leafCount++
	moveItems(r, 0, l, s, l.n-s)
	if l.next != nil {
		l.next.prev = r
	} else {
		t.tail = r
	}
	l.next = r
	if j > s || s == zbtLeafMax {
		r.insertAt(j-s, score, member)
	} else {
		l.insertAt(j, score, member)
	}
	t.addKid(&p, t.height-1, l.n, r.scores[0], r.members[0], r.n, nil, r)
}

// addKid links a new right sibling (cnt items, smallest (score, member)) of
// the child p.idx[d] of p.node[d], which now holds leftCnt items; d == -1
// grows a new root.
func (t *zbtree) addKid(p *zbtPath, d, leftCnt int, score float64, member string, cnt int, in *zbtInner, lf *zbtLeaf) {
	if d < 0 {
		root := &zbtInner{}
		t.innerCount++
		if t.height == 0 {
			root.insertKid(0, 0, "", leftCnt, nil, t.rootLeaf)
			t.rootLeaf = nil
		} else {
			root.insertKid(0, 0, "", leftCnt, t.root, nil)
		}
		root.insertKid(1, score, member, cnt, in, lf)
		t.root = root
		t.height++
		return
	}
	n, i := p.node[d], p.idx[d]
	n.counts[i] = uint32(leftCnt)
	if n.n < zbtInnerMax {
		n.insertKid(i+1, score, member, cnt, in, lf)
		return
	}
	s := zbtInnerMax / 2
	rightmost, leftmost := true, true
	for e := 0; e < d; e++ {
		rightmost = rightmost && p.idx[e] == p.node[e].n-1
		leftmost = leftmost && p.idx[e] == 0
	}
	switch {
	case i+1 == zbtInnerMax && rightmost:
		s = zbtInnerMax - 1 // two children each side: none is ever left alone
	case i == 0 && leftmost:
		s = 1
	}
	r := &zbtInner{}
	t.innerCount++
	moveKids(r, 0, n, s, n.n-s)
	if i+1 <= s {
		n.insertKid(i+1, score, member, cnt, in, lf)
	} else {
		r.insertKid(i+1-s, score, member, cnt, in, lf)
	}
	// r's smallest item is its slot-0 separator, moved from n (or the new kid).
	t.addKid(p, d-1, n.sum(), r.scores[0], r.members[0], r.sum(), r, nil)
}

// --- delete -------------------------------------------------------------------

// delete removes (score, member), which must be in the tree.
func (t *zbtree) delete(score float64, member string) {
	var p zbtPath
	l, j := t.find(score, member, &p, false)
	t.deleteAt(&p, l, j)
}

// deleteAt removes the item at position j of leaf l, reached by path p.
func (t *zbtree) deleteAt(p *zbtPath, l *zbtLeaf, j int) { t.deleteRun(p, l, j, 1) }

// deleteRun removes the c items from position j of leaf l (j+c <= l.n),
// reached by path p.
func (t *zbtree) deleteRun(p *zbtPath, l *zbtLeaf, j, c int) {
	copy(l.scores[j:l.n-c], l.scores[j+c:l.n])
	copy(l.members[j:l.n-c], l.members[j+c:l.n])
	l.n -= c
	clear(l.members[l.n : l.n+c]) // drop the references
	for d := 0; d < t.height; d++ {
		p.node[d].counts[p.idx[d]] -= uint32(c)
	}
	t.length -= c
	if t.height == 0 {
		return
	}
	if j == 0 && l.n > 0 {
		t.fixSep(p, t.height-1, l.scores[0], l.members[0])
	}
	if l.n >= zbtLeafMin {
		return
	}
	d := t.height - 1
	parent, i := p.node[d], p.idx[d]
	if i > 0 { // with the left sibling
		left := parent.leaves[i-1]
		if left.n+l.n <= zbtLeafMax {
			moveItems(left, left.n, l, 0, l.n)
			t.unlinkLeaf(l)
			parent.counts[i-1] += parent.counts[i]
			parent.removeKid(i)
		} else {
			k := (left.n - l.n) / 2
			moveItems(l, 0, left, left.n-k, k)
			parent.counts[i-1] -= uint32(k)
			parent.counts[i] += uint32(k)
			parent.scores[i], parent.members[i] = l.scores[0], l.members[0]
		}
	} else { // with the right sibling
		right := parent.leaves[1]
		if l.n+right.n <= zbtLeafMax {
			wasEmpty := l.n == 0
			moveItems(l, l.n, right, 0, right.n)
			t.unlinkLeaf(right)
			parent.counts[0] += parent.counts[1]
			parent.removeKid(1)
			if wasEmpty {
				t.fixSep(p, d-1, l.scores[0], l.members[0])
			}
		} else {
			k := (right.n - l.n) / 2
			moveItems(l, l.n, right, 0, k)
			parent.counts[0] += uint32(k)
			parent.counts[1] -= uint32(k)
			parent.scores[1], parent.members[1] = right.scores[0], right.members[0]
		}
	}
	t.fixInner(p, d)
}

// fixSep sets the separator that names the smallest item under the child
// taken at level from (the first level at or above it where the path does not
// take the first child) to (score, member).
func (t *zbtree) fixSep(p *zbtPath, from int, score float64, member string) {
	for d := from; d >= 0; d-- {
		if i := p.idx[d]; i > 0 {
			p.node[d].scores[i], p.node[d].members[i] = score, member
			return
		}
	}
}

func (t *zbtree) unlinkLeaf(l *zbtLeaf) {
	l.prev.next = l.next // a merge unlinks the right leaf of two: never the head
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		t.tail = l.prev
	}
	l.prev, l.next = nil, nil
	t.leafCount--
}

// fixInner restores the fill of p.node[d] after it lost a child, and shrinks
// the tree when the root is left with one.
func (t *zbtree) fixInner(p *zbtPath, d int) {
	n := p.node[d]
	if d == 0 {
		if n.n == 1 {
			t.root, t.rootLeaf = n.inner[0], n.leaves[0]
			t.height--
			t.innerCount--
			if t.height == 0 {
				t.root = nil
			}
		}
		return
	}
	if n.n >= zbtInnerMin {
		return
	}
	parent, i := p.node[d-1], p.idx[d-1]
	if i > 0 {
		left := parent.inner[i-1]
		if left.n+n.n <= zbtInnerMax {
			n.scores[0], n.members[0] = parent.scores[i], parent.members[i]
			moveKids(left, left.n, n, 0, n.n)
			t.innerCount--
			parent.counts[i-1] += parent.counts[i]
			parent.removeKid(i)
			t.fixInner(p, d-1)
			return
		}
		k := (left.n - n.n) / 2
		n.scores[0], n.members[0] = parent.scores[i], parent.members[i]
		moved := left.items(left.n-k, left.n)
		moveKids(n, 0, left, left.n-k, k)
		parent.scores[i], parent.members[i] = n.scores[0], n.members[0]
		parent.counts[i-1] -= uint32(moved)
		parent.counts[i] += uint32(moved)
		return
	}
	right := parent.inner[1]
	right.scores[0], right.members[0] = parent.scores[1], parent.members[1]
	if n.n+right.n <= zbtInnerMax {
		moveKids(n, n.n, right, 0, right.n)
		t.innerCount--
		parent.counts[0] += parent.counts[1]
		parent.removeKid(1)
		t.fixInner(p, d-1)
		return
	}
	k := (right.n - n.n) / 2
	moved := right.items(0, k)
	moveKids(n, n.n, right, 0, k)
	parent.scores[1], parent.members[1] = right.scores[0], right.members[0]
	parent.counts[0] += uint32(moved)
	parent.counts[1] -= uint32(moved)
}

// move changes the score of (score, member), which must be in the tree, to
// newScore: in place when its neighbours in its leaf allow (zslUpdateScore's
// shortcut), else by a delete and an insert.
func (t *zbtree) move(score float64, member string, newScore float64) {
	var p zbtPath
	l, j := t.find(score, member, &p, false)
	if j > 0 && j < l.n-1 && l.scores[j-1] < newScore && newScore < l.scores[j+1] {
		l.scores[j] = newScore
		return
	}
	t.deleteAt(&p, l, j)
	t.insert(newScore, member)
}

// --- bulk ---------------------------------------------------------------------

// zbtBuild builds a tree of n items, given in order by next, with leaves and
// inner nodes filled to seven eighths (evenly, so none is under its minimum).
func zbtBuild(n int, next func() (float64, string)) zbtree {
	if n <= zbtLeafMax {
		t := newZbtree()
		for i := 0; i < n; i++ {
			s, m := next()
			t.rootLeaf.scores[i], t.rootLeaf.members[i] = s, m
		}
		t.rootLeaf.n, t.length = n, n
		return t
	}
	t := zbtree{length: n}
	nl := (n + zbtLeafFill - 1) / zbtLeafFill
	leaves := make([]*zbtLeaf, nl)
	var prev *zbtLeaf
	for i := range leaves {
		l := &zbtLeaf{prev: prev}
		k := n / nl
		if i < n%nl {
			k++
		}
		for j := 0; j < k; j++ {
			l.scores[j], l.members[j] = next()
		}
		l.n = k
		if prev != nil {
			prev.next = l
		}
		leaves[i], prev = l, l
	}
	t.head, t.tail, t.leafCount = leaves[0], prev, nl
	// Inner levels, bottom up: a level's kids are the nodes of the one below.
	type kid struct {
		cnt    int
		score  float64
		member string
		in     *zbtInner
		lf     *zbtLeaf
	}
	kids := make([]kid, nl)
	for i, l := range leaves {
		kids[i] = kid{l.n, l.scores[0], l.members[0], nil, l}
	}
	for {
		ni := (len(kids) + zbtInnerFill - 1) / zbtInnerFill
		up := make([]kid, 0, ni)
		pos := 0
		for i := 0; i < ni; i++ {
			k := len(kids) / ni
			if i < len(kids)%ni {
				k++
			}
			in := &zbtInner{}
			for _, c := range kids[pos : pos+k] {
				in.insertKid(in.n, c.score, c.member, c.cnt, c.in, c.lf)
			}
			pos += k
			up = append(up, kid{in.sum(), in.scores[0], in.members[0], in, nil})
		}
		t.innerCount += ni
		t.height++
		if ni == 1 {
			t.root = up[0].in
			return t
		}
		kids = up
	}
}

// each calls fn for every item in order.
func (t *zbtree) each(fn func(score float64, member string)) {
	for l := t.head; l != nil; l = l.next {
		for j := 0; j < l.n; j++ {
			fn(l.scores[j], l.members[j])
		}
	}
}

// deleteRange removes k items from 0-based rank start on, calling gone for
// each. A large range rebuilds the tree from the items kept (O(n)); a small
// one deletes leaf by leaf (a descent for each leaf's run of items).
func (t *zbtree) deleteRange(start, k int, gone func(member string)) {
	if k <= 0 {
		return
	}
	if k >= 64 && k*8 >= t.length {
		l, j := t.head, 0
		report := func() { // the k items from (l, j) on
			for range k {
				gone(l.members[j])
				l, j = zbtNext(l, j)
			}
		}
		kept := 0
		nt := zbtBuild(t.length-k, func() (float64, string) {
			if kept == start {
				report()
			}
			s, m := l.scores[j], l.members[j]
			l, j = zbtNext(l, j)
			kept++
			return s, m
		})
		if kept == start { // the range was the tail: never skipped
			report()
		}
		*t = nt
		return
	}
	for k > 0 {
		var p zbtPath
		l, j := t.findRank(start, &p)
		c := min(k, l.n-j)
		for _, m := range l.members[j : j+c] {
			gone(m)
		}
		t.deleteRun(&p, l, j, c)
		k -= c
	}
}

// zbtNext and zbtPrev step a position (leaf, index) along the order; the leaf
// is nil past either end.
func zbtNext(l *zbtLeaf, j int) (*zbtLeaf, int) {
	if j++; j == l.n {
		return l.next, 0
	}
	return l, j
}

func zbtPrev(l *zbtLeaf, j int) (*zbtLeaf, int) {
	if j == 0 {
		if l = l.prev; l == nil {
			return nil, 0
		}
		return l, l.n - 1
	}
	return l, j - 1
}
