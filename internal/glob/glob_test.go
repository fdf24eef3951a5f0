package glob

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var matchCases = []struct {
	pattern, s string
	nocase     bool
	want       bool
}{
	// tests/unit/keyspace.tcl: KEYS with pattern, KEYS with hashtag.
	{"foo*", "foo_a", false, true},
	{"foo*", "key_x", false, false},
	{"*", "key_x", false, true},
	{"{a}*", "{a}x", false, true},
	{"{a}*", "{b}a", false, false},
	{"*{b}*", "{b}c", false, true},
	{"*{b}*", "{a}y", false, false},
	// tests/unit/scan.tcl patterns.
	{"*11*", "key:11", false, true},
	{"*11*", "key:1", false, false},
	{"a*", "a", false, true},
	{"a**", "a", false, true},
	{"*a", "a", false, true},
	{"*a", "ba", false, true},
	{"*a", "ab", false, false},
	// Literals and '?'.
	{"", "", false, true},
	{"", "a", false, false},
	{"abc", "abc", false, true},
	{"abc", "abd", false, false},
	{"abc", "ab", false, false},
	{"ab", "abc", false, false},
	{"h?llo", "hello", false, true},
	{"h?llo", "hllo", false, false},
	{"key:1??", "key:123", false, true},
	{"key:1??", "key:12", false, false},
	{"h*llo", "hllo", false, true},
	{"h*llo", "heeeello", false, true},
	{"*o*o*", "foo", false, true},
	{"*o*o*", "fo", false, false},
	// Empty string: only the empty pattern matches (Redis quirk).
	{"*", "", false, false},
	{"**", "", false, false},
	{"?", "", false, false},
	// Sets and ranges.
	{"h[ae]llo", "hello", false, true},
	{"h[ae]llo", "hallo", false, true},
	{"h[ae]llo", "hillo", false, false},
	{"h[^e]llo", "hallo", false, true},
	{"h[^e]llo", "hello", false, false},
	{"h[a-b]llo", "hbllo", false, true},
	{"h[a-b]llo", "hcllo", false, false},
	{"h[b-a]llo", "hallo", false, true}, // reversed range is swapped
	{"[0-9]", "5", false, true},
	{"[0-9]", "x", false, false},
	{"[a-]", "_", false, true},  // "a-]" is the range ']'..'a', set unterminated
	{"[a-]", "-", false, false}, // ...so '-' is not in it
	{"[]]", "]", false, false},  // "[]" is an empty set, then a literal ']'
	{"[]]", "]]", false, false},
	{"[]", "a", false, false},
	{"[^]", "a", false, true},   // empty negated set matches any byte
	{"[^]x", "ax", false, true}, // and the pattern continues after it
	{"[abc", "b", false, true},  // unterminated set runs to the end
	{"[abc", "d", false, false},
	{"[", "[", false, false},
	{"[^", "x", false, true},
	{`[\]]`, "]", false, true},
	{`[\-]`, "-", false, true},
	{`[a\-z]`, "b", false, false},
	{`[\^]`, "^", false, true},
	{`[ab\`, `\`, false, true},      // trailing '\' in a set is literal
	{"[a-\xff]", "b", false, false}, // signed char: the range is -1..'a'
	{"[a-\xff]", "A", false, true},
	{"[a-\xff]", "\xff", false, true},
	{"[\x80-\xff]", "\xc3", false, true},
	{"[\x80-\xff]", "a", false, false},
	// Escapes.
	{`\*`, "*", false, true},
	{`\*`, "a", false, false},
	{`\?`, "?", false, true},
	{`\?`, "a", false, false},
	{`\[a]`, "[a]", false, true},
	{`a\`, `a\`, false, true}, // trailing '\' is literal
	{`\\`, `\`, false, true},
	{`*\*`, "abc*", false, true},
	{`*\*`, "abc", false, false},
	// nocase.
	{"HELLO", "hello", true, true},
	{"HELLO", "hello", false, false},
	{"h?LLO", "HeLlo", true, true},
	{"H[A-Z]LLO", "hello", true, true},
	{"H[A-Z]LLO", "hello", false, false},
	{"[a-z]", "Q", true, true},
	{"[Z-a]", "z", true, false}, // folded after swapping: 'z'..'a' is empty
	{"[Z-a]", "_", false, true},
	{"[xY]", "y", true, true},
	{`[\Y]`, "y", true, false}, // escapes in a set are case-sensitive
	{`\Y`, "y", true, true},    // but not outside one
	{"é", "É", true, false},    // ASCII folding only
	// Abusive patterns (keyspace.tcl "Regression for pattern matching long nested loops").
	{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false, false},
	{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*", strings.Repeat("a", 40), false, true},
	{"*a*a*b", "aaxaaxb", false, true},
	{"*a*a*b", "aaxaax", false, false},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		if got := Match([]byte(tc.pattern), []byte(tc.s), tc.nocase); got != tc.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.nocase, got, tc.want)
		}
		if got := MatchString(tc.pattern, tc.s, tc.nocase); got != tc.want {
			t.Errorf("MatchString(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.nocase, got, tc.want)
		}
		if len(tc.s) < 100 {
			if ref := refMatch(tc.pattern, tc.s, tc.nocase); ref != tc.want {
				t.Errorf("refMatch(%q, %q, %v) = %v, want %v (reference disagrees with table)", tc.pattern, tc.s, tc.nocase, ref, tc.want)
			}
		}
	}
}

// TestAbusivePatterns checks that pathological patterns finish quickly, as in
// keyspace.tcl's "Regression for pattern matching (very) long nested loops".
func TestAbusivePatterns(t *testing.T) {
	start := time.Now()
	long := bytes.Repeat([]byte("a"), 50000)
	if Match(bytes.Repeat([]byte("*?"), 50000), long, false) {
		t.Error(`"*?"x50000 matched: the nesting limit should stop it`)
	}
	if Match([]byte(strings.Repeat("a*", 900)+"b"), long, false) {
		t.Error(`"a*"x900+"b" matched a string without b`)
	}
	if !Match([]byte(strings.Repeat("a*", 900)+"b"), append(long, 'b'), false) {
		t.Error(`"a*"x900+"b" did not match a string ending in b`)
	}
	if Match([]byte(strings.Repeat("*", 3000)+"b"), long, false) {
		t.Error("consecutive stars collapse, so this is one level; must not match")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("abusive patterns took %v", d)
	}
}

func TestNestingLimit(t *testing.T) {
	s := strings.Repeat("a", 1100)
	if !MatchString(strings.Repeat("*a", 1000), s, false) {
		t.Error("1000 nested stars should still match")
	}
	if MatchString(strings.Repeat("*a", 1002), s, false) {
		t.Error("more than 1000 nested stars must not match (Redis's limit)")
	}
}

func TestMatchNoAlloc(t *testing.T) {
	p, s := []byte("*foo*[a-z]?\\*"), []byte("xxfooxxbc*")
	if n := testing.AllocsPerRun(100, func() {
		Match(p, s, true)
		MatchString("*foo*[a-z]?\\*", "xxfooxxbc*", false)
	}); n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

func FuzzMatch(f *testing.F) {
	for _, tc := range matchCases {
		if len(tc.s) < 100 {
			f.Add(tc.pattern, tc.s, tc.nocase)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string, nocase bool) {
		got := MatchString(pattern, s, nocase)
		if b := Match([]byte(pattern), []byte(s), nocase); b != got {
			t.Fatalf("Match = %v, MatchString = %v for %q %q", b, got, pattern, s)
		}
		// The reference has no nesting limit: keep well under it (and keep it quick).
		if len(pattern) > 512 || len(s) > 512 {
			return
		}
		if want := refMatch(pattern, s, nocase); got != want {
			t.Fatalf("MatchString(%q, %q, %v) = %v, reference says %v", pattern, s, nocase, got, want)
		}
	})
}

// refMatch is an independent reference matcher: it compiles the pattern into
// tokens following Redis's parsing rules, then matches by dynamic programming,
// so it shares none of the backtracking (and skipLongerMatches pruning) of match.
func refMatch(pattern, s string, nocase bool) bool {
	if s == "" {
		return pattern == "" // Redis's loop never runs on an empty string
	}
	toks := refCompile(pattern, nocase)
	// ok[j] reports whether toks[i:] matches s[j:], computed for i from the end.
	ok := make([]bool, len(s)+1)
	ok[len(s)] = true
	for i := len(toks) - 1; i >= 0; i-- {
		next := ok
		ok = make([]bool, len(s)+1)
		tk := toks[i]
		for j := len(s); j >= 0; j-- {
			if tk.star {
				ok[j] = next[j] || (j < len(s) && ok[j+1])
			} else {
				ok[j] = j < len(s) && tk.set[s[j]] && next[j+1]
			}
		}
	}
	return ok[0]
}

type refToken struct {
	star bool
	set  [256]bool // bytes a non-star token accepts
}

func refCompile(p string, nocase bool) []refToken {
	fold := func(c int) int {
		if nocase && c >= 'A' && c <= 'Z' {
			return c + 32
		}
		return c
	}
	literal := func(c byte) (t refToken) {
		for x := 0; x < 256; x++ {
			t.set[x] = fold(x) == fold(int(c))
		}
		return t
	}
	var toks []refToken
	for i := 0; i < len(p); {
		switch p[i] {
		case '*':
			toks = append(toks, refToken{star: true})
			i++
		case '?':
			var t refToken
			for x := range t.set {
				t.set[x] = true
			}
			toks = append(toks, t)
			i++
		case '\\':
			if i+1 < len(p) {
				i++
			}
			toks = append(toks, literal(p[i]))
			i++
		case '[':
			var t refToken
			i++
			neg := i < len(p) && p[i] == '^'
			if neg {
				i++
			}
			for i < len(p) {
				if p[i] == '\\' && i+1 < len(p) {
					t.set[p[i+1]] = true // case-sensitive
					i += 2
				} else if p[i] == ']' {
					i++
					break
				} else if i+2 < len(p) && p[i+1] == '-' {
					lo, hi := int(int8(p[i])), int(int8(p[i+2]))
					if lo > hi {
						lo, hi = hi, lo
					}
					lo, hi = fold(lo), fold(hi)
					for x := 0; x < 256; x++ {
						if c := fold(int(int8(x))); c >= lo && c <= hi {
							t.set[x] = true
						}
					}
					i += 3
				} else {
					for x := 0; x < 256; x++ {
						if fold(x) == fold(int(p[i])) {
							t.set[x] = true
						}
					}
					i++
				}
			}
			if neg {
				for x := range t.set {
					t.set[x] = !t.set[x]
				}
			}
			toks = append(toks, t)
		default:
			toks = append(toks, literal(p[i]))
			i++
		}
	}
	return toks
}

func BenchmarkMatch(b *testing.B) {
	p, s := []byte("user:*:session:[0-9]*"), []byte("user:12345:session:42")
	b.ReportAllocs()
	for b.Loop() {
		Match(p, s, false)
	}
}

func BenchmarkMatchAbusive(b *testing.B) {
	p, s := []byte(strings.Repeat("a*", 20)+"b"), bytes.Repeat([]byte("a"), 1000)
	b.ReportAllocs()
	for b.Loop() {
		Match(p, s, false)
	}
}
