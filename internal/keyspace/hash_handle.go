package keyspace

import "unsafe"

// Hash is a hash value, handled through the Entry that holds it: *Hash is the
// entry itself (Entry.Obj returns it without allocating), and its methods read
// and write the entry (docs/decisions/0030-compact-collections-in-the-entry.md).
//
// A hash in the plain listpack encoding, the common small hash, lives in the
// entry: p is the listpack's first byte, n its length and c the number of fields
// (compactInline), with no other allocation than the listpack's own. Any other
// encoding (listpackex, hashtable) is a *hashObj the entry points to
// (compactBoxed); hashes never go back from it. Each method loads the inline
// form into a hashObj on the caller's stack, runs it and stores it back.
//
// A Hash from NewHash or the RDB builders is a stand-alone entry: DB.SetObject
// and Entry.SetObj copy it into the key's entry; use the handle of the stored
// entry (Entry.Obj) afterwards, not the stand-alone one.
type Hash Entry

func (h *Hash) e() *Entry { return (*Entry)(h) }

// open returns the hash's hashObj: the boxed one, or the inline form loaded into t.
func (h *Hash) open(t *hashObj) *hashObj {
	if h.Enc == compactBoxed {
		return (*hashObj)(h.p)
	}
	t.lp = h.e().compactBytes()
	n, ok := h.e().compactCount()
	if !ok {
		n = t.countLP()
	}
	t.n = int32(n)
	return t
}

// close stores o back after a change made through open: inline while it is a
// plain listpack, boxed (in a copy on the heap) once it converted.
func (h *Hash) close(o *hashObj) {
	if h.Enc == compactBoxed {
		return
	}
	if o.enc == encListpack {
		h.e().storeCompact(o.lp, int(o.n))
		return
	}
	boxCopy(h.e(), o)
}

// boxed returns the hashObj of a hash in listpackex or hashtable, nil for an
// inline listpack.
func (h *Hash) boxed() *hashObj { return (*hashObj)(h.e().boxedPtr()) }

// newHashOf wraps o in a stand-alone handle.
func newHashOf(o *hashObj) *Hash {
	h := &Hash{Kind: KindHash}
	if o.enc == encListpack {
		h.e().storeCompact(o.lp, int(o.n))
	} else {
		h.e().setBoxed(unsafe.Pointer(o))
	}
	return h
}

// NewHash returns an empty listpack hash (a stand-alone entry).
func NewHash() *Hash { return &Hash{Kind: KindHash} }

// Len is the number of fields, including fields whose deadline has passed but
// that were not deleted yet (Redis's HLEN counts them too).
func (h *Hash) Len() int {
	if n, ok := h.e().inlineLen(); ok {
		return n
	}
	var t hashObj
	return h.open(&t).Len()
}

// FieldTTLs is the number of fields that carry a deadline.
func (h *Hash) FieldTTLs() int {
	if o := h.boxed(); o != nil {
		return int(o.ttls)
	}
	return 0
}

// Compact reports whether the hash is in a listpack encoding.
func (h *Hash) Compact() bool { o := h.boxed(); return o == nil || o.t == nil }

// Encoding is OBJECT ENCODING's text.
func (h *Hash) Encoding() string {
	if o := h.boxed(); o != nil {
		return o.Encoding()
	}
	return "listpack"
}

// Get returns the value and deadline of field f, expired or not.
func (h *Hash) Get(f []byte) (v []byte, exp int64, ok bool) {
	var t hashObj
	return h.open(&t).Get(f)
}

// PrepareSets converts a listpack hash to a table before a command stores the
// field/value arguments args (Redis's hashTypeTryConversion): if they are more
// pairs than hash-max-listpack-entries (the table is then sized for them), or
// any of them is longer than hash-max-listpack-value. SetPairs does it too,
// and also reserves the listpack a new hash needs in one allocation.
func (h *Hash) PrepareSets(args [][]byte, o HashOpts) {
	var t hashObj
	x := h.open(&t)
	x.PrepareSets(args, o)
	h.close(x)
}

// Set stores f = v (both copied; neither may alias the hash) and reports whether
// f existed, expired or not (Redis's hashTypeSet). The field's deadline is
// cleared unless keepTTL (HASH_SET_KEEP_TTL). A listpack hash becomes a table if
// f or v is longer than hash-max-listpack-value, or if the insert takes it past
// hash-max-listpack-entries fields.
func (h *Hash) Set(f, v []byte, keepTTL bool, o HashOpts) (existed bool) {
	var t hashObj
	x := h.open(&t)
	existed = x.Set(f, v, keepTTL, o)
	h.close(x)
	return existed
}

// SetPairs is PrepareSets then Set for each field/value pair of pairs, without
// keepTTL; it returns the number of fields created.
func (h *Hash) SetPairs(pairs [][]byte, o HashOpts) (created int) {
	var t hashObj
	x := h.open(&t)
	x.PrepareSets(pairs, o)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !x.Set(pairs[i], pairs[i+1], false, o) {
			created++
		}
	}
	h.close(x)
	return created
}

// Del deletes field f, expired or not, and reports whether it existed.
func (h *Hash) Del(f []byte) bool {
	var t hashObj
	x := h.open(&t)
	ok := x.Del(f)
	h.close(x)
	return ok
}

// EnableFieldTTL prepares a listpack hash for field deadlines: it becomes a
// listpackex (Redis does so whenever a field-expiry command, HSETEX with a TTL
// or HGETEX with an option touches an existing listpack hash, and never goes back).
func (h *Hash) EnableFieldTTL() {
	var t hashObj
	x := h.open(&t)
	x.toEx()
	h.close(x)
}

// SetFieldTTL gives the existing field f the deadline exp (0: none) and reports
// whether f exists (expired or not). In a listpackex the field is filed again in
// deadline order even if its deadline does not change (listpackExUpdateExpiry);
// a listpack becomes a listpackex first.
func (h *Hash) SetFieldTTL(f []byte, exp int64) bool {
	var t hashObj
	x := h.open(&t)
	ok := x.SetFieldTTL(f, exp)
	h.close(x)
	return ok
}

// MinExpire is the earliest field deadline, 0 if no field has one.
func (h *Hash) MinExpire() int64 {
	if o := h.boxed(); o != nil {
		return o.MinExpire()
	}
	return 0
}

// ExpireFields deletes up to max fields whose deadline is <= now, earliest first,
// calling fn (if not nil) with each field's name just before it goes, and returns
// how many it deleted.
func (h *Hash) ExpireFields(now int64, max int, fn func(f []byte)) int {
	if o := h.boxed(); o != nil {
		return o.ExpireFields(now, max, fn)
	}
	return 0
}

// Range calls fn for every field, expired or not, until fn returns false: in
// listpack order for the listpack encodings, in table order otherwise. fn must
// not modify the hash.
func (h *Hash) Range(fn func(f, v []byte, exp int64) bool) {
	var t hashObj
	h.open(&t).Range(fn)
}

// Scan runs one HSCAN step from cursor: a listpack hash reports every field and
// returns 0; a table reports the fields of the visited buckets (Dict.Scan, with
// SCAN's guarantee) and returns the next cursor. fn must not modify the hash.
func (h *Hash) Scan(cursor uint64, fn func(f, v []byte, exp int64)) uint64 {
	var t hashObj
	return h.open(&t).Scan(cursor, fn)
}

// Entries appends every field to dst, in Range order.
func (h *Hash) Entries(dst []HashField) []HashField {
	var t hashObj
	return h.open(&t).Entries(dst)
}

// RandomField returns a random field of a non-empty table (Redis's
// dictGetFairRandomKey), drawing from rnd. ok is false for a listpack hash:
// callers pick from Entries instead.
func (h *Hash) RandomField(rnd func() uint64) (fv HashField, ok bool) {
	if o := h.boxed(); o != nil {
		return o.RandomField(rnd)
	}
	return fv, false
}

// Clone deep-copies the hash, encoding and deadlines included (COPY), into a
// stand-alone handle. The copy is not in any DB's registry.
func (h *Hash) Clone() any {
	if o := h.boxed(); o != nil {
		return newHashOf(o.Clone())
	}
	c := Hash(h.e().cloneInline())
	return &c
}

func (h *Hash) usage(samples int) int64 {
	if o := h.boxed(); o != nil {
		return o.usage(samples)
	}
	return h.e().inlineUsage()
}
