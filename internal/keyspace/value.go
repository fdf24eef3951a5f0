package keyspace

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
// commands.
type Entry struct {
	str      []byte // KindString: the bytes (owned by the keyspace; never aliases caller memory)
	obj      any    // other kinds: *List, *Hash, ...
	expireAt int64  // absolute Unix ms; 0 = no TTL
	expIdx   int32  // 1-based index in DB.expiring; 0 = none
	Kind     Kind
	Enc      uint8  // string encoding (EncRaw/EncEmbstr/EncInt)
	Access   uint32 // LRU clock (seconds) of the last access, for OBJECT IDLETIME
}

// Bytes returns a string entry's value. The slice is the keyspace's own memory:
// callers may modify its bytes in place (SETRANGE, SETBIT) but must call SetBytes
// to change its length or after growing it with append.
func (e *Entry) Bytes() []byte { return e.str }

// SetBytes makes b (owned by the keyspace from now on) a string entry's value.
// It does not change Kind or Enc.
func (e *Entry) SetBytes(b []byte) { e.str = b }

// Obj returns the value of a non-string entry (*List, *Hash, *Set, *ZSet), nil
// for a string.
func (e *Entry) Obj() any { return e.obj }

// SetObj makes o the value of a non-string entry whose Kind is already set.
func (e *Entry) SetObj(o any) { e.obj = o }

// Clone returns a deep copy of e's value and metadata that shares no memory with
// e, for COPY; the copy has no place in any expiry index (give its deadline to
// DB.Insert).
func (e *Entry) Clone() Entry {
	v := Entry{Kind: e.Kind, Enc: e.Enc, Access: e.Access}
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
