package keyspace

import (
	"encoding/binary"
	"slices"
)

// qnode is one node of a List: a run of elements in one byte buffer, the
// counterpart of a quicklist node's listpack (or of a plain node's single
// element). Entries live in b[off:]; b[:off] is free room for pushes at the
// front and b[len(b):cap(b)] room for pushes at the back. An entry is
//
//	uvarint(n) data[n] reverse-uvarint(n)
//
// (the length again, its bytes reversed), so the buffer reads both ways as a
// listpack does with its back-lengths.
//
// sz is the size Redis would give the node — lpBytes of its listpack, or the
// element's length for a plain node — which drives every encoding and node
// decision; it is tracked exactly, whatever the bytes here take.
//
// hd bytes at the start of b are not the node's: an inline list keeps its
// header there (listHdr, see list_handle.go), and the front room never reaches
// into them. Nodes made for a quicklist have none.
type qnode struct {
	b     []byte
	sz    int // Redis's node->sz
	off   int32
	count int32
	plain bool  // a QUICKLIST_NODE_CONTAINER_PLAIN node: one large element
	hd    uint8 // bytes reserved at b's start (off >= hd)
}

// Listpack sizes (listpack.c): a header of 6 bytes and an end byte, and per
// entry its encoding, data and back-length.
const lpEmptyBytes = 7

// lpIntValue is lpStringToInt64: the int64 a listpack stores v as, when v is an
// integer in canonical form.
func lpIntValue(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 20 || !isCanonicalInt(v) {
		return 0, false
	}
	neg := v[0] == '-'
	var u uint64
	for _, c := range v[b2i(neg):] {
		u = u*10 + uint64(c-'0')
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lpEntrySize is the number of bytes element v takes in a listpack
// (lpEncodeGetType / lpEncodeBacklen): a canonical integer is stored in 1 to 9
// bytes by magnitude, a string with a 1, 2 or 5 byte header; then the
// back-length of encoding and data, 1 to 5 bytes.
func lpEntrySize(v []byte) int {
	var n int
	if len(v) <= 20 && len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		if x, ok := lpIntValue(v); ok {
			switch {
			case x >= 0 && x <= 127:
				return 2 // 7 bit uint, backlen 1
			case x >= -4096 && x <= 4095:
				n = 2
			case x >= -32768 && x <= 32767:
				n = 3
			case x >= -8388608 && x <= 8388607:
				n = 4
			case x >= -2147483648 && x <= 2147483647:
				n = 5
			default:
				n = 9
			}
			return n + 1
		}
	}
	switch l := len(v); {
	case l < 64:
		n = 1 + l
	case l < 4096:
		n = 2 + l
	default:
		n = 5 + l
	}
	switch {
	case n <= 127:
		return n + 1
	case n < 16383:
		return n + 2
	case n < 2097151:
		return n + 3
	case n < 268435455:
		return n + 4
	}
	return n + 5
}

// entrySize is the bytes one element of length n takes in a node buffer.
func entrySize(n int) int { return 2*uvarintLen(uint64(n)) + n }

// putEntry writes the entry for v into dst, which is exactly entrySize long.
func putEntry(dst, v []byte) {
	h := binary.PutUvarint(dst, uint64(len(v)))
	copy(dst[h:], v)
	t := dst[h+len(v):]
	for i := 0; i < h; i++ {
		t[i] = dst[h-1-i]
	}
}

// entryAt returns the element of the entry at p and the position after it.
func (n *qnode) entryAt(p int) (v []byte, next int) {
	b := n.b
	l, h := uint64(b[p]), 1
	if l >= 0x80 {
		var k int
		l, k = binary.Uvarint(b[p:])
		h = k
	}
	s := p + h
	e := s + int(l)
	return b[s:e:e], e + h
}

// entryBefore returns the element of the entry that ends at end and its start.
func (n *qnode) entryBefore(end int) (v []byte, start int) {
	b := n.b
	p := end - 1
	l, h := uint64(b[p]&0x7f), 1
	for shift := 7; b[p] >= 0x80; shift += 7 {
		p--
		l |= uint64(b[p]&0x7f) << shift
		h++
	}
	e := end - h
	s := e - int(l)
	return b[s:e:e], s - h
}

// seek returns the position of entry j (0 <= j < count), walking from the
// nearer end of the node.
func (n *qnode) seek(j int) int {
	if j <= int(n.count)/2 {
		p := int(n.off)
		for ; j > 0; j-- {
			_, p = n.entryAt(p)
		}
		return p
	}
	p := len(n.b)
	for k := int(n.count) - j; k > 0; k-- {
		_, p = n.entryBefore(p)
	}
	return p
}

// gap opens k free bytes at position pos (off <= pos <= len(b)) and returns
// where they start. Pushes at either end use the free room there; otherwise
// the smaller side moves (a push at the head moves the entries back by half
// the room behind them, leaving the rest in front), or the buffer is compacted
// in place, or it grows by half, keeping the new room on the side being pushed
// to. So a node that takes pushes at one end and pops at the other (LPUSH and
// RPOP) moves its entries once per half its free room, not at every push.
func (n *qnode) gap(pos, k int) int {
	b, off, hd := n.b, int(n.off), int(n.hd)
	switch {
	case pos == off && off-hd >= k:
		n.off -= int32(k)
		return off - k
	case pos == len(b) && cap(b)-len(b) >= k:
		n.b = b[:len(b)+k]
		return pos
	case pos-off <= len(b)-pos && off-hd >= k:
		copy(b[off-k:], b[off:pos])
		n.off -= int32(k)
		return pos - k
	case pos == off && cap(b)-len(b) >= k:
		// a push at the head with room only at the back: move the entries
		// back by half that room, so the next pushes at the head find room
		shift := max(k, (cap(b)-len(b))/2)
		n.b = b[:len(b)+shift]
		copy(n.b[off+shift:], b[off:])
		n.off = int32(off + shift - k)
		return off + shift - k
	case cap(b)-len(b) >= k:
		n.b = b[:len(b)+k]
		copy(n.b[pos+k:], b[pos:])
		return pos
	}
	used := len(b) - off
	total := used + k
	front := pos == off && used > 0 // room goes to the front for front pushes
	var nb []byte
	if cap(b) >= hd+total+total/4 {
		nb = b[:cap(b)] // compact in place: memmove handles the overlap
	} else {
		want := total + total/2 // amortises pushes onto long lists' nodes
		if total <= 256 {
			want = total // a small list's only node: its size class (growCompact)
		}
		nb = slices.Grow([]byte(nil), max(hd+want, 16))
		nb = nb[:cap(nb)]
	}
	newOff := hd
	if front {
		newOff = len(nb) - total
	}
	head := pos - off
	if newOff <= off {
		copy(nb[newOff:], b[off:pos])
		copy(nb[newOff+head+k:], b[pos:])
	} else {
		copy(nb[newOff+head+k:], b[pos:])
		copy(nb[newOff:], b[off:pos])
	}
	n.b = nb[:newOff+total]
	n.off = int32(newOff)
	return newOff + head
}

// cut removes the bytes [p, q) (off <= p <= q <= len(b)), moving the smaller side.
func (n *qnode) cut(p, q int) {
	b, off := n.b, int(n.off)
	switch k := q - p; {
	case p == off:
		n.off += int32(k)
	case q == len(b):
		n.b = b[:p]
	case p-off < len(b)-q:
		copy(b[off+k:], b[off:p])
		n.off += int32(k)
	default:
		copy(b[p:], b[q:])
		n.b = b[:len(b)-k]
	}
	if n.count == 0 {
		n.b, n.off = n.b[:n.hd], int32(n.hd)
	}
}

// insertAt inserts element v as the entry at position pos and accounts for it.
func (n *qnode) insertAt(pos int, v []byte) {
	p := n.gap(pos, entrySize(len(v)))
	putEntry(n.b[p:p+entrySize(len(v))], v)
	n.count++
	if n.plain {
		n.sz = len(v)
	} else {
		n.sz += lpEntrySize(v)
	}
}

// replaceAt replaces the entry at pos with v.
func (n *qnode) replaceAt(pos int, v []byte) {
	_, next := n.entryAt(pos)
	tail := len(n.b) - next
	n.deleteAt(pos)
	n.insertAt(len(n.b)-tail, v) // either side of the gap may have moved
}

// push inserts v at the front or the back of the node.
func (n *qnode) push(v []byte, front bool) {
	if front {
		n.insertAt(int(n.off), v)
	} else {
		n.insertAt(len(n.b), v)
	}
}

// deleteAt removes the entry at pos and returns its element (a view of the
// node's memory, valid until the node changes again).
func (n *qnode) deleteAt(pos int) []byte {
	v, next := n.entryAt(pos)
	n.count--
	if !n.plain {
		n.sz -= lpEntrySize(v)
	}
	n.cut(pos, next)
	return v
}

// popFront and popBack remove an end entry; see deleteAt for the result.
func (n *qnode) popFront() []byte {
	v, next := n.entryAt(int(n.off))
	n.count--
	if !n.plain {
		n.sz -= lpEntrySize(v)
	}
	if n.count == 0 {
		n.off = int32(len(n.b))
	} else {
		n.off = int32(next)
	}
	return v
}

func (n *qnode) popBack() []byte {
	v, start := n.entryBefore(len(n.b))
	n.count--
	if !n.plain {
		n.sz -= lpEntrySize(v)
	}
	n.b = n.b[:start]
	return v
}

// deleteRange removes k entries starting at entry j.
func (n *qnode) deleteRange(j, k int) {
	p := n.seek(j)
	q := p
	for i := 0; i < k; i++ {
		var v []byte
		v, q = n.entryAt(q)
		if !n.plain {
			n.sz -= lpEntrySize(v)
		}
	}
	n.count -= int32(k)
	n.cut(p, q)
	n.shrink()
}

// shrink gives back a buffer that is mostly free room after deletions.
func (n *qnode) shrink() {
	used, hd := len(n.b)-int(n.off), int(n.hd)
	if cap(n.b) > 256 && used < cap(n.b)/4 {
		nb := slices.Grow([]byte(nil), hd+used+used/4)[:hd+used]
		copy(nb[hd:], n.b[n.off:])
		n.b, n.off = nb, int32(hd)
	}
}

// fit trims the buffer to its entries (a node that will not grow again soon).
func (n *qnode) fit() {
	used := len(n.b) - int(n.off)
	if cap(n.b)-used > used/8+16 {
		n.b, n.off, n.hd = append(make([]byte, 0, used), n.b[n.off:]...), 0, 0
	}
}

// split moves part of the node into a new node, as _quicklistSplitNode: with
// after, the new node takes the entries after j and the node keeps [0, j];
// without, the new node takes the entries before j and the node keeps [j, end].
func (n *qnode) split(j int, after bool) qnode {
	p := n.seek(j)
	if after {
		_, p = n.entryAt(p)
	}
	lo, hi := int(n.off), p // the part that moves: [lo, hi)
	if after {
		lo, hi = p, len(n.b)
	}
	nn := qnode{sz: lpEmptyBytes}
	nn.b = append(make([]byte, 0, hi-lo), n.b[lo:hi]...)
	for q := 0; q < len(nn.b); {
		var v []byte
		v, q = nn.entryAt(q)
		nn.count++
		nn.sz += lpEntrySize(v)
	}
	n.count -= nn.count
	n.sz -= nn.sz - lpEmptyBytes
	n.cut(lo, hi)
	return nn
}

// appendNode appends the entries of m (which is not plain) to n.
func (n *qnode) appendNode(m *qnode) {
	data := m.b[m.off:]
	p := n.gap(len(n.b), len(data))
	copy(n.b[p:], data)
	n.count += m.count
	n.sz += m.sz - lpEmptyBytes
}

// clone returns a copy of the node with an exact-size buffer.
func (n *qnode) clone() qnode {
	c := *n
	c.b = append(make([]byte, 0, len(n.b)-int(n.off)), n.b[n.off:]...)
	c.off, c.hd = 0, 0
	return c
}

// newNode returns a node holding v: packed (a listpack of one) or plain.
func newNode(v []byte, plain bool) qnode {
	if !plain {
		return newNodeRoom(v, 0, false)
	}
	n := qnode{sz: len(v), plain: true, count: 1}
	n.b = make([]byte, entrySize(len(v)))
	putEntry(n.b, v)
	return n
}

// newNodeRoom is newNode (packed) in a buffer of room bytes (at least the
// entry's), with the free space on the side the node grows from: in front of
// the entry for pushes at the head, behind it for pushes at the tail.
func newNodeRoom(v []byte, room int, front bool) qnode {
	size := entrySize(len(v))
	b := make([]byte, max(room, size))
	n := qnode{sz: lpEmptyBytes + lpEntrySize(v), count: 1}
	if front {
		n.b, n.off = b, int32(len(b)-size)
		putEntry(b[n.off:], v)
	} else {
		n.b = b[:size]
		putEntry(n.b, v)
	}
	return n
}

// newHeaderNodeCap returns an empty packed node with hd reserved bytes and
// room for need bytes of entries, in a buffer of its size class (an inline
// list's node).
func newHeaderNodeCap(hd, need int) qnode {
	return qnode{sz: lpEmptyBytes, hd: uint8(hd), off: int32(hd), b: growCompact(nil, hd+need)[:hd]}
}
