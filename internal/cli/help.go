package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Argument types and flags of COMMAND DOCS "arguments".
type argType uint8

const (
	argString argType = iota
	argInteger
	argDouble
	argKey
	argPattern
	argUnixTime
	argPureToken
	argOneOf
	argBlock
)

const (
	flagOptional = 1 << iota
	flagMultiple
	flagMultipleToken
)

// cmdArg is one argument of a command's documented syntax, with the matching
// state the hint builder keeps while it walks the typed words.
type cmdArg struct {
	name, display, token string
	hasToken             bool
	typ                  argType
	flags                int
	sub                  []*cmdArg

	matched                               int
	matchedToken, matchedName, matchedAll bool
}

// helpEntry is a command (or subcommand) or a group, as redis-cli's help table.
type helpEntry struct {
	group bool
	argv  []string // upper-case words: ["GET"], ["CLIENT", "LIST"], ["@string"]
	full  string   // "CLIENT LIST", "@string"

	// commands only
	params  string // the argument syntax, e.g. "key [key ...]"
	args    []*cmdArg
	hasArgs bool
	hasSubs bool // a container command (CLIENT, OBJECT...)
	summary string
	since   string
	grp     string
}

// Help is the table of commands and groups behind help, completion and
// hints, built from the server's COMMAND DOCS.
type Help struct {
	entries []*helpEntry // sorted by full name; groups ("@...") first
}

// LoadHelp builds the help table from the server's COMMAND DOCS. When the
// server documents no "arguments" for any command, the syntax shown is
// derived from COMMAND's arity and key positions (as redis-cli does for
// servers without COMMAND DOCS): "key arg ...options...".
func LoadHelp(c *Conn) (*Help, error) {
	docs, err := c.Do("COMMAND", "DOCS")
	if err != nil {
		return nil, err
	}
	if docs.Kind == KindError {
		return nil, fmt.Errorf("%s", docs.Str)
	}
	h := BuildHelp(docs)
	if h.needsLegacy() {
		if info, err := c.Do("COMMAND"); err == nil && info.Kind == KindArray {
			h.addLegacyParams(info)
		}
	}
	return h, nil
}

// BuildHelp builds the table from a COMMAND DOCS reply (RESP2 or RESP3).
func BuildHelp(docs *Reply) *Help {
	h := &Help{}
	groups := map[string]bool{}
	for i := 0; i+1 < len(docs.Elems); i += 2 {
		name := string(docs.Elems[i].Str)
		h.addCommand(name, "", docs.Elems[i+1], groups)
	}
	for g := range groups {
		h.entries = append(h.entries, &helpEntry{group: true, argv: []string{"@" + g}, full: "@" + g})
	}
	sort.Slice(h.entries, func(i, j int) bool { return h.entries[i].full < h.entries[j].full })
	return h
}

func (h *Help) addCommand(name, sub string, specs *Reply, groups map[string]bool) {
	e := &helpEntry{argv: []string{strings.ToUpper(name)}}
	if sub != "" {
		if p := strings.IndexByte(sub, '|'); p >= 0 {
			sub = sub[p+1:]
		}
		e.argv = append(e.argv, strings.ToUpper(sub))
	}
	e.full = strings.Join(e.argv, " ")
	h.entries = append(h.entries, e)
	for j := 0; j+1 < len(specs.Elems); j += 2 {
		v := specs.Elems[j+1]
		switch string(specs.Elems[j].Str) {
		case "summary":
			e.summary = string(v.Str)
		case "since":
			e.since = string(v.Str)
		case "group":
			e.grp = string(v.Str)
			groups[e.grp] = true
		case "arguments":
			e.args = makeArgs(v)
			e.hasArgs = true
			e.params = makeHint(nil, 0, e)
		case "subcommands":
			e.hasSubs = true
			for k := 0; k+1 < len(v.Elems); k += 2 {
				h.addCommand(name, string(v.Elems[k].Str), v.Elems[k+1], groups)
			}
		}
	}
}

func makeArgs(list *Reply) []*cmdArg {
	args := make([]*cmdArg, 0, len(list.Elems))
	for _, m := range list.Elems {
		a := &cmdArg{}
		for i := 0; i+1 < len(m.Elems); i += 2 {
			v := m.Elems[i+1]
			switch string(m.Elems[i].Str) {
			case "name":
				a.name = string(v.Str)
			case "display_text":
				a.display = string(v.Str)
			case "token":
				a.token, a.hasToken = string(v.Str), true
			case "type":
				a.typ = map[string]argType{"string": argString, "integer": argInteger, "double": argDouble,
					"key": argKey, "pattern": argPattern, "unix-time": argUnixTime, "pure-token": argPureToken,
					"oneof": argOneOf, "block": argBlock}[string(v.Str)]
			case "arguments":
				a.sub = makeArgs(v)
			case "flags":
				for _, f := range v.Elems {
					switch string(f.Str) {
					case "optional":
						a.flags |= flagOptional
					case "multiple":
						a.flags |= flagMultiple
					case "multiple_token":
						a.flags |= flagMultipleToken
					}
				}
			}
		}
		args = append(args, a)
	}
	return args
}

// needsLegacy reports a server that documents no arguments at all (HotKV
// today). A server that documents some has commands that take none.
func (h *Help) needsLegacy() bool {
	for _, e := range h.entries {
		if e.hasArgs {
			return false
		}
	}
	return true
}

// addLegacyParams fills the syntax of undocumented commands from a COMMAND
// reply: arity and first key (redis-cli's cliLegacyIntegrateHelp).
func (h *Help) addLegacyParams(info *Reply) {
	byName := map[string]*helpEntry{}
	for _, e := range h.entries {
		if !e.group {
			byName[strings.ToLower(strings.Join(e.argv, "|"))] = e
		}
	}
	var walk func(list *Reply, words int)
	walk = func(list *Reply, words int) {
		for _, ci := range list.Elems {
			if ci.Kind != KindArray || len(ci.Elems) < 4 || ci.Elems[1].Kind != KindInteger || ci.Elems[3].Kind != KindInteger {
				continue
			}
			name := strings.ToLower(string(ci.Elems[0].Str))
			if e := byName[name]; e != nil && !e.hasArgs && !e.hasSubs {
				arity := ci.Elems[1].Int
				n := arity
				if n < 0 {
					n = -n
				}
				n -= int64(words)
				var b strings.Builder
				if ci.Elems[3].Int == int64(words) && n > 0 {
					b.WriteString("key ")
					n--
				}
				for ; n > 0; n-- {
					b.WriteString("arg ")
				}
				if arity < 0 {
					b.WriteString("...options...")
				}
				e.params = strings.TrimRight(b.String(), " ")
			}
			if len(ci.Elems) >= 10 && ci.Elems[9].Kind == KindArray {
				walk(ci.Elems[9], words+1)
			}
		}
	}
	walk(info, 1)
}

// groupNames lists the groups, for tests and "help" completion.
func (h *Help) groupNames() []string {
	var g []string
	for _, e := range h.entries {
		if e.group {
			g = append(g, e.full)
		}
	}
	return g
}

// WriteHelp prints "help", "help <command> [<subcommand>]" or "help @<group>"
// as redis-cli does (cliOutputHelp).
func (h *Help) WriteHelp(w io.Writer, args []string) {
	if len(args) == 0 {
		fmt.Fprintf(w, "hotkv-cli %s\n"+
			"To get help about HotKV commands type:\n"+
			"      \"help @<group>\" to get a list of commands in <group>\n"+
			"      \"help <command>\" for help on <command>\n"+
			"      \"help <tab>\" to get a list of possible help topics\n"+
			"\n"+
			"To learn the lock recipe step by step, run \"hotkv-cli tour locks\".\n"+
			"\n"+
			"Commands used only in hotkv-cli:\n"+
			"      \"quit\" or \"exit\" to exit\n"+
			"      \"connect <host> <port>\" to connect to another server\n"+
			"      \"clear\" to clear the screen\n"+
			"\n"+
			"To set hotkv-cli preferences:\n"+
			"      \":set hints\" enable online hints\n"+
			"      \":set nohints\" disable online hints\n", Version)
		return
	}
	if h == nil {
		fmt.Fprint(w, "\r\n")
		return
	}
	group := ""
	if strings.HasPrefix(args[0], "@") {
		group = args[0][1:]
	}
	for _, e := range h.entries {
		if e.group {
			continue
		}
		if group == "" {
			if len(args) <= len(e.argv) {
				j := 0
				for ; j < len(args); j++ {
					if !strings.EqualFold(args[j], e.argv[j]) {
						break
					}
				}
				if j == len(args) {
					e.write(w, true)
				}
			}
		} else if strings.EqualFold(group, e.grp) {
			e.write(w, false)
		}
	}
	fmt.Fprint(w, "\r\n")
}

func (e *helpEntry) write(w io.Writer, withGroup bool) {
	fmt.Fprintf(w, "\r\n  \x1b[1m%s\x1b[0m \x1b[90m%s\x1b[0m\r\n", e.full, e.params)
	fmt.Fprintf(w, "  \x1b[33msummary:\x1b[0m %s\r\n", e.summary)
	if e.since != "" {
		fmt.Fprintf(w, "  \x1b[33msince:\x1b[0m %s\r\n", e.since)
	}
	if withGroup {
		fmt.Fprintf(w, "  \x1b[33mgroup:\x1b[0m %s\r\n", e.grp)
	}
}

// Complete returns the completions of line, whole lines as redis-cli's
// completion callback builds them: command names, and after "help " also
// groups. Names come in the case of what was typed (lower case if the typed
// word is all lower case).
func (h *Help) Complete(line string) []string {
	if h == nil {
		return nil
	}
	start := 0
	groups := false
	if len(line) >= 5 && strings.EqualFold(line[:5], "help ") {
		start = 5
		for start < len(line) && isSpace(line[start]) {
			start++
		}
		groups = true
	}
	typed := line[start:]
	lowerCase := typed != "" && typed == strings.ToLower(typed) && typed != strings.ToUpper(typed)
	var out []string
	for _, e := range h.entries {
		if e.group && !groups {
			continue
		}
		if len(e.full) >= len(typed) && strings.EqualFold(e.full[:len(typed)], typed) {
			name := e.full
			if lowerCase {
				name = strings.ToLower(name)
			}
			out = append(out, line[:start]+name)
		}
	}
	return out
}
