package keyspace

import (
	"math"
	"unsafe"
)

// List encodings, as OBJECT ENCODING names them.
const (
	ListListpack uint8 = iota
	ListQuicklist
)

// listObj is a list value (the *List handle's, see list_handle.go), laid out as
// Redis 7.2+ lays it out so that its encoding and every conversion match Redis's:
//
//   - listpack: one node holding every element, while the list is within
//     list-max-listpack-size;
//   - quicklist: a deque of nodes, each a run of elements in one byte buffer (a
//     quicklist node's listpack) or a single large element (a plain node).
//
// Nodes split, fill and merge by quicklist.c's rules on the sizes Redis's
// listpacks would have (see qnode), so the node structure — and with it the
// conversion back to listpack, which needs a single small node — follows
// Redis's. A push or pop at either end touches only the end node and does not
// allocate while the node's buffer has room.
//
// The conversions themselves are the callers' (t_list.c's) to ask for:
// TryGrow before adding elements, TryShrink after removing some.
//
// Slices a list hands out (Pop, Index, ListIter.Next, Range) are views of its
// memory: valid until the list is next modified, never to be written to. A list
// is not safe for concurrent use.
//
// The nodes are one (while buf is nil: none or one node, hasOne telling) or
// buf[lo:], head first. one is a field rather than buf's first array so that
// the struct holds no pointer into itself: the handle loads an inline list
// into a listObj on its caller's stack, which a self-reference would move to
// the heap.
type listObj struct {
	ks     *Keyspace // nil while inline: the handle passes what it needs (TryGrow)
	buf    []qnode
	one    qnode
	count  int
	lo     int32
	fill   int16 // the quicklist's fill, fixed when it became a quicklist (-5..32767)
	enc    uint8
	hasOne bool
}

// Encoding is OBJECT ENCODING's name for the list.
func (l *listObj) Encoding() string {
	if l.enc == ListQuicklist {
		return "quicklist"
	}
	return "listpack"
}

// Quicklist reports whether the list is in the quicklist encoding.
func (l *listObj) Quicklist() bool { return l.enc == ListQuicklist }

// NodeStats are the node figures DEBUG OBJECT reports for a quicklist: the
// number of nodes and the sum of their (Redis) sizes.
func (l *listObj) NodeStats() (nodes, size int) {
	for i := range l.numNodes() {
		size += l.node(i).sz
	}
	return l.numNodes(), size
}

// Fill is the quicklist's fill (list-max-listpack-size when it was created).
func (l *listObj) Fill() int { return int(l.fill) }

// serverFill is the live list-max-listpack-size.
func (l *listObj) serverFill() int {
	if l.ks == nil {
		return -2
	}
	return int(l.ks.Limits.ListMaxListpackSize())
}

// --- node deque

func (l *listObj) numNodes() int {
	if l.buf == nil {
		return b2i(l.hasOne)
	}
	return len(l.buf) - int(l.lo)
}

func (l *listObj) node(i int) *qnode {
	if l.buf == nil {
		return &l.one
	}
	return &l.buf[int(l.lo)+i]
}

// nodes is the node deque as a slice, head first.
func (l *listObj) nodes() []qnode {
	if l.buf == nil {
		return unsafe.Slice(&l.one, b2i(l.hasOne))
	}
	return l.buf[l.lo:]
}

// insertNode makes n node i, shifting the nodes from i on.
func (l *listObj) insertNode(i int, n qnode) {
	k := l.numNodes()
	switch {
	case l.buf == nil && !l.hasOne:
		l.one, l.hasOne = n, true
		return
	case l.buf == nil:
	case i == 0 && l.lo > 0:
		l.lo--
		l.buf[l.lo] = n
		return
	case len(l.buf) < cap(l.buf):
		l.buf = l.buf[:len(l.buf)+1]
		at := int(l.lo) + i
		copy(l.buf[at+1:], l.buf[at:])
		l.buf[at] = n
		return
	}
	old := l.nodes()
	nb := make([]qnode, 2*k+4)
	lo := (len(nb) - (k + 1)) / 2
	if i == 0 && k > 0 {
		lo = len(nb) - (k + 1) - 1 // pushing at the head: leave the room there
	}
	copy(nb[lo:], old[:i])
	nb[lo+i] = n
	copy(nb[lo+i+1:], old[i:])
	l.buf, l.lo = nb[:lo+k+1], int32(lo)
	l.one, l.hasOne = qnode{}, false // the node left the field: let its buffer go
}

// removeNode deletes node i.
func (l *listObj) removeNode(i int) {
	if l.buf == nil {
		l.one, l.hasOne = qnode{}, false
		return
	}
	k := l.numNodes()
	at := int(l.lo) + i
	switch {
	case k == 1:
		l.buf[at] = qnode{}
		l.buf, l.lo = l.buf[:0], 0
	case i == 0:
		l.buf[at] = qnode{}
		l.lo++
	default:
		copy(l.buf[at:], l.buf[at+1:])
		l.buf[len(l.buf)-1] = qnode{}
		l.buf = l.buf[:len(l.buf)-1]
	}
}

// locate returns the node and the entry within it of element i (0 <= i < count),
// seeking from the nearer end of the list.
func (l *listObj) locate(i int) (ni, j int) {
	k := l.numNodes()
	if i <= (l.count-1)/2 {
		for ni = 0; ni < k; ni++ {
			c := int(l.node(ni).count)
			if i < c {
				return ni, i
			}
			i -= c
		}
	}
	r := l.count - 1 - i // distance from the tail
	for ni = k - 1; ni > 0; ni-- {
		c := int(l.node(ni).count)
		if r < c {
			break
		}
		r -= c
	}
	return ni, int(l.node(ni).count) - 1 - r
}

// --- quicklist rules (quicklist.c)

var optimizationLevel = [...]int{4096, 8192, 16384, 32768, 65536}

const (
	sizeSafetyLimit      = 8192 // SIZE_SAFETY_LIMIT
	sizeEstimateOverhead = 8    // SIZE_ESTIMATE_OVERHEAD
	fillMax              = 1<<15 - 1
)

// negFillLimit is quicklistNodeNegFillLimit: the byte limit of a negative fill.
func negFillLimit(fill int) int {
	off := -fill - 1
	if off >= len(optimizationLevel) {
		off = len(optimizationLevel) - 1
	}
	return optimizationLevel[off]
}

// nodeLimit is quicklistNodeLimit: a size or an entry count limit.
func nodeLimit(fill int) (size, count uint64) {
	size, count = math.MaxUint64, math.MaxUint32
	switch {
	case fill == 0:
		count = 1
	case fill > 0:
		count = uint64(fill)
	default:
		size = uint64(negFillLimit(fill))
	}
	return size, count
}

// exceedsLimit is quicklistNodeExceedsLimit.
func exceedsLimit(fill int, sz, count uint64) bool {
	size, cnt := nodeLimit(fill)
	if size != math.MaxUint64 {
		return sz > size
	}
	return sz > sizeSafetyLimit || count > cnt
}

// isLarge is isLargeElement: an element this long gets a plain node.
func (l *listObj) isLarge(sz int) bool {
	if l.ks != nil && l.ks.ListPackedThreshold != 0 {
		return uint64(sz) >= l.ks.ListPackedThreshold
	}
	if l.fill >= 0 {
		return sz > sizeSafetyLimit
	}
	return sz > negFillLimit(int(l.fill))
}

// allowInsert is _quicklistNodeAllowInsert.
func (l *listObj) allowInsert(n *qnode, sz int) bool {
	if n == nil || n.plain || l.isLarge(sz) {
		return false
	}
	return !exceedsLimit(int(l.fill), uint64(n.sz+sz+sizeEstimateOverhead), uint64(n.count)+1)
}

// allowMerge is _quicklistNodeAllowMerge.
func (l *listObj) allowMerge(a, b int) bool {
	if a < 0 || b < 0 || a >= l.numNodes() || b >= l.numNodes() {
		return false
	}
	na, nb := l.node(a), l.node(b)
	if na.plain || nb.plain {
		return false
	}
	return !exceedsLimit(int(l.fill), uint64(na.sz+nb.sz-lpEmptyBytes), uint64(na.count+nb.count))
}

// merge joins node i+1 into node i (_quicklistListpackMerge).
func (l *listObj) merge(i int) {
	l.node(i).appendNode(l.node(i + 1))
	l.removeNode(i + 1)
}

// mergeAround is _quicklistMergeNodes: merge the two nodes before center, the
// two after it, then center with its neighbours. It returns center's index.
func (l *listObj) mergeAround(c int) int {
	if l.allowMerge(c-1, c-2) {
		l.merge(c - 2)
		c--
	}
	if l.allowMerge(c+1, c+2) {
		l.merge(c + 1)
	}
	if l.allowMerge(c, c-1) {
		l.merge(c - 1)
		c--
	}
	if l.allowMerge(c, c+1) {
		l.merge(c)
	}
	return c
}

// --- conversions (t_list.c)

// TryGrow is listTypeTryConvertListpack, called before adding addCount
// elements of addBytes bytes in total: a listpack that would exceed
// list-max-listpack-size becomes a quicklist whose only node is the listpack.
// (Redis counts the string length of each added element, nothing for one that
// is already an integer object.)
func (l *listObj) TryGrow(addBytes, addCount int) {
	if l.enc != ListListpack {
		return
	}
	fill := l.serverFill()
	lpBytes := lpEmptyBytes
	if l.numNodes() > 0 {
		lpBytes = l.node(0).sz
	}
	if !exceedsLimit(fill, uint64(lpBytes+addBytes), uint64(l.count+addCount)) {
		return
	}
	l.enc = ListQuicklist
	l.fill = int16(min(max(fill, -5), fillMax)) // quicklistSetFill
	if l.numNodes() > 0 && l.node(0).count == 0 {
		l.removeNode(0)
	}
}

// TryShrink is listTypeTryConvertQuicklist for a shrinking list: a quicklist of
// a single packed node within half of list-max-listpack-size becomes a listpack.
func (l *listObj) TryShrink() {
	if l.enc != ListQuicklist || l.numNodes() != 1 || l.node(0).plain {
		return
	}
	size, count := nodeLimit(l.serverFill())
	n := l.node(0)
	if uint64(n.sz) > size/2 || uint64(n.count) > count/2 {
		return
	}
	l.enc = ListListpack
}

// --- elements

// Push adds v (copied) at the head or the tail.
func (l *listObj) Push(v []byte, front bool) {
	l.count++
	k := l.numNodes()
	if l.enc == ListListpack {
		if k == 0 { // room for the inline header
			l.insertNode(0, newHeaderNodeCap(listHdr, entrySize(len(v))))
		}
		l.node(0).push(v, front)
		return
	}
	end := k - 1
	if front {
		end = 0
	}
	at := k
	if front {
		at = 0
	}
	if l.isLarge(len(v)) {
		l.insertNode(at, newNode(v, true))
		return
	}
	if k > 0 {
		n := l.node(end)
		if l.allowInsert(n, len(v)) {
			n.push(v, front)
			return
		}
		// The end node is full: it will not grow from this side again. In a
		// list of two nodes or more, the new one will likely fill as that one
		// did, so it starts at its size instead of growing there by a dozen
		// reallocations (a third or less of the list's memory is then room).
		grown := 0
		if k >= 2 && !n.plain {
			grown = len(n.b) - int(n.off)
		}
		n.fit()
		if grown > 0 {
			l.insertNode(at, newNodeRoom(v, grown, front))
			return
		}
	}
	l.insertNode(at, newNode(v, false))
}

// Pop removes the head or tail element and returns it (a view, valid until the
// list is next modified). The list must not be empty.
func (l *listObj) Pop(front bool) []byte {
	l.count--
	i := 0
	if !front {
		i = l.numNodes() - 1
	}
	n := l.node(i)
	var v []byte
	if front {
		v = n.popFront()
	} else {
		v = n.popBack()
	}
	if n.count == 0 {
		l.removeNode(i)
	}
	return v
}

// PopsIntObject reports whether Redis would pop the head (front) or tail
// element as an integer object (listTypePop on a quicklist hands out a packed
// node's integer entries that way), which matters to the destination's
// conversion check in LMOVE: Redis counts no bytes for such an element.
func (l *listObj) PopsIntObject(front bool) bool {
	if l.enc != ListQuicklist || l.count == 0 {
		return false
	}
	i := 0
	if !front {
		i = l.numNodes() - 1
	}
	n := l.node(i)
	if n.plain {
		return false
	}
	var v []byte
	if front {
		v, _ = n.entryAt(int(n.off))
	} else {
		v, _ = n.entryBefore(len(n.b))
	}
	_, isInt := lpIntValue(v)
	return isInt
}

// Index returns element i, counting from the tail when i is negative (LINDEX).
func (l *listObj) Index(i int) ([]byte, bool) {
	if i < 0 {
		i += l.count
	}
	if i < 0 || i >= l.count {
		return nil, false
	}
	ni, j := l.locate(i)
	n := l.node(ni)
	v, _ := n.entryAt(n.seek(j))
	return v, true
}

// ListIter walks a list from one element towards the tail or the head. It is
// invalidated by any change to the list.
type ListIter struct {
	l   listObj // a copy of the list's header: the handle's may be on a stack
	ni  int
	pos int // forward: start of the next entry; reverse: end of the next entry
	rev bool
}

// Iter returns an iterator whose first Next is element i (0 <= i < Len()),
// moving towards the head when rev is set.
func (l *listObj) Iter(i int, rev bool) ListIter {
	ni, j := l.locate(i)
	n := l.node(ni)
	p := n.seek(j)
	if rev {
		_, p = n.entryAt(p)
	}
	return ListIter{l: *l, ni: ni, pos: p, rev: rev}
}

// Next returns the next element; the caller stops after the last one.
func (it *ListIter) Next() []byte {
	n := it.l.node(it.ni)
	if !it.rev {
		v, next := n.entryAt(it.pos)
		it.pos = next
		if next == len(n.b) && it.ni+1 < it.l.numNodes() {
			it.ni++
			it.pos = int(it.l.node(it.ni).off)
		}
		return v
	}
	v, start := n.entryBefore(it.pos)
	it.pos = start
	if start == int(n.off) && it.ni > 0 {
		it.ni--
		it.pos = len(it.l.node(it.ni).b)
	}
	return v
}

// Range calls fn for each element from head to tail until fn returns false.
func (l *listObj) Range(fn func(v []byte) bool) {
	for i := range l.numNodes() {
		n := l.node(i)
		for p := int(n.off); p < len(n.b); {
			var v []byte
			v, p = n.entryAt(p)
			if !fn(v) {
				return
			}
		}
	}
}

// DelRange removes n elements from element start on (0 <= start, start+n <=
// Len()), as quicklistDelRange and lpDeleteRange do: emptied nodes go, nothing
// merges.
func (l *listObj) DelRange(start, n int) {
	if n <= 0 {
		return
	}
	ni, j := l.locate(start)
	l.count -= n
	for n > 0 {
		nd := l.node(ni)
		del := min(n, int(nd.count)-j)
		n -= del
		if j == 0 && del == int(nd.count) {
			l.removeNode(ni)
		} else {
			nd.deleteRange(j, del)
			ni++
		}
		j = 0
	}
}

// Insert inserts v before or after the first element equal to pivot (LINSERT)
// and reports whether pivot was found.
func (l *listObj) Insert(pivot, v []byte, after bool) bool {
	for ni := range l.numNodes() {
		n := l.node(ni)
		j := 0
		for p := int(n.off); p < len(n.b); j++ {
			e, next := n.entryAt(p)
			if string(e) == string(pivot) {
				if l.enc == ListListpack {
					if after {
						p = next
					}
					n.insertAt(p, v)
					l.count++
				} else {
					l.qlInsert(ni, j, v, after)
				}
				return true
			}
			p = next
		}
	}
	return false
}

// qlInsert is _quicklistInsert: v goes before or after entry j of node ni.
func (l *listObj) qlInsert(ni, j int, v []byte, after bool) {
	l.count++
	n := l.node(ni)
	sz := len(v)
	full := !l.allowInsert(n, sz)
	atTail := after && j == int(n.count)-1
	atHead := !after && j == 0
	availNext := atTail && ni+1 < l.numNodes() && l.allowInsert(l.node(ni+1), sz)
	availPrev := atHead && ni > 0 && l.allowInsert(l.node(ni-1), sz)
	at := ni // where a new node goes
	if after {
		at = ni + 1
	}
	if l.isLarge(sz) {
		if n.plain || atTail || atHead {
			l.insertNode(at, newNode(v, true))
			return
		}
		rest := n.split(j, after)
		if after { // node, large, rest
			l.insertNode(ni+1, newNode(v, true))
			l.insertNode(ni+2, rest)
		} else { // rest, large, node
			l.insertNode(ni, newNode(v, true))
			l.insertNode(ni, rest)
		}
		return
	}
	switch {
	case !full:
		p := n.seek(j)
		if after {
			_, p = n.entryAt(p)
		}
		n.insertAt(p, v)
	case atTail && availNext:
		l.node(ni+1).push(v, true)
	case atHead && availPrev:
		l.node(ni-1).push(v, false)
	case atTail || atHead:
		l.insertNode(at, newNode(v, false))
	default: // full, in the middle: split the node around the entry
		rest := n.split(j, after)
		rest.push(v, after)
		l.insertNode(at, rest)
		if !after {
			ni++ // the node moved right
		}
		l.mergeAround(ni)
	}
}

// Set replaces element i (negative: from the tail) with v (LSET) and reports
// whether i was in range.
func (l *listObj) Set(i int, v []byte) bool {
	if i < 0 {
		i += l.count
	}
	if i < 0 || i >= l.count {
		return false
	}
	ni, j := l.locate(i)
	n := l.node(ni)
	large := l.enc == ListQuicklist && l.isLarge(len(v))
	switch {
	case !n.plain && !large:
		n.replaceAt(n.seek(j), v)
	case n.plain && large:
		*n = newNode(v, true)
	case n.plain: // a small value replaces a plain node (quicklistReplaceEntry)
		l.qlInsert(ni, 0, v, true)
		l.removeNode(ni)
		l.count--
	default: // a large value in a packed node: it gets its own plain node
		last := j == int(n.count)-1
		var rest qnode
		if !last {
			rest = n.split(j, true)
		}
		l.insertNode(ni+1, newNode(v, true))
		if !last {
			l.insertNode(ni+2, rest)
		}
		n = l.node(ni)
		if n.count == 1 {
			l.removeNode(ni)
		} else {
			n.popBack()
			l.mergeAround(ni + 1)
		}
	}
	return true
}

// Rem removes up to count elements equal to v, from the head (count > 0), from
// the tail (count < 0), or all of them (count == 0), and returns how many (LREM).
func (l *listObj) Rem(count int, v []byte) int {
	removed := 0
	if count >= 0 {
		for ni := 0; ni < l.numNodes(); {
			n := l.node(ni)
			for p := int(n.off); p < len(n.b); {
				e, next := n.entryAt(p)
				if string(e) != string(v) {
					p = next
					continue
				}
				tail := len(n.b) - next
				n.deleteAt(p)
				p = len(n.b) - tail // either side of the gap may have moved
				removed++
				l.count--
				if removed == count {
					break
				}
			}
			if n.count == 0 {
				l.removeNode(ni)
			} else {
				ni++
			}
			if removed == count && count > 0 {
				break
			}
		}
		return removed
	}
	count = -count
	for ni := l.numNodes() - 1; ni >= 0; ni-- {
		n := l.node(ni)
		for p := len(n.b); p > int(n.off); {
			e, start := n.entryBefore(p)
			p = start
			if string(e) == string(v) {
				head := start - int(n.off)
				n.deleteAt(start)
				p = int(n.off) + head // either side of the gap may have moved
				removed++
				l.count--
			}
			if removed == count {
				break
			}
		}
		if n.count == 0 {
			l.removeNode(ni)
		}
		if removed == count {
			break
		}
	}
	return removed
}

// clone deep-copies the list, keeping its encoding and node structure
// (listTypeDup).
func (l *listObj) clone() *listObj {
	c := &listObj{ks: l.ks, count: l.count, fill: l.fill, enc: l.enc}
	for i := range l.numNodes() {
		c.insertNode(i, l.node(i).clone())
	}
	return c
}
