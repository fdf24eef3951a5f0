package lualib

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library: lua-cjson 2.1.0 (deps/lua/src/lua_cjson.c with
// fpconv.c), as Redis builds it: numbers are printed with "%.14g" and read
// with strtod, JSON null is a sentinel userdata (cjson.null), and every
// module table (cjson.new()) has its own configuration.

// cjsonConfig is json_config_t.
type cjsonConfig struct {
	sparseConvert   int32
	sparseRatio     int32
	sparseSafe      int32
	encodeMaxDepth  int32
	decodeMaxDepth  int32
	encodeInvalid   int32 // 0 off, 1 on, 2 "null"
	encodePrecision int32
	keepBuffer      int32
	decodeInvalid   int32
	arrayMT         int32       // decode_array_with_array_mt (Redis 8.2+)
	arrayMeta       *lua.LTable // the read-only metatable of decoded arrays, made once
	buf             []byte      // the kept encode buffer
}

func newCJSONConfig() *cjsonConfig {
	return &cjsonConfig{
		sparseConvert:   0,
		sparseRatio:     2,
		sparseSafe:      10,
		encodeMaxDepth:  1000,
		decodeMaxDepth:  1000,
		encodeInvalid:   0,
		encodePrecision: 14,
		keepBuffer:      1,
		decodeInvalid:   1,
	}
}

func newCJSON(L *lua.LState) *lua.LTable {
	cfg := newCJSONConfig()
	t := newModule(L, map[string]lua.LGFunction{
		"encode":                  cfg.encode,
		"decode":                  cfg.decode,
		"encode_sparse_array":     cfg.cfgEncodeSparseArray,
		"encode_max_depth":        cfg.cfgEncodeMaxDepth,
		"decode_max_depth":        cfg.cfgDecodeMaxDepth,
		"encode_number_precision": cfg.cfgEncodeNumberPrecision,
		"encode_keep_buffer":      cfg.cfgEncodeKeepBuffer,
		"encode_invalid_numbers":  cfg.cfgEncodeInvalidNumbers,
		"decode_invalid_numbers":  cfg.cfgDecodeInvalidNumbers,
		// Redis 8.2+: decoded arrays carry a metatable whose __is_cjson_array
		// makes encode write them as arrays, empty ones too
		"decode_array_with_array_mt": cfg.cfgDecodeArrayWithArrayMT,
		"new":                        OpenCJSON,
	})
	t.RawSetString("null", jsonNull(L))
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// ---------------------------------------------------------------------------
// cjson.null: the C library's NULL lightuserdata. All cjson tables of a
// state share one, so that decode results compare equal to any cjson.null.

type nullMarker struct{}

var theNullMarker = &nullMarker{}

const nullRegistryKey = "hotkv/lualib: cjson.null"

func jsonNull(L *lua.LState) *lua.LUserData {
	reg := L.G.Registry
	if ud, ok := reg.RawGetString(nullRegistryKey).(*lua.LUserData); ok && ud.Value == theNullMarker {
		return ud
	}
	ud := L.NewUserData()
	ud.Value = theNullMarker
	mt := L.NewTable()
	// tostring(cjson.null) is "userdata: (nil)" in Redis (glibc's %p of
	// NULL); the metatable is protected so scripts cannot alter the shared
	// sentinel.
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("userdata: (nil)"))
		return 1
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	ud.Metatable = mt
	reg.RawSetString(nullRegistryKey, ud)
	return ud
}

func isJSONNull(v lua.LValue) bool {
	ud, ok := v.(*lua.LUserData)
	return ok && ud.Value == theNullMarker
}

// ---------------------------------------------------------------------------
// Configuration functions.

// argInit is json_arg_init: at most n arguments, padded with nils (the
// values the option functions push go after them).
func argInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		argError(L, n+1, "found too many arguments")
	}
	L.SetTop(n)
}

// integerOption is json_integer_option. Out-of-range values are reported
// against argument 1 whatever their position, as in the C code.
func integerOption(L *lua.LState, n int, setting *int32, min, max int32) {
	if !isNoneOrNil(L, n) {
		v := int32(checkInteger(L, n)) // lua_Integer stored in an int
		if v < min || v > max {
			argError(L, 1, fmt.Sprintf("expected integer between %d and %d", min, max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
}

var boolOptions = []string{"off", "on"}

// enumOption is json_enum_option.
func enumOption(L *lua.LState, n int, setting *int32, options []string, boolTrue int32) {
	if options == nil {
		options, boolTrue = boolOptions, 1
	}
	if !isNoneOrNil(L, n) {
		if b, ok := arg(L, n).(lua.LBool); ok && boolTrue != 0 {
			*setting = 0
			if b {
				*setting = boolTrue
			}
		} else {
			*setting = checkOption(L, n, options)
		}
	}
	if boolTrue != 0 && (*setting == 0 || *setting == boolTrue) {
		L.Push(lua.LBool(*setting != 0))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// checkOption is luaL_checkoption without a default.
func checkOption(L *lua.LState, n int, options []string) int32 {
	name := checkLString(L, n)
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	for i, o := range options {
		if o == name {
			return int32(i)
		}
	}
	argError(L, n, "invalid option '"+name+"'")
	return 0
}

func (cfg *cjsonConfig) cfgEncodeSparseArray(L *lua.LState) int {
	argInit(L, 3)
	enumOption(L, 1, &cfg.sparseConvert, nil, 1)
	integerOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
	integerOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
	return 3
}

func (cfg *cjsonConfig) cfgEncodeMaxDepth(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (cfg *cjsonConfig) cfgDecodeMaxDepth(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (cfg *cjsonConfig) cfgEncodeNumberPrecision(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &cfg.encodePrecision, 1, 14)
	return 1
}

func (cfg *cjsonConfig) cfgEncodeKeepBuffer(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.keepBuffer, nil, 1)
	if cfg.keepBuffer == 0 {
		cfg.buf = nil
	}
	return 1
}

func (cfg *cjsonConfig) cfgEncodeInvalidNumbers(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.encodeInvalid, []string{"off", "on", "null"}, 1)
	return 1
}

func (cfg *cjsonConfig) cfgDecodeArrayWithArrayMT(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.arrayMT, nil, 1)
	return 1
}

// arrayMetatable is the metatable decoded arrays get with
// decode_array_with_array_mt: {__is_cjson_array = true}, read-only as
// Redis makes it (lua_enablereadonlytable).
func (cfg *cjsonConfig) arrayMetatable(L *lua.LState) *lua.LTable {
	if cfg.arrayMeta == nil {
		real := L.NewTable()
		real.RawSetString("__is_cjson_array", lua.LTrue)
		cfg.arrayMeta = readonlyProxy(L, real)
	}
	return cfg.arrayMeta
}

func (cfg *cjsonConfig) cfgDecodeInvalidNumbers(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.decodeInvalid, nil, 1)
	return 1
}

// ---------------------------------------------------------------------------
// Encoding.

// jsonEscapes is char2escape: the escape of each byte, "" for none.
var jsonEscapes = func() [256]string {
	var t [256]string
	for i := 0; i < 32; i++ {
		t[i] = fmt.Sprintf("\\u%04x", i)
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	t['"'], t['\\'], t['/'] = `\"`, `\\`, `\/`
	t[0x7f] = `\u007f`
	return t
}()

type jsonEncoder struct {
	L   *lua.LState
	cfg *cjsonConfig
	buf []byte
}

func (cfg *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: cfg}
	if cfg.keepBuffer != 0 {
		e.buf = cfg.buf[:0]
	}
	e.appendData(L.Get(1), 0, 1)
	L.Push(lua.LString(e.buf))
	if cfg.keepBuffer != 0 && cap(e.buf) <= 1<<20 {
		cfg.buf = e.buf
	}
	return 1
}

// exception is json_encode_exception.
func (e *jsonEncoder) exception(v lua.LValue, reason string) {
	luaError(e.L, "Cannot serialise %s: %s", luaTypeName(v), reason)
}

func (e *jsonEncoder) appendString(s string) {
	checkLimit(e.L, len(e.buf)+len(s))
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			e.buf = append(e.buf, esc...)
		} else {
			e.buf = append(e.buf, s[i])
		}
	}
	e.buf = append(e.buf, '"')
}

func (e *jsonEncoder) appendNumber(n lua.LNumber) {
	f := float64(n)
	bad := math.IsInf(f, 0) || f != f
	switch e.cfg.encodeInvalid {
	case 0:
		if bad {
			e.exception(n, "must not be NaN or Inf")
		}
	case 1:
		if f != f {
			e.buf = append(e.buf, "nan"...)
			return
		}
	default:
		if bad {
			e.buf = append(e.buf, "null"...)
			return
		}
	}
	e.buf = append(e.buf, fmtG(f, int(e.cfg.encodePrecision))...)
}

// arrayLength is lua_array_length: the size of the array t is, or -1 for an
// object (including excessively sparse arrays when conversion is on).
func (e *jsonEncoder) arrayLength(t *lua.LTable) int32 {
	var max, items int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		if kn, ok := k.(lua.LNumber); ok && kn != 0 {
			f := float64(kn)
			if math.Floor(f) == f && f >= 1 {
				if f > float64(max) {
					max = doubleToInt32(f)
				}
				items++
				continue
			}
		}
		return -1
	}
	cfg := e.cfg
	if cfg.sparseRatio > 0 && max > items*cfg.sparseRatio && max > cfg.sparseSafe {
		if cfg.sparseConvert == 0 {
			e.exception(t, "excessively sparse array")
		}
		return -1
	}
	return max
}

// appendData serialises v; depth counts the enclosing tables and top the
// values the C encoder would hold on its Lua stack.
func (e *jsonEncoder) appendData(v lua.LValue, depth int32, top int) {
	switch x := v.(type) {
	case lua.LString:
		e.appendString(string(x))
	case lua.LNumber:
		e.appendNumber(x)
	case lua.LBool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case *lua.LTable:
		depth++
		if !(depth <= e.cfg.encodeMaxDepth && checkStack(top, 3)) {
			luaError(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if mt, ok := e.L.GetMetatable(x).(*lua.LTable); ok && lua.LVAsBool(e.L.GetField(mt, "__is_cjson_array")) {
			e.appendArray(x, depth, top, int32(x.Len())) // a decoded array: an array, even empty
		} else if n := e.arrayLength(x); n > 0 {
			e.appendArray(x, depth, top, n)
		} else {
			e.appendObject(x, depth, top)
		}
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
	default:
		if isJSONNull(v) {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.exception(v, "type not supported")
	}
}

func (e *jsonEncoder) appendArray(t *lua.LTable, depth int32, top int, n int32) {
	e.buf = append(e.buf, '[')
	for i := int32(1); i <= n; i++ {
		if i > 1 {
			e.buf = append(e.buf, ',')
		}
		e.appendData(t.RawGet(lua.LNumber(i)), depth, top+1)
	}
	e.buf = append(e.buf, ']')
}

func (e *jsonEncoder) appendObject(t *lua.LTable, depth int32, top int) {
	e.buf = append(e.buf, '{')
	comma := false
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if comma {
			e.buf = append(e.buf, ',')
		}
		comma = true
		switch key := k.(type) {
		case lua.LNumber:
			e.buf = append(e.buf, '"')
			e.appendNumber(key)
			e.buf = append(e.buf, '"', ':')
		case lua.LString:
			e.appendString(string(key))
			e.buf = append(e.buf, ':')
		default:
			e.exception(k, "table key must be a number or string")
		}
		e.appendData(v, depth, top+2)
	}
	e.buf = append(e.buf, '}')
}

// ---------------------------------------------------------------------------
// Decoding.

type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenNames = [...]string{
	"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END",
	"T_WHITESPACE", "T_ERROR", "T_UNKNOWN",
}

// jsonCh2Token is ch2token.
var jsonCh2Token = func() [256]jsonTokenType {
	var t [256]jsonTokenType
	for i := range t {
		t[i] = tError
	}
	t['{'], t['}'], t['['], t[']'] = tObjBegin, tObjEnd, tArrBegin, tArrEnd
	t[','], t[':'], t[0] = tComma, tColon, tEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tWhitespace, tWhitespace, tWhitespace, tWhitespace
	for _, c := range "fiInNt\"+-0123456789" {
		t[c] = tUnknown
	}
	return t
}()

// jsonEscape2Char is escape2char: 0 for an invalid escape.
var jsonEscape2Char = func() [256]byte {
	var t [256]byte
	t['"'], t['\\'], t['/'] = '"', '\\', '/'
	t['b'], t['t'], t['n'], t['f'], t['r'] = '\b', '\t', '\n', '\f', '\r'
	t['u'] = 'u'
	return t
}()

type jsonToken struct {
	typ   jsonTokenType
	index int
	str   string
	num   float64
	b     bool
	err   string
}

// jsonParser reads data as the C parser reads its NUL-terminated copy: a NUL
// byte, or the end, is the end of the text.
type jsonParser struct {
	L     *lua.LState
	cfg   *cjsonConfig
	data  string
	pos   int
	depth int32
	tmp   []byte
	null  *lua.LUserData
}

func (p *jsonParser) at(i int) byte {
	if i < len(p.data) {
		return p.data[i]
	}
	return 0
}

func (p *jsonParser) setError(tok *jsonToken, msg string) {
	tok.typ = tError
	tok.index = p.pos
	tok.err = msg
}

func hexDigitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

func (p *jsonParser) hex4(i int) int {
	v := 0
	for j := 0; j < 4; j++ {
		d := hexDigitValue(p.at(i + j))
		if d < 0 {
			return -1
		}
		v = v<<4 | d
	}
	return v
}

// unicodeEscape is json_append_unicode_escape, at the backslash of \uXXXX.
func (p *jsonParser) unicodeEscape() bool {
	cp := p.hex4(p.pos + 2)
	if cp < 0 {
		return false
	}
	escLen := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false // a low surrogate first
		}
		if p.at(p.pos+6) != '\\' || p.at(p.pos+7) != 'u' {
			return false
		}
		low := p.hex4(p.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		escLen = 12
	}
	switch {
	case cp <= 0x7F:
		p.tmp = append(p.tmp, byte(cp))
	case cp <= 0x7FF:
		p.tmp = append(p.tmp, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		p.tmp = append(p.tmp, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	default:
		p.tmp = append(p.tmp, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	p.pos += escLen
	return true
}

func (p *jsonParser) stringToken(tok *jsonToken) {
	p.pos++ // the opening quote
	p.tmp = p.tmp[:0]
	for {
		ch := p.at(p.pos)
		if ch == '"' {
			break
		}
		if ch == 0 {
			p.setError(tok, "unexpected end of string")
			return
		}
		if ch == '\\' {
			ch = jsonEscape2Char[p.at(p.pos+1)]
			if ch == 'u' {
				if p.unicodeEscape() {
					continue
				}
				p.setError(tok, "invalid unicode escape code")
				return
			}
			if ch == 0 {
				p.setError(tok, "invalid escape code")
				return
			}
			p.pos++
		}
		p.tmp = append(p.tmp, ch)
		p.pos++
	}
	p.pos++ // the closing quote
	tok.typ = tString
	tok.str = string(p.tmp)
}

// isInvalidNumber is json_is_invalid_number: the forms strtod accepts that
// JSON does not (leading '+' or zeros, hexadecimal, Inf, NaN).
func (p *jsonParser) isInvalidNumber() bool {
	i := p.pos
	if p.at(i) == '+' {
		return true
	}
	if p.at(i) == '-' {
		i++
	}
	if p.at(i) == '0' {
		ch2 := p.at(i + 1)
		return ch2|0x20 == 'x' || ('0' <= ch2 && ch2 <= '9')
	} else if p.at(i) <= '9' {
		return false
	}
	return hasPrefixFold(p.data, i, "inf") || hasPrefixFold(p.data, i, "nan")
}

func (p *jsonParser) numberToken(tok *jsonToken) {
	v, end := strtod(p.data, p.pos)
	if end == p.pos {
		p.setError(tok, "invalid number")
		return
	}
	tok.typ = tNumber
	tok.num = v
	p.pos = end
}

func (p *jsonParser) hasWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if p.at(p.pos+i) != w[i] {
			return false
		}
	}
	return true
}

func (p *jsonParser) nextToken() jsonToken {
	var tok jsonToken
	for {
		tok.typ = jsonCh2Token[p.at(p.pos)]
		if tok.typ != tWhitespace {
			break
		}
		p.pos++
	}
	tok.index = p.pos
	switch tok.typ {
	case tError:
		p.setError(&tok, "invalid token")
		return tok
	case tEnd:
		return tok
	case tUnknown:
	default:
		p.pos++
		return tok
	}
	ch := p.at(p.pos)
	switch {
	case ch == '"':
		p.stringToken(&tok)
	case ch == '-' || isDigit(ch):
		if p.cfg.decodeInvalid == 0 && p.isInvalidNumber() {
			p.setError(&tok, "invalid number")
			return tok
		}
		p.numberToken(&tok)
	case p.hasWord("true"):
		tok.typ, tok.b = tBoolean, true
		p.pos += 4
	case p.hasWord("false"):
		tok.typ, tok.b = tBoolean, false
		p.pos += 5
	case p.hasWord("null"):
		tok.typ = tNull
		p.pos += 4
	case p.cfg.decodeInvalid != 0 && p.isInvalidNumber():
		p.numberToken(&tok)
	default:
		p.setError(&tok, "invalid token")
	}
	return tok
}

func (p *jsonParser) throw(expected string, tok *jsonToken) {
	found := tok.err
	if tok.typ != tError {
		found = jsonTokenNames[tok.typ]
	}
	luaError(p.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

// descend is json_decode_descend: one level deeper, with slots values about
// to be pushed on a C stack holding top values.
func (p *jsonParser) descend(top, slots int) {
	p.depth++
	if p.depth <= p.cfg.decodeMaxDepth && checkStack(top, slots) {
		return
	}
	luaError(p.L, "Found too many nested data structures (%d) at character %d", p.depth, p.pos)
}

func (p *jsonParser) object(top int) lua.LValue {
	p.descend(top, 3) // table, key, value
	t := p.L.CreateTable(0, 0)
	tok := p.nextToken()
	if tok.typ == tObjEnd {
		p.depth--
		return t
	}
	for {
		if tok.typ != tString {
			p.throw("object key string", &tok)
		}
		key := tok.str
		tok = p.nextToken()
		if tok.typ != tColon {
			p.throw("colon", &tok)
		}
		tok = p.nextToken()
		t.RawSetString(key, p.value(&tok, top+2))
		tok = p.nextToken()
		if tok.typ == tObjEnd {
			p.depth--
			return t
		}
		if tok.typ != tComma {
			p.throw("comma or object end", &tok)
		}
		tok = p.nextToken()
	}
}

func (p *jsonParser) array(top int) lua.LValue {
	p.descend(top, 2) // table, value
	t := p.L.CreateTable(0, 0)
	if p.cfg.arrayMT != 0 {
		p.L.SetMetatable(t, p.cfg.arrayMetatable(p.L))
	}
	tok := p.nextToken()
	if tok.typ == tArrEnd {
		p.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, p.value(&tok, top+1))
		tok = p.nextToken()
		if tok.typ == tArrEnd {
			p.depth--
			return t
		}
		if tok.typ != tComma {
			p.throw("comma or array end", &tok)
		}
		tok = p.nextToken()
	}
}

// value is json_process_value; top is the C stack height before the value.
func (p *jsonParser) value(tok *jsonToken, top int) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tObjBegin:
		return p.object(top)
	case tArrBegin:
		return p.array(top)
	case tNull:
		if p.null == nil {
			p.null = jsonNull(p.L)
		}
		return p.null
	}
	p.throw("value", tok)
	return nil
}

func (cfg *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	data := checkLString(L, 1)
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		luaError(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{L: L, cfg: cfg, data: data}
	tok := p.nextToken()
	v := p.value(&tok, 1)
	tok = p.nextToken()
	if tok.typ != tEnd {
		p.throw("the end", &tok)
	}
	L.Push(v)
	return 1
}
