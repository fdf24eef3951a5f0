package acl

import (
	"errors"
	"strings"

	"github.com/hotkv/hotkv/internal/resp"
)

// Key permissions of a key pattern.
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

type keyPattern struct {
	pattern string
	perm    uint8
}

func (p keyPattern) String() string {
	switch p.perm {
	case permRead:
		return "%R~" + p.pattern
	case permWrite:
		return "%W~" + p.pattern
	}
	return "~" + p.pattern
}

// selector flags
const (
	selRoot = 1 << iota
	selAllKeys
	selAllChannels
	selAllCommands
)

// A Selector is one set of permissions: the commands (a bitmap by command ID,
// with allowed first arguments), key patterns and channel patterns. A user has
// a root selector and any number of others; a command runs when one of them
// allows all of it.
type Selector struct {
	flags  uint8
	future bool // +@all set it: commands added later are allowed (Redis's reserved bit)
	cmds   []uint64
	// firstArgs are the first arguments allowed of a command whose bit is
	// clear (+select|0)
	firstArgs map[int][]string
	keys      []keyPattern
	channels  []string
	// rules are the command rules in the order given, each "+name" or
	// "-name" (lower case), without those a later rule overrode: what
	// describing the selector replays after +@all or -@all
	rules []string
}

func newSelector(t *Commands, flags uint8) *Selector {
	return &Selector{flags: flags, cmds: make([]uint64, t.words())}
}

func (s *Selector) clone() *Selector {
	c := *s
	c.cmds = append([]uint64(nil), s.cmds...)
	c.keys = append([]keyPattern(nil), s.keys...)
	c.channels = append([]string(nil), s.channels...)
	c.rules = append([]string(nil), s.rules...)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for k, v := range s.firstArgs {
			c.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &c
}

func (s *Selector) bit(id int) bool {
	w := id / 64
	return w < len(s.cmds) && s.cmds[w]&(1<<(id%64)) != 0
}

func (s *Selector) setBit(id int, on bool) {
	w := id / 64
	if w >= len(s.cmds) {
		return
	}
	if on {
		s.cmds[w] |= 1 << (id % 64)
	} else {
		s.cmds[w] &^= 1 << (id % 64)
		s.flags &^= selAllCommands
	}
}

// changePerm allows or denies cmd and, for a container, all its subcommands
// (ACLChangeSelectorPerm).
func (s *Selector) changePerm(cmd *Command, allow bool) {
	s.setBit(cmd.ID, allow)
	delete(s.firstArgs, cmd.ID)
	for _, sub := range cmd.Subs {
		s.setBit(sub.ID, allow)
	}
}

func (s *Selector) setCategory(cs []*Command, flag uint64, allow bool) {
	for _, c := range cs {
		if c.Categories&flag != 0 {
			s.changePerm(c, allow)
		}
		s.setCategory(c.Subs, flag, allow)
	}
}

// updateRules records rule (a name, lower-cased here) as the latest word
// on it: earlier rules on the same name, or on a subcommand of it, go
// (ACLUpdateCommandRules).
func (s *Selector) updateRules(rule string, allow bool) {
	rule = strings.ToLower(rule)
	kept := s.rules[:0]
	for _, r := range s.rules {
		name := r[1:]
		if name == rule || len(name) > len(rule) && name[len(rule)] == '|' && name[:len(rule)] == rule {
			continue
		}
		kept = append(kept, r)
	}
	sign := "-"
	if allow {
		sign = "+"
	}
	s.rules = append(kept, sign+rule)
}

// errors of a rule, with ACLSetUserStringError's texts
var (
	errUnknown     = errors.New("Unknown command or category name in ACL")
	errSyntax      = errors.New("Syntax error")
	errKeysAll     = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChansAll    = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoPass      = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash     = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errDuplicate   = errors.New("Duplicate user found. A user can only be defined once in config files")
	errSubFirstArg = errors.New("Allowing first-arg of a subcommand is not supported")
)

// apply applies one selector rule (ACLSetSelector). warn receives Redis's
// deprecation warning for a first-argument rule.
func (s *Selector) apply(t *Commands, op string, warn func(string)) error {
	lop := strings.ToLower(op)
	switch {
	case lop == "allkeys" || op == "~*":
		s.flags |= selAllKeys
		s.keys = nil
	case lop == "resetkeys":
		s.flags &^= selAllKeys
		s.keys = nil
	case lop == "allchannels" || op == "&*":
		s.flags |= selAllChannels
		s.channels = nil
	case lop == "resetchannels":
		s.flags &^= selAllChannels
		s.channels = nil
	case lop == "allcommands" || lop == "+@all":
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.flags |= selAllCommands
		s.future = true
		s.rules = nil
		s.firstArgs = nil
	case lop == "nocommands" || lop == "-@all":
		clear(s.cmds)
		s.flags &^= selAllCommands
		s.future = false
		s.rules = nil
		s.firstArgs = nil
	case op != "" && (op[0] == '~' || op[0] == '%'):
		return s.addKeyPattern(op)
	case op != "" && op[0] == '&':
		if s.flags&selAllChannels != 0 {
			return errChansAll
		}
		if hasSpaces(op[1:]) {
			return errSyntax
		}
		pat := op[1:]
		found := false
		for _, c := range s.channels {
			if c == pat {
				found = true
				break
			}
		}
		if !found {
			s.channels = append(s.channels, pat)
		}
		s.flags &^= selAllChannels
	case len(op) >= 2 && op[0] == '+' && op[1] != '@':
		return s.allow(t, op[1:], warn)
	case len(op) >= 2 && op[0] == '-' && op[1] != '@':
		cmd := t.Lookup(op[1:])
		if cmd == nil {
			return errUnknown
		}
		s.changePerm(cmd, false)
		s.updateRules(cmd.Name, false)
	case len(op) >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		flag := CategoryFlag(op[2:])
		if flag == 0 {
			return errUnknown
		}
		s.updateRules(op[1:], op[0] == '+')
		if t != nil {
			s.setCategory(t.top, flag, op[0] == '+')
		}
	default:
		return errSyntax
	}
	return nil
}

// allow is +name, +container|sub and +command|first-arg.
func (s *Selector) allow(t *Commands, name string, warn func(string)) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		cmd := t.Lookup(name)
		if cmd == nil {
			return errUnknown
		}
		s.changePerm(cmd, true)
		s.updateRules(cmd.Name, true)
		return nil
	}
	main, sub := name[:i], name[i+1:]
	cmd := t.Lookup(main)
	switch {
	case cmd == nil:
		return errUnknown
	case cmd.Parent != nil:
		return errSubFirstArg
	case sub == "":
		return errSyntax
	}
	if len(cmd.Subs) > 0 {
		sc := t.Lookup(name)
		if sc == nil {
			return errUnknown
		}
		s.changePerm(sc, true)
	} else {
		if warn != nil {
			warn("Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may get disabled in the future (offender: +" + name + ")")
		}
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		args := s.firstArgs[cmd.ID]
		dup := false
		for _, a := range args {
			if strings.EqualFold(a, sub) {
				dup = true
				break
			}
		}
		if !dup {
			s.firstArgs[cmd.ID] = append(args, sub)
		}
	}
	s.updateRules(name, true)
	return nil
}

// addKeyPattern is ~pattern, %R~pattern, %W~pattern, %RW~pattern.
func (s *Selector) addKeyPattern(op string) error {
	if s.flags&selAllKeys != 0 {
		return errKeysAll
	}
	perm := uint8(permAll)
	off := 1
	if op[0] == '%' {
		perm = 0
		ok := true
		for ; off < len(op); off++ {
			c := op[off]
			if (c == 'R' || c == 'r') && perm&permRead == 0 {
				perm |= permRead
			} else if (c == 'W' || c == 'w') && perm&permWrite == 0 {
				perm |= permWrite
			} else if c == '~' {
				off++
				break
			} else {
				ok = false
				break
			}
		}
		if perm == 0 || !ok {
			return errSyntax
		}
	}
	pat := op[min(off, len(op)):]
	if hasSpaces(pat) {
		return errSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == pat {
			s.keys[i].perm |= perm
			s.flags &^= selAllKeys
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{pat, perm})
	s.flags &^= selAllKeys
	return nil
}

// commandRules describes the command permissions: +@all or -@all, then the
// rules (ACLDescribeSelectorCommandRules).
func (s *Selector) commandRules() string {
	var b strings.Builder
	if s.future {
		b.WriteString("+@all")
	} else {
		b.WriteString("-@all")
	}
	for _, r := range s.rules {
		b.WriteByte(' ')
		b.WriteString(r)
	}
	return b.String()
}

// KeysDescription is ACL GETUSER's "keys" field.
func (s *Selector) KeysDescription() string {
	if s.flags&selAllKeys != 0 {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// ChannelsDescription is ACL GETUSER's "channels" field.
func (s *Selector) ChannelsDescription() string {
	if s.flags&selAllChannels != 0 {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// CommandsDescription is ACL GETUSER's "commands" field.
func (s *Selector) CommandsDescription() string { return s.commandRules() }

// describe is the selector in ACL LIST's form (ACLDescribeSelector).
func (s *Selector) describe() string {
	var b strings.Builder
	if s.flags&selAllKeys != 0 {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.flags&selAllChannels != 0 {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteByte('&')
			b.WriteString(c)
			b.WriteByte(' ')
		}
	}
	b.WriteString(s.commandRules())
	return b.String()
}

// selectorFromOpSet builds a selector from "(op op ...)".
func selectorFromOpSet(t *Commands, opset string, pubsubAll bool, warn func(string)) (*Selector, error) {
	s := newSelector(t, 0)
	if pubsubAll {
		s.flags |= selAllChannels
	}
	inner := opset[1 : len(opset)-1]
	if i := strings.IndexByte(inner, 0); i >= 0 {
		inner = inner[:i] // sdssplitargs reads a C string
	}
	args, ok := resp.SplitArgs([]byte(inner))
	if !ok {
		return s, nil // sdssplitargs failing yields no arguments
	}
	for _, a := range args {
		if err := s.apply(t, string(a), warn); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// hasSpaces is ACLStringHasSpaces: C's isspace, or NUL.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}
