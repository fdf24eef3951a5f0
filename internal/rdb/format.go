// Package rdb is Redis's RDB serialisation (rdb.c, rdb.h) for HotKV's values and
// whole keyspace: the DUMP/RESTORE payload of one value and the RDB file that
// DEBUG RELOAD and SAVE write. It writes what Redis 8.4 writes (RDB_VERSION 12:
// QUICKLIST_2 lists of listpacks, intset/listpack/hashtable sets, listpack and
// ZSET_2 sorted sets, listpack, listpackex and hashtable hashes with field TTLs
// as HASH_LISTPACK_EX and HASH_METADATA), and reads every value type and
// encoding Redis 7.0 to 8.6 writes (8.6's RDB 13 streams with their IDMP
// state: MaxVersion), plus the older ziplist, zipmap and RDB_TYPE_LIST
// encodings. Decoding checks payloads as Redis does with
// sanitize-dump-payload yes (listpack, intset and ziplist integrity, duplicate
// members, TTL order): corrupt input is an error, never a panic or a hang.
//
// The package does no I/O of its own beyond an io.Writer/io.Reader; values are
// read from and built into a keyspace.Keyspace with the encodings Redis's
// rdbLoadObject gives them.
package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb/crc64"
	"github.com/hotkv/hotkv/internal/rdb/lzf"
)

// Version is the RDB version written: Redis 8.6's 13, whose one new type is
// a stream with its IDMP state (TypeStreamListpacks4, the type every stream
// is written as). Redis 7.4 to 8.4 write 12 and refuse 13.
const Version = 13

// MaxVersion is the newest RDB version read.
const MaxVersion = 13

// RDB value types (rdb.h).
const (
	TypeString            = 0
	TypeList              = 1
	TypeSet               = 2
	TypeZSet              = 3
	TypeHash              = 4
	TypeZSet2             = 5
	TypeModulePreGA       = 6
	TypeModule2           = 7
	TypeHashZipmap        = 9
	TypeListZiplist       = 10
	TypeSetIntset         = 11
	TypeZSetZiplist       = 12
	TypeHashZiplist       = 13
	TypeListQuicklist     = 14
	TypeStreamListpacks   = 15
	TypeHashListpack      = 16
	TypeZSetListpack      = 17
	TypeListQuicklist2    = 18
	TypeStreamListpacks2  = 19
	TypeSetListpack       = 20
	TypeStreamListpacks3  = 21
	TypeHashMetadataPreGA = 22
	TypeHashListpackExPre = 23
	TypeHashMetadata      = 24
	TypeHashListpackEx    = 25
	TypeStreamListpacks4  = 26 // Redis 8.6: a stream with its IDMP state
)

// isObjectType is rdbIsObjectType.
func isObjectType(t byte) bool { return t <= 7 || (t >= 9 && t <= 26) }

// RDB opcodes (rdb.h).
const (
	opSlotInfo      = 244
	opFunction2     = 245
	opFunctionPreGA = 246
	opModuleAux     = 247
	opIdle          = 248
	opFreq          = 249
	opAux           = 250
	opResizeDB      = 251
	opExpireTimeMs  = 252
	opExpireTime    = 253
	opSelectDB      = 254
	opEOF           = 255
)

// Quicklist node containers.
const (
	containerPlain  = 1
	containerPacked = 2
)

// ebExpireTimeMax is EB_EXPIRE_TIME_MAX: the largest hash field deadline.
const ebExpireTimeMax = 1<<48 - 1

var (
	// ErrBadData is a payload that does not decode (RESTORE's "Bad data format").
	ErrBadData = errors.New("rdb: bad data format")
	// ErrBadVersionOrChecksum is a DUMP payload whose footer does not check.
	ErrBadVersionOrChecksum = errors.New("rdb: payload version or checksum are wrong")
)

// --- writing -------------------------------------------------------------------

// AppendLen is rdbSaveLen.
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// appendIntEncoded is rdbEncodeInteger: false when v does not fit 32 bits.
func appendIntEncoded(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xc0, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return append(b, 0xc1, byte(v), byte(v>>8)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return append(b, 0xc2, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)), true
	}
	return b, false
}

// AppendString is rdbSaveRawString: a string of up to 11 bytes that is a
// canonical integer fitting 32 bits is stored as that integer; with compress
// (rdbcompression) a string longer than 20 bytes is stored LZF-compressed when
// that saves at least four bytes; otherwise the length and the bytes.
func AppendString(b []byte, s []byte, compress bool) []byte {
	if len(s) <= 11 {
		if v, ok := keyspace.IntMember(s); ok {
			if out, ok := appendIntEncoded(b, v); ok {
				return out
			}
		}
	}
	if compress && len(s) > 20 {
		sp := scratch.Get().(*[]byte)
		if cap(*sp) < len(s) {
			*sp = make([]byte, 0, len(s))
		}
		c := lzf.CompressInto(*sp, s, len(s)-4)
		if c != nil {
			b = append(b, 0xc3)
			b = AppendLen(b, uint64(len(c)))
			b = AppendLen(b, uint64(len(s)))
			b = append(b, c...)
		}
		if cap(*sp) <= 1<<20 {
			scratch.Put(sp)
		}
		if c != nil {
			return b
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// scratch holds AppendString's compression buffers.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// appendMillis is rdbSaveMillisecondTime (little endian).
func appendMillis(b []byte, ms int64) []byte {
	return binary.LittleEndian.AppendUint64(b, uint64(ms))
}

// --- reading -------------------------------------------------------------------

// reader walks a byte slice; every read checks bounds and reports ErrBadData.
// A reader with a src (streamReader) holds a window of its input and reads
// on as the decoding needs: a file or a replica's payload is decoded as it
// comes, not read whole first. A window is never overwritten: a refill
// makes a new one, so the slices handed out before stay valid.
type reader struct {
	b    []byte
	off  int
	src  io.Reader // the input after b; nil: b is all of it
	base int       // the input offset of b[0]
	size int       // the input's size when known, else -1 (a src only)
	sum  uint64    // crc64 of the input before b[0]
	err  error     // src's failure, other than its end
}

// window is how much a streamReader reads at a time (more for a longer
// string); a variable for the tests.
var window = 1 << 20

// streamReader reads src from its start; size is its length when known
// (the bound on collection counts), else -1.
func streamReader(src io.Reader, size int) *reader {
	return &reader{src: src, size: size}
}

// pos is the input offset of the next byte.
func (r *reader) pos() int { return r.base + r.off }

// left is what the input holds after pos, or an upper bound of it: with a
// src of unknown size, what the window holds plus a generous allowance
// (decoders size nothing ahead beyond prealloc's cap, and a count the
// input does not hold ends in a short read).
func (r *reader) left() int {
	n := len(r.b) - r.off
	if r.src != nil {
		if r.size >= 0 {
			return r.size - r.pos()
		}
		return n + 1<<40
	}
	return n
}

// fill makes at least n bytes available at off: a new window holding what
// was left of the old one and as much input as fits (at least n). The
// window grows as the input arrives, never ahead of it: a corrupt length
// costs what the input holds, not what it claims.
func (r *reader) fill(n int) error {
	if r.src == nil {
		return ErrBadData
	}
	have := len(r.b) - r.off
	nb := make([]byte, have, max(have+1, window))
	copy(nb, r.b[r.off:])
	r.sum = crc64.Update(r.sum, r.b[:r.off])
	r.base += r.off
	r.b, r.off = nb, 0
	for len(r.b) < cap(r.b) || len(r.b) < n {
		if len(r.b) == cap(r.b) {
			r.b = slices.Grow(r.b, min(len(r.b), n-len(r.b)))
		}
		k, err := r.src.Read(r.b[len(r.b):cap(r.b)])
		r.b = r.b[:len(r.b)+k]
		if err != nil {
			r.src = nil
			if err != io.EOF {
				r.err = err
			}
			break
		}
	}
	if len(r.b) < n {
		return ErrBadData
	}
	return nil
}

// checksum is the crc64 of the input before pos.
func (r *reader) checksum() uint64 { return crc64.Update(r.sum, r.b[:r.off]) }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		if err := r.fill(1); err != nil {
			return 0, err
		}
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		if n > uint64(r.left()) || n > maxStringLen {
			return nil, ErrBadData
		}
		if err := r.fill(int(n)); err != nil {
			return nil, err
		}
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// prealloc caps the room a decoder makes ahead for n elements: a count
// read from a stream of unknown size is not bounded by it.
func prealloc(n int) int { return min(n, 1<<16) }

// lenEnc is rdbLoadLenByRef: a length, or with enc the special encoding number.
func (r *reader) lenEnc() (n uint64, enc bool, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false, nil
	case 1:
		d, err := r.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(d), false, nil
	case 3:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case 0x80:
		p, err := r.bytes(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := r.bytes(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, ErrBadData
}

// length reads a plain length (an encoded one is an error).
func (r *reader) length() (uint64, error) {
	n, enc, err := r.lenEnc()
	if err == nil && enc {
		err = ErrBadData
	}
	return n, err
}

// count reads the number of elements of a collection, each taking at least
// min bytes: a count the remaining input cannot hold is corrupt (this bounds
// what a payload can make the decoder allocate).
func (r *reader) count(min int) (int, error) {
	n, err := r.length()
	if err != nil {
		return 0, err
	}
	if n > uint64(r.left()/min) {
		return 0, ErrBadData
	}
	return int(n), nil
}

// maxStringLen bounds a decompressed string (proto-max-bulk-len's ceiling).
const maxStringLen = 1 << 32

// str is rdbGenericLoadStringObject: the bytes of a string in any of its
// encodings. The result may alias the input.
func (r *reader) str() ([]byte, error) {
	n, enc, err := r.lenEnc()
	if err != nil {
		return nil, err
	}
	if !enc {
		return r.bytes(n)
	}
	switch n {
	case 0, 1, 2: // int8, int16, int32, little endian
		p, err := r.bytes(1 << n)
		if err != nil {
			return nil, err
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(p[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return strconv.AppendInt(nil, v, 10), nil
	case 3:
		clen, err := r.length()
		if err != nil {
			return nil, err
		}
		ulen, err := r.length()
		if err != nil {
			return nil, err
		}
		c, err := r.bytes(clen)
		if err != nil {
			return nil, err
		}
		// a byte of LZF input yields at most 88 bytes of output
		if ulen > maxStringLen || ulen > 88*clen+88 {
			return nil, ErrBadData
		}
		out, err := lzf.Decompress(c, int(ulen))
		if err != nil {
			return nil, ErrBadData
		}
		return out, nil
	}
	return nil, ErrBadData
}

// millis is rdbLoadMillisecondTime.
func (r *reader) millis() (int64, error) {
	p, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(p)), nil
}

// binaryDouble is rdbLoadBinaryDoubleValue.
func (r *reader) binaryDouble() (float64, error) {
	p, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
}

// textDouble is rdbLoadDoubleValue (RDB_TYPE_ZSET): a length byte, 253 nan,
// 254 +inf, 255 -inf, else that many characters for strtod.
func (r *reader) textDouble() (float64, error) {
	n, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 255:
		return math.Inf(-1), nil
	case 254:
		return math.Inf(1), nil
	case 253:
		return math.NaN(), nil
	}
	p, err := r.bytes(uint64(n))
	if err != nil {
		return 0, err
	}
	f, ok := parseScore(p)
	if !ok {
		return 0, ErrBadData
	}
	return f, nil
}

// parseScore parses a score as strtod does for the values Redis writes
// ("inf", "-inf", decimal and exponent forms).
func parseScore(p []byte) (float64, bool) {
	if len(p) == 0 || len(p) > 128 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(p), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, true // strtod's HUGE_VAL or 0
		}
		return 0, false
	}
	return f, true
}
