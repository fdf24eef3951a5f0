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

// Entry.Enc of a list, hash, set or sorted set: where the value is. Any value
// but compactBoxed means inline; sets tell their inline encodings apart by it
// (setInlineIntset2 ...).
const (
	compactInline uint8 = iota // p, n, c hold the compact encoding (per type)
	compactBoxed               // p is the type's struct (hashObj, ...)
)

// countSaturated in Entry.c: at least this many elements; the count is taken
// by walking the buffer.
const countSaturated = 1<<16 - 1

// Inline collections keep in Entry.Enc's low encBits bits their encoding
// (compactInline, a set's inline intset widths) and in its top bits how many Go
// size classes their buffer's capacity lies above the class of its length: the
// room a shrink left (SPOP, HDEL), kept for the next growth as a struct's slice
// header kept it. compactBoxed is always stored with no such bits.
const (
	encBits = 3
	encMask = 1<<encBits - 1
)

// inlineEnc is the encoding bits of Entry.Enc.
func (e *Entry) inlineEnc() uint8 { return e.Enc & encMask }

// sizeClass8 and sizeClass128 map a size to its index in goSizeClasses, as the
// runtime's size_to_class8 and size_to_class128 do: by 8-byte steps up to 1024,
// by 128-byte steps above.
var sizeClass8, sizeClass128 = func() (c8 [1024/8 + 1]uint8, c128 [(32768-1024)/128 + 1]uint8) {
	i := 0
	for k := range c8 {
		for goSizeClasses[i] < int64(k*8) {
			i++
		}
		c8[k] = uint8(i)
	}
	for k := range c128 {
		for goSizeClasses[i] < int64(1024+k*128) {
			i++
		}
		c128[k] = uint8(i)
	}
	return
}()

// sizeClass is the index in goSizeClasses of the class of n bytes, 0 < n <= 32768.
func sizeClass(n int) int {
	if n <= 1024 {
		return int(sizeClass8[(n+7)>>3])
	}
	return int(sizeClass128[(n-1024+127)>>7])
}

// compactCap is the capacity of an inline buffer of n bytes whose Enc has
// capacity bits up: the size class of n, up classes higher, which the
// allocation is known to have (storeCompact records no more than the buffer's
// real capacity); the length itself above the small classes.
func compactCap(n int, up uint8) int {
	if n > 32768 || n == 0 {
		return n
	}
	return int(goSizeClasses[min(sizeClass(n)+int(up), len(goSizeClasses)-1)])
}

// capClassesUp is the largest up (at most 1<<(8-encBits) - 1) with
// compactCap(n, up) <= c, for a buffer of n bytes and capacity c >= compactCap(n, 0).
func capClassesUp(n, c int) uint8 {
	if n > 32768 || n == 0 {
		return 0
	}
	base := sizeClass(n)
	up := 0
	for up < 1<<(8-encBits)-1 && base+up+1 < len(goSizeClasses) && goSizeClasses[base+up+1] <= int64(c) {
		up++
	}
	return uint8(up)
}

// compactBytes is the inline buffer of e. An empty one may hold a capacity
// reserved for what a command is about to add (Entry.c is then its size).
func (e *Entry) compactBytes() []byte {
	n := int(e.n)
	if n == 0 {
		return unsafe.Slice((*byte)(e.p), int(e.c))[:0]
	}
	return unsafe.Slice((*byte)(e.p), compactCap(n, e.Enc>>encBits))[:n]
}

// compactCount is the number of elements of e's inline buffer; ok is false
// when it has too many for Entry.c and the caller must count them.
func (e *Entry) compactCount() (n int, ok bool) {
	if e.n == 0 {
		return 0, true
	}
	return int(e.c), e.c != countSaturated
}

// storeCompact makes b (count elements) the inline buffer of e, encoding
// compactInline (a set then sets its own encoding bits). A buffer with less
// capacity than the size class of its length (made by make rather than grown
// by growCompact) is copied into one that has it, so that compactBytes never
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
	base := compactCap(len(b), 0)
	if cap(b) < base {
		b = append(growCompact(nil, len(b))[:0], b...)
	}
	up := uint8(0)
	if cap(b) > base {
		up = capClassesUp(len(b), cap(b))
	}
	e.p, e.n = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b))
	e.c = uint16(min(count, countSaturated))
	e.Enc = compactInline | up<<encBits
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
	if e.Enc == compactBoxed {
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
	c.Enc |= e.inlineEnc() // a set's inline encoding (intset width)
	return c
}

// inlineUsage is MEMORY USAGE's figure for an inline buffer.
func (e *Entry) inlineUsage() int64 { return allocSize(int64(cap(e.compactBytes()))) }

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
