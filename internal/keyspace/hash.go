package keyspace

import (
	"encoding/binary"
	"unsafe"
)

// Hash is a hash value in one of Redis's three encodings, converting exactly when
// Redis converts and never back:
//
//   - listpack: one byte buffer of field/value pairs in insertion order (an update
//     replaces the value in place), while the hash has at most
//     hash-max-listpack-entries fields of at most hash-max-listpack-value bytes;
//   - listpackex: the same buffer with a deadline per field, entered the first
//     time a field-expiry command touches a listpack hash. As in Redis, fields are
//     kept ordered by deadline (earliest first, fields without one last, in the
//     order they lost or never had one), which is the order HGETALL replies in;
//   - hashtable: a Dict of fields, each entry one allocation holding the
//     field and its value (hval), plus a min-heap of the fields that carry a
//     deadline so that the earliest one is known in O(1).
//
// Field deadlines are absolute Unix ms (0: none). A Hash does not read the clock:
// callers pass now. A field whose deadline has passed stays in the hash until a
// command or the sweeper deletes it (Redis's lazy and active field expiry): Len
// counts it, Get reports it with its deadline, and callers decide (see
// internal/command/hash.go).
//
// Slices handed out (Get, Range, Scan, Entries, Random) are views of the hash's
// memory: valid until the next modification, never to be modified. A Hash is not
// safe for concurrent use.
type hashObj struct {
	lp   []byte     // listpack encodings: entries, see appendEntry
	t    *hashTable // hashtable encoding
	n    int32      // listpack encodings: number of fields
	ttls int32      // fields that carry a deadline
	reg  int32      // 1-based slot in the owning DB's field-TTL registry; 0 = none
	enc  uint8
}

// Hash encodings.
const (
	encListpack uint8 = iota
	encListpackEx
	encHashtable
)

// HashOpts are a command's encoding thresholds and the seed of the table a hash
// may turn into; Keyspace.HashOpts reads them from the live configuration.
type HashOpts struct {
	MaxEntries int // hash-max-listpack-entries
	MaxValue   int // hash-max-listpack-value
	Seed       uint64
}

// HashOpts returns the current hash encoding thresholds.
func (ks *Keyspace) HashOpts() HashOpts {
	return HashOpts{
		MaxEntries: int(ks.Limits.HashMaxListpackEntries()),
		MaxValue:   int(ks.Limits.HashMaxListpackValue()),
		Seed:       ks.seed ^ 0x6a09e667f3bcc908,
	}
}

// HashField is one field of a hash, as Entries returns it (views).
type HashField struct {
	F, V []byte
	Exp  int64
}

// Len is the number of fields, including fields whose deadline has passed but
// that were not deleted yet (Redis's HLEN counts them too).
func (h *hashObj) Len() int {
	if h.t != nil {
		return h.t.d.Len()
	}
	return int(h.n)
}

// FieldTTLs is the number of fields that carry a deadline.
func (h *hashObj) FieldTTLs() int { return int(h.ttls) }

// Compact reports whether the hash is in a listpack encoding.
func (h *hashObj) Compact() bool { return h.t == nil }

// Encoding is OBJECT ENCODING's text.
func (h *hashObj) Encoding() string {
	switch h.enc {
	case encListpackEx:
		return "listpackex"
	case encHashtable:
		return "hashtable"
	}
	return "listpack"
}

// ---- listpack encodings ----
//
// An entry is uvarint(len(field)) field uvarint(len(value)) value, followed in
// listpackex by uvarint(deadline).

func (h *hashObj) ex() bool { return h.enc == encListpackEx }

// countLP counts the fields of the listpack by walking it.
func (h *hashObj) countLP() int {
	n := 0
	for off := 0; off < len(h.lp); n++ {
		off = h.lpAt(off).end
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func readUvarint(b []byte, off int) (uint64, int) {
	if c := b[off]; c < 0x80 {
		return uint64(c), off + 1
	}
	v, n := binary.Uvarint(b[off:])
	return v, off + n
}

// lpEntry is a parsed listpack entry: bounds [off, end) and views.
type lpEntry struct {
	off, end int
	f, v     []byte
	exp      int64
}

// lpAt parses the entry starting at off.
func (h *hashObj) lpAt(off int) lpEntry {
	e := lpEntry{off: off}
	fl, p := readUvarint(h.lp, off)
	e.f = h.lp[p : p+int(fl) : p+int(fl)]
	p += int(fl)
	vl, p := readUvarint(h.lp, p)
	e.v = h.lp[p : p+int(vl) : p+int(vl)]
	p += int(vl)
	if h.ex() {
		var x uint64
		x, p = readUvarint(h.lp, p)
		e.exp = int64(x)
	}
	e.end = p
	return e
}

// lpFind returns the entry of field f.
func (h *hashObj) lpFind(f []byte) (lpEntry, bool) {
	lp, ex := h.lp, h.ex()
	for off := 0; off < len(lp); {
		fl, p := readUvarint(lp, off)
		if int(fl) == len(f) && string(lp[p:p+int(fl)]) == string(f) {
			return h.lpAt(off), true
		}
		p += int(fl)
		vl, p := readUvarint(lp, p)
		p += int(vl)
		if ex {
			_, p = readUvarint(lp, p)
		}
		off = p
	}
	return lpEntry{}, false
}

func (h *hashObj) entrySize(f, v []byte, exp int64) int {
	n := uvarintLen(uint64(len(f))) + len(f) + uvarintLen(uint64(len(v))) + len(v)
	if h.ex() {
		n += uvarintLen(uint64(exp))
	}
	return n
}

func (h *hashObj) writeEntry(dst, f, v []byte, exp int64) {
	p := binary.PutUvarint(dst, uint64(len(f)))
	p += copy(dst[p:], f)
	p += binary.PutUvarint(dst[p:], uint64(len(v)))
	p += copy(dst[p:], v)
	if h.ex() {
		binary.PutUvarint(dst[p:], uint64(exp))
	}
}

// lpReplace replaces lp[off:end] (possibly empty: an insert) with an entry. f and
// v must not alias lp.
func (h *hashObj) lpReplace(off, end int, f, v []byte, exp int64) {
	sz := h.entrySize(f, v, exp)
	delta := sz - (end - off)
	switch {
	case delta > 0:
		h.lp = growCompact(h.lp, delta)
		copy(h.lp[end+delta:], h.lp[end:len(h.lp)-delta])
	case delta < 0:
		copy(h.lp[end+delta:], h.lp[end:])
		h.lp = h.lp[:len(h.lp)+delta]
	}
	h.writeEntry(h.lp[off:off+sz], f, v, exp)
}

func (h *hashObj) lpRemove(off, end int) {
	copy(h.lp[off:], h.lp[end:])
	h.lp = h.lp[:len(h.lp)-(end-off)]
}

// lpInsertSorted inserts an entry at its place in a listpackex: before the first
// entry without a deadline or with a deadline >= exp (listpackExAddInternal); an
// entry without a deadline goes last. f and v must not alias lp.
func (h *hashObj) lpInsertSorted(f, v []byte, exp int64) {
	off := len(h.lp)
	if exp != 0 {
		for p := 0; p < len(h.lp); {
			e := h.lpAt(p)
			if e.exp == 0 || e.exp >= exp {
				off = p
				break
			}
			p = e.end
		}
	}
	h.lpReplace(off, off, f, v, exp)
}

// lpMove re-files entry e with deadline exp (listpackExUpdateExpiry): it is
// removed and inserted again in deadline order, even if exp is unchanged.
func (h *hashObj) lpMove(e lpEntry, exp int64) {
	var stack [256]byte
	tmp := stack[:0]
	if len(e.f)+len(e.v) > len(stack) {
		tmp = make([]byte, 0, len(e.f)+len(e.v))
	}
	tmp = append(append(tmp, e.f...), e.v...)
	f, v := tmp[:len(e.f)], tmp[len(e.f):]
	h.lpRemove(e.off, e.end)
	h.lpInsertSorted(f, v, exp)
}

// toEx turns a listpack into a listpackex (hashTypeConvertListpack): every field
// gets "no deadline", order unchanged.
func (h *hashObj) toEx() {
	if h.enc != encListpack {
		return
	}
	out := make([]byte, 0, len(h.lp)+int(h.n))
	for off := 0; off < len(h.lp); {
		e := h.lpAt(off)
		out = append(out, h.lp[e.off:e.end]...)
		out = append(out, 0)
		off = e.end
	}
	h.lp, h.enc = out, encListpackEx
}

// ---- hashtable encoding ----

// hval is a field's value in a hashtable: when x is nil the value is in the
// dict entry's room, after the field (uvarint length, bytes), so that a field
// and its value take one allocation of the field's and value's length plus 24
// bytes (8 in a hash of 13-byte fields and values: 48 bytes, Redis's entry
// and its two sds strings take 57); otherwise x holds it. A field gets an x
// when its value does not fit the room (a value over an entry's inline limit,
// or an update that outgrew the room), or when it gets a deadline; it keeps
// it after. The room then lies unused: entries never move (Dict's contract),
// so that the heap's references stay valid.
type hval struct {
	x *hext
}

type hext struct {
	v    []byte
	exp  int64
	hidx int32 // 1-based slot in the table's deadline heap; 0 = none
}

type ttlRef struct {
	key string // the dict's own key
	x   *hext
}

// valRoom is the room a value of n bytes takes in an entry.
func valRoom(n int) int { return uvarintLen(uint64(n)) + n }

// val returns the value of the field whose slot is x (a view).
func (x *hval) val() []byte {
	if x.x != nil {
		return x.x.v
	}
	room := dictRoom(x)
	n, p := readUvarint(room, 0)
	return room[p : p+int(n) : p+int(n)]
}

// exp returns the field's deadline (0: none).
func (x *hval) exp() int64 {
	if x.x != nil {
		return x.x.exp
	}
	return 0
}

// set stores v (copied) as the field's value: in the entry's room if it fits
// there and the field has no x, else in x.
func (x *hval) set(v []byte) {
	if x.x == nil {
		if room := dictRoom(x); valRoom(len(v)) <= len(room) {
			p := binary.PutUvarint(room, uint64(len(v)))
			copy(room[p:], v)
			return
		}
		x.x = &hext{v: append(make([]byte, 0, len(v)), v...)}
		return
	}
	if cap(x.x.v) >= len(v) && cap(x.x.v) <= 2*len(v)+32 {
		x.x.v = append(x.x.v[:0], v...)
	} else {
		x.x.v = append(make([]byte, 0, len(v)), v...)
	}
}

// ext gives the field an x, moving its value there.
func (x *hval) ext() *hext {
	if x.x == nil {
		v := x.val()
		x.x = &hext{v: append(make([]byte, 0, len(v)), v...)}
	}
	return x.x
}

// insert adds field f = v, which must be absent, and returns its slot.
func (t *hashTable) insert(f, v []byte) *hval {
	x, _ := t.d.UpsertRoom(f, valRoom(len(v)))
	x.set(v)
	return x
}

type hashTable struct {
	d    Dict[hval]
	heap []ttlRef // min-heap on v.exp of the fields with a deadline
}

func (t *hashTable) less(i, j int) bool { return t.heap[i].x.exp < t.heap[j].x.exp }

func (t *hashTable) swap(i, j int) {
	t.heap[i], t.heap[j] = t.heap[j], t.heap[i]
	t.heap[i].x.hidx = int32(i + 1)
	t.heap[j].x.hidx = int32(j + 1)
}

func (t *hashTable) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *hashTable) down(i int) {
	n := len(t.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

func (t *hashTable) push(key string, v *hext) {
	t.heap = append(t.heap, ttlRef{key, v})
	v.hidx = int32(len(t.heap))
	t.up(len(t.heap) - 1)
}

func (t *hashTable) fix(i int) {
	t.up(i)
	t.down(i)
}

func (t *hashTable) remove(i int) {
	last := len(t.heap) - 1
	t.heap[i].x.hidx = 0
	if i != last {
		t.heap[i] = t.heap[last]
		t.heap[i].x.hidx = int32(i + 1)
	}
	t.heap[last] = ttlRef{}
	t.heap = t.heap[:last]
	if i != last {
		t.fix(i)
	}
}

// tableSetExp gives the field x (stored under key, which may be "" unless the
// field gets its first deadline) deadline exp (0: none).
func (h *hashObj) tableSetExp(key string, x *hval, exp int64) {
	if exp == 0 && x.x == nil {
		return
	}
	t, v := h.t, x.ext()
	switch {
	case exp == 0 && v.hidx != 0:
		t.remove(int(v.hidx) - 1)
		h.ttls--
	case exp != 0 && v.hidx == 0:
		v.exp = exp
		t.push(key, v)
		h.ttls++
	case exp != 0:
		v.exp = exp
		t.fix(int(v.hidx) - 1)
	}
	v.exp = exp
}

// toTable converts a listpack encoding to a hashtable presized for n fields
// (hashTypeConvert to OBJ_ENCODING_HT); deadlines are kept.
func (h *hashObj) toTable(o HashOpts, n int) {
	if h.t != nil {
		return
	}
	t := &hashTable{d: Dict[hval]{seed: o.Seed, insertRehash: collectionRehash}}
	t.d.Expand(max(n, int(h.n)))
	for off := 0; off < len(h.lp); {
		e := h.lpAt(off)
		off = e.end
		x := t.insert(e.f, e.v)
		if e.exp != 0 {
			key, _ := t.d.KeyOf(e.f)
			v := x.ext()
			v.exp = e.exp
			t.push(key, v)
		}
	}
	h.t, h.lp, h.n, h.enc = t, nil, 0, encHashtable
}

// viewString returns s's bytes without copying; the result must not be modified.
func viewString(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ---- API ----

// Get returns the value and deadline of field f, expired or not.
func (h *hashObj) Get(f []byte) (v []byte, exp int64, ok bool) {
	if h.t != nil {
		x, ok := h.t.d.Get(f)
		if !ok {
			return nil, 0, false
		}
		return x.val(), x.exp(), true
	}
	e, ok := h.lpFind(f)
	return e.v, e.exp, ok
}

// PrepareSets converts a listpack hash to a table before a command stores the
// field/value arguments args (Redis's hashTypeTryConversion): if they are more
// pairs than hash-max-listpack-entries (the table is then sized for them), or
// any of them is longer than hash-max-listpack-value.
func (h *hashObj) PrepareSets(args [][]byte, o HashOpts) {
	if h.t != nil {
		return
	}
	if n := len(args) / 2; n > o.MaxEntries {
		h.toTable(o, n)
		return
	}
	need := 0
	for _, a := range args {
		if len(a) > o.MaxValue {
			h.toTable(o, 0)
			return
		}
		need += uvarintLen(uint64(len(a))) + len(a)
	}
	if h.n == 0 && cap(h.lp) < need {
		// a new hash gets its listpack in one allocation (an upper bound: a field
		// may repeat) rather than one per field, the garbage of a bulk load
		h.lp = growCompact(h.lp[:0], need)[:0]
	}
}

// Set stores f = v (both copied; neither may alias the hash) and reports whether
// f existed, expired or not (Redis's hashTypeSet). The field's deadline is
// cleared unless keepTTL (HASH_SET_KEEP_TTL). A listpack hash becomes a table if
// f or v is longer than hash-max-listpack-value, or if the insert takes it past
// hash-max-listpack-entries fields.
func (h *hashObj) Set(f, v []byte, keepTTL bool, o HashOpts) (existed bool) {
	if h.t == nil && (len(f) > o.MaxValue || len(v) > o.MaxValue) {
		h.toTable(o, 0)
	}
	if t := h.t; t != nil {
		x, existed := t.d.UpsertRoom(f, valRoom(len(v)))
		if existed && !keepTTL {
			h.tableSetExp("", x, 0)
		}
		x.set(v)
		return existed
	}
	e, existed := h.lpFind(f)
	switch {
	case !existed:
		h.lpReplace(len(h.lp), len(h.lp), f, v, 0)
		h.n++
	case e.exp != 0 && !keepTTL:
		// listpackExUpdateExpiry(NO_TTL): the field loses its deadline and moves
		// to the end
		h.lpRemove(e.off, e.end)
		h.lpReplace(len(h.lp), len(h.lp), f, v, 0)
		h.ttls--
	default:
		h.lpReplace(e.off, e.end, f, v, e.exp) // in place
	}
	// checked after updates too: the limit may have been lowered since
	if int(h.n) > o.MaxEntries {
		h.toTable(o, 0)
	}
	return existed
}

// Del deletes field f, expired or not, and reports whether it existed.
func (h *hashObj) Del(f []byte) bool {
	if t := h.t; t != nil {
		x, ok := t.d.Get(f)
		if !ok {
			return false
		}
		if x.x != nil && x.x.hidx != 0 {
			t.remove(int(x.x.hidx) - 1)
			h.ttls--
		}
		t.d.Delete(f)
		return true
	}
	e, ok := h.lpFind(f)
	if !ok {
		return false
	}
	h.lpRemove(e.off, e.end)
	h.n--
	if e.exp != 0 {
		h.ttls--
	}
	return true
}

// EnableFieldTTL prepares a listpack hash for field deadlines: it becomes a
// listpackex (Redis does so whenever a field-expiry command, HSETEX with a TTL
// or HGETEX with an option touches an existing listpack hash, and never goes back).
func (h *hashObj) EnableFieldTTL() { h.toEx() }

// SetFieldTTL gives the existing field f the deadline exp (0: none) and reports
// whether f exists (expired or not). In a listpackex the field is filed again in
// deadline order even if its deadline does not change (listpackExUpdateExpiry);
// a listpack becomes a listpackex first.
func (h *hashObj) SetFieldTTL(f []byte, exp int64) bool {
	if t := h.t; t != nil {
		x, ok := t.d.Get(f)
		if !ok {
			return false
		}
		key := ""
		if exp != 0 && (x.x == nil || x.x.hidx == 0) {
			key, _ = t.d.KeyOf(f)
		}
		h.tableSetExp(key, x, exp)
		return true
	}
	h.toEx()
	e, ok := h.lpFind(f)
	if !ok {
		return false
	}
	if e.exp != 0 {
		h.ttls--
	}
	if exp != 0 {
		h.ttls++
	}
	h.lpMove(e, exp)
	return true
}

// MinExpire is the earliest field deadline, 0 if no field has one.
func (h *hashObj) MinExpire() int64 {
	if h.ttls == 0 {
		return 0
	}
	if t := h.t; t != nil {
		return t.heap[0].x.exp
	}
	return h.lpAt(0).exp // deadline order: the first field expires first
}

// ExpireFields deletes up to max fields whose deadline is <= now, earliest first,
// calling fn (if not nil) with each field's name just before it goes, and returns
// how many it deleted.
func (h *hashObj) ExpireFields(now int64, max int, fn func(f []byte)) int {
	n := 0
	if t := h.t; t != nil {
		for n < max && len(t.heap) > 0 && t.heap[0].x.exp <= now {
			ref := t.heap[0]
			if fn != nil {
				fn(viewString(ref.key))
			}
			t.remove(0)
			t.d.DeleteString(ref.key)
			h.ttls--
			n++
		}
		return n
	}
	if !h.ex() {
		return 0
	}
	end := 0
	for end < len(h.lp) && n < max {
		e := h.lpAt(end)
		if e.exp == 0 || e.exp > now {
			break
		}
		if fn != nil {
			fn(e.f)
		}
		end = e.end
		n++
	}
	if n > 0 {
		h.lpRemove(0, end)
		h.n -= int32(n)
		h.ttls -= int32(n)
	}
	return n
}

// Range calls fn for every field, expired or not, until fn returns false: in
// listpack order for the listpack encodings, in table order otherwise. fn must
// not modify the hash.
func (h *hashObj) Range(fn func(f, v []byte, exp int64) bool) {
	if t := h.t; t != nil {
		t.d.Range(func(k string, x *hval) bool { return fn(viewString(k), x.val(), x.exp()) })
		return
	}
	for off := 0; off < len(h.lp); {
		e := h.lpAt(off)
		if !fn(e.f, e.v, e.exp) {
			return
		}
		off = e.end
	}
}

// Scan runs one HSCAN step from cursor: a listpack hash reports every field and
// returns 0; a table reports the fields of the visited buckets (Dict.Scan, with
// SCAN's guarantee) and returns the next cursor. fn must not modify the hash.
func (h *hashObj) Scan(cursor uint64, fn func(f, v []byte, exp int64)) uint64 {
	if t := h.t; t != nil {
		return t.d.Scan(cursor, func(k string, x *hval) { fn(viewString(k), x.val(), x.exp()) })
	}
	h.Range(func(f, v []byte, exp int64) bool {
		fn(f, v, exp)
		return true
	})
	return 0
}

// Entries appends every field to dst, in Range order.
func (h *hashObj) Entries(dst []HashField) []HashField {
	h.Range(func(f, v []byte, exp int64) bool {
		dst = append(dst, HashField{f, v, exp})
		return true
	})
	return dst
}

// RandomField returns a random field of a non-empty table (Redis's
// dictGetFairRandomKey), drawing from rnd. ok is false for a listpack hash:
// callers pick from Entries instead.
func (h *hashObj) RandomField(rnd func() uint64) (fv HashField, ok bool) {
	if h.t == nil || h.t.d.Len() == 0 {
		return fv, false
	}
	k, x, _ := h.t.d.Random(rnd)
	return HashField{viewString(k), x.val(), x.exp()}, true
}

// Clone deep-copies the hash, encoding and deadlines included (COPY). The copy
// is not in any DB's registry.
func (h *hashObj) Clone() *hashObj {
	c := &hashObj{n: h.n, ttls: h.ttls, enc: h.enc}
	if h.t == nil {
		c.lp = append([]byte(nil), h.lp...)
		return c
	}
	t := &hashTable{d: Dict[hval]{seed: h.t.d.seed, insertRehash: collectionRehash}}
	t.d.Expand(h.t.d.Len())
	h.t.d.Range(func(k string, x *hval) bool {
		c := t.insert(viewString(k), x.val())
		if exp := x.exp(); exp != 0 {
			key, _ := t.d.KeyOf(viewString(k))
			v := c.ext()
			v.exp = exp
			t.push(key, v)
		}
		return true
	})
	c.t = t
	return c
}
