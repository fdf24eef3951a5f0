package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library: lua-cmsgpack 0.4.0 (deps/lua/src/lua_cmsgpack.c) as
// built for Lua 5.1 on a 64-bit machine.

// cmsgpackMaxNesting is LUACMSGPACK_MAX_NESTING: tables nested deeper are
// packed as nil, which is how pack survives circular references.
const cmsgpackMaxNesting = 16

func newCMsgpack(L *lua.LState) *lua.LTable {
	t := newModule(L, map[string]lua.LGFunction{
		"pack":         mpPack,
		"unpack":       mpUnpack,
		"unpack_one":   mpUnpackOne,
		"unpack_limit": mpUnpackLimit,
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// ---------------------------------------------------------------------------
// Encoding.

func mpEncodeBytes(buf []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		buf = append(buf, 0xa0|byte(n))
	case n <= 0xff:
		buf = append(buf, 0xd9, byte(n))
	case n <= 0xffff:
		buf = append(buf, 0xda, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(buf, s...)
}

// mpEncodeDouble packs d as a float32 when that is exact, else as a double.
func mpEncodeDouble(buf []byte, d float64) []byte {
	f := float32(d)
	if d == float64(f) {
		buf = append(buf, 0xca)
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	buf = append(buf, 0xcb)
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(d))
}

func mpEncodeInt(buf []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(buf, byte(n))
		case n <= 0xff:
			return append(buf, 0xcc, byte(n))
		case n <= 0xffff:
			return append(buf, 0xcd, byte(n>>8), byte(n))
		case n <= 0xffffffff:
			buf = append(buf, 0xce)
			return binary.BigEndian.AppendUint32(buf, uint32(n))
		default:
			buf = append(buf, 0xcf)
			return binary.BigEndian.AppendUint64(buf, uint64(n))
		}
	}
	switch {
	case n >= -32:
		return append(buf, byte(int8(n)))
	case n >= -128:
		return append(buf, 0xd0, byte(n))
	case n >= -32768:
		return append(buf, 0xd1, byte(n>>8), byte(n))
	case n >= -2147483648:
		buf = append(buf, 0xd2)
		return binary.BigEndian.AppendUint32(buf, uint32(n))
	default:
		buf = append(buf, 0xd3)
		return binary.BigEndian.AppendUint64(buf, uint64(n))
	}
}

func mpEncodeContainer(buf []byte, n uint64, fix, b16, b32 byte) []byte {
	switch {
	case n <= 15:
		return append(buf, fix|byte(n&0xf))
	case n <= 65535:
		return append(buf, b16, byte(n>>8), byte(n))
	default:
		return append(buf, b32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// mpEncodeNumber: integral values (that fit an int64) become integers, the
// others floats.
func mpEncodeNumber(buf []byte, n float64) []byte {
	if !math.IsInf(n, 0) && float64(doubleToInt64(n)) == n {
		return mpEncodeInt(buf, doubleToInt64(n))
	}
	return mpEncodeDouble(buf, n)
}

// tableIsAnArray reports whether the keys of t are exactly 1..N, and N.
func tableIsAnArray(t *lua.LTable) (bool, int) {
	var count, max int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		kn, ok := k.(lua.LNumber)
		if !ok {
			return false, 0
		}
		n := float64(kn)
		if n <= 0 || math.IsInf(n, 0) || float64(doubleToInt32(n)) != n {
			return false, 0
		}
		if n > float64(max) {
			max = doubleToInt32(n)
		}
		count++
	}
	return max == count, int(count)
}

func mpEncodeValue(L *lua.LState, buf []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		checkLimit(L, len(buf)+len(x))
		return mpEncodeBytes(buf, string(x))
	case lua.LBool:
		if x {
			return append(buf, 0xc3)
		}
		return append(buf, 0xc2)
	case lua.LNumber:
		return mpEncodeNumber(buf, float64(x))
	case *lua.LTable:
		if level == cmsgpackMaxNesting {
			return append(buf, 0xc0)
		}
		if isArray, n := tableIsAnArray(x); isArray {
			buf = mpEncodeContainer(buf, uint64(n), 0x90, 0xdc, 0xdd)
			for j := 1; j <= n; j++ {
				buf = mpEncodeValue(L, buf, x.RawGet(lua.LNumber(j)), level+1)
			}
			return buf
		}
		var n uint64
		for k, _ := x.Next(lua.LNil); k != lua.LNil; k, _ = x.Next(k) {
			n++
		}
		buf = mpEncodeContainer(buf, n, 0x80, 0xde, 0xdf)
		for k, val := x.Next(lua.LNil); k != lua.LNil; k, val = x.Next(k) {
			buf = mpEncodeValue(L, buf, k, level+1)
			buf = mpEncodeValue(L, buf, val, level+1)
		}
		return buf
	}
	return append(buf, 0xc0)
}

// mpPack packs each argument and returns the concatenation.
func mpPack(L *lua.LState) int {
	nargs := L.GetTop()
	if nargs == 0 {
		argError(L, 0, "MessagePack pack needs input.")
	}
	if !checkStack(nargs, nargs) {
		argError(L, 0, "Too many arguments for MessagePack pack.")
	}
	var buf []byte
	for i := 1; i <= nargs; i++ {
		buf = mpEncodeValue(L, buf, L.Get(i), 0)
	}
	L.Push(lua.LString(buf))
	return 1
}

// ---------------------------------------------------------------------------
// Decoding.

type mpErr int

const (
	mpOK mpErr = iota
	mpEOF
	mpBadFmt
)

// mpDecoder decodes from data[pos:]. top counts the values the C decoder
// would hold on its Lua stack, to fail where its luaL_checkstack calls fail.
type mpDecoder struct {
	L    *lua.LState
	data string
	pos  int
	err  mpErr
	top  int
}

func (c *mpDecoder) left() int { return len(c.data) - c.pos }

func (c *mpDecoder) need(n uint64) bool {
	if uint64(c.left()) < n {
		c.err = mpEOF
		return false
	}
	return true
}

func (c *mpDecoder) be16(off int) uint64 {
	return uint64(binary.BigEndian.Uint16([]byte(c.data[c.pos+off : c.pos+off+2])))
}

func (c *mpDecoder) be32(off int) uint64 {
	return uint64(binary.BigEndian.Uint32([]byte(c.data[c.pos+off : c.pos+off+4])))
}

func (c *mpDecoder) be64(off int) uint64 {
	return binary.BigEndian.Uint64([]byte(c.data[c.pos+off : c.pos+off+8]))
}

// settable is lua_settable on a table the decoder made (no metatable).
func (c *mpDecoder) settable(t *lua.LTable, k, v lua.LValue) {
	switch x := k.(type) {
	case *lua.LNilType:
		rawError(c.L, "table index is nil")
	case lua.LNumber:
		if x != x {
			rawError(c.L, "table index is NaN")
		}
	}
	t.RawSet(k, v)
}

// newTable sizes a table for n entries of at least per bytes each (n comes
// from the input: only what the input can hold is preallocated).
func (c *mpDecoder) newTable(n uint64, per int, array bool) *lua.LTable {
	if max := uint64(c.left() / per); n > max {
		n = max
	}
	if array {
		return c.L.CreateTable(int(n), 0)
	}
	return c.L.CreateTable(0, int(n))
}

func (c *mpDecoder) array(n uint64) lua.LValue {
	t := c.newTable(n, 1, true)
	c.top++
	if !checkStack(c.top, 1) {
		luaError(c.L, "stack overflow (in function mp_decode_to_lua_array)")
	}
	for i := 1; n > 0; n-- {
		c.top++ // the index
		v := c.value()
		c.top--
		if c.err != mpOK {
			return t
		}
		c.settable(t, lua.LNumber(i), v)
		i++
	}
	c.top--
	return t
}

func (c *mpDecoder) hash(n uint64) lua.LValue {
	t := c.newTable(n, 2, false)
	c.top++
	for ; n > 0; n-- {
		k := c.value()
		if c.err != mpOK {
			return t
		}
		c.top++
		v := c.value()
		c.top--
		if c.err != mpOK {
			return t
		}
		c.settable(t, k, v)
	}
	c.top--
	return t
}

// value decodes one object; on error it sets c.err and returns LNil.
func (c *mpDecoder) value() lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	if !checkStack(c.top, 1) {
		luaError(c.L, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
	}
	b := c.data[c.pos]
	switch b {
	case 0xcc: // uint 8
		if !c.need(2) {
			return lua.LNil
		}
		v := c.data[c.pos+1]
		c.pos += 2
		return lua.LNumber(v)
	case 0xd0: // int 8
		if !c.need(2) {
			return lua.LNil
		}
		v := int8(c.data[c.pos+1])
		c.pos += 2
		return lua.LNumber(v)
	case 0xcd: // uint 16
		if !c.need(3) {
			return lua.LNil
		}
		v := c.be16(1)
		c.pos += 3
		return lua.LNumber(v)
	case 0xd1: // int 16
		if !c.need(3) {
			return lua.LNil
		}
		v := int16(c.be16(1))
		c.pos += 3
		return lua.LNumber(v)
	case 0xce: // uint 32
		if !c.need(5) {
			return lua.LNil
		}
		v := c.be32(1)
		c.pos += 5
		return lua.LNumber(v)
	case 0xd2: // int 32
		if !c.need(5) {
			return lua.LNil
		}
		v := int32(c.be32(1))
		c.pos += 5
		return lua.LNumber(v)
	case 0xcf: // uint 64, pushed through lua_pushinteger: wraps to negative
		if !c.need(9) {
			return lua.LNil
		}
		v := int64(c.be64(1))
		c.pos += 9
		return lua.LNumber(v)
	case 0xd3: // int 64
		if !c.need(9) {
			return lua.LNil
		}
		v := int64(c.be64(1))
		c.pos += 9
		return lua.LNumber(v)
	case 0xc0:
		c.pos++
		return lua.LNil
	case 0xc3:
		c.pos++
		return lua.LTrue
	case 0xc2:
		c.pos++
		return lua.LFalse
	case 0xca: // float
		if !c.need(5) {
			return lua.LNil
		}
		v := math.Float32frombits(uint32(c.be32(1)))
		c.pos += 5
		return lua.LNumber(v)
	case 0xcb: // double
		if !c.need(9) {
			return lua.LNil
		}
		v := math.Float64frombits(c.be64(1))
		c.pos += 9
		return lua.LNumber(v)
	case 0xd9: // str 8
		if !c.need(2) {
			return lua.LNil
		}
		return c.str(2, uint64(c.data[c.pos+1]))
	case 0xda: // str 16
		if !c.need(3) {
			return lua.LNil
		}
		return c.str(3, c.be16(1))
	case 0xdb: // str 32
		if !c.need(5) {
			return lua.LNil
		}
		l := c.be32(1)
		c.pos += 5
		return c.str(0, l)
	case 0xdc: // array 16
		if !c.need(3) {
			return lua.LNil
		}
		l := c.be16(1)
		c.pos += 3
		return c.array(l)
	case 0xdd: // array 32
		if !c.need(5) {
			return lua.LNil
		}
		l := c.be32(1)
		c.pos += 5
		return c.array(l)
	case 0xde: // map 16
		if !c.need(3) {
			return lua.LNil
		}
		l := c.be16(1)
		c.pos += 3
		return c.hash(l)
	case 0xdf: // map 32
		if !c.need(5) {
			return lua.LNil
		}
		l := c.be32(1)
		c.pos += 5
		return c.hash(l)
	}
	switch {
	case b&0x80 == 0: // positive fixint
		c.pos++
		return lua.LNumber(b)
	case b&0xe0 == 0xe0: // negative fixint
		c.pos++
		return lua.LNumber(int8(b))
	case b&0xe0 == 0xa0: // fixstr
		return c.str(1, uint64(b&0x1f))
	case b&0xf0 == 0x90: // fixarray
		c.pos++
		return c.array(uint64(b & 0xf))
	case b&0xf0 == 0x80: // fixmap
		c.pos++
		return c.hash(uint64(b & 0xf))
	}
	c.err = mpBadFmt
	return lua.LNil
}

// str reads a string of l bytes after a header of hdr bytes.
func (c *mpDecoder) str(hdr int, l uint64) lua.LValue {
	if !c.need(uint64(hdr) + l) {
		return lua.LNil
	}
	s := c.data[c.pos+hdr : c.pos+hdr+int(l)]
	c.pos += hdr + int(l)
	return lua.LString(s)
}

// mpUnpackFull decodes up to limit objects from offset; with neither limit
// nor offset it decodes everything and does not return the next offset.
// top is the number of arguments the C function still holds.
func mpUnpackFull(L *lua.LState, s string, limit, offset int64, top int) int {
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		luaError(L, "Invalid request to unpack with offset of %d and limit of %d.",
			int32(offset), int32(len(s)))
	} else if uint64(offset) > uint64(len(s)) {
		luaError(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	c := &mpDecoder{L: L, data: s, pos: int(offset), top: top}
	var out []lua.LValue
	for cnt := int64(0); c.left() > 0 && cnt < limit; cnt++ {
		v := c.value()
		switch c.err {
		case mpEOF:
			luaError(L, "Missing bytes in input.")
		case mpBadFmt:
			luaError(L, "Bad data format in input.")
		}
		out = append(out, v)
		c.top++
	}
	if !decodeAll {
		if !checkStack(c.top, 1) {
			luaError(L, "stack overflow (in function mp_unpack_full)")
		}
		next := lua.LNumber(-1)
		if c.left() != 0 {
			next = lua.LNumber(c.pos)
		}
		L.Push(next)
	}
	for _, v := range out {
		L.Push(v)
	}
	if decodeAll {
		return len(out)
	}
	return len(out) + 1
}

func mpUnpack(L *lua.LState) int {
	return mpUnpackFull(L, checkLString(L, 1), 0, 0, L.GetTop())
}

func mpUnpackOne(L *lua.LState) int {
	offset := optInteger(L, 2, 0)
	return mpUnpackFull(L, checkLString(L, 1), 1, offset, 1)
}

func mpUnpackLimit(L *lua.LState) int {
	limit := checkInteger(L, 2)
	offset := optInteger(L, 3, 0)
	return mpUnpackFull(L, checkLString(L, 1), limit, offset, 1)
}
