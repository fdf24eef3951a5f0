package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// lrand48 is Redis's rand.c (redisLrand48/redisSrand48): the 48-bit linear
// congruential generator of drand48, so that math.random gives the same
// sequence as on Redis. Its state lives in the VM and advances only with the
// scripts that draw from it, so a replay of the same scripts draws the same
// numbers (docs/ARCHITECTURE.md §4.4).
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	lrandMax  = math.MaxInt32 // REDIS_LRAND48_MAX
)

func (r *lrand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

// reset is the generator's state at server start (drand48's default seed).
func (r *lrand48) reset() { r.x = 0x1234ABCD330E }

func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

func (vm *VM) mathRandom(L *lua.LState) int {
	if vm.run == nil {
		L.RaiseError("math.random can only be called inside a script invocation")
	}
	r := float64(vm.rand.next()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := checkInt(L, 1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := checkInt(L, 1), checkInt(L, 2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (vm *VM) mathRandomSeed(L *lua.LState) int {
	if vm.run == nil {
		L.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	vm.rand.seed(int32(checkInt(L, 1)))
	return 0
}

// checkInt is luaL_checkint: a number, or a string that converts to one
// (gopher-lua's CheckInt refuses strings).
func checkInt(L *lua.LState, n int) int {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return int(v)
	case lua.LString:
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64); err == nil {
			return int(f)
		}
		if i, err := strconv.ParseInt(strings.TrimSpace(string(v)), 0, 64); err == nil {
			return int(i)
		}
	}
	L.TypeError(n, lua.LTNumber)
	return 0
}
