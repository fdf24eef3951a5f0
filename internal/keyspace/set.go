package keyspace

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// SetEnc is the internal encoding of a set, as OBJECT ENCODING names it.
type SetEnc uint8

// Set encodings (Redis 7.2+): intset while every member is a canonical integer
// and there are at most set-max-intset-entries of them; listpack while there are
// at most set-max-listpack-entries members of at most set-max-listpack-value
// bytes; hashtable otherwise.
const (
	SetIntset SetEnc = iota
	SetListpack
	SetHashtable
)

var setEncNames = [...]string{"intset", "listpack", "hashtable"}

// lpSafetySize is LISTPACK_MAX_SAFETY_SIZE: a listpack never grows past 1 GiB.
const lpSafetySize = 1 << 30

// intsetLimit caps set-max-intset-entries, as intsetMaxEntries does.
const intsetLimit = 1 << 30

// Set is a set value. Small sets are one byte buffer, as Redis keeps them:
//
//   - intset: the members as sorted little-endian integers of one width (2, 4
//     or 8 bytes, the smallest that holds every member; it never narrows);
//   - listpack: the members in insertion order, each a uvarint length and the
//     bytes; lookups are linear, as lpFind is;
//   - hashtable: a Dict keyed by the members.
//
// A set converts from intset to listpack or hashtable, and from listpack to
// hashtable, exactly where Redis's t_set.c converts, and never back except
// where Redis itself does (SINTERSTORE's result, SPOP's rebuilt set).
//
// Slices a Set hands out (Range, Random, Members) alias its memory or a
// scratch buffer: they are valid until the set is next modified and must not
// be written to. A Set is not safe for concurrent use.
type setObj struct {
	buf []byte          // intset or listpack bytes
	ht  *Dict[struct{}] // hashtable encoding
	ks  *Keyspace       // encoding limits and hash seed
	n   int32           // members in buf
	enc SetEnc
	w   uint8 // intset width in bytes
}

// setSeedMix separates the hash seed of set tables from the key tables'.
const setSeedMix = 0x9e3779b97f4a7c15

func (ks *Keyspace) newSetDict(hint int) *Dict[struct{}] {
	d := NewDict[struct{}](ks.seed ^ setSeedMix)
	d.insertRehash = collectionRehash
	if hint > 0 {
		d.Expand(hint)
	}
	return d
}

// NewIntsetSet returns an empty set in the intset encoding (createIntsetObject),
// a stand-alone handle.
func (ks *Keyspace) NewIntsetSet() *Set { return &Set{Kind: KindSet, Enc: setInlineIntset2} }

// NewListpackSet returns an empty set in the listpack encoding
// (createSetListpackObject), a stand-alone handle.
func (ks *Keyspace) NewListpackSet() *Set { return &Set{Kind: KindSet} }

// NewSet is setTypeCreate: an empty set that can hold first, for about hint
// members (see Set.Presize), a stand-alone handle.
func (ks *Keyspace) NewSet(first []byte, hint int) *Set {
	s := &Set{Kind: KindSet}
	s.Presize(ks, first, hint)
	return s
}

// MaybeConvert is setTypeMaybeConvert: a compact set about to receive hint
// members converts to a hashtable up front when hint alone exceeds its limit
// (even if the members turn out to be present already).
func (s *setObj) MaybeConvert(hint int) {
	lim := s.ks.Limits
	if (s.enc == SetListpack && int64(hint) > lim.SetMaxListpackEntries()) ||
		(s.enc == SetIntset && int64(hint) > lim.SetMaxIntsetEntries()) {
		s.toHashtable(hint)
	}
}

// Enc returns the encoding.
func (s *setObj) Enc() SetEnc { return s.enc }

// Encoding is OBJECT ENCODING's text.
func (s *setObj) Encoding() string { return setEncNames[s.enc] }

// Len is the number of members (SCARD).
func (s *setObj) Len() int {
	if s.enc == SetHashtable {
		return s.ht.Len()
	}
	return int(s.n)
}

func (s *setObj) intsetMax() int64 { return min(s.ks.Limits.SetMaxIntsetEntries(), intsetLimit) }

// Add inserts m (copied) and reports whether it was new (setTypeAdd), converting
// the encoding where Redis does.
func (s *setObj) Add(m []byte) bool {
	lim := s.ks.Limits
	switch s.enc {
	case SetHashtable:
		_, existed := s.ht.Upsert(m)
		return !existed
	case SetListpack:
		if s.lpFind(m) >= 0 {
			return false
		}
		if int64(s.n) < lim.SetMaxListpackEntries() && int64(len(m)) <= lim.SetMaxListpackValue() &&
			len(s.buf)+len(m) <= lpSafetySize {
			s.lpAppend(m)
		} else {
			s.toHashtable(int(s.n) + 1)
			s.ht.Upsert(m)
		}
		return true
	}
	if v, ok := canonicalInt(m); ok {
		if !s.isAdd(v) {
			return false
		}
		if int64(s.n) > s.intsetMax() {
			s.toHashtable(int(s.n))
		}
		return true
	}
	// A string joins an intset: listpack if the integers and m fit one (the
	// integers budgeted at the width of the longest), else hashtable.
	maxLen, total := 0, 0
	if s.n > 0 {
		maxLen = max(intLen(s.isGet(0)), intLen(s.isGet(int(s.n)-1)))
		total = (maxLen + 2) * int(s.n)
	}
	if int64(s.n) < lim.SetMaxListpackEntries() && int64(len(m)) <= lim.SetMaxListpackValue() &&
		int64(maxLen) <= lim.SetMaxListpackValue() && total+len(m) <= lpSafetySize {
		s.toListpack(int(s.n) + 1)
		s.lpAppend(m)
		s.ShrinkToFit()
	} else {
		s.toHashtable(int(s.n) + 1)
		s.ht.Upsert(m)
	}
	return true
}

// Reserve sizes the buffer of a new, empty compact set for members, which the
// caller is about to Add (SADD creating the key): one allocation instead of one
// per member while the set grows, the garbage of a bulk load. It changes no
// encoding: an intset takes the width of its widest member, as adding them would.
func (s *setObj) Reserve(members [][]byte) {
	if s.n != 0 || s.enc == SetHashtable || len(members) < 2 {
		return
	}
	need := 0
	switch s.enc {
	case SetIntset:
		w := s.w
		for _, m := range members {
			v, ok := canonicalInt(m)
			if !ok {
				return // it becomes a listpack or a table on the way
			}
			w = max(w, intWidth(v))
		}
		if int64(len(members)) > s.intsetMax() {
			return
		}
		s.w, need = w, len(members)*int(w)
	case SetListpack:
		lim := s.ks.Limits
		if int64(len(members)) > lim.SetMaxListpackEntries() {
			return
		}
		for _, m := range members {
			need += uvarintLen(uint64(len(m))) + len(m)
		}
	}
	if cap(s.buf) < need {
		s.buf = growCompact(s.buf[:0], need)[:0]
	}
}

// Remove deletes m and reports whether it was a member (setTypeRemove).
func (s *setObj) Remove(m []byte) bool {
	switch s.enc {
	case SetHashtable:
		_, ok := s.ht.Delete(m)
		return ok
	case SetListpack:
		off := s.lpFind(m)
		if off < 0 {
			return false
		}
		_, end := s.lpEntry(off)
		s.lpCut(off, end)
		return true
	}
	v, ok := canonicalInt(m)
	if !ok {
		return false
	}
	i, found := s.isSearch(v)
	if !found {
		return false
	}
	s.isCut(i)
	return true
}

// Has reports whether m is a member (setTypeIsMember). It does not allocate.
func (s *setObj) Has(m []byte) bool {
	switch s.enc {
	case SetHashtable:
		_, ok := s.ht.Get(m)
		return ok
	case SetListpack:
		return s.lpFind(m) >= 0
	}
	v, ok := canonicalInt(m)
	if !ok {
		return false
	}
	_, found := s.isSearch(v)
	return found
}

// Range calls fn for each member until fn returns false, in the encoding's
// order: ascending for an intset, insertion order for a listpack, table order
// for a hashtable. fn must not modify s; m is valid only during the call.
func (s *setObj) Range(fn func(m []byte) bool) {
	switch s.enc {
	case SetHashtable:
		s.ht.Range(func(k string, _ *struct{}) bool { return fn(stringBytes(k)) })
	case SetListpack:
		for off := 0; off < len(s.buf); {
			m, next := s.lpEntry(off)
			if !fn(m) {
				return
			}
			off = next
		}
	default:
		var tmp [20]byte
		for i := 0; i < int(s.n); i++ {
			if !fn(strconv.AppendInt(tmp[:0], s.isGet(i), 10)) {
				return
			}
		}
	}
}

// Members appends every member to dst in Range's order. The slices alias the
// set (or, for an intset, one new buffer) and stay valid until s is modified.
func (s *setObj) Members(dst [][]byte) [][]byte {
	switch s.enc {
	case SetIntset:
		arena := make([]byte, 0, int(s.n)*8)
		for i := 0; i < int(s.n); i++ {
			start := len(arena)
			arena = strconv.AppendInt(arena, s.isGet(i), 10)
			dst = append(dst, arena[start:len(arena):len(arena)])
		}
	default:
		s.Range(func(m []byte) bool {
			dst = append(dst, m)
			return true
		})
	}
	return dst
}

// Random returns a uniformly random member drawn with rnd (a hashtable uses
// Redis's fair random key); s must not be empty. An intset member is formatted
// into scratch.
func (s *setObj) Random(rnd func() uint64, scratch []byte) []byte {
	switch s.enc {
	case SetHashtable:
		k, _, _ := s.ht.Random(rnd)
		return stringBytes(k)
	case SetListpack:
		m, _, _ := s.lpSeek(int(rnd() % uint64(s.n)))
		return m
	}
	return strconv.AppendInt(scratch[:0], s.isGet(int(rnd()%uint64(s.n))), 10)
}

// Pop removes a random member and returns it (setTypePopRandom); s must not be
// empty. The bytes are in scratch (grown if needed) or, for a hashtable, the
// member's own immutable string.
func (s *setObj) Pop(rnd func() uint64, scratch []byte) []byte {
	switch s.enc {
	case SetHashtable:
		k, _, _ := s.ht.Random(rnd)
		s.ht.DeleteString(k)
		return stringBytes(k)
	case SetListpack:
		m, off, end := s.lpSeek(int(rnd() % uint64(s.n)))
		out := append(scratch[:0], m...)
		s.lpCut(off, end)
		return out
	}
	i := int(rnd() % uint64(s.n))
	out := strconv.AppendInt(scratch[:0], s.isGet(i), 10)
	s.isCut(i)
	return out
}

// SampleOrdered calls fn for count distinct members of a listpack set chosen
// uniformly with rnd, in listpack order (lpNextRandom's selection sampling).
// count must not exceed Len.
func (s *setObj) SampleOrdered(rnd func() uint64, count int, fn func(m []byte)) {
	left := int(s.n)
	for off := 0; off < len(s.buf) && count > 0; left-- {
		m, next := s.lpEntry(off)
		if rnd()%uint64(left) < uint64(count) {
			fn(m)
			count--
		}
		off = next
	}
}

// PopOrdered removes count members of a listpack set chosen as SampleOrdered
// chooses them, calling fn for each in listpack order before it is removed
// (SPOP's listpack paths, then lpBatchDelete). count must not exceed Len.
func (s *setObj) PopOrdered(rnd func() uint64, count int, fn func(m []byte)) {
	left, w := int(s.n), 0
	for r := 0; r < len(s.buf); left-- {
		m, next := s.lpEntry(r)
		if count > 0 && rnd()%uint64(left) < uint64(count) {
			fn(m)
			count--
			s.n--
		} else {
			w += copy(s.buf[w:], s.buf[r:next])
		}
		r = next
	}
	s.buf = s.buf[:w]
	s.shrinkIfSparse()
}

// ScanStep runs one SCAN step over a hashtable set from cursor, calling fn for
// the members of the visited buckets, and returns the next cursor (dictScan).
// It must only be called on a hashtable set.
func (s *setObj) ScanStep(cursor uint64, fn func(m []byte)) uint64 {
	return s.ht.Scan(cursor, func(k string, _ *struct{}) { fn(stringBytes(k)) })
}

// AllIntegers reports whether every member is a canonical integer.
func (s *setObj) AllIntegers() bool {
	if s.enc == SetIntset {
		return true
	}
	all := true
	s.Range(func(m []byte) bool {
		all = isCanonicalInt(m)
		return all
	})
	return all
}

// ToIntsetIfFits is maybeConvertToIntset: a set whose members are all integers
// (the caller knows) becomes an intset if it has at most set-max-intset-entries
// members.
func (s *setObj) ToIntsetIfFits() {
	if s.enc == SetIntset || int64(s.Len()) > s.intsetMax() {
		return
	}
	vals := make([]int64, 0, s.Len())
	s.Range(func(m []byte) bool {
		v, _ := canonicalInt(m)
		vals = append(vals, v)
		return true
	})
	slices.Sort(vals)
	*s = s.ks.intsetOf(vals)
}

// ShrinkToFit drops spare capacity of a compact set's buffer (lpShrinkToFit).
func (s *setObj) ShrinkToFit() {
	if cap(s.buf) > len(s.buf) {
		s.buf = append(make([]byte, 0, len(s.buf)), s.buf...)
	}
}

// Clone deep-copies the set in the same encoding (setTypeDup, for COPY).
func (s *setObj) Clone() *setObj {
	c := &setObj{ks: s.ks, enc: s.enc, w: s.w, n: s.n}
	if s.enc == SetHashtable {
		c.ht = s.ks.newSetDict(s.ht.Len())
		s.ht.Range(func(k string, _ *struct{}) bool {
			c.ht.UpsertString(k)
			return true
		})
		return c
	}
	c.buf = append(make([]byte, 0, len(s.buf)), s.buf...)
	return c
}

// toHashtable converts a compact set to a hashtable presized for hint members
// (setTypeConvertAndExpand to OBJ_ENCODING_HT).
func (s *setObj) toHashtable(hint int) {
	d := s.ks.newSetDict(hint)
	s.Range(func(m []byte) bool {
		d.Upsert(m)
		return true
	})
	*s = setObj{ks: s.ks, enc: SetHashtable, ht: d}
}

// toListpack converts an intset to a listpack with room for hint members.
func (s *setObj) toListpack(hint int) {
	est := hint * 2
	if s.n > 0 {
		est = hint * (2 + max(intLen(s.isGet(0)), intLen(s.isGet(int(s.n)-1))))
	}
	buf := make([]byte, 0, est)
	var tmp [20]byte
	for i := 0; i < int(s.n); i++ {
		d := strconv.AppendInt(tmp[:0], s.isGet(i), 10)
		buf = append(buf, byte(len(d)))
		buf = append(buf, d...)
	}
	*s = setObj{ks: s.ks, enc: SetListpack, buf: buf, n: s.n}
}

// --- listpack: [uvarint len][bytes] per member

// lpEntry returns the member at byte offset off and the offset of the next.
func (s *setObj) lpEntry(off int) (m []byte, next int) {
	l, k := uint64(s.buf[off]), 1
	if l >= 0x80 {
		l, k = binary.Uvarint(s.buf[off:])
	}
	start := off + k
	end := start + int(l)
	return s.buf[start:end:end], end
}

// lpFind returns the offset of member m, or -1.
func (s *setObj) lpFind(m []byte) int {
	for off := 0; off < len(s.buf); {
		e, next := s.lpEntry(off)
		if len(e) == len(m) && string(e) == string(m) {
			return off
		}
		off = next
	}
	return -1
}

// lpSeek returns the i-th member and its byte range.
func (s *setObj) lpSeek(i int) (m []byte, off, end int) {
	for {
		m, end = s.lpEntry(off)
		if i == 0 {
			return m, off, end
		}
		i--
		off = end
	}
}

func (s *setObj) lpAppend(m []byte) {
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(m)))
	at := len(s.buf)
	s.buf = growBuf(s.buf, h+len(m))
	copy(s.buf[at:], hdr[:h])
	copy(s.buf[at+h:], m)
	s.n++
}

// lpCut removes the entry at buf[off:end].
func (s *setObj) lpCut(off, end int) {
	s.buf = append(s.buf[:off], s.buf[end:]...)
	s.n--
	s.shrinkIfSparse()
}

// --- intset: sorted little-endian integers of width w

func intWidth(v int64) uint8 {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func putInt(b []byte, w uint8, v int64) {
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

func (s *setObj) isGet(i int) int64 {
	switch s.w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(s.buf[2*i:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(s.buf[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(s.buf[8*i:]))
}

// isSearch returns the index of v, or where it would be inserted.
func (s *setObj) isSearch(v int64) (int, bool) {
	lo, hi := 0, int(s.n)
	if hi > 0 && intWidth(v) > s.w {
		if v < 0 {
			return 0, false
		}
		return hi, false
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch x := s.isGet(mid); {
		case x < v:
			lo = mid + 1
		case x > v:
			hi = mid
		default:
			return mid, true
		}
	}
	return lo, false
}

// isAdd inserts v, widening every member first if v needs more bytes
// (intsetUpgradeAndAdd); it reports whether v was new.
func (s *setObj) isAdd(v int64) bool {
	if w := intWidth(v); w > s.w {
		n := int(s.n)
		buf := make([]byte, (n+1)*int(w), (n+1)*int(w)+(n+1)*int(w)/8)
		at := 0
		if v < 0 { // wider than every member: it goes first or last
			putInt(buf, w, v)
			at = 1
		} else {
			putInt(buf[n*int(w):], w, v)
		}
		for i := 0; i < n; i++ {
			putInt(buf[(i+at)*int(w):], w, s.isGet(i))
		}
		s.buf, s.w, s.n = buf, w, s.n+1
		return true
	}
	i, found := s.isSearch(v)
	if found {
		return false
	}
	w := int(s.w)
	s.buf = growBuf(s.buf, w)
	copy(s.buf[(i+1)*w:], s.buf[i*w:len(s.buf)-w])
	putInt(s.buf[i*w:], s.w, v)
	s.n++
	return true
}

// isCut removes the member at index i.
func (s *setObj) isCut(i int) {
	w := int(s.w)
	s.buf = append(s.buf[:i*w], s.buf[(i+1)*w:]...)
	s.n--
	s.shrinkIfSparse()
}

// --- buffers

// growBuf extends b by extra bytes with growCompact's policy (compact sets
// should stay close to their size, as Redis's exactly reallocated listpacks are).
func growBuf(b []byte, extra int) []byte {
	return growCompact(b, extra)
}

// shrinkIfSparse gives back a buffer at most half used.
func (s *setObj) shrinkIfSparse() {
	if c := cap(s.buf); c > 64 && len(s.buf) <= c/2 {
		s.buf = append(make([]byte, 0, len(s.buf)+len(s.buf)/8), s.buf...)
	}
}

// --- members as integers

// canonicalInt parses m if it is a canonical int64 (Redis's string2ll).
func canonicalInt(m []byte) (int64, bool) {
	if !isCanonicalInt(m) {
		return 0, false
	}
	neg := m[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var u uint64
	for ; i < len(m); i++ {
		u = u*10 + uint64(m[i]-'0')
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

// intLen is sdigits10: the length of v in decimal, sign included.
func intLen(v int64) int {
	var tmp [20]byte
	return len(strconv.AppendInt(tmp[:0], v, 10))
}

// stringBytes views s as bytes without copying; the bytes must not be written.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
