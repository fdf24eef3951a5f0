package keyspace

import (
	"slices"
	"unsafe"
)

// growCompact returns b extended by extra bytes (their content is unspecified:
// callers overwrite them). It is the growth policy of the compact encodings'
// buffers (listpack hashes, sets and zsets, intsets, list nodes), which Redis
// reallocates to the exact size at each insert: a new array is sized to the
// allocator's size class of the new length, plus an eighth above 256 bytes to
// keep repeated inserts amortised, and its whole size class is usable
// capacity. append's doubling would leave up to half of a small buffer unused
// for good (a 5-field hash of 75 bytes sat in 128), which is most of the
// memory of a small collection (BENCHMARKS.md "Memory per key").
func growCompact(b []byte, extra int) []byte {
	n := len(b) + extra
	if n <= cap(b) {
		return b[:n]
	}
	c := n
	if n > 256 {
		c += n / 8
	}
	nb := slices.Grow([]byte(nil), c)[:n] // cap: c rounded up to its size class
	copy(nb, b)
	return nb
}

// Entry.Enc of a list, hash, set or sorted set: where the value is.
const (
	compactInline uint8 = iota // p, n, c hold the compact encoding (per type)
	compactBoxed               // p is the type's struct (hashObj, ...)
)

// countSaturated in Entry.c: at least this many elements; the count is taken
// by walking the buffer.
const countSaturated = 1<<16 - 1

// compactCap is the capacity recorded for an inline buffer of n bytes: its Go
// size class, which the allocation is known to have (storeCompact copies a
// buffer whose capacity is smaller); the length itself above the small classes.
func compactCap(n int) int {
	if n > 32768 {
		return n
	}
	return int(allocSize(int64(n)))
}

// compactBytes is the inline buffer of e. An empty one may hold a capacity
// reserved for what a command is about to add (Entry.c is then its size).
func (e *Entry) compactBytes() []byte {
	n := int(e.n)
	if n == 0 {
		return unsafe.Slice((*byte)(e.p), int(e.c))[:0]
	}
	return unsafe.Slice((*byte)(e.p), compactCap(n))[:n]
}

// compactCount is the number of elements of e's inline buffer; ok is false
// when it has too many for Entry.c and the caller must count them.
func (e *Entry) compactCount() (n int, ok bool) {
	if e.n == 0 {
		return 0, true
	}
	return int(e.c), e.c != countSaturated
}

// storeCompact makes b (count elements) the inline buffer of e. A buffer with
// less capacity than compactCap(len(b)) (made by make rather than grown by
// growCompact) is copied into one that has it, so that compactBytes never
// reaches past an allocation. An empty buffer keeps up to 64 KiB of capacity
// (a reservation: Entry.c holds its size instead of the count).
func (e *Entry) storeCompact(b []byte, count int) {
	if len(b) == 0 {
		e.p, e.n, e.c, e.Enc = nil, 0, 0, compactInline
		if c := min(cap(b), countSaturated); c > 0 {
			e.p, e.c = unsafe.Pointer(unsafe.SliceData(b[:c])), uint16(c)
		}
		return
	}
	if cap(b) < compactCap(len(b)) {
		b = append(growCompact(nil, len(b))[:0], b...)
	}
	e.p, e.n = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b))
	e.c = uint16(min(count, countSaturated))
	e.Enc = compactInline
}

// The handles' shared steps (Hash and ZSet are handles on their entry; see
// hash_handle.go).

// boxedPtr is p when the value is boxed, nil when it is inline.
func (e *Entry) boxedPtr() unsafe.Pointer {
	if e.Enc == compactBoxed {
		return e.p
	}
	return nil
}

// setBoxed makes the struct at b the entry's value.
func (e *Entry) setBoxed(b unsafe.Pointer) {
	e.p, e.n, e.c, e.Enc = b, 0, 0, compactBoxed
}

// boxCopy boxes a heap copy of o, a value loaded inline (on the caller's stack)
// that converted to a boxed encoding.
func boxCopy[T any](e *Entry, o *T) {
	b := new(T)
	*b = *o
	e.setBoxed(unsafe.Pointer(b))
}

// inlineLen is the element count of an inline value, ok false when the value
// is boxed or its count must be walked.
func (e *Entry) inlineLen() (n int, ok bool) {
	if e.Enc != compactInline {
		return 0, false
	}
	return e.compactCount()
}

// cloneInline returns a stand-alone entry of e's kind holding a copy of e's
// inline buffer.
func (e *Entry) cloneInline() Entry {
	c := Entry{Kind: e.Kind}
	if e.n > 0 {
		c.storeCompact(append(growCompact(nil, int(e.n))[:0], e.compactBytes()...), int(e.c))
	}
	return c
}

// inlineUsage is MEMORY USAGE's figure for an inline buffer.
func (e *Entry) inlineUsage() int64 { return allocSize(int64(compactCap(int(e.n)))) }

// setHandle copies the value of the stand-alone handle v (nil: an empty inline
// value) into e, for SetObj.
func (e *Entry) setHandle(v *Entry, k Kind) {
	e.Kind = k
	if v == nil {
		e.p, e.Enc = nil, compactInline
		return
	}
	e.p, e.n, e.c, e.Enc = v.p, v.n, v.c, v.Enc
}
