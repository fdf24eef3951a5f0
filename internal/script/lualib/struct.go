package lualib

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library: Roberto Ierusalimschy's struct.c as Redis ships it
// (deps/lua/src/lua_struct.c), with Redis's fixes for the size overflow in
// getnum and the bounds checks in unpack. Sizes are those of the x86-64
// build: short 2, int 4, long 8, size_t 8, float 4, double 8; the native
// byte order is little endian and the default maximum alignment is 8.

const (
	structMaxIntSize = 32 // MAXINTSIZE
	structMaxAlign   = 8  // MAXALIGN: offsetof(struct{char; double}, double)
)

func newStruct(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
}

type structHeader struct {
	little bool
	align  int
}

// structFormat walks a format string as the C code does: one option byte at
// a time, the C string ending at the first NUL.
type structFormat struct {
	fmt string
	i   int
}

func newStructFormat(s string) *structFormat {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return &structFormat{fmt: s}
}

func (f *structFormat) more() bool { return f.i < len(f.fmt) }

func (f *structFormat) next() byte {
	c := f.fmt[f.i]
	f.i++
	return c
}

// getnum reads an optional decimal count; Redis raises "integral size
// overflow" when it would not fit an int.
func (f *structFormat) getnum(L *lua.LState, df int) int {
	if !f.more() || !isDigit(f.fmt[f.i]) {
		return df
	}
	a := 0
	for f.more() && isDigit(f.fmt[f.i]) {
		d := int(f.fmt[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaError(L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// optsize is the size in bytes of option opt (reading its count).
func (f *structFormat) optsize(L *lua.LState, opt byte) uint64 {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return uint64(f.getnum(L, 1))
	case 'i', 'I':
		sz := f.getnum(L, 4)
		if sz > structMaxIntSize {
			luaError(L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return uint64(sz)
	}
	return 0
}

// gettoalign is the padding that aligns an item of the given size at len.
func gettoalign(n uint64, h *structHeader, opt byte, size uint64) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > uint64(h.align) {
		size = uint64(h.align)
	}
	return (size - (n & (size - 1))) & (size - 1)
}

// controloptions handles the options that are not items.
func (f *structFormat) controloptions(L *lua.LState, opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := f.getnum(L, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			luaError(L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(L, 1, "invalid format option '"+string([]byte{opt})+"'")
	}
}

func defaultHeader() structHeader { return structHeader{little: true, align: 1} }

func structPack(L *lua.LState) int {
	f := newStructFormat(checkLString(L, 1))
	h := defaultHeader()
	// The C code pushes a nil to separate the arguments from its buffer: the
	// first missing argument is reported as nil.
	L.Push(lua.LNil)
	argn := 2
	var out []byte
	var total uint64
	for f.more() {
		opt := f.next()
		size := f.optsize(L, opt)
		toalign := gettoalign(total, &h, opt, size)
		total += toalign
		for ; toalign > 0; toalign-- {
			out = append(out, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := checkNumber(L, argn)
			argn++
			var value uint64
			if n < 0 {
				value = uint64(doubleToInt64(n))
			} else {
				value = doubleToUint64(n)
			}
			buf := make([]byte, size)
			for i := uint64(0); i < size; i++ {
				j := i
				if !h.little {
					j = size - 1 - i
				}
				buf[j] = byte(value)
				value >>= 8
			}
			out = append(out, buf...)
		case 'x':
			out = append(out, 0)
		case 'f':
			v := math.Float32bits(float32(checkNumber(L, argn)))
			argn++
			if h.little {
				out = binary.LittleEndian.AppendUint32(out, v)
			} else {
				out = binary.BigEndian.AppendUint32(out, v)
			}
		case 'd':
			v := math.Float64bits(checkNumber(L, argn))
			argn++
			if h.little {
				out = binary.LittleEndian.AppendUint64(out, v)
			} else {
				out = binary.BigEndian.AppendUint64(out, v)
			}
		case 'c', 's':
			s := checkLString(L, argn)
			argn++
			if size == 0 {
				size = uint64(len(s))
			}
			if uint64(len(s)) < size {
				// The C code reports the already incremented argument index.
				argError(L, argn, "string too short")
			}
			out = append(out, s[:size]...)
			if opt == 's' {
				out = append(out, 0)
				size++
			}
		default:
			f.controloptions(L, opt, &h)
		}
		total += size
	}
	L.Push(lua.LString(out))
	return 1
}

// getinteger reads a size-byte integer (only the last 8 bytes read count,
// as in the C code's 64-bit accumulator).
func getinteger(buf string, little, signed bool, size uint64) float64 {
	var l uint64
	for i := uint64(0); i < size; i++ {
		j := i
		if little {
			j = size - 1 - i
		}
		l = l<<8 | uint64(buf[j])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << ((size*8 - 1) & 63) // x86 masks the shift count
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(checkLString(L, 1))
	data := checkLString(L, 2)
	ld := uint64(len(data))
	pos := uint64(optInteger(L, 3, 1))
	if pos == 0 {
		argError(L, 3, "offset must be 1 or greater")
	}
	pos--
	h := defaultHeader()
	top := L.GetTop() // the C frame holds the arguments, then the results
	var res []lua.LValue
	for f.more() {
		opt := f.next()
		size := f.optsize(L, opt)
		pos += gettoalign(pos, &h, opt, size)
		if !(size <= ld && pos <= ld-size) {
			argError(L, 2, "data string too short")
		}
		if !checkStack(top+len(res), 2) {
			luaError(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := 'a' <= opt && opt <= 'z'
			res = append(res, lua.LNumber(getinteger(data[pos:pos+size], h.little, signed, size)))
		case 'x':
		case 'f':
			var v uint32
			if h.little {
				v = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				v = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			res = append(res, lua.LNumber(math.Float32frombits(v)))
		case 'd':
			var v uint64
			if h.little {
				v = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				v = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			res = append(res, lua.LNumber(math.Float64frombits(v)))
		case 'c':
			if size == 0 {
				var n float64
				ok := false
				if len(res) > 0 {
					n, ok = toNumber(res[len(res)-1])
				}
				if !ok {
					luaError(L, "format 'c0' needs a previous size")
				}
				size = doubleToUint64(n)
				res = res[:len(res)-1]
				if !(size <= ld && pos <= ld-size) {
					argError(L, 2, "data string too short")
				}
			}
			res = append(res, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				luaError(L, "unfinished string in data")
			}
			size = uint64(e) + 1
			res = append(res, lua.LString(data[pos:pos+size-1]))
		default:
			f.controloptions(L, opt, &h)
		}
		pos += size
	}
	for _, v := range res {
		L.Push(v)
	}
	L.Push(lua.LNumber(float64(int64(pos + 1))))
	return len(res) + 1
}

func structSize(L *lua.LState) int {
	f := newStructFormat(checkLString(L, 1))
	h := defaultHeader()
	var pos uint64
	for f.more() {
		opt := f.next()
		size := f.optsize(L, opt)
		pos += gettoalign(pos, &h, opt, size)
		if opt == 's' {
			argError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.controloptions(L, opt, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(float64(int64(pos))))
	return 1
}
