package script

import (
	"fmt"
	"strings"
)

// checkSyntax parses code with Lua 5.1's grammar as PUC Lua's lparser.c does
// (without generating code) and returns C Lua's message for its first syntax
// error, "name:line: message near 'token'", or "" when it finds none.
// gopher-lua's yacc parser reports "near 'x': syntax error" for every
// mistake; scripts' users see PUC's words in Redis ("unexpected symbol",
// "'end' expected (to close 'function' at line 1)"...), so compile asks this
// checker for the message once gopher-lua has refused the code. Lexical
// errors are left to gopher-lua's lexer, which words them as PUC's.
func checkSyntax(code, name string) (msg string) {
	defer func() {
		if recover() != nil {
			msg = "" // a checker fault must not take the server down: gopher-lua's message stays
		}
	}()
	return parseLua(code, name)
}

// parseLua is checkSyntax without its safety net: a fault of the checker
// panics (FuzzCheckSyntax looks for them).
func parseLua(code, name string) (msg string) {
	p := &luaParser{src: code, name: name, line: 1}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(syntaxErr)
			if !ok {
				panic(r)
			}
			msg = string(e)
		}
	}()
	p.next()
	p.funcs = append(p.funcs, luaFunc{vararg: true}) // the main chunk is vararg
	p.chunk()
	if p.tok.kind != tkEOS {
		p.errorExpected(tkEOS)
	}
	return ""
}

type syntaxErr string

// token kinds that are not their own text
const (
	tkName   = "<name>"
	tkString = "<string>"
	tkNumber = "<number>"
	tkEOS    = "<eof>"
)

var luaKeywords = map[string]bool{"and": true, "break": true, "do": true, "else": true, "elseif": true,
	"end": true, "false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true, "true": true,
	"until": true, "while": true}

type luaToken struct {
	kind string // a keyword or operator itself, or tkName, tkString, tkNumber, tkEOS
	text string // the source text (what "near" shows)
}

type luaFunc struct {
	vararg bool
	loops  int // enclosing loops in this function (break)
}

type luaParser struct {
	src      string
	name     string
	pos      int
	line     int // the line the lexer is on (ls->linenumber)
	lastline int // the line of the last token consumed (ls->lastline)
	tok      luaToken
	ahead    *luaToken
	aheadLn  int
	funcs    []luaFunc
	levels   int // nesting (enter)
}

// ---- the lexer (lexically valid input: gopher-lua's lexer judged that) ----

func (p *luaParser) newline() {
	c := p.src[p.pos]
	p.pos++
	if p.pos < len(p.src) && (p.src[p.pos] == '\n' || p.src[p.pos] == '\r') && p.src[p.pos] != c {
		p.pos++
	}
	p.line++
}

// longBracket returns the level of a long bracket opening at pos ("[", then
// '=' level times, then "["), or -1.
func (p *luaParser) longBracket(pos int) int {
	if pos >= len(p.src) || p.src[pos] != '[' {
		return -1
	}
	n := 0
	for pos+1+n < len(p.src) && p.src[pos+1+n] == '=' {
		n++
	}
	if pos+1+n < len(p.src) && p.src[pos+1+n] == '[' {
		return n
	}
	return -1
}

// skipLong skips a long string or comment of level lvl opening at pos.
func (p *luaParser) skipLong(lvl int) {
	p.pos += lvl + 2
	closing := "]" + strings.Repeat("=", lvl) + "]"
	for p.pos < len(p.src) {
		if strings.HasPrefix(p.src[p.pos:], closing) {
			p.pos += len(closing)
			return
		}
		if c := p.src[p.pos]; c == '\n' || c == '\r' {
			p.newline()
		} else {
			p.pos++
		}
	}
}

func (p *luaParser) lex() luaToken {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n' || c == '\r':
			p.newline()
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			p.pos++
		case c == '-' && strings.HasPrefix(p.src[p.pos:], "--"):
			p.pos += 2
			if lvl := p.longBracket(p.pos); lvl >= 0 {
				p.skipLong(lvl)
				continue
			}
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		default:
			return p.lexToken()
		}
	}
	return luaToken{kind: tkEOS, text: tkEOS}
}

func isAlpha(c byte) bool  { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigitB(c byte) bool { return c >= '0' && c <= '9' }

func (p *luaParser) lexToken() luaToken {
	start := p.pos
	c := p.src[p.pos]
	switch {
	case isAlpha(c):
		for p.pos < len(p.src) && (isAlpha(p.src[p.pos]) || isDigitB(p.src[p.pos])) {
			p.pos++
		}
		w := p.src[start:p.pos]
		if luaKeywords[w] {
			return luaToken{kind: w, text: w}
		}
		return luaToken{kind: tkName, text: w}
	case isDigitB(c) || c == '.' && p.pos+1 < len(p.src) && isDigitB(p.src[p.pos+1]):
		for p.pos < len(p.src) && (isDigitB(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
			p.pos++
			if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
				p.pos++
			}
		}
		for p.pos < len(p.src) && (isAlpha(p.src[p.pos]) || isDigitB(p.src[p.pos])) {
			p.pos++
		}
		return luaToken{kind: tkNumber, text: p.src[start:p.pos]}
	case c == '"' || c == '\'':
		p.pos++
		for p.pos < len(p.src) && p.src[p.pos] != c {
			switch p.src[p.pos] {
			case '\\':
				p.pos++
				if p.pos < len(p.src) && (p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
					p.newline()
					continue
				}
				p.pos++
			case '\n', '\r':
				panic(syntaxErr("")) // unfinished: the lexer's case
			default:
				p.pos++
			}
		}
		p.pos++
		return luaToken{kind: tkString, text: p.src[start:min(p.pos, len(p.src))]}
	case c == '[':
		if lvl := p.longBracket(p.pos); lvl >= 0 {
			p.skipLong(lvl)
			return luaToken{kind: tkString, text: p.src[start:p.pos]}
		}
	}
	for _, op := range []string{"...", "..", "==", "<=", ">=", "~="} {
		if strings.HasPrefix(p.src[p.pos:], op) {
			p.pos += len(op)
			return luaToken{kind: op, text: op}
		}
	}
	p.pos++
	s := p.src[start:p.pos]
	if c < ' ' || c == 127 {
		s = fmt.Sprintf("char(%d)", c) // luaX_token2str for a control character
	}
	return luaToken{kind: s, text: s}
}

func (p *luaParser) next() {
	p.lastline = p.line
	if p.ahead != nil {
		p.tok, p.line, p.ahead = *p.ahead, p.aheadLn, nil
		return
	}
	p.tok = p.lex()
}

func (p *luaParser) lookahead() luaToken {
	if p.ahead == nil {
		saved := p.line
		t := p.lex()
		p.ahead, p.aheadLn = &t, p.line
		p.line = saved
	}
	return *p.ahead
}

// ---- errors, as luaX_syntaxerror words them ----

func (p *luaParser) fail(msg string) {
	panic(syntaxErr(fmt.Sprintf("%s:%d: %s near '%s'", p.name, p.line, msg, p.tok.text)))
}

func (p *luaParser) errorExpected(kind string) { p.fail("'" + kind + "' expected") }

func (p *luaParser) testNext(kind string) bool {
	if p.tok.kind == kind {
		p.next()
		return true
	}
	return false
}

func (p *luaParser) check(kind string) {
	if p.tok.kind != kind {
		p.errorExpected(kind)
	}
}

func (p *luaParser) checkNext(kind string) {
	p.check(kind)
	p.next()
}

func (p *luaParser) checkMatch(what, who string, where int) {
	if !p.testNext(what) {
		if where == p.line {
			p.errorExpected(what)
		}
		p.fail(fmt.Sprintf("'%s' expected (to close '%s' at line %d)", what, who, where))
	}
}

func (p *luaParser) checkName() { p.checkNext(tkName) }

func (p *luaParser) fn() *luaFunc { return &p.funcs[len(p.funcs)-1] }

// ---- the grammar (lparser.c of Lua 5.1) ----

func blockFollow(kind string) bool {
	switch kind {
	case "else", "elseif", "end", "until", tkEOS:
		return true
	}
	return false
}

func (p *luaParser) chunk() {
	last := false
	for !last && !blockFollow(p.tok.kind) {
		last = p.statement()
		p.testNext(";")
	}
}

func (p *luaParser) block() { p.chunk() }

// maxLevels is LUAI_MAXCCALLS: how deep statements and expressions nest.
const maxLevels = 200

// enter counts a level of nesting (lparser.c's enterlevel); leave with
// p.levels--.
func (p *luaParser) enter() {
	if p.levels++; p.levels > maxLevels {
		panic(syntaxErr(fmt.Sprintf("%s:%d: chunk has too many syntax levels", p.name, p.line)))
	}
}

func (p *luaParser) statement() bool {
	p.enter()
	defer func() { p.levels-- }()
	line := p.line
	switch p.tok.kind {
	case "if":
		p.testThenBlock()
		for p.tok.kind == "elseif" {
			p.testThenBlock()
		}
		if p.testNext("else") {
			p.block()
		}
		p.checkMatch("end", "if", line)
	case "while":
		p.next()
		p.expr()
		p.checkNext("do")
		p.loop(p.block)
		p.checkMatch("end", "while", line)
	case "do":
		p.next()
		p.block()
		p.checkMatch("end", "do", line)
	case "for":
		p.forStat(line)
	case "repeat":
		p.next()
		p.loop(p.chunk)
		p.checkMatch("until", "repeat", line)
		p.expr()
	case "function":
		p.next()
		p.checkName()
		for p.tok.kind == "." {
			p.next()
			p.checkName()
		}
		if p.tok.kind == ":" {
			p.next()
			p.checkName()
		}
		p.body(line)
	case "local":
		p.next()
		if p.testNext("function") {
			p.checkName()
			p.body(line)
		} else {
			for {
				p.checkName()
				if !p.testNext(",") {
					break
				}
			}
			if p.testNext("=") {
				p.exprList()
			}
		}
	case "return":
		p.next()
		if !blockFollow(p.tok.kind) && p.tok.kind != ";" {
			p.exprList()
		}
		return true
	case "break":
		p.next()
		if p.fn().loops == 0 {
			p.fail("no loop to break")
		}
		return true
	default:
		p.exprStat()
	}
	return false
}

func (p *luaParser) loop(body func()) {
	p.fn().loops++
	body()
	p.fn().loops--
}

func (p *luaParser) testThenBlock() {
	p.next()
	p.expr()
	p.checkNext("then")
	p.block()
}

func (p *luaParser) forStat(line int) {
	p.next()
	p.checkName()
	switch p.tok.kind {
	case "=":
		p.next()
		p.expr()
		p.checkNext(",")
		p.expr()
		if p.testNext(",") {
			p.expr()
		}
	case ",", "in":
		for p.testNext(",") {
			p.checkName()
		}
		p.checkNext("in")
		p.exprList()
	default:
		p.fail("'=' or 'in' expected")
	}
	p.checkNext("do")
	p.loop(p.block)
	p.checkMatch("end", "for", line)
}

func (p *luaParser) body(line int) {
	p.funcs = append(p.funcs, luaFunc{})
	p.checkNext("(")
	if p.tok.kind != ")" {
		for {
			switch p.tok.kind {
			case tkName:
				p.next()
			case "...":
				p.next()
				p.fn().vararg = true
			default:
				p.fail("<name> or '...' expected")
			}
			if p.fn().vararg || !p.testNext(",") {
				break
			}
		}
	}
	p.checkNext(")")
	p.chunk()
	p.checkMatch("end", "function", line)
	p.funcs = p.funcs[:len(p.funcs)-1]
}

func (p *luaParser) exprList() {
	p.expr()
	for p.testNext(",") {
		p.expr()
	}
}

// exprStat is a call or an assignment; the kinds of what suffixedExp
// parsed: "call", "var" (a name or an index), "other" (a parenthesised
// expression).
func (p *luaParser) exprStat() {
	if k := p.suffixedExp(); k != "call" {
		p.restAssign(k) // Lua 5.1: anything but a call is an assignment
	}
}

func (p *luaParser) restAssign(k string) {
	if k != "var" {
		p.fail("syntax error")
	}
	if p.testNext(",") {
		p.restAssign(p.suffixedExp())
		return
	}
	p.checkNext("=")
	p.exprList()
}

func (p *luaParser) primaryExp() string {
	switch p.tok.kind {
	case tkName:
		p.next()
		return "var"
	case "(":
		line := p.line
		p.next()
		p.expr()
		p.checkMatch(")", "(", line)
		return "other"
	}
	p.fail("unexpected symbol")
	return ""
}

func (p *luaParser) suffixedExp() string {
	k := p.primaryExp()
	for {
		switch p.tok.kind {
		case ".":
			p.next()
			p.checkName()
			k = "var"
		case "[":
			p.next()
			p.expr()
			p.checkNext("]")
			k = "var"
		case ":":
			p.next()
			p.checkName()
			p.funcArgs()
			k = "call"
		case "(", tkString, "{":
			p.funcArgs()
			k = "call"
		default:
			return k
		}
	}
}

func (p *luaParser) funcArgs() {
	line := p.line
	switch p.tok.kind {
	case "(":
		if line != p.lastline {
			p.fail("ambiguous syntax (function call x new statement)")
		}
		p.next()
		if p.tok.kind != ")" {
			p.exprList()
		}
		p.checkMatch(")", "(", line)
	case "{":
		p.constructor()
	case tkString:
		p.next()
	default:
		p.fail("function arguments expected")
	}
}

func (p *luaParser) constructor() {
	line := p.line
	p.checkNext("{")
	for p.tok.kind != "}" {
		switch p.tok.kind {
		case tkName:
			if p.lookahead().kind != "=" {
				p.expr()
			} else {
				p.next()
				p.checkNext("=")
				p.expr()
			}
		case "[":
			p.next()
			p.expr()
			p.checkNext("]")
			p.checkNext("=")
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(",") && !p.testNext(";") {
			break
		}
	}
	p.checkMatch("}", "{", line)
}

func (p *luaParser) simpleExp() {
	switch p.tok.kind {
	case tkNumber, tkString, "nil", "true", "false":
		p.next()
	case "...":
		if !p.fn().vararg {
			p.fail("cannot use '...' outside a vararg function")
		}
		p.next()
	case "{":
		p.constructor()
	case "function":
		line := p.line
		p.next()
		p.body(line)
	default:
		p.suffixedExp()
	}
}

// binary operators' left and right priorities (lparser.c's priority table)
var binPriority = map[string][2]int{"+": {6, 6}, "-": {6, 6}, "*": {7, 7}, "/": {7, 7}, "%": {7, 7},
	"^": {10, 9}, "..": {5, 4}, "==": {3, 3}, "~=": {3, 3}, "<": {3, 3}, "<=": {3, 3}, ">": {3, 3},
	">=": {3, 3}, "and": {2, 2}, "or": {1, 1}}

const unaryPriority = 8

func (p *luaParser) expr() { p.subExpr(0) }

func (p *luaParser) subExpr(limit int) {
	p.enter()
	defer func() { p.levels-- }()
	switch p.tok.kind {
	case "not", "-", "#":
		p.next()
		p.subExpr(unaryPriority)
	default:
		p.simpleExp()
	}
	for {
		pr, ok := binPriority[p.tok.kind]
		if !ok || pr[0] <= limit {
			return
		}
		p.next()
		p.subExpr(pr[1])
	}
}
