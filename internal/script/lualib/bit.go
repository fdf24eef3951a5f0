package lualib

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library: LuaBitOp 1.0.2 (deps/lua/src/lua_bit.c), with the
// CVE-2024-31449 fix in tohex.

func newBit(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"tobit":   bitToBit,
		"bnot":    bitBNot,
		"band":    bitBAnd,
		"bor":     bitBOr,
		"bxor":    bitBXor,
		"lshift":  bitLShift,
		"rshift":  bitRShift,
		"arshift": bitARShift,
		"rol":     bitRol,
		"ror":     bitRor,
		"bswap":   bitBSwap,
		"tohex":   bitToHex,
	})
}

// barg converts argument n to 32 bits as LuaBitOp does: it adds 2^52+2^51 to
// the double and keeps the low word of its representation, which rounds to
// the nearest integer (ties to even) modulo 2^32.
func barg(L *lua.LState, n int) uint32 {
	f, ok := toNumber(arg(L, n))
	b := uint32(math.Float64bits(f + 6755399441055744.0))
	if b == 0 && !ok {
		typeError(L, n, "number")
	}
	return b
}

// bret pushes b as a signed 32-bit number.
func bret(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitToBit(L *lua.LState) int { return bret(L, barg(L, 1)) }
func bitBNot(L *lua.LState) int  { return bret(L, ^barg(L, 1)) }

// bitOp folds the arguments: the first, then the others from the last down
// to the second (the C loop's order, which decides which bad argument is
// reported).
func bitOp(L *lua.LState, op func(a, b uint32) uint32) int {
	b := barg(L, 1)
	for i := L.GetTop(); i > 1; i-- {
		b = op(b, barg(L, i))
	}
	return bret(L, b)
}

func bitBAnd(L *lua.LState) int { return bitOp(L, func(a, b uint32) uint32 { return a & b }) }
func bitBOr(L *lua.LState) int  { return bitOp(L, func(a, b uint32) uint32 { return a | b }) }
func bitBXor(L *lua.LState) int { return bitOp(L, func(a, b uint32) uint32 { return a ^ b }) }

func bitShift(L *lua.LState, fn func(b, n uint32) uint32) int {
	b := barg(L, 1)
	n := barg(L, 2) & 31
	return bret(L, fn(b, n))
}

func bitLShift(L *lua.LState) int {
	return bitShift(L, func(b, n uint32) uint32 { return b << n })
}

func bitRShift(L *lua.LState) int {
	return bitShift(L, func(b, n uint32) uint32 { return b >> n })
}

func bitARShift(L *lua.LState) int {
	return bitShift(L, func(b, n uint32) uint32 { return uint32(int32(b) >> n) })
}

func bitRol(L *lua.LState) int {
	return bitShift(L, func(b, n uint32) uint32 { return b<<n | b>>((32-n)&31) })
}

func bitRor(L *lua.LState) int {
	return bitShift(L, func(b, n uint32) uint32 { return b<<((32-n)&31) | b>>n })
}

func bitBSwap(L *lua.LState) int {
	b := barg(L, 1)
	return bret(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
}

func bitToHex(L *lua.LState) int {
	b := barg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(barg(L, 2))
	}
	digits := "0123456789abcdef"
	if n == math.MinInt32 {
		n = math.MinInt32 + 1
	}
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := int(n) - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
