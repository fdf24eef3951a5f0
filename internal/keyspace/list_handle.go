package keyspace

import (
	"encoding/binary"
	"unsafe"
)

// List is a list value, handled through the Entry that holds it, as Hash, Set
// and ZSet are (docs/decisions/0030-compact-collections-in-the-entry.md): *List
// is the entry itself and Entry.Obj returns it without allocating.
//
// A list in the listpack encoding, the common small list, lives in the entry
// (compactInline): p is its node's buffer, n the buffer's length and c the
// element count, and the buffer's first listHdr bytes hold what the node needs
// besides: Redis's listpack size (sz, which drives every conversion) and where
// the entries start (the room left for pushes at the head). A quicklist is a
// *listObj the entry points to (compactBoxed); one that shrinks back to a
// listpack comes back inline (TryShrink). Each method loads the inline form
// into a listObj on the caller's stack, runs it and stores it back; the hot
// ones go straight to a boxed quicklist.
//
// A List from NewList, Clone or the RDB builders is a stand-alone entry:
// DB.SetObject and Entry.SetObj copy it into the key's entry; use the handle of
// the stored entry (Entry.Obj) afterwards, not the stand-alone one.
type List Entry

// listHdr is the inline header: sz and off, little-endian uint32 each.
const listHdr = 8

func (l *List) e() *Entry { return (*Entry)(l) }

// NewList returns an empty list in the listpack encoding (a stand-alone entry).
func (ks *Keyspace) NewList() *List { return &List{Kind: KindList} }

// open returns the list's listObj: the boxed one, or the inline form loaded into t.
func (l *List) open(t *listObj) *listObj {
	if l.Enc == compactBoxed {
		return (*listObj)(l.p)
	}
	if l.n == 0 {
		return t
	}
	b := l.e().compactBytes()
	n := &t.one
	n.b, n.hd = b, listHdr
	n.sz = int(binary.LittleEndian.Uint32(b))
	n.off = int32(binary.LittleEndian.Uint32(b[4:]))
	c, ok := l.e().compactCount()
	if !ok {
		c = n.countEntries()
	}
	n.count = int32(c)
	t.count, t.hasOne = c, true
	return t
}

// close stores o back after a change made through open: inline while it is a
// listpack, boxed (in a copy on the heap) once it became a quicklist.
func (l *List) close(o *listObj) {
	if l.Enc == compactBoxed {
		return
	}
	if o.enc == ListQuicklist {
		boxCopy(l.e(), o)
		return
	}
	l.storeListpack(o)
}

// storeListpack makes o, a listpack, the entry's inline value.
func (l *List) storeListpack(o *listObj) {
	if o.numNodes() == 0 {
		l.e().storeCompact(nil, 0)
		return
	}
	n := o.node(0)
	if int(n.hd) != listHdr { // a node made for a quicklist: copy it behind a header
		h := newHeaderNodeCap(listHdr, len(n.b)-int(n.off))
		h.b = append(h.b, n.b[n.off:]...)
		h.sz, h.count = n.sz, n.count
		*n = h
	}
	binary.LittleEndian.PutUint32(n.b, uint32(n.sz))
	binary.LittleEndian.PutUint32(n.b[4:], uint32(n.off))
	l.e().storeCompact(n.b, int(n.count))
}

// boxed returns the listObj of a boxed list, nil for an inline one.
func (l *List) boxed() *listObj { return (*listObj)(l.e().boxedPtr()) }

// newListOf wraps o in a stand-alone handle: inline if it is a listpack.
func newListOf(o *listObj) *List {
	l := &List{Kind: KindList}
	if o.enc == ListListpack {
		l.storeListpack(o)
	} else {
		l.e().setBoxed(unsafe.Pointer(o))
	}
	return l
}

// countEntries walks the node to count its entries.
func (n *qnode) countEntries() int {
	c := 0
	for p := int(n.off); p < len(n.b); c++ {
		_, p = n.entryAt(p)
	}
	return c
}

// Len is the number of elements.
func (l *List) Len() int {
	if n, ok := l.e().inlineLen(); ok {
		return n
	}
	var t listObj
	return l.open(&t).count
}

// Encoding is OBJECT ENCODING's name for the list.
func (l *List) Encoding() string {
	if o := l.boxed(); o != nil {
		return o.Encoding()
	}
	return "listpack"
}

// Quicklist reports whether the list is in the quicklist encoding.
func (l *List) Quicklist() bool { o := l.boxed(); return o != nil && o.Quicklist() }

// NodeStats are the node figures DEBUG OBJECT reports for a quicklist: the
// number of nodes and the sum of their (Redis) sizes.
func (l *List) NodeStats() (nodes, size int) {
	var t listObj
	return l.open(&t).NodeStats()
}

// Fill is the quicklist's fill (list-max-listpack-size when it was created).
func (l *List) Fill() int {
	var t listObj
	return l.open(&t).Fill()
}

// TryGrow is listTypeTryConvertListpack, called before adding addCount
// elements of addBytes bytes in total: a listpack that would exceed ks's
// list-max-listpack-size becomes a quicklist whose only node is the listpack.
// (Redis counts the string length of each added element, nothing for one that
// is already an integer object.)
func (l *List) TryGrow(ks *Keyspace, addBytes, addCount int) {
	if l.Enc == compactBoxed {
		return // a quicklist
	}
	var t listObj
	x := l.open(&t)
	x.ks = ks
	x.TryGrow(addBytes, addCount)
	l.close(x)
}

// TryShrink is listTypeTryConvertQuicklist for a shrinking list: a quicklist of
// a single packed node within half of list-max-listpack-size becomes a
// listpack, and comes back inline.
func (l *List) TryShrink() {
	o := l.boxed()
	if o == nil {
		return
	}
	o.TryShrink()
	if o.enc == ListListpack {
		l.storeListpack(o)
	}
}

// Push adds v (copied) at the head or the tail.
func (l *List) Push(v []byte, front bool) {
	if o := l.boxed(); o != nil {
		o.Push(v, front)
		return
	}
	var t listObj
	x := l.open(&t)
	x.Push(v, front)
	l.close(x)
}

// PushAll is TryGrow for vals then Push of each (LPUSH, RPUSH): a new list
// gets the buffer all of them take in one allocation.
func (l *List) PushAll(ks *Keyspace, vals [][]byte, front bool) {
	if o := l.boxed(); o != nil { // a quicklist: no conversion, nothing to reserve
		for _, v := range vals {
			o.Push(v, front)
		}
		return
	}
	add, need := 0, 0
	for _, v := range vals {
		add += len(v)
		need += entrySize(len(v))
	}
	var t listObj
	x := l.open(&t)
	x.ks = ks
	x.TryGrow(add, len(vals))
	if x.enc == ListListpack && x.numNodes() == 0 {
		x.insertNode(0, newHeaderNodeCap(listHdr, need))
	}
	for _, v := range vals {
		x.Push(v, front)
	}
	l.close(x)
}

// Pop removes the head or tail element and returns it (a view, valid until the
// list is next modified). The list must not be empty.
func (l *List) Pop(front bool) []byte {
	if o := l.boxed(); o != nil {
		return o.Pop(front)
	}
	var t listObj
	x := l.open(&t)
	v := x.Pop(front)
	l.close(x)
	return v
}

// PopsIntObject reports whether Redis would pop the head (front) or tail
// element as an integer object (listTypePop on a quicklist hands out a packed
// node's integer entries that way), which matters to the destination's
// conversion check in LMOVE: Redis counts no bytes for such an element.
func (l *List) PopsIntObject(front bool) bool {
	o := l.boxed()
	return o != nil && o.PopsIntObject(front)
}

// Index returns element i, counting from the tail when i is negative (LINDEX).
func (l *List) Index(i int) ([]byte, bool) {
	if o := l.boxed(); o != nil {
		return o.Index(i)
	}
	var t listObj
	return l.open(&t).Index(i)
}

// Iter returns an iterator whose first Next is element i (0 <= i < Len()),
// moving towards the head when rev is set.
func (l *List) Iter(i int, rev bool) ListIter {
	var t listObj
	return l.open(&t).Iter(i, rev)
}

// Range calls fn for each element from head to tail until fn returns false.
func (l *List) Range(fn func(v []byte) bool) {
	if o := l.boxed(); o != nil {
		o.Range(fn)
		return
	}
	var t listObj
	l.open(&t).Range(fn)
}

// DelRange removes n elements from element start on (0 <= start, start+n <=
// Len()), as quicklistDelRange and lpDeleteRange do: emptied nodes go, nothing
// merges.
func (l *List) DelRange(start, n int) {
	var t listObj
	x := l.open(&t)
	x.DelRange(start, n)
	l.close(x)
}

// Insert inserts v before or after the first element equal to pivot (LINSERT)
// and reports whether pivot was found.
func (l *List) Insert(pivot, v []byte, after bool) bool {
	var t listObj
	x := l.open(&t)
	ok := x.Insert(pivot, v, after)
	l.close(x)
	return ok
}

// Set replaces element i (negative: from the tail) with v (LSET) and reports
// whether i was in range.
func (l *List) Set(i int, v []byte) bool {
	var t listObj
	x := l.open(&t)
	ok := x.Set(i, v)
	l.close(x)
	return ok
}

// Rem removes up to count elements equal to v, from the head (count > 0), from
// the tail (count < 0), or all of them (count == 0), and returns how many (LREM).
func (l *List) Rem(count int, v []byte) int {
	var t listObj
	x := l.open(&t)
	n := x.Rem(count, v)
	l.close(x)
	return n
}

// Clone deep-copies the list, keeping its encoding and node structure
// (listTypeDup), into a stand-alone handle.
func (l *List) Clone() any {
	if o := l.boxed(); o != nil {
		return newListOf(o.clone())
	}
	c := List(l.e().cloneInline())
	return &c
}

// ForEachNode calls fn for each quicklist node, head first, with the node's
// elements (views, valid during the call) and whether it is a plain node. A
// listpack-encoded list is one packed node.
func (l *List) ForEachNode(fn func(elems [][]byte, plain bool)) {
	var t listObj
	l.open(&t).ForEachNode(fn)
}

func (l *List) usage(samples int) int64 {
	if o := l.boxed(); o != nil {
		return o.usage(samples)
	}
	return l.e().inlineUsage()
}
