package lualib

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

var cjsonCases = []luaCase{
	// tests/unit/scripting.tcl
	{name: "scripting.tcl JSON numeric decoding", src: `return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")`,
		want: "true, \"0 -5000 -1 0.0003 1023.2 0\""},
	{name: "scripting.tcl JSON string decoding", src: `local decoded = cjson.decode('{"keya": "a", "keyb": "b"}')
		return {decoded.keya, decoded.keyb}`,
		want: "true, {1=\"a\", 2=\"b\"}"},
	{name: "scripting.tcl JSON smoke test", src: `
		local some_map = {
			s1="Some string",
			n1=100,
			a1={"Some","String","Array"},
			nil1=nil,
			b1=true,
			b2=false}
		local encoded = cjson.encode(some_map)
		local decoded = cjson.decode(encoded)
		assert(table.concat(some_map) == table.concat(decoded))

		cjson.encode_keep_buffer(false)
		encoded = cjson.encode(some_map)
		decoded = cjson.decode(encoded)
		assert(table.concat(some_map) == table.concat(decoded))

		-- Table with numeric keys
		local table1 = {one="one", [1]="one"}
		encoded = cjson.encode(table1)
		decoded = cjson.decode(encoded)
		assert(decoded["one"] == table1["one"])
		assert(decoded["1"] == table1[1])

		-- Array
		local array1 = {[1]="one", [2]="two", [3]="three"}
		encoded = cjson.encode(array1)
		decoded = cjson.decode(encoded)
		assert(table.concat(array1) == table.concat(decoded))

		-- Invalid keys
		local invalid_map = {}
		invalid_map[false] = "false"
		local ok, encoded = pcall(cjson.encode, invalid_map)
		assert(ok == false)

		-- Max depth
		cjson.encode_max_depth(1)
		ok, encoded = pcall(cjson.encode, some_map)
		assert(ok == false)

		cjson.decode_max_depth(1)
		ok, decoded = pcall(cjson.decode, '{"obj": {"array": [1,2,3,4]}}')
		assert(ok == false)

		return "OK"`,
		want: "true, \"OK\""},
	{name: "scripting.tcl JSON encoding nesting depth", src: `
		local t = {} local cur = t
		for i = 1, 1000 do cur[1] = {} cur = cur[1] end
		local ok, err = pcall(cjson.encode, t)
		cur = t for i = 1, 999 do cur = cur[1] end cur[1] = nil
		return ok, err, #cjson.encode(t)`,
		want: "true, false, \"Cannot serialise, excessive nesting (1001)\", 2000"},
	{name: "scripting.tcl JSON decoding nesting depth", src: `
		local ok, err = pcall(cjson.decode, string.rep("[", 1001) .. string.rep("]", 1001))
		return ok, err, type(cjson.decode(string.rep("[", 1000) .. string.rep("]", 1000)))`,
		want: "true, false, \"Found too many nested data structures (1001) at character 1001\", \"table\""},

	// Encoding scalars.
	{name: "encode scalars", src: `return cjson.encode(nil), cjson.encode(true), cjson.encode(false), cjson.encode(cjson.null), cjson.encode("x"), cjson.encode(42)`,
		want: "true, \"null\", \"true\", \"false\", \"null\", \"\\\"x\\\"\", \"42\""},
	{name: "encode numbers", src: `return cjson.encode({0.1, 1/3, 100, 1e14, 123456789012345, 2^53, -0.0, 1e300, 1e-300, -1.5e-7, 0.00001, 0.0001, 2^63})`,
		want: "true, \"[0.1,0.33333333333333,100,1e+14,1.2345678901234e+14,9.007199254741e+15,-0,1e+300,1e-300,-1.5e-07,1e-05,0.0001,9.2233720368548e+18]\""},
	{name: "encode number precision", src: `local p = cjson.encode_number_precision(3) return p, cjson.encode({1/3, 1234.5, 100, 0.15}), cjson.encode_number_precision(), cjson.encode_number_precision(14)`,
		want: "true, 3, \"[0.333,1.23e+03,100,0.15]\", 3, 14"},
	{name: "encode invalid numbers off", src: `return pcall(cjson.encode, 0/0), pcall(cjson.encode, {1/0}), pcall(cjson.encode, {[-1/0] = 1})`,
		want: "true, false, false, false, \"Cannot serialise number: must not be NaN or Inf\""},
	{name: "encode invalid numbers on", src: `local r = {cjson.encode_invalid_numbers(true)} r[#r+1] = cjson.encode({0/0, -(0/0), 1/0, -1/0}) r[#r+1] = cjson.encode({[1/0]=1}) return r`,
		want: "true, {1=true, 2=\"[nan,nan,inf,-inf]\", 3=\"{\\\"inf\\\":1}\"}"},
	{name: "encode invalid numbers null", src: `local r = {cjson.encode_invalid_numbers("null")} r[#r+1] = cjson.encode({0/0, 1/0, 1}) r[#r+1] = cjson.encode({[1/0]=1}) return r`,
		want: "true, {1=\"null\", 2=\"[null,null,1]\", 3=\"{\\\"null\\\":1}\"}"},
	{name: "encode strings", src: `return cjson.encode("a\"b\\c/d\be\ff\ng\rh\ti\0j\1k\31l\127m\128n\255")`,
		want: "true, \"\\\"a\\\\\\\"b\\\\\\\\c\\\\/d\\\\be\\\\ff\\\\ng\\\\rh\\\\ti\\\\u0000j\\\\u0001k\\\\u001fl\\\\u007fm\\x80n\\xff\\\"\""},
	{name: "encode every byte", src: `local c = {} for i = 0, 255 do c[#c+1] = string.char(i) end return cjson.encode(table.concat(c))`,
		want: "true, \"\\\"\\\\u0000\\\\u0001\\\\u0002\\\\u0003\\\\u0004\\\\u0005\\\\u0006\\\\u0007\\\\b\\\\t\\\\n\\\\u000b\\\\f\\\\r\\\\u000e\\\\u000f\\\\u0010\\\\u0011\\\\u0012\\\\u0013\\\\u0014\\\\u0015\\\\u0016\\\\u0017\\\\u0018\\\\u0019\\\\u001a\\\\u001b\\\\u001c\\\\u001d\\\\u001e\\\\u001f !\\\\\\\"#$%&'()*+,-.\\\\/0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\\\u007f\\x80\\x81\\x82\\x83\\x84\\x85\\x86\\x87\\x88\\x89\\x8a\\x8b\\x8c\\x8d\\x8e\\x8f\\x90\\x91\\x92\\x93\\x94\\x95\\x96\\x97\\x98\\x99\\x9a\\x9b\\x9c\\x9d\\x9e\\x9f\\xa0\\xa1\\xa2\\xa3\\xa4\\xa5\\xa6\\xa7\\xa8\\xa9\\xaa\\xab\\xac\\xad\\xae\\xaf\\xb0\\xb1\\xb2\\xb3\\xb4\\xb5\\xb6\\xb7\\xb8\\xb9\\xba\\xbb\\xbc\\xbd\\xbe\\xbf\\xc0\\xc1\\xc2\\xc3\\xc4\\xc5\\xc6\\xc7\\xc8\\xc9\\xca\\xcb\\xcc\\xcd\\xce\\xcf\\xd0\\xd1\\xd2\\xd3\\xd4\\xd5\\xd6\\xd7\\xd8\\xd9\\xda\\xdb\\xdc\\xdd\\xde\\xdf\\xe0\\xe1\\xe2\\xe3\\xe4\\xe5\\xe6\\xe7\\xe8\\xe9\\xea\\xeb\\xec\\xed\\xee\\xef\\xf0\\xf1\\xf2\\xf3\\xf4\\xf5\\xf6\\xf7\\xf8\\xf9\\xfa\\xfb\\xfc\\xfd\\xfe\\xff\\\"\""},
	{name: "encode utf8", src: `return cjson.encode("h\195\169llo \226\130\172 \240\159\152\128")`,
		want: "true, \"\\\"h\\xc3\\xa9llo \\xe2\\x82\\xac \\xf0\\x9f\\x98\\x80\\\"\""},

	// Encoding tables.
	{name: "encode arrays", src: `return cjson.encode({}), cjson.encode({1, 2, 3}), cjson.encode({{}, {{}}}), cjson.encode({"a", {b = 1}})`,
		want: "true, \"{}\", \"[1,2,3]\", \"[{},[{}]]\", \"[\\\"a\\\",{\\\"b\\\":1}]\""},
	{name: "encode array with holes", src: `return cjson.encode({1, nil, 3}), cjson.encode({[1] = 1, [4] = 4}), cjson.encode({[10] = 1}), cjson.encode({[3] = cjson.null})`,
		want: "true, \"[1,null,3]\", \"[1,null,null,4]\", \"[null,null,null,null,null,null,null,null,null,1]\", \"[null,null,null]\""},
	{name: "encode sparse array error", src: `return pcall(cjson.encode, {[11] = 1})`,
		want: "true, false, \"Cannot serialise table: excessively sparse array\""},
	{name: "encode sparse array ratio", src: `return cjson.encode({[1] = 1, [2] = 2, [12] = 1}), pcall(cjson.encode, {[1] = 1, [13] = 1})`,
		want: "false, \"user_script:1: Cannot serialise table: excessively sparse array\""},
	{name: "encode sparse array convert", src: `local r = {cjson.encode_sparse_array(true)} r[#r+1] = cjson.encode({[11] = "x"}) r[#r+1] = cjson.encode({[1] = 1, [2] = 2, [30] = 3}) return r`,
		want: "true, {1=true, 2=2, 3=10, 4=\"{\\\"11\\\":\\\"x\\\"}\", 5=\"{\\\"1\\\":1,\\\"2\\\":2,\\\"30\\\":3}\"}"},
	{name: "encode sparse array ratio zero", src: `local r = {cjson.encode_sparse_array(false, 0)} r[#r+1] = cjson.encode({[20] = 1}) return r`,
		want: "true, {1=false, 2=0, 3=10, 4=\"[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,1]\"}"},
	{name: "encode sparse array safe", src: `local r = {cjson.encode_sparse_array(nil, 1, 3)} r[#r+1] = cjson.encode({[3] = 1}) r[#r+1] = select(2, pcall(cjson.encode, {[4] = 1})) r[#r+1] = cjson.encode({1, 2, 3, 4}) return r`,
		want: "true, {1=false, 2=1, 3=3, 4=\"[null,null,1]\", 5=\"Cannot serialise table: excessively sparse array\", 6=\"[1,2,3,4]\"}"},
	{name: "encode objects", src: `return cjson.encode({a = 1}), cjson.encode({[0] = 1}), cjson.encode({[-1] = "x"}), cjson.encode({[1.5] = true}), cjson.encode({[1] = 1, b = 2}), cjson.encode({x = {y = {z = {}}}})`,
		want: "true, \"{\\\"a\\\":1}\", \"{\\\"0\\\":1}\", \"{\\\"-1\\\":\\\"x\\\"}\", \"{\\\"1.5\\\":true}\", \"{\\\"1\\\":1,\\\"b\\\":2}\", \"{\\\"x\\\":{\\\"y\\\":{\\\"z\\\":{}}}}\""},
	{name: "encode object key escaping", src: `return cjson.encode({["a/\"b"] = "c"})`,
		want: "true, \"{\\\"a\\\\/\\\\\\\"b\\\":\\\"c\\\"}\""},
	{name: "encode object numeric keys", src: `return cjson.encode({[1e20] = 1}), cjson.encode({[2^31] = 1}), cjson.encode({[0.1] = 1})`,
		want: "true, \"{\\\"1e+20\\\":1}\", \"{\\\"2147483648\\\":1}\", \"{\\\"0.1\\\":1}\""},
	{name: "encode errors", src: `local f = function() end local r = {} for _, v in ipairs({f, {g = f}, {[true] = 1}, {[{}] = 1}, coroutine.create(f), {[f] = 1}, {1, 2, f}}) do r[#r+1] = select(2, pcall(cjson.encode, v)) end return r`,
		want: "true, {1=\"Cannot serialise function: type not supported\", 2=\"Cannot serialise function: type not supported\", 3=\"Cannot serialise boolean: table key must be a number or string\", 4=\"Cannot serialise table: table key must be a number or string\", 5=\"Cannot serialise thread: type not supported\", 6=\"Cannot serialise function: table key must be a number or string\", 7=\"Cannot serialise function: type not supported\"}"},
	{name: "encode argument count", src: `return pcall(cjson.encode), pcall(cjson.encode, 1, 2)`,
		want: "true, false, false, \"bad argument #1 to '?' (expected 1 argument)\""},
	{name: "encode max depth", src: `local r = {cjson.encode_max_depth(2)} r[#r+1] = cjson.encode({{1}}) r[#r+1] = select(2, pcall(cjson.encode, {{{1}}})) r[#r+1] = select(2, pcall(cjson.encode, {a = {b = {}}})) return r`,
		want: "true, {1=2, 2=\"[[1]]\", 3=\"Cannot serialise, excessive nesting (3)\", 4=\"Cannot serialise, excessive nesting (3)\"}"},
	{name: "encode self reference", src: `local t = {} t[1] = t return pcall(cjson.encode, t)`,
		want: "true, false, \"Cannot serialise, excessive nesting (1001)\""},
	{name: "encode self reference in object", src: `local t = {} t.x = t return pcall(cjson.encode, t)`,
		want: "true, false, \"Cannot serialise, excessive nesting (1001)\""},
	{name: "encode nesting limited by the C stack", src: `cjson.encode_max_depth(100000)
		local function nest(n, key) local t = {} local cur = t for i = 1, n do cur[key] = {} cur = cur[key] end return t end
		local r = {}
		for _, c in ipairs({{7996, 1}, {7997, 1}, {3998, "a"}, {3999, "a"}}) do
			local ok, e = pcall(cjson.encode, nest(c[1], c[2])) r[#r+1] = ok and #e or e
		end
		return r`,
		want: "true, {1=15994, 2=\"Cannot serialise, excessive nesting (7998)\", 3=23990, 4=\"Cannot serialise, excessive nesting (4000)\"}"},
	{name: "encode keep buffer", src: `return cjson.encode_keep_buffer(), cjson.encode_keep_buffer(false), cjson.encode({1}), cjson.encode_keep_buffer("on"), cjson.encode({2}), cjson.encode_keep_buffer("off")`,
		want: "true, true, false, \"[1]\", true, \"[2]\", false"},

	// Decoding.
	{name: "decode scalars", src: `return cjson.decode("true"), cjson.decode("false"), cjson.decode("null") == cjson.null, cjson.decode('"x"'), cjson.decode("42"), cjson.decode(" \t\r\n 1 \n")`,
		want: "true, true, false, true, \"x\", 42, 1"},
	{name: "decode numbers", src: `return cjson.decode("[0, -0, 1.5, -1e-3, 1E+2, 123456789012345678901234567890, 1e400, -1e400, 1e-400, 0.1]")`,
		want: "true, {1=0, 2=-0, 3=1.5, 4=-0.001, 5=100, 6=123456789012345677877719597056, 7=inf, 8=-inf, 9=0, 10=0.10000000000000001}"},
	{name: "decode invalid numbers allowed", src: `return cjson.decode("[+1, 01, 0x1F, -0x10, 1., 0X1p4, -0x.8, 00.5e1]")`,
		want: "true, {1=1, 2=1, 3=31, 4=-16, 5=1, 6=16, 7=-0.5, 8=5}"},
	{name: "decode inf and nan", src: `local t = cjson.decode("[inf, -inf, Infinity, -Infinity, INF, nan, NaN, -nan, nan(123)]") local r = {} for i = 1, #t do local v = t[i] r[i] = v ~= v and "nan" or v end return r`,
		want: "true, {1=inf, 2=-inf, 3=inf, 4=-inf, 5=inf, 6=\"nan\", 7=\"nan\", 8=\"nan\", 9=\"nan\"}"},
	{name: "decode nan payload", src: hexFn + `local r = {} for _, s in ipairs({"nan", "-nan", "nan(123)", "-nan(0x5)", "nan(017)", "nan(08)", "nan()", "nan(abc)", "nan(99999999999999999999999)", "NaN(0xFFFFFFFFFFFFF)"}) do r[#r+1] = hex(struct.pack(">d", cjson.decode(s))) end return r`,
		want: "true, {1=\"7ff8000000000000\", 2=\"fff8000000000000\", 3=\"7ff800000000007b\", 4=\"fff8000000000005\", 5=\"7ff800000000000f\", 6=\"7ff8000000000000\", 7=\"7ff8000000000000\", 8=\"7ff8000000000000\", 9=\"7fffffffffffffff\", 10=\"7fffffffffffffff\"}"},
	{name: "decode invalid numbers refused", src: `local r = {cjson.decode_invalid_numbers(false)} for _, s in ipairs({"+1", "01", "-01", "0x10", "inf", "-inf", "NaN", "-nan", "1.5", "-0", "0.5", "-", "--1"}) do r[#r+1] = {s, select(2, pcall(cjson.decode, s))} end return r`,
		want: "true, {1=false, 2={1=\"+1\", 2=\"Expected value but found invalid token at character 1\"}, 3={1=\"01\", 2=\"Expected value but found invalid number at character 1\"}, 4={1=\"-01\", 2=\"Expected value but found invalid number at character 1\"}, 5={1=\"0x10\", 2=\"Expected value but found invalid number at character 1\"}, 6={1=\"inf\", 2=\"Expected value but found invalid token at character 1\"}, 7={1=\"-inf\", 2=\"Expected value but found invalid number at character 1\"}, 8={1=\"NaN\", 2=\"Expected value but found invalid token at character 1\"}, 9={1=\"-nan\", 2=\"Expected value but found invalid number at character 1\"}, 10={1=\"1.5\", 2=1.5}, 11={1=\"-0\", 2=-0}, 12={1=\"0.5\", 2=0.5}, 13={1=\"-\", 2=\"Expected value but found invalid number at character 1\"}, 14={1=\"--1\", 2=\"Expected value but found invalid number at character 1\"}}"},
	{name: "decode strings", src: `return cjson.decode('"a\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti"')`,
		want: "true, \"a\\\"b\\\\c/d\\x08e\\x0cf\\x0ag\\x0dh\\x09i\""},
	{name: "decode unicode escapes", src: `return cjson.decode('"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\\u0000x"')`,
		want: "true, \"A\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80\\x00x\""},
	{name: "decode every UTF-16 escape", src: `
		local esc = {'"'}
		for cp = 0, 0xD7FF, 7 do esc[#esc+1] = string.format("\\u%04x", cp) end
		for cp = 0xE000, 0xFFFF do esc[#esc+1] = string.format("\\u%04X", cp) end
		for hi = 0xD800, 0xDBFF, 37 do for lo = 0xDC00, 0xDFFF, 101 do esc[#esc+1] = string.format("\\u%04x\\u%04x", hi, lo) end end
		esc[#esc+1] = '"'
		local s = cjson.decode(table.concat(esc))
		local z = 0 for i = 1, #s do z = (z + string.byte(s, i) * i) % 2147483629 end
		return #s, z, s:sub(1, 40), s:sub(-40)`,
		want: "true, 49196, 1164830546, \"\\x00\\x07\\x0e\\x15\\x1c#*18?FMT[bipw~\\xc2\\x85\\xc2\\x8c\\xc2\\x93\\xc2\\x9a\\xc2\\xa1\\xc2\\xa8\\xc2\\xaf\\xc2\\xb6\\xc2\\xbd\\xc3\\x84\\xc3\", \"\\xf4\\x89\\xb1\\xa5\\xf4\\x89\\xb3\\x8a\\xf4\\x89\\xb4\\xaf\\xf4\\x89\\xb6\\x94\\xf4\\x89\\xb7\\xb9\\xf4\\x89\\xb9\\x9e\\xf4\\x89\\xbb\\x83\\xf4\\x89\\xbc\\xa8\\xf4\\x89\\xbe\\x8d\\xf4\\x89\\xbf\\xb2\""},
	{name: "decode raw bytes", src: `return cjson.decode('"\1\31\127\128\255 \t"')`,
		want: "true, \"\\x01\\x1f\\x7f\\x80\\xff \\x09\""},
	{name: "decode objects", src: `local t = cjson.decode('{"a": 1, "b": [1, 2, {"c": null}], "a": 2, "": "empty"}') return t`,
		want: "true, {\"\"=\"empty\", \"a\"=2, \"b\"={1=1, 2=2, 3={\"c\"=null}}}"},
	{name: "decode empty", src: `return cjson.decode("{}"), cjson.decode("[]"), cjson.decode("[[], {}]")`,
		want: "true, {}, {}, {1={}, 2={}}"},
	{name: "decode null in array", src: `local t = cjson.decode("[null, 1, null]") return #t, t[1] == cjson.null, t[3] == cjson.null`,
		want: "true, 3, true, true"},
	{name: "decode null identity", src: `local a, b = cjson.decode("null"), cjson.new().decode("null") return a == cjson.null, b == cjson.null, type(a), tostring(a)`,
		want: "true, true, true, \"userdata\", \"userdata: (nil)\""},
	{name: "decode trailing NUL", src: `return cjson.decode("[1]\0garbage")`,
		want: "true, {1=1}"},
	{name: "decode max depth", src: `local r = {cjson.decode_max_depth(2)} r[#r+1] = cjson.decode("[[1]]") r[#r+1] = select(2, pcall(cjson.decode, "[[[1]]]")) r[#r+1] = select(2, pcall(cjson.decode, '{"a": {"b": {}}}')) r[#r+1] = select(2, pcall(cjson.decode, ' [ [ [1]]]')) return r`,
		want: "true, {1=2, 2={1={1=1}}, 3=\"Found too many nested data structures (3) at character 3\", 4=\"Found too many nested data structures (3) at character 13\", 5=\"Found too many nested data structures (3) at character 6\"}"},
	{name: "decode nesting limited by the C stack", src: `cjson.decode_max_depth(100000)
		local r = {}
		for _, s in ipairs({string.rep("[", 7998) .. string.rep("]", 7998), string.rep("[", 7999) .. string.rep("]", 7999),
				string.rep('{"a":', 3999) .. "1" .. string.rep("}", 3999), string.rep('{"a":', 4000) .. "1" .. string.rep("}", 4000)}) do
			local ok, v = pcall(cjson.decode, s) r[#r+1] = ok and type(v) or v
		end
		return r`,
		want: "true, {1=\"table\", 2=\"Found too many nested data structures (7999) at character 7999\", 3=\"table\", 4=\"Found too many nested data structures (4000) at character 19996\"}"},
	{name: "decode object nesting depth", src: `return pcall(cjson.decode, string.rep('{"a":', 1001) .. '1' .. string.rep('}', 1001))`,
		want: "true, false, \"Found too many nested data structures (1001) at character 5001\""},

	// Decoding errors.
	{name: "decode error empty", src: `return pcall(cjson.decode, "")`,
		want: "true, false, \"Expected value but found T_END at character 1\""},
	{name: "decode error whitespace", src: `return pcall(cjson.decode, "   ")`,
		want: "true, false, \"Expected value but found T_END at character 4\""},
	{name: "decode errors", src: `local r = {} for _, s in ipairs({"{", "[", "[1", "[1,", "[1 2]", '{"a"', '{"a":', '{"a" 1}', '{"a":1', '{"a":1,', '{1:2}', "{,}", "[,]", "]", "}", ":", ",", "x", "tru", "nul", "falsy", "truex", "1 2", '"abc', '"a\\x"', '"\\u12"', '"\\uZZZZ"', '"\\ud800"', '"\\udc00\\ud800"', '"\\ud800\\u0041"', '"\\ud800x"', "[1]]", "-", "- 1", "+", "-a", "1e", "[1,]", "{\"a\":1,}", "@", ".5", "1e5x", "[1.5.5]", "0x", "-0x", "\\"}) do r[#r+1] = s .. "  =>  " .. tostring(select(2, pcall(cjson.decode, s))) end return r`,
		want: "true, {1=\"{  =>  Expected object key string but found T_END at character 2\", 2=\"[  =>  Expected value but found T_END at character 2\", 3=\"[1  =>  Expected comma or array end but found T_END at character 3\", 4=\"[1,  =>  Expected value but found T_END at character 4\", 5=\"[1 2]  =>  Expected comma or array end but found T_NUMBER at character 4\", 6=\"{\\\"a\\\"  =>  Expected colon but found T_END at character 5\", 7=\"{\\\"a\\\":  =>  Expected value but found T_END at character 6\", 8=\"{\\\"a\\\" 1}  =>  Expected colon but found T_NUMBER at character 6\", 9=\"{\\\"a\\\":1  =>  Expected comma or object end but found T_END at character 7\", 10=\"{\\\"a\\\":1,  =>  Expected object key string but found T_END at character 8\", 11=\"{1:2}  =>  Expected object key string but found T_NUMBER at character 2\", 12=\"{,}  =>  Expected object key string but found T_COMMA at character 2\", 13=\"[,]  =>  Expected value but found T_COMMA at character 2\", 14=\"]  =>  Expected value but found T_ARR_END at character 1\", 15=\"}  =>  Expected value but found T_OBJ_END at character 1\", 16=\":  =>  Expected value but found T_COLON at character 1\", 17=\",  =>  Expected value but found T_COMMA at character 1\", 18=\"x  =>  Expected value but found invalid token at character 1\", 19=\"tru  =>  Expected value but found invalid token at character 1\", 20=\"nul  =>  Expected value but found invalid token at character 1\", 21=\"falsy  =>  Expected value but found invalid token at character 1\", 22=\"truex  =>  Expected the end but found invalid token at character 5\", 23=\"1 2  =>  Expected the end but found T_NUMBER at character 3\", 24=\"\\\"abc  =>  Expected value but found unexpected end of string at character 5\", 25=\"\\\"a\\\\x\\\"  =>  Expected value but found invalid escape code at character 3\", 26=\"\\\"\\\\u12\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 27=\"\\\"\\\\uZZZZ\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 28=\"\\\"\\\\ud800\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 29=\"\\\"\\\\udc00\\\\ud800\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 30=\"\\\"\\\\ud800\\\\u0041\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 31=\"\\\"\\\\ud800x\\\"  =>  Expected value but found invalid unicode escape code at character 2\", 32=\"[1]]  =>  Expected the end but found T_ARR_END at character 4\", 33=\"-  =>  Expected value but found invalid number at character 1\", 34=\"- 1  =>  Expected value but found invalid number at character 1\", 35=\"+  =>  Expected value but found invalid number at character 1\", 36=\"-a  =>  Expected value but found invalid number at character 1\", 37=\"1e  =>  Expected the end but found invalid token at character 2\", 38=\"[1,]  =>  Expected value but found T_ARR_END at character 4\", 39=\"{\\\"a\\\":1,}  =>  Expected object key string but found T_OBJ_END at character 8\", 40=\"@  =>  Expected value but found invalid token at character 1\", 41=\".5  =>  Expected value but found invalid token at character 1\", 42=\"1e5x  =>  Expected the end but found invalid token at character 4\", 43=\"[1.5.5]  =>  Expected comma or array end but found invalid token at character 5\", 44=\"0x  =>  Expected the end but found invalid token at character 2\", 45=\"-0x  =>  Expected the end but found invalid token at character 3\", 46=\"\\\\  =>  Expected value but found invalid token at character 1\"}"},
	{name: "decode error embedded NUL in string", src: `return pcall(cjson.decode, '"ab\0cd"')`,
		want: "true, false, \"Expected value but found unexpected end of string at character 4\""},
	{name: "decode error utf16", src: `return pcall(cjson.decode, "\0["), pcall(cjson.decode, "[\0"), pcall(cjson.decode, "\0")`,
		want: "true, false, false, false, \"Expected value but found T_END at character 1\""},
	{name: "decode argument errors", src: `return pcall(cjson.decode), pcall(cjson.decode, "1", 2), pcall(cjson.decode, {}), cjson.decode(12)`,
		want: "true, false, false, false, 12"},
	{name: "decode error position", src: `return cjson.decode('{"a": [1, 2, x]}')`,
		want: "false, \"user_script:1: Expected value but found invalid token at character 14\""},

	// Configuration.
	{name: "config defaults", src: `return {cjson.encode_sparse_array()}, cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision(), cjson.encode_keep_buffer(), cjson.encode_invalid_numbers(), cjson.decode_invalid_numbers()`,
		want: "true, {1=false, 2=2, 3=10}, 1000, 1000, 14, true, false, true"},
	{name: "config errors", src: `local r = {} for _, f in ipairs({
			function() return cjson.encode_max_depth(0) end,
			function() return cjson.encode_max_depth("x") end,
			function() return cjson.encode_max_depth(1, 2) end,
			function() return cjson.decode_max_depth(-5) end,
			function() return cjson.encode_number_precision(15) end,
			function() return cjson.encode_number_precision(0) end,
			function() return cjson.encode_sparse_array(1) end,
			function() return cjson.encode_sparse_array(true, -1) end,
			function() return cjson.encode_sparse_array(true, 1, -1) end,
			function() return cjson.encode_sparse_array(true, 1, 1, 1) end,
			function() return cjson.encode_invalid_numbers("maybe") end,
			function() return cjson.encode_invalid_numbers({}) end,
			function() return cjson.decode_invalid_numbers("null") end,
			function() return cjson.encode_keep_buffer(1) end,
		}) do r[#r+1] = select(2, pcall(f)) end return r`,
		want: "true, {1=\"user_script:2: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)\", 2=\"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got string)\", 3=\"user_script:4: bad argument #2 to 'encode_max_depth' (found too many arguments)\", 4=\"user_script:5: bad argument #1 to 'decode_max_depth' (expected integer between 1 and 2147483647)\", 5=\"user_script:6: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)\", 6=\"user_script:7: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)\", 7=\"user_script:8: bad argument #1 to 'encode_sparse_array' (invalid option '1')\", 8=\"user_script:9: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)\", 9=\"user_script:10: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)\", 10=\"user_script:11: bad argument #4 to 'encode_sparse_array' (found too many arguments)\", 11=\"user_script:12: bad argument #1 to 'encode_invalid_numbers' (invalid option 'maybe')\", 12=\"user_script:13: bad argument #1 to 'encode_invalid_numbers' (string expected, got table)\", 13=\"user_script:14: bad argument #1 to 'decode_invalid_numbers' (invalid option 'null')\", 14=\"user_script:15: bad argument #1 to 'encode_keep_buffer' (invalid option '1')\"}"},
	{name: "config values", src: `return cjson.encode_max_depth(2^32 + 5), cjson.encode_max_depth("7"), cjson.encode_number_precision(5.9), cjson.encode_invalid_numbers("on"), cjson.encode_invalid_numbers("off"), cjson.encode_invalid_numbers(true), cjson.decode_invalid_numbers("off"), cjson.decode_invalid_numbers(true), cjson.encode_sparse_array("on", 3, 4)`,
		want: "true, 5, 7, 5, true, false, true, false, true, true, 3, 4"},
	{name: "new has its own configuration", src: `local c = cjson.new() c.encode_max_depth(1) c.encode_invalid_numbers(true) return cjson.encode_max_depth(), cjson.encode_invalid_numbers(), c.encode_max_depth(), c.encode(1/0), pcall(c.encode, {{}}), c._NAME, c._VERSION, c.null == cjson.null, c.new ~= nil`,
		want: "true, 1000, false, 1, \"inf\", false, \"cjson\", \"2.1.0\", true, true"},
	{name: "module fields", src: `return cjson._NAME, cjson._VERSION, type(cjson.null), tostring(cjson.null)`,
		want: "true, \"cjson\", \"2.1.0\", \"userdata\", \"userdata: (nil)\""},
}

func TestCJSON(t *testing.T) { runCases(t, cjsonCases) }

// FuzzCJSONDecode checks that decode never panics: every input either
// decodes or raises a Lua error, and what decodes encodes (with invalid
// numbers allowed and sparse arrays converted) and decodes again.
func FuzzCJSONDecode(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2.5e3, -0, "x\u00e9\ud83d\ude00", true, false, null]}`, `[]`, `{}`, `"\"`,
		`[1,`, `{"a"`, `0x1F`, `-Infinity`, `nan(12)`, `"\ud800\u0041"`, `1e99999`, "\x00[", "[1]\x00x",
		strings.Repeat("[", 1100) + strings.Repeat("]", 1100), `{"a":{"b":{"c":[[[{}]]]}}}`,
	} {
		f.Add(s)
	}
	L := newState()
	defer L.Close()
	if err := L.DoString(`cjson.encode_invalid_numbers(true) cjson.encode_sparse_array(true)`); err != nil {
		f.Fatal(err)
	}
	cj := L.GetGlobal("cjson").(*lua.LTable)
	decode, encode := cj.RawGetString("decode"), cj.RawGetString("encode")
	f.Fuzz(func(t *testing.T, s string) {
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: decode, NRet: 1, Protect: true}, lua.LString(s)); err != nil {
			requireLuaError(t, err)
			return
		}
		v := L.Get(-1)
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: encode, NRet: 1, Protect: true}, v); err != nil {
			t.Fatalf("encode of decode(%q): %v", s, err)
		}
		enc := L.Get(-1)
		L.SetTop(0)
		if err := L.CallByParam(lua.P{Fn: decode, NRet: 1, Protect: true}, enc); err != nil {
			t.Fatalf("decode of re-encoded %q (%q): %v", s, enc, err)
		}
	})
}
