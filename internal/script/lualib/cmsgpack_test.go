package lualib

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

var cmsgpackCases = []luaCase{
	// tests/unit/scripting.tcl
	{name: "scripting.tcl can pack double", src: hexFn + `return hex(cmsgpack.pack(0.1))`,
		want: "true, \"cb3fb999999999999a\""},
	{name: "scripting.tcl can pack negative int64", src: hexFn + `return hex(cmsgpack.pack(-1099511627776))`,
		want: "true, \"d3ffffff0000000000\""},
	{name: "scripting.tcl pack/unpack smoke test", src: `
		local str_lt_32 = string.rep("x", 30)
		local str_lt_255 = string.rep("x", 250)
		local str_lt_65535 = string.rep("x", 65530)
		local str_long = string.rep("x", 100000)
		local array_lt_15 = {1, 2, 3, 4, 5}
		local array_lt_65535 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
		local array_big = {}
		for i=1, 100000 do
			array_big[i] = i
		end
		local map_lt_15 = {a=1, b=2}
		local map_big = {}
		for i=1, 100000 do
			map_big[tostring(i)] = i
		end
		local some_map = {
			s1=str_lt_32,
			s2=str_lt_255,
			s3=str_lt_65535,
			s4=str_long,
			d1=0.1,
			i1=1,
			i2=250,
			i3=65530,
			i4=100000,
			i5=2^40,
			i6=-1,
			i7=-120,
			i8=-32000,
			i9=-1200000000,
			b1=true,
			b2=false,
			n=nil,
			a1=array_lt_15,
			a2=array_lt_65535,
			a3=array_big,
			m1=map_lt_15,
			m2=map_big,
		}

		local encoded = cmsgpack.pack(some_map)

		local decoded = cmsgpack.unpack(encoded)
		assert(table.concat(some_map) == table.concat(decoded))
		local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)
		assert(table.concat(some_map) == table.concat(decoded_one))
		assert(offset == -1)

		local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)
		local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)
		assert(obj == str_lt_32)
		offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
		assert(obj == str_lt_255)
		offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
		assert(obj == str_lt_65535)
		offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
		assert(obj == str_long)
		assert(offset == -1)

		assert(decoded.s4 == str_long and decoded.a3[100000] == 100000 and decoded.m2["77777"] == 77777)
		assert(decoded.i5 == 2^40 and decoded.i9 == -1200000000 and decoded.d1 == 0.1 and decoded.b2 == false)
		return #encoded, #encoded_multiple`,
		want: "true, 1491964, 165821"},
	{name: "scripting.tcl can pack and unpack circular references", src: hexFn + `
		local a = {x=nil,y=5}
		local b = {x=a}
		a['x'] = b
		local encoded = cmsgpack.pack(a)
		local h = hex(encoded)
		-- cmsgpack encodes to a depth of 16, but can't encode
		-- references, so the encoded object has a deep copy recursive
		-- depth of 16.
		-- when unpacked, re.x.x != re because the unpack creates
		-- individual tables down to a depth of 16.
		-- (that's why the encoded output is so large)
		local re = cmsgpack.unpack(encoded)
		assert(re)
		assert(re.x)
		assert(re.x.x.y == re.y)
		assert(re.x.x.x.x.y == re.y)
		assert(re.x.x.x.x.x.x.y == re.y)
		assert(re.x.x.x.x.x.x.x.x.x.x.y == re.y)
		-- maximum working depth:
		assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)
		-- now the last x would be b above and has no y
		assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x)
		-- so, the final x.x is at the depth limit and was assigned nil
		assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)
		return {h, re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5}`,
		want: "true, {1=\"82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0\", 2=true, 3=true}"},

	// Packing.
	{name: "pack integers", src: hexFn + `return hex(cmsgpack.pack(0, 1, 127, 128, 255, 256, 65535, 65536, 2^32-1, 2^32, 2^53, 2^63-1024, -2^63))`,
		want: "true, \"00017fcc80ccffcd0100cdffffce00010000ceffffffffcf0000000100000000cf0020000000000000cf7ffffffffffffc00d38000000000000000\""},
	{name: "pack negative integers", src: hexFn + `return hex(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31-1, -2^40))`,
		want: "true, \"ffe0d0dfd080d1ff7fd18000d2ffff7fffd280000000d3ffffffff7fffffffd3ffffff0000000000\""},
	{name: "pack floats", src: hexFn + `return hex(cmsgpack.pack(0.5, -0.25, 0.1, 1.5e300, 1/0, -1/0, 2^63, 2^64, -2^63-4096, 3.4028234663852886e38, 1e-45))`,
		want: "true, \"ca3f000000cabe800000cb3fb999999999999acb7e41eb2d66005835ca7f800000caff800000ca5f000000ca5f800000cbc3e0000000000002ca7f7fffffcb3696d601ad376ab9\""},
	{name: "pack negative zero", src: hexFn + `return hex(cmsgpack.pack(-0.0))`,
		want: "true, \"00\""},
	{name: "pack strings", src: hexFn + `return hex(cmsgpack.pack("", "a", string.rep("b", 31))), #cmsgpack.pack(string.rep("c", 32)), hex(cmsgpack.pack(string.rep("c", 32)):sub(1, 3)), hex(cmsgpack.pack(string.rep("d", 255)):sub(1, 3)), hex(cmsgpack.pack(string.rep("e", 256)):sub(1, 4)), hex(cmsgpack.pack(string.rep("f", 65536)):sub(1, 6))`,
		want: "true, \"a0a161bf62626262626262626262626262626262626262626262626262626262626262\", 34, \"d92063\", \"d9ff64\", \"da010065\", \"db0001000066\""},
	{name: "pack booleans nil and others", src: hexFn + `return hex(cmsgpack.pack(true, false, nil, function() end, cjson.null, coroutine.create(function() end)))`,
		want: "true, \"c3c2c0c0c0c0\""},
	{name: "pack arrays", src: hexFn + `return hex(cmsgpack.pack({}, {1, 2, 3}, {"a", {true}}, {[1]=1, [2]=2}))`,
		want: "true, \"909301020392a16191c3920102\""},
	{name: "pack array sizes", src: hexFn + `local t = {} for i = 1, 16 do t[i] = i end local u = {} for i = 1, 65536 do u[i] = 0 end return hex(cmsgpack.pack(t)), hex(cmsgpack.pack(u):sub(1, 6)), #cmsgpack.pack(u)`,
		want: "true, \"dc00100102030405060708090a0b0c0d0e0f10\", \"dd0001000000\", 65541"},
	{name: "pack maps", src: hexFn + `return hex(cmsgpack.pack({a=1})), hex(cmsgpack.pack({[1]=1, [3]=3})), hex(cmsgpack.pack({[0]=1})), hex(cmsgpack.pack({[1.5]=1})), hex(cmsgpack.pack({[-1]=1})), hex(cmsgpack.pack({[true]=1}))`,
		want: "true, \"81a16101\", \"8201010303\", \"810001\", \"81ca3fc0000001\", \"81ff01\", \"81c301\""},
	{name: "pack map sizes", src: hexFn + `local t = {} for i = 1, 16 do t["k" .. i] = i end local u = {} for i = 1, 65536 do u["k" .. i] = 0 end return hex(cmsgpack.pack(t):sub(1, 3)), hex(cmsgpack.pack(u):sub(1, 5)), #cmsgpack.pack(u)`,
		want: "true, \"de0010\", \"df00010000\", 513187"},
	{name: "pack mixed table is a map", src: `local m = cmsgpack.unpack(cmsgpack.pack({1, 2, x=3})) return m[1], m[2], m.x`,
		want: "true, 1, 2, 3"},
	{name: "pack table key", src: `local m = cmsgpack.unpack(cmsgpack.pack({[{1}]=2})) local k, v = next(m) return type(k), k[1], v`,
		want: "true, \"table\", 1, 2"},
	{name: "pack nesting limit", src: hexFn + `local t = {} local cur = t for i = 1, 20 do cur[1] = {} cur = cur[1] end return hex(cmsgpack.pack(t))`,
		want: "true, \"91919191919191919191919191919191c0\""},
	{name: "pack nesting limit in map", src: hexFn + `local t = {} local cur = t for i = 1, 20 do cur.k = {} cur = cur.k end return hex(cmsgpack.pack(t))`,
		want: "true, \"81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16bc0\""},
	{name: "pack self reference", src: hexFn + `local t = {} t[1] = t return hex(cmsgpack.pack(t))`,
		want: "true, \"91919191919191919191919191919191c0\""},
	{name: "pack multiple", src: hexFn + `return hex(cmsgpack.pack(1, "a", {2}))`,
		want: "true, \"01a1619102\""},
	{name: "pack large array index", src: hexFn + `return hex(cmsgpack.pack({[2^31]=1})), hex(cmsgpack.pack({[2^31-1]=1}))`,
		want: "true, \"81ce8000000001\", \"81ce7fffffff01\""},

	// Unpacking.
	{name: "unpack scalars", src: `return cmsgpack.unpack("\192\194\195\1\127\224\255")`,
		want: "true, nil, false, true, 1, 127, -32, -1"},
	{name: "unpack unsigned", src: `return cmsgpack.unpack("\204\200\205\1\0\206\255\255\255\255\207\0\0\0\1\0\0\0\0\207\255\255\255\255\255\255\255\255\207\128\0\0\0\0\0\0\0")`,
		want: "true, 200, 256, 4294967295, 4294967296, -1, -9223372036854775808"},
	{name: "unpack signed", src: `return cmsgpack.unpack("\208\128\208\127\209\255\128\209\128\0\210\255\255\255\255\210\128\0\0\0\211\255\255\255\255\255\255\255\255\211\128\0\0\0\0\0\0\0")`,
		want: "true, -128, 127, -128, -32768, -1, -2147483648, -1, -9223372036854775808"},
	{name: "unpack floats", src: `return cmsgpack.unpack("\202\63\192\0\0\202\61\204\204\205\203\63\185\153\153\153\153\153\154\202\127\128\0\0\203\255\248\0\0\0\0\0\0")`,
		want: "true, 1.5, 0.10000000149011612, 0.10000000000000001, inf, nan"},
	{name: "unpack strings", src: `return cmsgpack.unpack("\160\161a\217\3abc\218\0\2de\219\0\0\0\1f")`,
		want: "true, \"\", \"a\", \"abc\", \"de\", \"f\""},
	{name: "unpack arrays", src: `return cmsgpack.unpack("\144\147\1\2\3\220\0\2\161a\192\221\0\0\0\1\145\1")`,
		want: "true, {}, {1=1, 2=2, 3=3}, {1=\"a\"}, {1={1=1}}"},
	{name: "unpack maps", src: `return cmsgpack.unpack("\128\130\161a\1\161b\146\1\2\222\0\1\1\161x\223\0\0\0\1\195\194")`,
		want: "true, {}, {\"a\"=1, \"b\"={1=1, 2=2}}, {1=\"x\"}, {true=false}"},
	{name: "unpack map with nil value", src: `local t = cmsgpack.unpack("\130\161a\192\161b\1") return t.a, t.b`,
		want: "true, nil, 1"},
	{name: "unpack map duplicate keys", src: `local t = cmsgpack.unpack("\130\161a\1\161a\2") return t.a`,
		want: "true, 2"},
	{name: "unpack array with nils", src: `local t = cmsgpack.unpack("\147\192\1\192") return t[1], t[2], t[3], #t == 0 or #t == 2`,
		want: "true, nil, 1, nil, true"},
	{name: "unpack empty", src: `return select("#", cmsgpack.unpack(""))`,
		want: "true, 0"},
	{name: "unpack number argument", src: `return cmsgpack.unpack(123)`,
		want: "true, 49, 50, 51"},
	{name: "unpack extra arguments", src: `return cmsgpack.unpack("\1\2", 5, 6)`,
		want: "true, 1, 2"},
	{name: "unpack_one", src: `return cmsgpack.unpack_one("\1\2\3"), cmsgpack.unpack_one("\1\2\3", 1), cmsgpack.unpack_one("\1\2\3", 2), cmsgpack.unpack_one("\1\2\3", 3)`,
		want: "true, 1, 2, -1, -1"},
	{name: "unpack_one iterate", src: `local s = cmsgpack.pack(1, "two", {3}) local out = {} local off = 0 while off ~= -1 do local v off, v = cmsgpack.unpack_one(s, off) out[#out+1] = v end return out`,
		want: "true, {1=1, 2=\"two\", 3={1=3}}"},
	{name: "unpack_one empty", src: `return cmsgpack.unpack_one("")`,
		want: "true, -1"},
	{name: "unpack_limit", src: `local s = "\1\2\3\4" return {cmsgpack.unpack_limit(s, 2)}, {cmsgpack.unpack_limit(s, 2, 2)}, {cmsgpack.unpack_limit(s, 9, 1)}, {cmsgpack.unpack_limit(s, 0)}, {cmsgpack.unpack_limit(s, 0, 1)}, {cmsgpack.unpack_limit(s, "1", "3")}`,
		want: "true, {1=2, 2=1, 3=2}, {1=-1, 2=3, 3=4}, {1=-1, 2=2, 3=3, 4=4}, {1=1, 2=2, 3=3, 4=4}, {1=1}, {1=-1, 2=4}"},
	{name: "unpack_limit fractional", src: `return cmsgpack.unpack_limit("\1\2\3", 1.9, 1.9)`,
		want: "true, 2, 2"},
	{name: "unpack table index is nil", src: `return cmsgpack.unpack("\129\192\1")`,
		want: "false, \"table index is nil\""},
	{name: "unpack table index is NaN", src: `return cmsgpack.unpack("\129\203\255\248\0\0\0\0\0\0\1")`,
		want: "false, \"table index is NaN\""},
	{name: "unpack table key", src: `local t = cmsgpack.unpack("\129\145\1\2") local k, v = next(t) return type(k), k[1], v`,
		want: "true, \"table\", 1, 2"},
	{name: "unpack deep nesting ok", src: `return type(cmsgpack.unpack(string.rep("\145", 3999) .. "\1"))`,
		want: "true, \"table\""},
	{name: "unpack deep nesting overflow", src: `return type(cmsgpack.unpack(string.rep("\145", 4000) .. "\1"))`,
		want: "false, \"user_script:1: stack overflow (in function mp_decode_to_lua_array)\""},
	{name: "unpack deep maps overflow", src: `return type(cmsgpack.unpack(string.rep("\129\1", 4000) .. "\1"))`,
		want: "false, \"user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)\""},
	{name: "unpack deep map keys overflow", src: `return type(cmsgpack.unpack(string.rep("\129", 8000) .. "\1"))`,
		want: "false, \"user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)\""},
	{name: "unpack many values", src: `return select("#", cmsgpack.unpack(string.rep("\1", 7999)))`,
		want: "true, 7999"},
	{name: "unpack too many values", src: `return select("#", cmsgpack.unpack(string.rep("\1", 8000)))`,
		want: "false, \"user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)\""},
	{name: "unpack_limit too many values", src: `return select("#", cmsgpack.unpack_limit(string.rep("\1", 8000), 7999))`,
		want: "false, \"user_script:1: stack overflow (in function mp_unpack_full)\""},
	{name: "roundtrip", src: `local v = {1, -1, 0.5, "s", true, false, {a={b={c={1, 2, {}}}}}, 2^53, -2^53, 1e-300}
		local r = cmsgpack.unpack(cmsgpack.pack(v)) return r`,
		want: "true, {1=1, 2=-1, 3=0.5, 4=\"s\", 5=true, 6=false, 7={\"a\"={\"b\"={\"c\"={1=1, 2=2, 3={}}}}}, 8=9007199254740992, 9=-9007199254740992, 10=1e-300}"},

	// Errors.
	{name: "error pack no argument", src: `return cmsgpack.pack()`,
		want: "false, \"user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)\""},
	{name: "error pack too many arguments", src: `local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))`,
		want: "false, \"user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)\""},
	{name: "pack many arguments", src: `local t = {} for i = 1, 4000 do t[i] = i end return #cmsgpack.pack(unpack(t))`,
		want: "true, 11618"},
	{name: "error unpack missing bytes", src: `return cmsgpack.unpack("\205\1")`,
		want: "false, \"user_script:1: Missing bytes in input.\""},
	{name: "error unpack missing bytes in array", src: `return cmsgpack.unpack("\147\1\2")`,
		want: "false, \"user_script:1: Missing bytes in input.\""},
	{name: "error unpack missing string bytes", src: `return cmsgpack.unpack("\219\0\0\0\9abc")`,
		want: "false, \"user_script:1: Missing bytes in input.\""},
	{name: "error unpack bad format", src: `return cmsgpack.unpack("\193")`,
		want: "false, \"user_script:1: Bad data format in input.\""},
	{name: "error unpack bin ext", src: `return pcall(cmsgpack.unpack, "\196\1a"), pcall(cmsgpack.unpack, "\199\1\1a"), pcall(cmsgpack.unpack, "\212\1\1")`,
		want: "true, false, false, false, \"Bad data format in input.\""},
	{name: "error unpack bad format nested", src: `return cmsgpack.unpack("\1\145\193")`,
		want: "false, \"user_script:1: Bad data format in input.\""},
	{name: "error unpack not a string", src: `return cmsgpack.unpack({})`,
		want: "false, \"user_script:1: bad argument #1 to 'unpack' (string expected, got table)\""},
	{name: "error unpack_one negative offset", src: `return cmsgpack.unpack_one("\1", -1)`,
		want: "false, \"user_script:1: Invalid request to unpack with offset of -1 and limit of 1.\""},
	{name: "error unpack_limit negative limit", src: `return cmsgpack.unpack_limit("\1\2", -1, 1)`,
		want: "false, \"user_script:1: Invalid request to unpack with offset of 1 and limit of 2.\""},
	{name: "error unpack offset past end", src: `return cmsgpack.unpack_one("\1", 2)`,
		want: "false, \"user_script:1: Start offset 2 greater than input length 1.\""},
	{name: "error unpack_limit no limit", src: `return cmsgpack.unpack_limit("\1")`,
		want: "false, \"user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)\""},
	{name: "error unpack_one bad offset", src: `return cmsgpack.unpack_one("\1", "x")`,
		want: "false, \"user_script:1: bad argument #2 to 'unpack_one' (number expected, got string)\""},
	{name: "error unpack_one offset checked first", src: `return cmsgpack.unpack_one({}, {})`,
		want: "false, \"user_script:1: bad argument #2 to 'unpack_one' (number expected, got table)\""},
	{name: "error through pcall", src: `return pcall(cmsgpack.unpack, "\205")`,
		want: "true, false, \"Missing bytes in input.\""},
}

func TestCMsgpack(t *testing.T) { runCases(t, cmsgpackCases) }

// FuzzCMsgpackUnpack checks that unpack never panics: every input either
// decodes or raises a Lua error, and what decodes packs back to a string
// that decodes to the same number of values.
func FuzzCMsgpackUnpack(f *testing.F) {
	for _, s := range []string{
		"", "\x01", "\xc0\xc2\xc3", "\x93\x01\x02\x03", "\x82\xa1a\x01\xa1b\x92\x01\x02",
		"\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a", "\xdb\x00\x00\x00\x09abc", "\xc1", "\x81\xc0\x01",
		"\xdd\xff\xff\xff\xff", "\xdf\x00\x00\x00\x01\x91\x01\x02", strings.Repeat("\x91", 5000) + "\x01",
	} {
		f.Add(s)
	}
	// A map key such as 67108863 would make gopher-lua grow a table's array
	// part to that size (t[k] = v in a script does the same); keep the
	// fuzzer's memory bounded.
	defer func(old int) { lua.MaxArrayIndex = old }(lua.MaxArrayIndex)
	lua.MaxArrayIndex = 1 << 16
	L := newState()
	defer L.Close()
	fn := L.GetGlobal("cmsgpack").(*lua.LTable)
	unpack, pack := fn.RawGetString("unpack"), fn.RawGetString("pack")
	f.Fuzz(func(t *testing.T, s string) {
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: unpack, NRet: lua.MultRet, Protect: true}, lua.LString(s)); err != nil {
			requireLuaError(t, err)
			return
		}
		n := L.GetTop()
		if n == 0 || n > 4000 { // pack takes at most 4000 arguments
			return
		}
		vals := make([]lua.LValue, n)
		for i := range vals {
			vals[i] = L.Get(i + 1)
		}
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: pack, NRet: 1, Protect: true}, vals...); err != nil {
			t.Fatalf("pack of unpack(%q): %v", s, err)
		}
		packed := L.Get(-1)
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: unpack, NRet: lua.MultRet, Protect: true}, packed); err != nil {
			t.Fatalf("unpack of repacked %q: %v", s, err)
		}
		if L.GetTop() != n {
			t.Fatalf("unpack(%q) gave %d values, repacked %d", s, n, L.GetTop())
		}
	})
}
