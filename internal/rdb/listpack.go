package rdb

import (
	"encoding/binary"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// Listpacks (listpack.c) as Redis serialises them: a 6-byte header (total
// bytes, number of elements, little endian; 65535 when unknown), the entries,
// and 0xFF. An entry is its encoding and data followed by the back-length of
// the two.

const lpHeader = 6

// lpBuilder appends entries to a listpack being built.
type lpBuilder struct {
	b []byte
	n int
}

func newLP(capacity int) *lpBuilder {
	return &lpBuilder{b: make([]byte, lpHeader, lpHeader+capacity+1)}
}

// appendBacklen writes lpEncodeBacklen(l).
func appendBacklen(b []byte, l int) []byte { return keyspace.LPAppendBacklen(b, l) }

// Int appends an integer entry (lpAppendInteger).
func (lp *lpBuilder) Int(v int64) {
	lp.b = keyspace.LPAppendInt(lp.b, v)
	lp.n++
}

// Str appends s as lpAppend does: as an integer when it is one in canonical
// form (lpStringToInt64), else as a string.
func (lp *lpBuilder) Str(s []byte) {
	lp.b = keyspace.LPAppendStr(lp.b, s)
	lp.n++
}

// Bytes finishes the listpack and returns it.
func (lp *lpBuilder) Bytes() []byte {
	b := append(lp.b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	n := lp.n
	if n >= 65535 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(b[4:], uint16(n))
	return b
}

// lpValue is one decoded listpack element: a string (s != nil or isInt false)
// or an integer.
type lpValue struct {
	s     []byte
	v     int64
	isInt bool
}

// bytes returns the element as a string (integers in decimal).
func (e lpValue) bytes() []byte {
	if e.isInt {
		return strconv.AppendInt(nil, e.v, 10)
	}
	return e.s
}

// parseListpack is lpValidateIntegrity with deep checking: it walks every
// entry, checks its bounds and back-length, the header's size and count and
// the terminator, and calls fn with each element (string views alias lp).
func parseListpack(lp []byte, fn func(e lpValue) error) (int, error) {
	if len(lp) < lpHeader+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return 0, ErrBadData
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	end := len(lp) - 1
	count := 0
	for p := lpHeader; p < end; {
		var e lpValue
		c := lp[p]
		var hdr, dlen int
		switch {
		case c&0x80 == 0:
			hdr, e.isInt, e.v = 1, true, int64(c&0x7f)
		case c&0xc0 == 0x80:
			hdr, dlen = 1, int(c&0x3f)
		case c&0xe0 == 0xc0:
			if p+2 > end {
				return 0, ErrBadData
			}
			u := int64(c&0x1f)<<8 | int64(lp[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			hdr, e.isInt, e.v = 2, true, u
		case c&0xf0 == 0xe0:
			if p+2 > end {
				return 0, ErrBadData
			}
			hdr, dlen = 2, int(c&0x0f)<<8|int(lp[p+1])
		case c == 0xf0:
			if p+5 > end {
				return 0, ErrBadData
			}
			hdr, dlen = 5, int(binary.LittleEndian.Uint32(lp[p+1:]))
		case c >= 0xf1 && c <= 0xf4:
			size := [...]int{2, 3, 4, 8}[c-0xf1]
			if p+1+size > end {
				return 0, ErrBadData
			}
			d := lp[p+1 : p+1+size]
			var u uint64
			for i := size - 1; i >= 0; i-- {
				u = u<<8 | uint64(d[i])
			}
			shift := 64 - 8*uint(size)
			hdr, e.isInt, e.v = 1+size, true, int64(u<<shift)>>shift
		default:
			return 0, ErrBadData
		}
		l := hdr
		if !e.isInt {
			if dlen > end-p-hdr {
				return 0, ErrBadData
			}
			e.s = lp[p+hdr : p+hdr+dlen : p+hdr+dlen]
			l += dlen
		}
		var bl [5]byte
		back := appendBacklen(bl[:0], l)
		q := p + l
		if q+len(back) > end || string(lp[q:q+len(back)]) != string(back) {
			return 0, ErrBadData
		}
		p = q + len(back)
		count++
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
	}
	if want != 65535 && want != count {
		return 0, ErrBadData
	}
	return count, nil
}

// listpackBytes returns the listpack size of the elements, as the builder
// would make it (used to size buffers).
func estimateLP(elems [][]byte) int {
	n := 0
	for _, e := range elems {
		n += len(e) + 11
	}
	return n
}

// --- intset (intset.c): encoding (2, 4 or 8), length, sorted little-endian values

func appendIntset(b []byte, width int, data []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)/width))
	return append(b, data...)
}

// parseIntset is intsetValidateIntegrity with deep checking: a known width, a
// size that matches the length, at least one element, strictly ascending.
func parseIntset(is []byte) (width int, data []byte, err error) {
	if len(is) < 8 {
		return 0, nil, ErrBadData
	}
	width = int(binary.LittleEndian.Uint32(is))
	if width != 2 && width != 4 && width != 8 {
		return 0, nil, ErrBadData
	}
	n := uint64(binary.LittleEndian.Uint32(is[4:]))
	if n == 0 || 8+n*uint64(width) != uint64(len(is)) {
		return 0, nil, ErrBadData
	}
	data = is[8:]
	prev := int64(0)
	for i := 0; i < int(n); i++ {
		v := intsetGet(data, width, i)
		if i > 0 && v <= prev {
			return 0, nil, ErrBadData
		}
		prev = v
	}
	return width, data, nil
}

func intsetGet(data []byte, width, i int) int64 {
	switch width {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(data[2*i:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(data[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(data[8*i:]))
}
