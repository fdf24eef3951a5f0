package lualib

import "testing"

var bitCases = []luaCase{
	// tests/unit/scripting.tcl
	{name: "scripting.tcl numerical sanity check", src: `
		assert(0x7fffffff == 2147483647, "broken hex literals");
		assert(0xffffffff == -1 or 0xffffffff == 2^32-1, "broken hex literals");
		assert(tostring(-1) == "-1", "broken tostring()");
		return bit.tobit(0xffffffff)`,
		want: "true, -1"},
	{name: "scripting.tcl minimal bitop functionality", src: `
		assert(bit.tobit(1) == 1);
		assert(bit.band(1) == 1);
		assert(bit.bxor(1,2) == 3);
		assert(bit.bor(1,2,4,8,16,32,64,128) == 255)
		return "ok"`,
		want: "true, \"ok\""},
	{name: "scripting.tcl tohex bug", src: `return bit.tohex(65535, -2147483648)`,
		want: "true, \"0000FFFF\""},

	// LuaBitOp's own test suite (bittest.lua) checksums and examples.
	{name: "tobit", src: `return bit.tobit(0xffffffff), bit.tobit(0xffffffff + 1), bit.tobit(2^40 + 1234), bit.tobit(-1), bit.tobit(2^31), bit.tobit(-2^31-1)`,
		want: "true, -1, 0, 1234, -1, -2147483648, 2147483647"},
	{name: "tobit rounding", src: `return bit.tobit(0.5), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-0.5), bit.tobit(-1.5), bit.tobit(3.7), bit.tobit(-3.7)`,
		want: "true, 0, 2, 2, 0, -2, 4, -4"},
	{name: "tobit huge", src: `return bit.tobit(2^52), bit.tobit(2^53 + 2), bit.tobit(2^60 + 2^33 + 5), bit.tobit(1e300), bit.tobit(-1e300), bit.tobit(1/0), bit.tobit(-1/0), bit.tobit(0/0)`,
		want: "true, 0, 1, 33554432, -2013235812, -2013235812, 0, 0, 0"},
	{name: "tobit string", src: `return bit.tobit("10"), bit.tobit(" 0x10 "), bit.tobit("1e3")`,
		want: "true, 10, 16, 1000"},
	{name: "bnot", src: `return bit.bnot(0), bit.bnot(-1), bit.bnot(0x12345678), bit.bnot(2^32)`,
		want: "true, -1, 0, -305419897, -1"},
	{name: "band bor bxor", src: `return bit.band(0x12345678, 0xff), bit.bor(0x12345678, 0xff), bit.bxor(0x12345678, 0xff), bit.band(-1, -1, -1, 7), bit.bor(1), bit.bxor(1, 1, 1)`,
		want: "true, 120, 305420031, 305419911, 7, 1, 1"},
	{name: "shifts", src: `return bit.lshift(1, 0), bit.lshift(1, 8), bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1),
		bit.rshift(256, 8), bit.rshift(-256, 8), bit.rshift(-1, 31), bit.rshift(1, 32),
		bit.arshift(256, 8), bit.arshift(-256, 8), bit.arshift(-1, 31), bit.arshift(0x80000000, 4)`,
		want: "true, 1, 256, -2147483648, 1, 2, -2147483648, 1, 16777215, 1, 1, 1, -1, -1, -134217728"},
	{name: "rotations", src: `return bit.rol(0x12345678, 12), bit.rol(0x12345678, 0), bit.rol(0x12345678, 32), bit.rol(0x12345678, 36),
		bit.ror(0x12345678, 12), bit.ror(0x12345678, 0), bit.ror(0x12345678, -4), bit.ror(1, 1)`,
		want: "true, 1164411171, 305419896, 305419896, 591751041, 1736516421, 305419896, 591751041, -2147483648"},
	{name: "bswap", src: `return bit.bswap(0x12345678), bit.bswap(0x9abcdef0), bit.bswap(0), bit.bswap(bit.bswap(-2))`,
		want: "true, 2018915346, -253838182, 0, -2"},
	{name: "tohex", src: `return bit.tohex(1), bit.tohex(-1), bit.tohex(-1, -8), bit.tohex(0x21, 4), bit.tohex(0x87654321, -4), bit.tohex(0x87654321, 0),
		bit.tohex(0x87654321, 9), bit.tohex(0x87654321, -9), bit.tohex(0x87654321, 2^31 - 1), bit.tohex(0x87654321, 2^32 - 3)`,
		want: "true, \"00000001\", \"ffffffff\", \"FFFFFFFF\", \"0021\", \"4321\", \"\", \"87654321\", \"87654321\", \"87654321\", \"321\""},
	{name: "tohex min width", src: `return bit.tohex(0xabcdef, -2^31), bit.tohex(0xabcdef, 2^31)`,
		want: "true, \"00ABCDEF\", \"00ABCDEF\""},
	{name: "checksum", src: `
		local function cksum(name, s, r)
			local z = 0
			for i=1,#s do z = (z + string.byte(s, i)*i) % 2147483629 end
			return z
		end
		local function dotest(name, r, ...)
			local s = ""
			for i=1,select("#", ...) do s = s .. tostring(r(select(i, ...))) end
			return cksum(name, s, r)
		end
		local t = {}
		t[#t+1] = dotest("tobit", bit.tobit, 0, 1, -1, 2^31, 2^32, 0.5, 1.5, 2.5, -0.5, -1.5)
		t[#t+1] = dotest("bnot", bit.bnot, 0, 1, -1, 2^31, 2^32, 0x12345678)
		local r = {}
		for i = -40, 40 do r[#r+1] = bit.lshift(0x1234, i); r[#r+1] = bit.rshift(-0x1234, i); r[#r+1] = bit.arshift(-0x1234, i); r[#r+1] = bit.rol(0x12345678, i); r[#r+1] = bit.ror(0x12345678, i) end
		t[#t+1] = table.concat(r, ",")
		return unpack(t)`,
		want: "true, 12713, 19686, \"872415232,255,-1,2014458966,878082066,1744830464,127,-1,-266049364,439041033,-805306368,63,-1,-532098727,-1927963132,-1610612736,31,-1,-1064197453,1183502082,1073741824,15,-1,-2128394905,591751041,-2147483648,7,-1,38177487,-1851608128,0,3,-1,76354974,1221679584,0,1,-1,152709948,610839792,4660,-4660,-4660,305419896,305419896,9320,2147481318,-2330,610839792,152709948,18640,1073740659,-1165,1221679584,76354974,37280,536870329,-583,-1851608128,38177487,74560,268435164,-292,591751041,-2128394905,149120,134217582,-146,1183502082,-1064197453,298240,67108791,-73,-1927963132,-532098727,596480,33554395,-37,439041033,-266049364,1192960,16777197,-19,878082066,2014458966,2385920,8388598,-10,1756164132,1007229483,4771840,4194299,-5,-782639032,-1643868907,9543680,2097149,-3,-1565278063,-821934454,19087360,1048574,-2,1164411171,1736516421,38174720,524287,-1,-1966144954,-1279225438,76349440,262143,-1,362677389,1507870929,152698880,131071,-1,725354778,-1393548184,305397760,65535,-1,1450709556,1450709556,610795520,32767,-1,-1393548184,725354778,1221591040,16383,-1,1507870929,362677389,-1851785216,8191,-1,-1279225438,-1966144954,591396864,4095,-1,1736516421,1164411171,1182793728,2047,-1,-821934454,-1565278063,-1929379840,1023,-1,-1643868907,-782639032,436207616,511,-1,1007229483,1756164132,872415232,255,-1,2014458966,878082066,1744830464,127,-1,-266049364,439041033,-805306368,63,-1,-532098727,-1927963132,-1610612736,31,-1,-1064197453,1183502082,1073741824,15,-1,-2128394905,591751041,-2147483648,7,-1,38177487,-1851608128,0,3,-1,76354974,1221679584,0,1,-1,152709948,610839792,4660,-4660,-4660,305419896,305419896,9320,2147481318,-2330,610839792,152709948,18640,1073740659,-1165,1221679584,76354974,37280,536870329,-583,-1851608128,38177487,74560,268435164,-292,591751041,-2128394905,149120,134217582,-146,1183502082,-1064197453,298240,67108791,-73,-1927963132,-532098727,596480,33554395,-37,439041033,-266049364,1192960,16777197,-19,878082066,2014458966,2385920,8388598,-10,1756164132,1007229483,4771840,4194299,-5,-782639032,-1643868907,9543680,2097149,-3,-1565278063,-821934454,19087360,1048574,-2,1164411171,1736516421,38174720,524287,-1,-1966144954,-1279225438,76349440,262143,-1,362677389,1507870929,152698880,131071,-1,725354778,-1393548184,305397760,65535,-1,1450709556,1450709556,610795520,32767,-1,-1393548184,725354778,1221591040,16383,-1,1507870929,362677389,-1851785216,8191,-1,-1279225438,-1966144954,591396864,4095,-1,1736516421,1164411171,1182793728,2047,-1,-821934454,-1565278063,-1929379840,1023,-1,-1643868907,-782639032,436207616,511,-1,1007229483,1756164132,872415232,255,-1,2014458966,878082066,1744830464,127,-1,-266049364,439041033,-805306368,63,-1,-532098727,-1927963132,-1610612736,31,-1,-1064197453,1183502082,1073741824,15,-1,-2128394905,591751041,-2147483648,7,-1,38177487,-1851608128,0,3,-1,76354974,1221679584,0,1,-1,152709948,610839792,4660,-4660,-4660,305419896,305419896,9320,2147481318,-2330,610839792,152709948,18640,1073740659,-1165,1221679584,76354974,37280,536870329,-583,-1851608128,38177487,74560,268435164,-292,591751041,-2128394905,149120,134217582,-146,1183502082,-1064197453,298240,67108791,-73,-1927963132,-532098727,596480,33554395,-37,439041033,-266049364,1192960,16777197,-19,878082066,2014458966\""},

	// Errors.
	{name: "no argument", src: `return bit.tobit()`,
		want: "false, \"user_script:1: bad argument #1 to 'tobit' (number expected, got no value)\""},
	{name: "nil argument", src: `return bit.band(1, nil)`,
		want: "false, \"user_script:1: bad argument #2 to 'band' (number expected, got nil)\""},
	{name: "bad argument order", src: `return bit.bor(1, "x", {})`,
		want: "false, \"user_script:1: bad argument #3 to 'bor' (number expected, got table)\""},
	{name: "bad first argument", src: `return bit.bxor({}, "x")`,
		want: "false, \"user_script:1: bad argument #1 to 'bxor' (number expected, got table)\""},
	{name: "bad shift count", src: `return bit.lshift(1, "a")`,
		want: "false, \"user_script:1: bad argument #2 to 'lshift' (number expected, got string)\""},
	{name: "tohex nil width", src: `return bit.tohex(1, nil)`,
		want: "false, \"user_script:1: bad argument #2 to 'tohex' (number expected, got nil)\""},
	{name: "error through pcall", src: `return pcall(bit.bnot, true)`,
		want: "true, false, \"bad argument #1 to '?' (number expected, got boolean)\""},
	{name: "error from local name", src: `local f = bit.tohex return f(false)`,
		want: "false, \"user_script:1: bad argument #1 to 'f' (number expected, got boolean)\""},
}

func TestBit(t *testing.T) { runCases(t, bitCases) }
