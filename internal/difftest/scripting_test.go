package difftest

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The scripting group against redis-server: conversions, the redis.* API, the
// sandbox, errors with their script and line, the script cache and functions.
// Left out on purpose: number formatting inside Lua (tostring of
// non-integers: gopher-lua prints Go's shortest form, C Lua %.14g) and the
// cjson/cmsgpack/bit/struct libraries (their own tests).
var scriptingCases = [][]string{
	// the version HotKV reports, and compile errors in PUC Lua 5.1's words
	{"EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", "0"},
	{"EVAL", "return +", "0"},
	{"EVAL", "return 1 1", "0"},
	{"EVAL", "local t = {1, 2\nreturn t", "0"},
	{"EVAL", "if x then\nreturn 1\nelse", "0"},
	{"EVAL", "return 'abc", "0"},
	{"EVAL", "return 0x", "0"},
	// the bounded builtins (internal/script/bounded.go, strformat.go): Lua 5.1's
	// unpack, string.format, string.rep and table.concat, errors included
	{"EVAL", "return #({unpack({1,2,3}, 1, 8000)})", "0"},
	{"EVAL", "return {unpack({1,2,3}, -2, 2147483647)}", "0"},
	{"EVAL", "return #({unpack({}, 1, 7997)})", "0"},
	{"EVAL", "return #({unpack({}, 1, 7998)})", "0"},
	{"EVAL", "return {unpack({1,2,3})}", "0"},
	{"EVAL", "return {unpack({1,2,3}, 2)}", "0"},
	{"EVAL", "return {unpack({1,2,3}, 2, 5)}", "0"},
	{"EVAL", "return string.format('%y', 1)", "0"},
	{"EVAL", "return string.format('%------d', 1)", "0"},
	{"EVAL", "return string.format('%-----d|', 1)", "0"},
	{"EVAL", "return table.concat({1,{},3})", "0"},
	{"EVAL", "return table.concat({1,2,3}, ',', 1, 5)", "0"},
	{"EVAL", "return table.concat({1,2.5,'x'}, '-')", "0"},
	{"EVAL", "return table.concat({1,2,3}, ',', 3, 1)", "0"},
	{"EVAL", "return table.concat({'a','b','c'}, ', ', 2)", "0"},
	{"EVAL", "return string.format('%d|%x|%X|%o', 3.7, -1, 255, 8)", "0"},
	{"EVAL", "return string.format('%5.2s|%-5s|', 'abc', 'x')", "0"},
	{"EVAL", "return string.format('%q', 'a\\nb\\0c\"\\r')", "0"},
	{"EVAL", "return string.format('%c%c', 65, 66)", "0"},
	{"EVAL", "return string.format('%g|%e|%f|%.3g|%G|%E', math.pi, math.pi, math.pi, 1e20, 1e-10, 12345.678)", "0"},
	{"EVAL", "return string.format('%i|%u', 5, -1)", "0"},
	{"EVAL", "return string.format('%s', {})", "0"},
	{"EVAL", "return string.format('%d', 'x')", "0"},
	{"EVAL", "return string.format('%s %s', 1)", "0"},
	{"EVAL", "return string.format('%5%')", "0"},
	{"EVAL", "return string.format('%')", "0"},
	{"EVAL", "return string.format('%5000d', 1)", "0"},
	{"EVAL", "return string.format('%100d', 1)", "0"},
	{"EVAL", "return string.format('%.100f', 1)", "0"},
	{"EVAL", "return string.format('%10.3f|%+d|% d|%#x|%05d|%#x|%#o|%-6d|', 1.5, 3, 3, 255, 42, 0, 8, 7)", "0"},
	{"EVAL", "return string.format('%f|%5.1f|%e|%g|%+f', 1/0, -1/0, 0/0, 1e300*1e10, 1/0)", "0"},
	{"EVAL", "return string.format('%s|%s|%s', 0.1, 1e15, 1/3)", "0"},
	{"EVAL", "return string.format('%d', '0x10')", "0"},
	{"EVAL", "return string.format('%.3s|%3s', 'a\\0bc', 'a\\0b')", "0"},
	{"EVAL", "return string.format('%s', string.rep('y', 150))", "0"},
	{"EVAL", "return string.rep('x', 3, 'y')", "0"},
	{"EVAL", "return string.rep('ab', 3)", "0"},
	{"EVAL", "return ('ab'):rep(2)", "0"},
	{"EVAL", "return string.rep('x', -1)", "0"},
	{"EVAL", "return string.rep('', 1e9)", "0"},
	{"EVAL", "return {string.gsub('hello world', 'o', '0')}", "0"},
	{"EVAL", "return {string.gsub('hello world', '(o)', '[%1%1]')}", "0"},
	{"EVAL", "return {string.gsub('hello world', 'l', '%x%%', 2)}", "0"},
	{"EVAL", "return {string.gsub('abc', '', '-')}", "0"},
	{"EVAL", "return {string.gsub('abc', '%w', {a='1', b=true})}", "0"},
	{"EVAL", "return {string.gsub('abc', '%w', function(c) return c:upper() end)}", "0"},
	{"EVAL", "return {string.gsub('abc', '(%w)()', '%2')}", "0"},
	{"EVAL", "return {string.gsub('abc', 'b', 5)}", "0"},
	{"EVAL", "return {string.gsub('abc', '^a', 'z')}", "0"},
	{"EVAL", "return {string.gsub('hello', 'l+', function() end)}", "0"},
	{"EVAL", "return {string.gsub('x y', '(%w)', '%1%1', -1)}", "0"},
	{"EVAL", "return {string.gsub('x y', '(%w)', '%1%1', 1.5)}", "0"},
	{"EVAL", "return #string.gsub(string.rep('a', 1e5), 'a', '%0%0')", "0"},
	{"SET", "k", "v"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"},
	{"EVAL", "return redis.call('get', 'nokey')", "0"},
	{"EVAL", "return type(redis.call('get', 'nokey'))", "0"},
	{"EVAL", "return {1, 2, 3, 'ciao', {1, 2}}", "0"},
	{"EVAL", "return {1, 2, nil, 4}", "0"},
	{"EVAL", "return 3.99", "0"}, {"EVAL", "return -3.99", "0"}, {"EVAL", "return 1e20", "0"},
	{"EVAL", "return true", "0"}, {"EVAL", "return false", "0"}, {"EVAL", "return nil", "0"},
	{"EVAL", "return {ok='fine'}", "0"}, {"EVAL", "return {err='bad'}", "0"}, {"EVAL", "return {err='CODE bad'}", "0"},
	{"EVAL", "return redis.error_reply('My Error')", "0"}, {"EVAL", "return redis.error_reply('-CODE x')", "0"},
	{"EVAL", "return redis.status_reply('FINE')", "0"}, {"EVAL", "return redis.error_reply(1)", "0"},
	{"EVAL", "return {ok='a\\r\\nb'}", "0"},
	{"EVAL", "return redis.call('set', 'n', 1.5)", "0"}, {"GET", "n"},
	{"EVAL", "return redis.call('set', 'n', 10000000000000000000000)", "0"}, {"GET", "n"},
	{"EVAL", "return redis.call('set', 'n', 42)", "0"}, {"GET", "n"},
	{"EVAL", "return redis.call('incr', 'n')", "0"},
	{"EVAL", "return redis.call('incr', 'k')", "0"},
	{"EVAL", "return redis.pcall('incr', 'k')", "0"},
	{"EVAL", "local t = redis.pcall('incr', 'k') return t['err']", "0"},
	{"EVAL", "return redis.call('nosuch')", "0"},
	{"EVAL", "return redis.pcall('nosuch')", "0"},
	{"EVAL", "return redis.call('get')", "0"},
	{"EVAL", "return redis.call('get', 'a', 'b')", "0"},
	{"EVAL", "return redis.call()", "0"},
	{"EVAL", "return redis.call({})", "0"},
	{"EVAL", "return redis.call('eval', 'return 1', 0)", "0"},
	{"EVAL", "return redis.call('multi')", "0"},
	{"EVAL", "return redis.call('client', 'list')", "0"},
	{"EVAL", "return a", "0"},
	{"EVAL", "a = 1", "0"},
	{"EVAL", "redis.call = nil", "0"},
	{"EVAL", "setmetatable(_G, {})", "0"},
	{"EVAL", "local g = getmetatable(_G) g.__index = {}", "0"},
	{"EVAL", "_G = {}", "0"},
	{"EVAL", "return io", "0"}, // (os: Redis 8 has os.clock, 7.0 no os) {"EVAL", "return print", "0"},
	{"EVAL", "return loadfile", "0"}, {"EVAL", "return dofile", "0"},
	{"EVAL", "error('boom')", "0"},
	{"EVAL", "\n\nerror('on line three')", "0"},
	{"EVAL", "error({err='MY custom'})", "0"},
	{"EVAL", "local function f() error('deep') end\nf()", "0"},
	{"EVAL", "return pcall(function() error('x') end)", "0"},
	{"EVAL", "local ok, e = pcall(function() redis.call('nosuch') end) return e", "0"},
	{"EVAL", "local ok, e = pcall(function() error({err='E'}) end) return e", "0"},
	{"EVAL", "return redis.sha1hex('')", "0"}, {"EVAL", "return redis.sha1hex('Pizza & Mandolino')", "0"},
	{"EVAL", "return redis.sha1hex()", "0"},
	{"EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "a", "b", "c", "d"},
	{"EVAL", "return 1", "-1"}, {"EVAL", "return 1", "2", "a"}, {"EVAL", "return 1", "x"},
	{"EVAL", "return 1"}, {"EVAL"},
	{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"},
	{"EVALSHA", "abc", "0"},
	{"SCRIPT", "LOAD", "return 'loaded'"},
	{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8", "ffffffffffffffffffffffffffffffffffffffff"},
	{"SCRIPT", "EXISTS"},
	{"SCRIPT", "FLUSH", "FOO"}, {"SCRIPT", "FLUSH"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"},
	{"SCRIPT", "KILL"}, {"SCRIPT", "FOO"}, // HELP: 8.6's text in scripting.golden
	{"EVAL", "return redis.call('select', 1) and redis.call('set', 'k1', 'db1')", "0"},
	{"GET", "k1"}, {"SELECT", "1"}, {"GET", "k1"}, {"SELECT", "0"},
	{"EVAL", "redis.setresp(3) return redis.call('hgetall', 'nohash')", "0"},
	{"EVAL", "redis.setresp(4)", "0"}, {"EVAL", "redis.setresp()", "0"},
	{"EVAL", "redis.setresp(3) return {double=3.5}", "0"},
	{"EVAL", "return {double=3.5}", "0"},
	{"EVAL", "redis.setresp(3) return {map={a=1}}", "0"},
	{"EVAL", "redis.setresp(3) return {set={a=true}}", "0"},
	{"EVAL", "redis.setresp(3) return {big_number='123456789012345678901234567890'}", "0"},
	{"EVAL", "redis.setresp(3) return true", "0"}, {"EVAL", "redis.setresp(3) return false", "0"},
	{"EVAL", "redis.setresp(3) return redis.call('get', 'nokey')", "0"},
	{"EVAL", "redis.setresp(3) return type(redis.call('get', 'nokey'))", "0"},
	{"EVAL", "redis.set_repl(redis.REPL_ALL) return 1", "0"},
	{"EVAL", "redis.set_repl(100)", "0"},
	{"EVAL", "redis.log(redis.LOG_WARNING, 'hello from a test') return 1", "0"},
	{"EVAL", "redis.log(99, 'x')", "0"}, {"EVAL", "redis.log('x')", "0"},
	{"EVAL", "return redis.REPL_NONE + redis.REPL_AOF * 10 + redis.REPL_SLAVE * 100 + redis.REPL_ALL * 1000", "0"},
	{"EVAL", "return redis.LOG_DEBUG + redis.LOG_VERBOSE * 10 + redis.LOG_NOTICE * 100 + redis.LOG_WARNING * 1000", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"},
	{"EVAL", "#!lua\nreturn redis.call('set', 'a', 'b')", "0"},
	{"EVAL", "#!lua flags=bad\nreturn 1", "0"},
	{"EVAL", "#!luax\nreturn 1", "0"},
	{"EVAL", "#!lua foo=bar\nreturn 1", "0"},
	{"EVAL_RO", "return redis.call('set', 'a', 'b')", "0"},
	{"EVAL_RO", "return redis.call('get', 'k')", "0"},
	{"EVAL_RO", "#!lua\nreturn 1", "0"},
	{"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"},
	{"EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", "0"},
	{"EVAL", "return math.random()", "0"}, // both servers start from the same seed
	{"EVAL", "return math.random(10)", "0"}, {"EVAL", "return math.random(5, 7)", "0"},
	{"EVAL", "math.randomseed(42) return {math.random(1000), math.random(1000)}", "0"},
	{"EVAL", "return redis.call('time')[1] ~= nil", "0"},
	{"EVAL", "return tonumber('0x10') + #'abc'", "0"},
	{"EVAL", "return table.concat({'a', 'b'}, '-') .. string.upper('x') .. string.rep('y', 3)", "0"},
	{"EVAL", "local t = {} for i = 1, 100 do t[i] = i end return #t", "0"},
	{"EVAL", "return {string.byte('A'), string.format('%d-%s', 7, 'x'), select('#', 1, 2, 3)}", "0"},
	{"EVAL", "return coroutine.wrap(function() coroutine.yield(5) end)()", "0"},
	// MULTI with scripts
	{"MULTI"}, {"EVAL", "return redis.call('incr', 'ctr')", "0"}, {"EVAL", "return redis.call('incr', 'ctr')", "0"}, {"EXEC"},
	// functions
	{"FUNCTION", "FLUSH"},
	// one function per library: Redis lists a library's functions in hash order
	{"FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)"},
	{"FUNCTION", "LOAD", "#!lua name=rolib\n" +
		"redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='read'}"},
	{"FCALL", "myfunc", "0", "hello"}, {"FCALL", "ro", "1", "k"}, {"FCALL_RO", "ro", "1", "k"}, {"FCALL_RO", "myfunc", "0", "x"},
	{"FCALL", "nosuch", "0"}, {"FCALL", "myfunc", "x"}, {"FCALL", "myfunc", "5"}, {"FCALL", "myfunc", "-1"},
	// (libraries are listed in hash order: one library per listing)
	{"FUNCTION", "LIST", "LIBRARYNAME", "rol*"}, {"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "my*"}, {"FUNCTION", "LIST", "LIBRARYNAME", "MY*"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "zz*"}, {"FUNCTION", "LIST", "LIBRARYNAME"}, {"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
	{"FUNCTION", "LIST", "FOO"},
	{"FUNCTION", "LOAD", "return 1"},
	{"FUNCTION", "LOAD", "#!lua\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=x foo=bar\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=x name=y\nreturn 1"},
	{"FUNCTION", "LOAD", "#!js name=x\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=a-b\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=x2\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=x3\nredis.register_function('myfunc', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=x4\nredis.call('ping')"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function('a')"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function('a', 'b')"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function(1, 2, 3)"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function{function_name='a'}"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function{callback=function() end}"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function{function_name='a', callback=function() end, flags={'bad'}}"},
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function{function_name='a', callback=function() end, foo=1}"},
	// an invalid function name: Redis words it as an invalid library name
	{"FUNCTION", "LOAD", "#!lua name=x5\nredis.register_function('a-b', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=\"quoted\"\nredis.register_function('fq', function() return 'q' end)"},
	{"FCALL", "fq", "0"},
	{"EVAL", "math.randomseed('7') return math.random(100)", "0"},
	{"FUNCTION", "FLUSH", "SYNC", "extra"}, {"FUNCTION", "RESTORE", "a", "b", "c"},
	{"EVAL", "return redis.call('time')[1] == redis.call('time')[1]", "0"},
	{"FUNCTION", "LOAD", "#!lua name=x6\nlocal a = string.format('x')"},
	{"FUNCTION", "LOAD", "#!lua name=x8\nredis.register_function('f8', function() end)\nredis.register_function('f8', function() end)"},
	{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return 'replaced' end)"},
	{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mylib\nredis.register_function('ro', function(keys, args) return 'clash' end)"},
	{"FCALL", "myfunc", "0"}, {"FCALL", "ro", "1", "k"},
	{"FUNCTION", "LOAD", "FOO", "#!lua name=y\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=errs\nredis.register_function('boom', function() error('boom') end)\n" +
		"redis.register_function('unknown', function() return redis.call('nosuch') end)\n" +
		"redis.register_function('writer', function() return redis.call('set', 'w', '1') end)"},
	{"FCALL", "boom", "0"}, {"FCALL", "unknown", "0"}, {"FCALL_RO", "writer", "0"},
	{"FUNCTION", "DELETE", "errs"}, {"FUNCTION", "DELETE", "errs"},
	{"FUNCTION", "STATS"}, {"FUNCTION", "KILL"},
	{"FUNCTION", "RESTORE", "abc"}, {"FUNCTION", "RESTORE", "abc", "FOO"},
	{"FUNCTION", "FLUSH", "FOO"}, {"FUNCTION", "FLUSH", "SYNC"}, {"FUNCTION", "LIST"}, // HELP: 8.6's text in scripting.golden
	{"FUNCTION", "LOAD", "#!lua name=d1\nredis.register_function('d1f', function() return 1 end)"},
}

func TestDiffScripting(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	p.same("SCRIPT", "FLUSH")
	p.same("FUNCTION", "FLUSH")
	for _, args := range scriptingCases {
		p.same(args...)
	}
	// a DUMP payload from one server restores in the other
	hkDump, rdDump := p.do("FUNCTION", "DUMP")
	hkPayload, rdPayload := bulkBody(hkDump), bulkBody(rdDump)
	p.same("FUNCTION", "FLUSH")
	hk, rd := p.do("FUNCTION", "RESTORE", rdPayload)
	if hk != "+OK\r\n" || rd != "+OK\r\n" {
		t.Fatalf("restore of redis's payload: hotkv %q redis %q", hk, rd)
	}
	p.same("FCALL", "d1f", "0")
	p.same("FUNCTION", "RESTORE", rdPayload)
	p.same("FUNCTION", "RESTORE", rdPayload, "REPLACE")
	p.same("FUNCTION", "RESTORE", rdPayload, "FLUSH")
	p.same("FUNCTION", "FLUSH")
	// and HotKV's in Redis (both write RDB 13)
	if hkPayload != rdPayload {
		t.Errorf("FUNCTION DUMP payloads differ:\n hotkv %q\n redis %q", hkPayload, rdPayload)
	}
	hk, rd = p.do("FUNCTION", "RESTORE", hkPayload)
	if hk != "+OK\r\n" || rd != "+OK\r\n" {
		t.Fatalf("restore of hotkv's payload: hotkv %q redis %q", hk, rd)
	}
	p.same("FCALL", "d1f", "0")
}

// withRDBVersion rewrites a DUMP payload's RDB version and checksum.
func withRDBVersion(payload string, v uint16) string {
	b := []byte(payload)
	n := len(b) - 10
	b[n], b[n+1] = byte(v), byte(v>>8)
	var tab [256]uint64
	for i := range tab {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ 0x95ac9329ac4bc9b5
			} else {
				c >>= 1
			}
		}
		tab[i] = c
	}
	var crc uint64
	for _, x := range b[:n+2] {
		crc = tab[byte(crc)^x] ^ crc>>8
	}
	for i := 0; i < 8; i++ {
		b[n+2+i] = byte(crc >> (8 * i))
	}
	return string(b)
}

// bulkBody returns the payload of a bulk string reply.
func bulkBody(r string) string {
	_, rest, _ := strings.Cut(r, "\r\n")
	return strings.TrimSuffix(rest, "\r\n")
}

// Random scripts built from a small grammar of redis.call expressions, run on
// both servers: what the scripts return and what they leave behind must match.
func TestDiffScriptingRandom(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	r := rand.New(rand.NewPCG(7, 11))
	keys := []string{"a", "b", "c", "n"}
	cmds := []func() string{
		func() string { return "redis.call('set', KEYS[" + strconv.Itoa(1+r.IntN(2)) + "], ARGV[1])" },
		func() string { return "redis.call('get', KEYS[" + strconv.Itoa(1+r.IntN(2)) + "])" },
		func() string { return "redis.pcall('incr', KEYS[" + strconv.Itoa(1+r.IntN(2)) + "])" },
		func() string { return "redis.call('del', KEYS[1], KEYS[2])" },
		func() string { return "redis.call('exists', KEYS[1], KEYS[2])" },
		func() string { return "redis.pcall('lpush', KEYS[2], ARGV[1], ARGV[2])" },
		func() string { return "redis.pcall('lrange', KEYS[2], 0, -1)" },
		func() string { return "redis.call('set', KEYS[1], ARGV[2], 'NX', 'PX', 100000)" },
		func() string { return "redis.call('pttl', KEYS[1]) > 0" },
		func() string { return "{ARGV[1], #KEYS, redis.call('type', KEYS[1])}" },
	}
	for i := 0; i < 300; i++ {
		n := 1 + r.IntN(4)
		var b strings.Builder
		b.WriteString("local r = {}\n")
		for j := 0; j < n; j++ {
			b.WriteString("r[#r+1] = " + cmds[r.IntN(len(cmds))]() + "\n")
		}
		b.WriteString("return r")
		k1, k2 := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
		p.same("EVAL", b.String(), "2", k1, k2, strconv.Itoa(r.IntN(5)), "v"+strconv.Itoa(r.IntN(3)))
	}
	for _, k := range keys {
		p.same("TYPE", k)
		p.same("GET", k)
		p.same("LRANGE", k, "0", "-1")
	}
}

// Numbers in scripts as strings, against redis-server: tostring and ..
// (PUC Lua's "%.14g", glibc's inf and nan) and redis.call's arguments
// (Redis 8: integers within 2^62 in full, else fpconv_dtoa's shortest
// digits), for literals of every magnitude and random doubles (written in
// their shortest decimal form, which strtod reads back exactly).
func TestDiffLuaNumbers(t *testing.T) {
	p := newPair(t)
	r := rand.New(rand.NewPCG(3, 5))
	lits := []string{"0", "-0.0", "1", "-1", "0.1", "1/3", "2/3", "1e15", "1e16", "1e17", "1e18", "1e19",
		"2^53", "2^53+1", "2^62", "2^62+2^10", "-2^62-2^10", "2^63", "2^64", "2^70", "1e21", "1e22", "1e100",
		"1e300", "1e308", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308", "1e-5", "1e-6",
		"1e-7", "1.5e-6", "0.000123", "123456789012345678", "12345678.9", "100.5e10", "1/0", "-1/0", "0/0",
		"1733150000000000", "1733150000000.5", "0.1+0.2", "1e14", "1e14+0.5", "99999999999999.9", "123456.789e3"}
	for range 150 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if r.IntN(2) == 0 { // a human-sized magnitude too
			f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
		}
		lits = append(lits, strconv.FormatFloat(f, 'g', -1, 64))
	}
	for i := 0; i < len(lits); i += 20 {
		var b strings.Builder
		b.WriteString("local r = {}\n")
		for _, l := range lits[i:min(i+20, len(lits))] {
			b.WriteString("do local v = " + l + "\nredis.call('set', KEYS[1], v)\nr[#r+1] = redis.call('get', KEYS[1])\nr[#r+1] = tostring(v)\nr[#r+1] = v .. '' end\n")
		}
		b.WriteString("return r")
		p.same("EVAL", b.String(), "1", "n")
	}
}
