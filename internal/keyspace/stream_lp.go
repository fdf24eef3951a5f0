package keyspace

import (
	"encoding/binary"
	"math"
	"strconv"
)

// A stream node is a Redis listpack (listpack.c), byte for byte: a 6-byte
// header (total bytes and number of elements, little endian; 65535 when the
// count is unknown), the elements, and 0xFF. An element is its encoding and
// data followed by the back-length of the two. Keeping Redis's bytes keeps
// Redis's node boundaries (stream-node-max-bytes counts them), so MAXLEN ~ and
// MINID ~ trim exactly what Redis trims, and an RDB payload is the nodes as
// they are.

const (
	lpHdrSize      = 6
	lpEOF          = 0xff
	lpNumeleUnkown = 65535
)

// lpNew returns an empty listpack with room for capHint bytes.
func lpNew(capHint int) []byte {
	b := make([]byte, lpHdrSize, max(capHint, lpHdrSize+1))
	b = append(b, lpEOF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// LPAppendBacklen appends lpEncodeBacklen(l), the back-length that ends a
// listpack element of l bytes (internal/rdb's listpack builder uses it too).
func LPAppendBacklen(b []byte, l int) []byte { return lpAppendBacklen(b, l) }

// LPAppendInt appends the listpack element for integer v, back-length
// included (lpAppendInteger).
func LPAppendInt(b []byte, v int64) []byte { return lpEncInt(b, v) }

// LPAppendStr appends the listpack element for s as lpAppend stores it (an
// integer when s is one in canonical form), back-length included.
func LPAppendStr(b []byte, s []byte) []byte { return lpEncStr(b, s) }

// lpAppendBacklen appends lpEncodeBacklen(l).
func lpAppendBacklen(b []byte, l int) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
}

// lpEncInt appends the element for integer v (lpEncodeIntegerGetType).
func lpEncInt(b []byte, v int64) []byte {
	start := len(b)
	switch {
	case v >= 0 && v <= 127:
		b = append(b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v)
		if v < 0 {
			u = uint64(1<<13 + v)
		}
		b = append(b, byte(u>>8)|0xc0, byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		b = append(b, 0xf1, byte(v), byte(v>>8))
	case v >= -(1<<23) && v <= 1<<23-1:
		b = append(b, 0xf2, byte(v), byte(v>>8), byte(v>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		b = append(b, 0xf3, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		b = binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(v))
	}
	return lpAppendBacklen(b, len(b)-start)
}

// lpEncStr appends the element for s as lpAppend stores it: an integer when s
// is one in canonical form, else a string.
func lpEncStr(b []byte, s []byte) []byte {
	if v, ok := lpIntValue(s); ok {
		return lpEncInt(b, v)
	}
	start := len(b)
	switch l := len(s); {
	case l < 64:
		b = append(b, 0x80|byte(l))
	case l < 4096:
		b = append(b, 0xe0|byte(l>>8), byte(l))
	default:
		b = binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(l))
	}
	b = append(b, s...)
	return lpAppendBacklen(b, len(b)-start)
}

// lpElem decodes the element at p: an integer (isInt) or a string view of lp,
// and the offset of the next element (len(lp)-1 at the end).
func lpElem(lp []byte, p int) (v int64, s []byte, isInt bool, next int) {
	c := lp[p]
	var hdr, dlen int
	switch {
	case c&0x80 == 0:
		hdr, isInt, v = 1, true, int64(c&0x7f)
	case c&0xc0 == 0x80:
		hdr, dlen = 1, int(c&0x3f)
	case c&0xe0 == 0xc0:
		u := int64(c&0x1f)<<8 | int64(lp[p+1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		hdr, isInt, v = 2, true, u
	case c&0xf0 == 0xe0:
		hdr, dlen = 2, int(c&0x0f)<<8|int(lp[p+1])
	case c == 0xf0:
		hdr, dlen = 5, int(binary.LittleEndian.Uint32(lp[p+1:]))
	default: // 0xf1..0xf4
		size := [...]int{2, 3, 4, 8}[c-0xf1]
		var u uint64
		for i := size - 1; i >= 0; i-- {
			u = u<<8 | uint64(lp[p+1+i])
		}
		shift := 64 - 8*uint(size)
		hdr, isInt, v = 1+size, true, int64(u<<shift)>>shift
	}
	l := hdr
	if !isInt {
		s = lp[p+hdr : p+hdr+dlen : p+hdr+dlen]
		l += dlen
	}
	return v, s, isInt, p + l + backlenSize(l)
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpInt reads the integer element at p (stream metadata is always stored as
// integers) and the next offset.
func lpInt(lp []byte, p int) (int64, int) {
	v, s, isInt, next := lpElem(lp, p)
	if !isInt {
		v, _ = strconv.ParseInt(string(s), 10, 64)
	}
	return v, next
}

// lpSkip returns the offset after the element at p.
func lpSkip(lp []byte, p int) int {
	_, _, _, next := lpElem(lp, p)
	return next
}

// lpAppendRaw appends encoded elements (n of them) before the terminator.
func lpAppendRaw(lp []byte, enc []byte, n int) []byte {
	lp = append(lp[:len(lp)-1], enc...)
	lp = append(lp, lpEOF)
	lpSetHeader(lp, n)
	return lp
}

// lpSetHeader rewrites the total size and adds n to the element count (which
// stays unknown once it reaches 65535, as lpInsert leaves it).
func lpSetHeader(lp []byte, n int) {
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if cnt := int(binary.LittleEndian.Uint16(lp[4:])); cnt != lpNumeleUnkown {
		cnt += n
		if cnt >= lpNumeleUnkown {
			cnt = lpNumeleUnkown
		}
		binary.LittleEndian.PutUint16(lp[4:], uint16(cnt))
	}
}

// lpReplaceInt replaces the element at p by integer v (lpReplaceInteger) and
// returns the listpack, which may have moved.
func lpReplaceInt(lp []byte, p int, v int64) []byte {
	next := lpSkip(lp, p)
	var tmp [16]byte
	enc := lpEncInt(tmp[:0], v)
	old := next - p
	switch {
	case len(enc) == old:
		copy(lp[p:], enc)
		return lp
	case len(enc) < old:
		copy(lp[p:], enc)
		lp = append(lp[:p+len(enc)], lp[next:]...)
	default:
		grow := len(enc) - old
		lp = append(lp, make([]byte, grow)...)
		copy(lp[next+grow:], lp[next:len(lp)-grow])
		copy(lp[p:], enc)
	}
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	return lp
}

// lpStrBytes returns the element as a string: a view of lp, or integers in
// decimal appended to scratch.
func lpStrBytes(lp []byte, p int, scratch []byte) (s []byte, next int, scr []byte) {
	v, str, isInt, next := lpElem(lp, p)
	if isInt {
		n := len(scratch)
		scratch = strconv.AppendInt(scratch, v, 10)
		return scratch[n:], next, scratch
	}
	return str, next, scratch
}
