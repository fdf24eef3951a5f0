package script

import (
	"strings"
	"testing"
)

// checkSyntax words syntax errors as PUC Lua 5.1's parser (each case's text
// is what redis-server 8.6.3 replies after "Error compiling script (new
// function): "), and finds nothing wrong in valid Lua 5.1.
func TestCheckSyntaxAsPUC(t *testing.T) {
	for code, want := range map[string]string{
		"return +":                    "user_script:1: unexpected symbol near '+'",
		"x = = 1":                     "user_script:1: unexpected symbol near '='",
		"local t = {":                 "user_script:1: unexpected symbol near '<eof>'",
		"return 1 1":                  "user_script:1: '<eof>' expected near '1'",
		"for i=1 do end":              "user_script:1: ',' expected near 'do'",
		"if true then":                "user_script:1: 'end' expected near '<eof>'",
		"return (1":                   "user_script:1: ')' expected near '<eof>'",
		"local function f( end":       "user_script:1: <name> or '...' expected near 'end'",
		"x":                           "user_script:1: '=' expected near '<eof>'",
		"1 = 2":                       "user_script:1: unexpected symbol near '1'",
		"break":                       "user_script:1: no loop to break near '<eof>'",
		"function f() return ... end": "user_script:1: cannot use '...' outside a vararg function near '...'",
		"return 'a' 'b'":              "user_script:1: '<eof>' expected near ''b''",
		"return ~1":                   "user_script:1: unexpected symbol near '~'",
		"a, b() = 1, 2":               "user_script:1: syntax error near '='",
		"return a:b 1":                "user_script:1: function arguments expected near '1'",
		"if x then else elseif":       "user_script:1: 'end' expected near 'elseif'",
		"repeat x = 1":                "user_script:1: 'until' expected near '<eof>'",
		"local function f()\nx = 1\n": "user_script:3: 'end' expected (to close 'function' at line 1) near '<eof>'",
		"t = {[1] 2}":                 "user_script:1: '=' expected near '2'",
		"f\n(1)":                      "user_script:2: ambiguous syntax (function call x new statement) near '('",
		"for k v in x do end":         "user_script:1: '=' or 'in' expected near 'v'",
	} {
		if got := checkSyntax(code, "user_script"); got != want {
			t.Errorf("%q:\n got  %q\n want %q", code, got, want)
		}
	}
	for _, ok := range []string{
		"return 1", "local a = {1, 2, x = 3, [4] = 5; 6,}", "while true do break end return 1",
		"return ...", "return function(a, ...) return ... end", "for k, v in pairs({}) do end",
		"local x = -2^-3 .. 'a' == 'b' and not #t or {}", "a.b[c]:d 'e' {f} (g)", "--[==[ x ]==] return [[y]]",
		"return 1 == 2 == 3", "do local x; x = 1 end", "return f{}.x", "local s = 'a\\\nb'",
	} {
		if got := checkSyntax(ok, "user_script"); got != "" {
			t.Errorf("%q: %q, want no error", ok, got)
		}
	}
}

// Deep nesting stops at Lua's limit instead of the Go stack's; whatever the
// input, the checker returns (FuzzCheckSyntax).
func TestCheckSyntaxDepth(t *testing.T) {
	deep := "return " + strings.Repeat("(", 100000) + "1"
	if got := checkSyntax(deep, "user_script"); got != "user_script:1: chunk has too many syntax levels" {
		t.Fatalf("got %q", got)
	}
}

func FuzzCheckSyntax(f *testing.F) {
	for _, s := range []string{"return +", "local t = {", "f\n(1)", "--[[", "'a", "[==[", "a.b:c'd'{e}", "x = 1e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		_ = parseLua(code, "user_script") // must return, never panic
	})
}
