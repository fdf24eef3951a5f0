// Package glob implements Redis's glob-style pattern matching, as used by KEYS,
// SCAN MATCH, PSUBSCRIBE, CONFIG GET and ACL key patterns.
//
// It is a faithful port of stringmatchlen (util.c, Redis 7.2+/8.x), quirks
// included, so that HotKV answers every pattern exactly as Redis does:
//
//   - '*' matches any run of bytes, '?' any single byte.
//   - '[...]' matches one byte from a set; '[^...]' negates it; 'a-z' is a range,
//     and a reversed range ('z-a') is swapped. '\x' inside a set is the literal x,
//     compared case-sensitively even when nocase. A set with no closing ']' runs
//     to the end of the pattern; "[]" is an empty set that matches nothing and
//     "[^]" matches any byte.
//   - '\x' outside a set is the literal x; a trailing '\' is a literal backslash.
//   - An empty string is matched only by the empty pattern: Redis's matcher never
//     enters its loop for an empty string, so even "*" does not match "" (KEYS and
//     SCAN special-case the lone "*" pattern before calling it).
//   - nocase folds ASCII letters only (C locale tolower).
//   - Range bounds and the tested byte are compared as C's signed char, as on
//     x86-64 and other platforms where char is signed: [\x80-\xff] behaves as
//     expected but a range that mixes ASCII and high bytes (such as [a-\xff])
//     wraps as it does in Redis there.
//
// Abusive patterns are cut short as in Redis: once the rest of the pattern after a
// '*' fails to match at every remaining position, no earlier '*' retries a longer
// match (skipLongerMatches), and a pattern nesting more than 1000 '*' levels deep
// stops matching at that depth. Matching allocates nothing.
package glob

// maxNesting is Redis's recursion limit on nested '*' (util.c).
const maxNesting = 1000

// text is the byte sequence types the matcher works on, so that Match and
// MatchString share one implementation without converting (and allocating).
type text interface{ ~string | ~[]byte }

// Match reports whether str matches the glob pattern; nocase folds ASCII case.
func Match(pattern, str []byte, nocase bool) bool {
	return match(pattern, 0, str, 0, nocase, 0) == matched
}

// MatchString is Match for strings. It does not allocate.
func MatchString(pattern, s string, nocase bool) bool {
	return match(pattern, 0, s, 0, nocase, 0) == matched
}

// match's results: giveUp is a failure no enclosing '*' can mend by
// consuming more (Redis's skipLongerMatches flag, returned instead of set
// through a pointer, which would make every call allocate)
const (
	noMatch = iota
	matched
	giveUp
)

// match is stringmatchlen_impl over p[pi:] and s[si:]. Where the C code reads the
// NUL terminator one past the end of the pattern, this code tests the length.
func match[T text](p T, pi int, s T, si int, nocase bool, nesting int) int {
	if nesting > maxNesting {
		return noMatch // protection against abusive patterns
	}
	for pi < len(p) && si < len(s) {
		switch p[pi] {
		case '*':
			for pi+1 < len(p) && p[pi+1] == '*' {
				pi++
			}
			if pi+1 == len(p) {
				return matched // a trailing '*' matches the rest
			}
			for ; si < len(s); si++ {
				if r := match(p, pi+1, s, si, nocase, nesting+1); r != noMatch {
					return r
				}
			}
			// The rest of the pattern matches from no position of the rest of the
			// string, so no enclosing '*' can succeed by consuming more: tell them
			// to give up (Redis's skipLongerMatches).
			return giveUp
		case '?':
			si++
		case '[':
			var ok bool
			pi, ok = matchSet(p, pi+1, s[si], nocase)
			if !ok {
				return noMatch
			}
			si++
		case '\\':
			if len(p)-pi >= 2 {
				pi++
			}
			fallthrough
		default:
			if !eqByte(p[pi], s[si], nocase) {
				return noMatch
			}
			si++
		}
		pi++
		if si == len(s) {
			for pi < len(p) && p[pi] == '*' {
				pi++
			}
			break
		}
	}
	if pi == len(p) && si == len(s) {
		return matched
	}
	return noMatch
}

// matchSet matches c against the set whose body starts at p[pi] (just past '[').
// It returns the index of the set's last byte (its ']', or the pattern's last
// byte if the set is unterminated), so the caller's pi++ moves past the set.
func matchSet[T text](p T, pi int, c byte, nocase bool) (int, bool) {
	not := pi < len(p) && p[pi] == '^'
	if not {
		pi++
	}
	matched := false
	for {
		if len(p)-pi >= 2 && p[pi] == '\\' {
			pi++
			if p[pi] == c {
				matched = true
			}
		} else if pi < len(p) && p[pi] == ']' {
			break
		} else if pi >= len(p) {
			pi-- // unterminated: step back onto the last byte
			break
		} else if len(p)-pi >= 3 && p[pi+1] == '-' {
			start, end, x := int(int8(p[pi])), int(int8(p[pi+2])), int(int8(c))
			if start > end {
				start, end = end, start
			}
			if nocase {
				start, end, x = lower(start), lower(end), lower(x)
			}
			pi += 2
			if x >= start && x <= end {
				matched = true
			}
		} else if eqByte(p[pi], c, nocase) {
			matched = true
		}
		pi++
	}
	return pi, matched != not
}

func eqByte(a, b byte, nocase bool) bool {
	if a == b {
		return true
	}
	return nocase && lower(int(a)) == lower(int(b))
}

// lower is C's tolower in the C locale.
func lower(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
