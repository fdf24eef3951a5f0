package keyspace

import "unsafe"

// Set is a set, handled through the Entry that holds it, as Hash and ZSet are
// (docs/decisions/0030-compact-collections-in-the-entry.md): an intset or a
// listpack set lives in the entry (p the buffer, n its length, c the member
// count, Enc the encoding and an intset's width); a hashtable set is a *setObj
// the entry points to. Each method loads the inline form into a setObj on the
// caller's stack, runs it and stores it back. The methods that may convert the
// set take the keyspace, whose limits and seed decide it (an entry has no room
// to remember it). A Set from the constructors is a stand-alone entry:
// DB.SetObject and Entry.SetObj copy it, and the stored entry's handle
// (Entry.Obj) is the one to use afterwards.
type Set Entry

// Entry.Enc of an inline intset, by width (2, 4, 8 bytes); an inline listpack
// set is compactInline.
const (
	setInlineIntset2 uint8 = compactBoxed + 1 + iota
	setInlineIntset4
	setInlineIntset8
)

func (s *Set) e() *Entry { return (*Entry)(s) }

// open returns the set's setObj: the boxed one, or the inline form loaded into
// t with ks (nil for a change that cannot convert the set).
func (s *Set) open(t *setObj, ks *Keyspace) *setObj {
	if s.Enc == compactBoxed {
		return (*setObj)(s.p)
	}
	t.ks = ks
	t.buf = s.e().compactBytes()
	n, ok := s.e().compactCount()
	switch x := s.e().inlineEnc(); x {
	case compactInline:
		t.enc = SetListpack
		if !ok {
			n = t.countLP()
		}
	default:
		t.enc, t.w = SetIntset, 2<<(x-setInlineIntset2)
		if !ok {
			n = len(t.buf) / int(t.w)
		}
	}
	t.n = int32(n)
	return t
}

// close stores o back after a change made through open: inline while it is an
// intset or a listpack, boxed (in a copy on the heap) once it converted.
func (s *Set) close(o *setObj) {
	if s.Enc == compactBoxed {
		return
	}
	s.store(o)
}

// store makes o the entry's value: inline unless o is a hashtable.
func (s *Set) store(o *setObj) {
	switch o.enc {
	case SetHashtable:
		if s.Enc == compactBoxed && (*setObj)(s.p) == o {
			return
		}
		boxCopy(s.e(), o)
	case SetListpack:
		s.e().storeCompact(o.buf, int(o.n))
	default:
		s.e().storeCompact(o.buf, int(o.n))
		s.Enc |= setInlineIntset2 + uint8(o.w/4) // 2 -> +0, 4 -> +1, 8 -> +2
	}
}

// boxed returns the setObj of a hashtable set, nil for an inline one.
func (s *Set) boxed() *setObj { return (*setObj)(s.e().boxedPtr()) }

// newSetOf wraps o in a stand-alone handle.
func newSetOf(o *setObj) *Set {
	s := &Set{Kind: KindSet}
	if o.enc == SetHashtable {
		s.e().setBoxed(unsafe.Pointer(o))
	} else {
		s.store(o)
	}
	return s
}

// countLP counts the members of a listpack set by walking it.
func (s *setObj) countLP() int {
	n := 0
	for off := 0; off < len(s.buf); n++ {
		_, off = s.lpEntry(off)
	}
	return n
}

// Presize is setTypeCreate's choice for an empty set about to get first and
// about hint members in all: an intset if first is an integer and hint fits
// an intset, else a listpack if hint fits one, else a hashtable presized for
// hint. Only for an empty set, such as one just stored from a nil *Set.
func (s *Set) Presize(ks *Keyspace, first []byte, hint int) {
	lim := ks.Limits
	switch {
	case isCanonicalInt(first) && int64(hint) <= lim.SetMaxIntsetEntries():
		s.e().storeCompact(nil, 0)
		s.Enc |= setInlineIntset2
	case int64(hint) <= lim.SetMaxListpackEntries():
		s.e().storeCompact(nil, 0)
	default:
		s.e().setBoxed(unsafe.Pointer(&setObj{ks: ks, enc: SetHashtable, ht: ks.newSetDict(hint)}))
	}
}

// Len is the number of members (SCARD).
func (s *Set) Len() int {
	if n, ok := s.e().inlineLen(); ok {
		return n
	}
	var t setObj
	return s.open(&t, nil).Len()
}

// SetEnc returns the encoding.
func (s *Set) SetEnc() SetEnc {
	switch s.e().inlineEnc() {
	case compactBoxed:
		return (*setObj)(s.p).enc
	case compactInline:
		return SetListpack
	}
	return SetIntset
}

// Encoding is OBJECT ENCODING's text.
func (s *Set) Encoding() string { return setEncNames[s.SetEnc()] }

func (s *Set) usage(samples int) int64 {
	if o := s.boxed(); o != nil {
		return o.usage(samples)
	}
	return s.e().inlineUsage()
}

// Clone deep-copies the set in the same encoding (setTypeDup, for COPY), into a
// stand-alone handle.
func (s *Set) Clone() any {
	if o := s.boxed(); o != nil {
		return newSetOf(o.Clone())
	}
	c := Set(s.e().cloneInline())
	return &c
}

// MaybeConvert is setTypeMaybeConvert: a compact set about to receive hint
// members converts to a hashtable up front when hint alone exceeds its limit
// (even if the members turn out to be present already).
func (s *Set) MaybeConvert(ks *Keyspace, hint int) {
	var t setObj
	x := s.open(&t, ks)
	x.MaybeConvert(hint)
	s.close(x)
}

// Add inserts m (copied) and reports whether it was new (setTypeAdd), converting
// the encoding where Redis does.
func (s *Set) Add(ks *Keyspace, m []byte) bool {
	var t setObj
	x := s.open(&t, ks)
	added := x.Add(m)
	s.close(x)
	return added
}

// AddAll is Reserve then Add for each of members in one pass over the set, so
// that a new set's reserved buffer is filled without a copy (SADD); it returns
// the number of members added.
func (s *Set) AddAll(ks *Keyspace, members [][]byte) (added int) {
	var t setObj
	x := s.open(&t, ks)
	x.Reserve(members)
	for _, m := range members {
		if x.Add(m) {
			added++
		}
	}
	s.close(x)
	return added
}

// Reserve sizes the buffer of a new, empty compact set for members, which the
// caller is about to Add: one allocation instead of one per member while the
// set grows. It changes no encoding: an intset takes the width of its widest
// member, as adding them would.
func (s *Set) Reserve(ks *Keyspace, members [][]byte) {
	var t setObj
	x := s.open(&t, ks)
	x.Reserve(members)
	s.close(x)
}

// Remove deletes m and reports whether it was a member (setTypeRemove).
func (s *Set) Remove(m []byte) bool {
	var t setObj
	x := s.open(&t, nil)
	ok := x.Remove(m)
	s.close(x)
	return ok
}

// Has reports whether m is a member (setTypeIsMember). It does not allocate.
func (s *Set) Has(m []byte) bool {
	var t setObj
	return s.open(&t, nil).Has(m)
}

// Range calls fn for each member until fn returns false, in the encoding's
// order: ascending for an intset, insertion order for a listpack, table order
// for a hashtable. fn must not modify s; m is valid only during the call.
func (s *Set) Range(fn func(m []byte) bool) {
	var t setObj
	s.open(&t, nil).Range(fn)
}

// Members appends every member to dst in Range's order. The slices alias the
// set (or, for an intset, one new buffer) and stay valid until s is modified.
func (s *Set) Members(dst [][]byte) [][]byte {
	var t setObj
	return s.open(&t, nil).Members(dst)
}

// Random returns a uniformly random member drawn with rnd (a hashtable uses
// Redis's fair random key); s must not be empty. An intset member is formatted
// into scratch.
func (s *Set) Random(rnd func() uint64, scratch []byte) []byte {
	var t setObj
	return s.open(&t, nil).Random(rnd, scratch)
}

// Pop removes a random member and returns it (setTypePopRandom); s must not be
// empty. The bytes are in scratch (grown if needed) or, for a hashtable, the
// member's own immutable string.
func (s *Set) Pop(rnd func() uint64, scratch []byte) []byte {
	var t setObj
	x := s.open(&t, nil)
	m := x.Pop(rnd, scratch)
	s.close(x)
	return m
}

// SampleOrdered calls fn for count distinct members of a listpack set chosen
// uniformly with rnd, in listpack order (lpNextRandom's selection sampling).
// count must not exceed Len.
func (s *Set) SampleOrdered(rnd func() uint64, count int, fn func(m []byte)) {
	var t setObj
	s.open(&t, nil).SampleOrdered(rnd, count, fn)
}

// PopOrdered removes count members of a listpack set chosen as SampleOrdered
// chooses them, calling fn for each in listpack order before it is removed
// (SPOP's listpack paths, then lpBatchDelete). count must not exceed Len.
func (s *Set) PopOrdered(rnd func() uint64, count int, fn func(m []byte)) {
	var t setObj
	x := s.open(&t, nil)
	x.PopOrdered(rnd, count, fn)
	s.close(x)
}

// ScanStep runs one SCAN step over a hashtable set from cursor, calling fn for
// the members of the visited buckets, and returns the next cursor (dictScan).
// It must only be called on a hashtable set.
func (s *Set) ScanStep(cursor uint64, fn func(m []byte)) uint64 {
	return s.boxed().ScanStep(cursor, fn)
}

// AllIntegers reports whether every member is a canonical integer.
func (s *Set) AllIntegers() bool {
	var t setObj
	return s.open(&t, nil).AllIntegers()
}

// ToIntsetIfFits is maybeConvertToIntset: a set whose members are all integers
// (the caller knows) becomes an intset if it has at most set-max-intset-entries
// members. Only for a set that is not stored yet (a *STORE result): a stored
// hashtable set stays boxed.
func (s *Set) ToIntsetIfFits(ks *Keyspace) {
	var t setObj
	x := s.open(&t, ks)
	x.ToIntsetIfFits()
	s.store(x)
}

// ShrinkToFit drops spare capacity of a compact set's buffer (lpShrinkToFit).
func (s *Set) ShrinkToFit() {
	var t setObj
	x := s.open(&t, nil)
	x.ShrinkToFit()
	s.close(x)
}

// IntsetRaw returns an intset's width in bytes and its contents (sorted
// little-endian integers), as intset.c lays them out. Only for SetIntset.
func (s *Set) IntsetRaw() (width int, data []byte) {
	var t setObj
	return s.open(&t, nil).IntsetRaw()
}
