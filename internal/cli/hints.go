package cli

import (
	"strings"
)

// Hint returns the inline hint for the partial input line: the arguments not
// typed yet, from the command's documented syntax (redis-cli's
// getHintForInput and hintsCallback). ok is false when there is nothing to
// show. A leading space is added when the line does not end in a blank.
func (h *Help) Hint(line string) (hint string, ok bool) {
	hint, ok = h.hintFor(line)
	if ok && !(line != "" && isSpace(line[len(line)-1])) {
		hint = " " + hint
	}
	return hint, ok
}

// hintFor is Hint without the leading space (redis-cli's getHintForInput).
func (h *Help) hintFor(line string) (string, bool) {
	if h == nil {
		return "", false
	}
	words, valid := SplitArgs(line)
	if !valid {
		return "", false
	}
	endSpace := line != "" && isSpace(line[len(line)-1])
	// The last word is not matched until a blank follows it.
	n := len(words)
	if !endSpace {
		n--
	}
	if n < 0 {
		return "", false
	}
	e := h.find(words[:n])
	if e == nil {
		return "", false
	}
	return makeHint(words[:n], len(e.argv), e), true
}

// find returns the command entry matching the longest prefix of words.
func (h *Help) find(words []string) *helpEntry {
	var best *helpEntry
	for _, e := range h.entries {
		if e.group || len(e.argv) > len(words) {
			continue
		}
		j := 0
		for ; j < len(e.argv); j++ {
			if !strings.EqualFold(e.argv[j], words[j]) {
				break
			}
		}
		if j == len(e.argv) && (best == nil || len(e.argv) > len(best.argv)) {
			best = e
		}
	}
	return best
}

// makeHint builds the hint for input words (command words included, cmdlen of
// them), from the argument specs when the server documents them.
func makeHint(input []string, cmdlen int, e *helpEntry) string {
	if e.hasArgs {
		clearMatched(e.args)
		matched := 0
		if len(input) > 0 {
			matched = matchArgs(input[cmdlen:], e.args)
		}
		if matched == len(input)-cmdlen || len(input) == 0 {
			return hintForArgs("", e.args, " ")
		}
		return ""
	}
	// Without argument specs: drop the words already typed from the syntax
	// string, stopping at the first optional part (redis-cli 6/7.0).
	hint := e.params
	remove := len(input) - cmdlen
	for remove > 0 && hint != "" {
		if hint[0] == '[' {
			break
		}
		if hint[0] == ' ' {
			remove--
		}
		hint = hint[1:]
	}
	return hint
}

func clearMatched(args []*cmdArg) {
	for _, a := range args {
		a.matched, a.matchedToken, a.matchedName, a.matchedAll = 0, false, false, false
		if a.sub != nil {
			clearMatched(a.sub)
		}
	}
}

// orEmpty shows an empty token or name as "".
func orEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// hintForArgs renders the arguments not yet (fully) matched, joined by sep.
func hintForArgs(hint string, args []*cmdArg, sep string) string {
	n := len(hint)
	addSep := func(last bool) {
		if len(hint) > n && !last {
			hint += sep
			n = len(hint)
		}
	}
	for i := 0; i < len(args); i++ {
		if args[i].flags&flagOptional == 0 {
			hint = hintForArg(hint, args[i])
			addSep(i == len(args)-1)
			continue
		}
		// Successive optional args may come in any order; show a partly typed
		// one first.
		j, incomplete := i, -1
		for ; j < len(args); j++ {
			if args[j].flags&flagOptional == 0 {
				break
			}
			if args[j].matched != 0 && !args[j].matchedAll {
				hint = hintForArg(hint, args[j])
				addSep(i == len(args)-1)
				incomplete = j
			}
		}
		if j == len(args) || args[j].matched == 0 {
			for ; i < j; i++ {
				if incomplete != i {
					hint = hintForArg(hint, args[i])
					addSep(i == len(args)-1)
				}
			}
		}
		i = j - 1
	}
	return hint
}

func hintForRepeated(hint string, a *cmdArg) string {
	if a.flags&flagMultiple == 0 {
		return hint
	}
	clearMatched([]*cmdArg{a})
	if hint != "" {
		hint += " "
	}
	hint += "["
	if a.flags&flagMultipleToken != 0 {
		hint += orEmpty(a.token)
		if a.typ != argPureToken {
			hint += " "
		}
	}
	switch a.typ {
	case argOneOf:
		hint = hintForArgs(hint, a.sub, "|")
	case argBlock:
		hint = hintForArgs(hint, a.sub, " ")
	case argPureToken:
	default:
		hint += orEmpty(a.displayName())
	}
	return hint + " ...]"
}

func (a *cmdArg) displayName() string {
	if a.display != "" {
		return a.display
	}
	return a.name
}

func hintForArg(hint string, a *cmdArg) string {
	if a.matchedAll {
		return hint
	}
	optional := a.flags&flagOptional != 0 && a.matched == 0
	if optional {
		hint += "["
	}
	if a.hasToken && !a.matchedToken {
		hint += orEmpty(a.token)
		if a.typ != argPureToken {
			hint += " "
		}
	}
	switch a.typ {
	case argOneOf:
		if a.matched == 0 {
			hint = hintForArgs(hint, a.sub, "|")
		} else {
			for _, s := range a.sub {
				if s.matched != 0 {
					hint = hintForArg(hint, s)
				}
			}
		}
	case argBlock:
		hint = hintForArgs(hint, a.sub, " ")
	case argPureToken:
	default:
		if !a.matchedName {
			hint += orEmpty(a.displayName())
		}
	}
	hint = hintForRepeated(hint, a)
	if optional {
		hint += "]"
	}
	return hint
}

// scanInt and scanDouble are sscanf's "%lld" and "%lf" success tests: a
// number must start the word (after blanks); an empty word counts (sscanf
// returns EOF, which redis-cli treats as true).
func scanInt(w string) bool {
	w = strings.TrimLeft(w, " \t\n\v\f\r")
	if w == "" {
		return true
	}
	if w[0] == '+' || w[0] == '-' {
		w = w[1:]
	}
	return w != "" && w[0] >= '0' && w[0] <= '9'
}

func scanDouble(w string) bool {
	w = strings.TrimLeft(w, " \t\n\v\f\r")
	if w == "" {
		return true
	}
	if w[0] == '+' || w[0] == '-' {
		w = w[1:]
	}
	lw := strings.ToLower(w)
	switch {
	case strings.HasPrefix(lw, "inf"), strings.HasPrefix(lw, "nan"):
		return true
	case w != "" && w[0] >= '0' && w[0] <= '9':
		return true
	case len(w) > 1 && w[0] == '.' && w[1] >= '0' && w[1] <= '9':
		return true
	}
	return false
}

func matchNoToken(words []string, a *cmdArg) int {
	switch a.typ {
	case argBlock:
		a.matched += matchArgs(words, a.sub)
		a.matchedAll = true
		for _, s := range a.sub {
			if !s.matchedAll {
				a.matchedAll = false
			}
		}
	case argOneOf:
		for _, s := range a.sub {
			if matchArg(words, s) != 0 {
				a.matched += s.matched
				a.matchedAll = s.matchedAll
				break
			}
		}
	case argInteger, argUnixTime:
		if scanInt(words[0]) {
			a.matched++
			a.matchedName, a.matchedAll = true, true
		} else {
			a.matched, a.matchedName = 0, false
		}
	case argDouble:
		if scanDouble(words[0]) {
			a.matched++
			a.matchedName, a.matchedAll = true, true
		} else {
			a.matched, a.matchedName = 0, false
		}
	default:
		a.matched++
		a.matchedName, a.matchedAll = true, true
	}
	return a.matched
}

func matchToken(word string, a *cmdArg) bool {
	if !strings.EqualFold(a.token, word) {
		return false
	}
	a.matchedToken = true
	a.matched = 1
	return true
}

func matchArgOnce(words []string, a *cmdArg) int {
	if a.hasToken {
		if !matchToken(words[0], a) {
			return 0
		}
		if a.typ == argPureToken {
			a.matchedAll = true
			return 1
		}
		if len(words) == 1 {
			return 1
		}
		words = words[1:]
	}
	if matchNoToken(words, a) == 0 {
		return 0
	}
	return a.matched
}

func matchArg(words []string, a *cmdArg) int {
	once := matchArgOnce(words, a)
	if a.flags&flagMultiple == 0 {
		return once
	}
	matched := once
	for a.matchedAll && matched < len(words) {
		clearMatched([]*cmdArg{a})
		if a.hasToken && a.flags&flagMultipleToken == 0 {
			// The token appears only the first time.
			once = matchNoToken(words[matched:], a)
			if a.matched != 0 {
				a.matchedToken = true
			}
		} else {
			once = matchArgOnce(words[matched:], a)
		}
		matched += once
	}
	a.matchedAll = false // more repetitions are possible
	return matched
}

func matchOneOptional(words []string, args []*cmdArg) (int, int) {
	for next := range args {
		if args[next].matched != 0 {
			continue
		}
		if m := matchArg(words, args[next]); m != 0 {
			return m, next
		}
	}
	return 0, -1
}

func matchOptionals(words []string, args []*cmdArg) int {
	next, last := 0, -1
	for next != len(words) {
		m, which := matchOneOptional(words[next:], args)
		if m == 0 {
			break
		}
		if last != -1 {
			args[last].matchedAll = true
		}
		last = which
		next += m
	}
	return next
}

// matchArgs matches as many input words as possible against args and returns
// how many it matched (0 when a required argument does not match).
func matchArgs(words []string, args []*cmdArg) int {
	next := 0
	for i := 0; next != len(words) && i < len(args); i++ {
		var m int
		if args[i].flags&flagOptional != 0 {
			last := i
			for last < len(args) && args[last].flags&flagOptional != 0 {
				last++
			}
			m = matchOptionals(words[next:], args[i:last])
			i = last - 1
		} else {
			m = matchArg(words[next:], args[i])
			if m == 0 {
				return 0
			}
		}
		next += m
	}
	return next
}
