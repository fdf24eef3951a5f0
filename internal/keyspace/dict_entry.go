package keyspace

import (
	"math"
	"strings"
	"unsafe"
)

// A dict entry and its key are one allocation (decision 0035): the key's
// bytes follow the entry's klen field, in the padding at the end of
// dictEntry[V] and in a tail array of whole words after it. Go cannot size a
// typed allocation at run time, so there is one type per tail length,
// dictEntryT<n> with n words (1..16, then even counts up to 32: keys of up to
// dictInlineMax bytes beyond the padding), each a dictEntry[V] with a byte
// array after it. The garbage collector knows each type's pointers (next and
// those of V); the key's bytes are not scanned. A longer key is kept in its own
// string (dictEntryExt, klen == keyExt).
//
// Entries are reached only as *dictEntry[V]; the key is read through key(),
// which returns a string sharing the entry's memory: holding it keeps the
// whole entry (and what its value points to) alive, as holding a key string
// kept the key's bytes alive before.

// dictInlineMax is the most key bytes an entry keeps in its tail array.
const dictInlineMax = 32 * 8

// keyExt in dictEntry.klen marks a key kept in its own string (dictEntryExt).
const keyExt = math.MaxUint32

// dictEntryExt is an entry whose key is longer than its padding and
// dictInlineMax together.
type dictEntryExt[V any] struct {
	dictEntry[V]
	ext string
}

// dictEntryT1 .. dictEntryT32: a dictEntry[V] and a tail of 1..16, 18, 20 ..
// 32 words, allocated by newDictEntryT only.

type dictEntryT1[V any] struct {
	dictEntry[V]
	k [8]byte
}

type dictEntryT2[V any] struct {
	dictEntry[V]
	k [16]byte
}

type dictEntryT3[V any] struct {
	dictEntry[V]
	k [24]byte
}

type dictEntryT4[V any] struct {
	dictEntry[V]
	k [32]byte
}

type dictEntryT5[V any] struct {
	dictEntry[V]
	k [40]byte
}

type dictEntryT6[V any] struct {
	dictEntry[V]
	k [48]byte
}

type dictEntryT7[V any] struct {
	dictEntry[V]
	k [56]byte
}

type dictEntryT8[V any] struct {
	dictEntry[V]
	k [64]byte
}

type dictEntryT9[V any] struct {
	dictEntry[V]
	k [72]byte
}

type dictEntryT10[V any] struct {
	dictEntry[V]
	k [80]byte
}

type dictEntryT11[V any] struct {
	dictEntry[V]
	k [88]byte
}

type dictEntryT12[V any] struct {
	dictEntry[V]
	k [96]byte
}

type dictEntryT13[V any] struct {
	dictEntry[V]
	k [104]byte
}

type dictEntryT14[V any] struct {
	dictEntry[V]
	k [112]byte
}

type dictEntryT15[V any] struct {
	dictEntry[V]
	k [120]byte
}

type dictEntryT16[V any] struct {
	dictEntry[V]
	k [128]byte
}

type dictEntryT18[V any] struct {
	dictEntry[V]
	k [144]byte
}

type dictEntryT20[V any] struct {
	dictEntry[V]
	k [160]byte
}

type dictEntryT22[V any] struct {
	dictEntry[V]
	k [176]byte
}

type dictEntryT24[V any] struct {
	dictEntry[V]
	k [192]byte
}

type dictEntryT26[V any] struct {
	dictEntry[V]
	k [208]byte
}

type dictEntryT28[V any] struct {
	dictEntry[V]
	k [224]byte
}

type dictEntryT30[V any] struct {
	dictEntry[V]
	k [240]byte
}

type dictEntryT32[V any] struct {
	dictEntry[V]
	k [256]byte
}

// newDictEntry allocates an entry holding a copy of key (for a key longer than
// the inline limit, key itself, copied first if copyKey).
func newDictEntry[V any](key string, copyKey bool) *dictEntry[V] {
	var e *dictEntry[V]
	switch w := dictTail[V](len(key)); {
	case w < 0:
		if copyKey {
			key = strings.Clone(key)
		}
		x := &dictEntryExt[V]{ext: key}
		x.klen = keyExt
		return &x.dictEntry
	case w == 0:
		e = new(dictEntry[V])
	default:
		e = newDictEntryT[V](w)
	}
	e.klen = uint32(len(key))
	if len(key) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), dictKeyOff[V]())), len(key)), key)
	}
	return e
}

// An inline entry's klen holds the key's length in its low klenBits bits
// and, for an entry made with room (newDictEntryRoom), its tail's words above
// them: the room's bytes follow the key's up to the tail's end (dictRoom).
// keyExt (all bits set) cannot be such a pair: a tail has at most 32 words.
const (
	klenBits = 16
	klenMask = 1<<klenBits - 1
)

// key returns e's key (see the contract above: it shares e's memory).
func (e *dictEntry[V]) key() string {
	if e.klen == keyExt {
		return (*dictEntryExt[V])(unsafe.Pointer(e)).ext
	}
	n := int(e.klen & klenMask)
	if n == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(e), dictKeyOff[V]())), n)
}

// newDictEntryRoom allocates an entry holding a copy of key and at least room
// bytes after it, more if the allocator's size class of the entry leaves them
// (so that a value kept there can grow in place). An entry whose key and room
// are more than an entry holds inline gets no room (newDictEntry).
func newDictEntryRoom[V any](key string, room int) *dictEntry[V] {
	w := dictTail[V](len(key) + room)
	if w <= 0 {
		// w == 0: the padding holds key and room; w < 0: no room
		return newDictEntry[V](key, true)
	}
	// fill the size class: the words it has past the tail asked for, as far
	// as a tail type exists for them
	head := int64(unsafe.Sizeof(dictEntry[V]{}))
	fit := int((allocSize(head+8*int64(w)) - head) / 8)
	for fit > w && (fit > 32 || (fit > 16 && fit&1 == 1)) {
		fit--
	}
	e := newDictEntryT[V](fit)
	e.klen = uint32(len(key)) | uint32(fit)<<klenBits
	copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), dictKeyOff[V]())), len(key)), key)
	return e
}

// dictEntryOf returns the entry whose value slot is v (a slot a Dict handed
// out).
func dictEntryOf[V any](v *V) *dictEntry[V] {
	var z dictEntry[V]
	return (*dictEntry[V])(unsafe.Add(unsafe.Pointer(v), -int(unsafe.Offsetof(z.val))))
}

// dictRoom returns the bytes after the key of the entry whose value is *v, up
// to the entry's end: the room newDictEntryRoom gave it (empty for an entry
// with a long key). v must be the value slot of a dict entry.
func dictRoom[V any](v *V) []byte {
	e := dictEntryOf(v)
	if e.klen == keyExt {
		return nil
	}
	n := int(e.klen & klenMask)
	end := dictKeyPad[V]() + 8*int(e.klen>>klenBits)
	if n >= end {
		return nil
	}
	p := (*byte)(unsafe.Add(unsafe.Pointer(e), dictKeyOff[V]()+uintptr(n)))
	return unsafe.Slice(p, end-n)
}

// dictEntryBytes is the bytes the Go allocator uses for the entry whose value
// is *v (with its key's own string for a long key).
func dictEntryBytes[V any](v *V) int64 {
	e := dictEntryOf(v)
	if e.klen == keyExt {
		return dictEntrySize[V](len(e.key()))
	}
	if w := e.klen >> klenBits; w > 0 {
		return allocSize(int64(unsafe.Sizeof(dictEntry[V]{})) + 8*int64(w))
	}
	return dictEntrySize[V](int(e.klen))
}

// dictKeyOff is where an inline key starts in an entry: right after klen.
func dictKeyOff[V any]() uintptr {
	var e dictEntry[V]
	return unsafe.Offsetof(e.klen) + 4
}

// dictKeyPad is how many key bytes fit in dictEntry[V]'s own end padding.
func dictKeyPad[V any]() int {
	return int(unsafe.Sizeof(dictEntry[V]{}) - dictKeyOff[V]())
}

// dictTail is the tail array, in words, of an entry whose key has n bytes: 0
// when the key fits in the padding, whole words up to 16 past it, then an even
// number of words; -1 for a key of more than dictInlineMax bytes past the
// padding, which keeps its own string.
func dictTail[V any](n int) int {
	n -= dictKeyPad[V]()
	switch {
	case n <= 0:
		return 0
	case n > dictInlineMax:
		return -1
	}
	w := (n + 7) / 8
	if w > 16 {
		w += w & 1
	}
	return w
}

// dictEntrySize is the bytes the Go allocator uses for an entry of V with a
// key of n bytes (its entry, and for a long key the key's own string).
func dictEntrySize[V any](n int) int64 {
	w := dictTail[V](n)
	if w < 0 {
		return allocSize(int64(unsafe.Sizeof(dictEntryExt[V]{}))) + allocSize(int64(n))
	}
	return allocSize(int64(unsafe.Sizeof(dictEntry[V]{})) + 8*int64(w))
}

// newDictEntryT allocates an entry with a tail array of w words.
func newDictEntryT[V any](w int) *dictEntry[V] {
	switch w {
	case 1:
		return &new(dictEntryT1[V]).dictEntry
	case 2:
		return &new(dictEntryT2[V]).dictEntry
	case 3:
		return &new(dictEntryT3[V]).dictEntry
	case 4:
		return &new(dictEntryT4[V]).dictEntry
	case 5:
		return &new(dictEntryT5[V]).dictEntry
	case 6:
		return &new(dictEntryT6[V]).dictEntry
	case 7:
		return &new(dictEntryT7[V]).dictEntry
	case 8:
		return &new(dictEntryT8[V]).dictEntry
	case 9:
		return &new(dictEntryT9[V]).dictEntry
	case 10:
		return &new(dictEntryT10[V]).dictEntry
	case 11:
		return &new(dictEntryT11[V]).dictEntry
	case 12:
		return &new(dictEntryT12[V]).dictEntry
	case 13:
		return &new(dictEntryT13[V]).dictEntry
	case 14:
		return &new(dictEntryT14[V]).dictEntry
	case 15:
		return &new(dictEntryT15[V]).dictEntry
	case 16:
		return &new(dictEntryT16[V]).dictEntry
	case 18:
		return &new(dictEntryT18[V]).dictEntry
	case 20:
		return &new(dictEntryT20[V]).dictEntry
	case 22:
		return &new(dictEntryT22[V]).dictEntry
	case 24:
		return &new(dictEntryT24[V]).dictEntry
	case 26:
		return &new(dictEntryT26[V]).dictEntry
	case 28:
		return &new(dictEntryT28[V]).dictEntry
	case 30:
		return &new(dictEntryT30[V]).dictEntry
	case 32:
		return &new(dictEntryT32[V]).dictEntry
	}
	panic("keyspace: dict entry tail out of range")
}
