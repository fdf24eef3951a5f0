package keyspace

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Kind is the Redis type of a value, as TYPE reports it.
type Kind uint8

// Value kinds. KindNone is never stored.
const (
	KindNone Kind = iota
	KindString
	KindList
	KindHash
	KindSet
	KindZSet
	KindStream
)

var kindNames = [...]string{"none", "string", "list", "hash", "set", "zset", "stream"}

// String returns the name TYPE replies with.
func (k Kind) String() string { return kindNames[k] }

// String encodings, as OBJECT ENCODING reports them.
const (
	EncRaw    uint8 = iota // "raw": modified in place (APPEND, SETRANGE) or longer than 44 bytes
	EncEmbstr              // "embstr": short string
	EncInt                 // "int": a decimal int64 in canonical form
)

// embstrLimit is Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
const embstrLimit = 44

// Entry is one key's value and metadata. It is owned by its DB; pointers handed
// out by DB methods are valid until the key is deleted or the DB is flushed, and
// only while the caller holds the engine's serialisation point.
//
// The value is reached through accessors (Bytes, SetBytes, Obj, SetObj) and the
// deadline through DB.ExpireAt, so that the layout can change without touching
// commands. The entry is 24 bytes, so that with its key and chain link a dict
// entry is 48 (a Go size class). The layout is a union
// (docs/decisions/0024-memlayout-entry-layout.md): p is the only pointer, and
// what it points to depends on Kind:
//
//   - KindString: the first byte of the value's backing array (a Go allocation
//     of at least n + capSlack(c) bytes, or nil for an empty value), or,
//     when n == bigStr, a *[]byte holding a value of 4 GiB or more;
//   - KindList, KindHash, KindSet, KindZSet with Enc != compactBoxed: a
//     listpack (or a set's intset, or a list's header and node) in the entry
//     itself (p its first byte or nil, n its length, c its element count;
//     docs/decisions/0030-compact-collections-in-the-entry.md); with Enc ==
//     compactBoxed: the *listObj, *hashObj, *setObj, *zsetObj. *List, *Hash,
//     *Set and *ZSet are handles on the entry (Obj returns the entry under
//     that type);
//   - any other kind: a *any holding the value.
//
// Only SetBytes and SetObj write p, n and c, so these invariants hold by
// construction; the garbage collector treats p as a pointer whatever it points
// to, so the entry keeps its value alive exactly as a slice or interface would.
//
// The deadline is not here but in the DB's expiry index (expIdx), which costs
// nothing for the keys without a TTL.
type Entry struct {
	p      unsafe.Pointer
	n      uint32 // KindString: the length, or bigStr
	meta   uint32 // low 24 bits: the access word (Access); 24-30: the keysizes bin (keysizes.go); 31: shared
	expIdx int32  // 1-based index in DB.expiring; 0 = no TTL
	c      uint16 // KindString: the spare capacity after n, coded by slackCode
	Kind   Kind
	Enc    uint8 // string encoding (EncRaw/EncEmbstr/EncInt)
}

// accessMask selects the access word in Entry.meta.
const accessMask = 1<<24 - 1

// sharedBit is Entry.meta's shared flag: a string's bytes may be referenced
// outside the keyspace (a reply not yet written refers to them instead of a
// copy, or they were a client's argument that the keyspace took over while the
// command's propagation may still read it). An in-place change to them must
// copy them first: Writable. The flag stays until then.
const sharedBit = 1 << 31

// ShareMin is the shortest string whose bytes are shared rather than copied
// (Redis's COPY_AVOID_MIN_STRING_SIZE): below it a copy costs less than the
// copy-on-write it may cause.
const ShareMin = 16 << 10

// Share marks a string entry's bytes as referenced outside the keyspace
// (sharedBit), as Redis's incrRefCount on the object a reply refers to.
func (e *Entry) Share() { e.meta |= sharedBit }

// Shared reports whether the entry's bytes may be referenced outside.
func (e *Entry) Shared() bool { return e.meta&sharedBit != 0 }

// Writable returns a string entry's bytes for a change in place: a private
// copy first when they are shared (Redis's dbUnshareStringValue). Writing
// past their length within their capacity (APPEND) needs no call: nothing
// outside refers beyond the length.
func (e *Entry) Writable() []byte {
	b := e.Bytes()
	if e.meta&sharedBit == 0 {
		return b
	}
	nb := make([]byte, len(b), cap(b))
	copy(nb, b)
	e.SetBytes(nb)
	e.meta &^= sharedBit
	return e.Bytes()
}

// Access is the entry's access word: Redis's 24-bit robj.lru field (access.go).
func (e *Entry) Access() uint32 { return e.meta & accessMask }

// SetAccess sets the access word (24 bits; higher bits are dropped).
func (e *Entry) SetAccess(v uint32) { e.meta = e.meta&^accessMask | v&accessMask }

// slackCode codes a string's spare capacity s (cap - len) in 16 bits, rounding
// down so that the decoded capacity never exceeds the real one: below 2048 it is
// exact, above it is an 11-bit mantissa and a 5-bit exponent (at most 1/1024 is
// lost, which keeps APPEND's amortised growth; the largest code is about 4.4e12).
func slackCode(s int) uint16 {
	if s < 1<<11 {
		return uint16(s)
	}
	exp := bits.Len64(uint64(s)) - 11
	if exp > 30 {
		return 30<<11 | 1<<11 - 1 // 2 TiB and more: a shorter capacity is safe
	}
	return uint16(exp<<11 | s>>exp)
}

// embedCode is Entry.c of a string whose bytes are in its dict entry's room,
// after the key (setString): exponent 31, which slackCode never makes, and a
// spare capacity of at most 2047 bytes.
const embedCode = 31 << 11

// capSlack decodes slackCode and embedCode (branch-free: Bytes is on every
// read's path; exponent 31 counts as 0).
func capSlack(c uint16) int {
	sh := uint(c >> 11)
	sh &= uint((int(sh) - 31) >> 63) // 31 -> 0, others kept
	return int(c&(1<<11-1)) << sh
}

// embedded reports whether a string entry's bytes are in its dict entry.
func (e *Entry) embedded() bool { return e.c >= embedCode }

// bigStr in Entry.n marks a string value too long for a uint32 length: p is then a
// *[]byte. (Redis caps strings at proto-max-bulk-len, 512 MB by default, but the
// limit can be raised.)
const bigStr = math.MaxUint32

// Bytes returns a string entry's value. The slice is the keyspace's own memory:
// callers may modify its bytes in place (SETRANGE, SETBIT) but must call SetBytes
// to change its length or after growing it with append. It returns nil for a
// non-string entry.
func (e *Entry) Bytes() []byte {
	if e.Kind != KindString {
		return nil
	}
	if e.n == bigStr {
		return *(*[]byte)(e.p)
	}
	return unsafe.Slice((*byte)(e.p), int(e.n)+capSlack(e.c))[:e.n]
}

// SetBytes makes b (owned by the keyspace from now on) a string entry's value
// and sets Kind to KindString. It does not change Enc. The entry may remember a
// smaller capacity than cap(b) (by at most 1/1024 of a spare capacity of 2048
// bytes or more, see slackCode): reslice b to the length wanted before storing
// it, rather than reslicing Bytes() up to cap(b) afterwards.
func (e *Entry) SetBytes(b []byte) {
	e.Kind = KindString
	if len(b) >= bigStr {
		e.setBig(b)
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if e.c >= embedCode && p == e.p && cap(b) <= int(e.n)+capSlack(e.c) {
		// the same embedded bytes, resliced or rewritten in place
		e.n = uint32(len(b))
		e.c = embedCode + uint16(cap(b)-len(b))
		return
	}
	e.p = p
	e.n = uint32(len(b))
	e.c = slackCode(cap(b) - len(b)) // a shorter capacity than the real one is safe
}

// setBig stores b boxed, as SetBytes does for a value of 4 GiB or more.
func (e *Entry) setBig(b []byte) {
	box := new([]byte)
	*box = b
	e.p, e.n, e.c = unsafe.Pointer(box), bigStr, 0
}

// Obj returns the value of a non-string entry (*List, *Hash, *Set, *ZSet, *Stream), nil
// for a string.
func (e *Entry) Obj() any {
	switch e.Kind {
	case KindString, KindNone:
		return nil
	case KindList:
		return (*List)(e)
	case KindHash:
		return (*Hash)(e)
	case KindSet:
		return (*Set)(e)
	case KindZSet:
		return (*ZSet)(e)
	case KindStream:
		return (*Stream)(e.p)
	}
	if e.p == nil {
		return nil
	}
	return *(*any)(e.p)
}

// SetObj makes o the value of a non-string entry. For *List, *Hash, *Set,
// *ZSet and *Stream it sets Kind to match; any other value is kept for the entry's current
// Kind, which must be set first and must not be one of those (nor a string).
func (e *Entry) SetObj(o any) {
	e.n, e.c = 0, 0
	switch v := o.(type) {
	case *List:
		e.setHandle((*Entry)(v), KindList)
	case *Hash:
		e.setHandle((*Entry)(v), KindHash)
	case *Set:
		e.setHandle((*Entry)(v), KindSet)
	case *ZSet:
		e.setHandle((*Entry)(v), KindZSet)
	case *Stream:
		e.p, e.Kind = unsafe.Pointer(v), KindStream
	case nil:
		e.p = nil // (tests) a nil value of the current Kind
	default:
		if e.Kind <= KindStream {
			panic(fmt.Sprintf("keyspace: SetObj(%T) on a %s entry", o, e.Kind))
		}
		box := new(any)
		*box = o
		e.p = unsafe.Pointer(box)
	}
}

// Clone returns a deep copy of e's value and metadata that shares no memory with
// e, for COPY; the copy has no place in any expiry index (give its deadline to
// DB.Insert).
func (e *Entry) Clone() Entry {
	v := Entry{Kind: e.Kind, Enc: e.Enc, meta: e.meta & accessMask}
	if e.Kind == KindString {
		v.SetBytes(append([]byte(nil), e.Bytes()...))
	} else if cl, ok := e.Obj().(interface{ Clone() any }); ok {
		v.SetObj(cl.Clone())
	} else {
		v.SetObj(e.Obj())
	}
	return v
}

// StrEncoding classifies val the way Redis's tryObjectEncoding does for a fresh SET.
func StrEncoding(val []byte) uint8 {
	if len(val) <= 20 && isCanonicalInt(val) {
		return EncInt
	}
	if len(val) <= embstrLimit {
		return EncEmbstr
	}
	return EncRaw
}

// isCanonicalInt reports whether b is an int64 in the form Redis's string2ll accepts
// and ll2string would print back (no sign on zero, no leading zeros, no '+').
func isCanonicalInt(b []byte) bool {
	if len(b) == 0 || len(b) > 20 {
		return false
	}
	i := 0
	if b[0] == '-' {
		i = 1
		if len(b) == 1 {
			return false
		}
	}
	if b[i] == '0' {
		return len(b) == 1
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return false
		}
		if v > (1<<64-1)/10 {
			return false
		}
		v = v*10 + uint64(c-'0')
		if v < uint64(c-'0') {
			return false
		}
	}
	if b[0] == '-' {
		return v <= 1<<63
	}
	return v <= 1<<63-1
}

// embedsWith reports whether Redis 8's kvobjSet keeps an embstr value of
// valLen bytes embedded with a key of keyLen bytes: the object (16 bytes), the
// key with its headers (3) and the value with its (4) must fit a 64-byte cache
// line; otherwise the value becomes raw when it is stored under the key.
func embedsWith(keyLen, valLen int) bool { return 16+keyLen+3+valLen+4 <= 64 }

// fitKey is kvobjSet's choice for a string stored under key: an embstr value
// that does not fit the cache line with the key becomes raw.
func (e *Entry) fitKey(key []byte) {
	if e.Kind == KindString && e.Enc == EncEmbstr && !embedsWith(len(key), int(e.n)) { // an embstr is short: n is its length
		e.Enc = EncRaw
	}
}

// FitKey is fitKey for a value a command replaced in place (dbReplaceValue,
// INCRBYFLOAT).
func (e *Entry) FitKey(key []byte) { e.fitKey(key) }

// EncodingName returns OBJECT ENCODING's text for e.
func (e *Entry) EncodingName() string {
	switch e.Kind {
	case KindString:
		switch e.Enc {
		case EncInt:
			return "int"
		case EncEmbstr:
			return "embstr"
		}
		return "raw"
	}
	if en, ok := e.Obj().(interface{ Encoding() string }); ok {
		return en.Encoding()
	}
	return "unknown"
}
