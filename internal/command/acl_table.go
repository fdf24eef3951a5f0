package command

import (
	"strings"

	"github.com/hotkv/hotkv/internal/acl"
)

// ACLCommands is the table as ACL sees it: every command and subcommand
// with its categories (those COMMAND INFO lists), where its keys are and how
// it uses them (its key specs), and its channel arguments.
func (t *Table) ACLCommands() *acl.Commands {
	top := make([]*acl.Command, 0, len(t.list))
	for _, s := range t.list {
		c := aclCommand(s)
		for _, sub := range s.Subs {
			c.Subs = append(c.Subs, aclCommand(sub))
		}
		top = append(top, c)
	}
	return acl.NewCommands(top, t.NumIDs())
}

func aclCommand(s *Spec) *acl.Command {
	c := &acl.Command{ID: s.ID, Name: s.FullName(), NoAuth: s.Flags&NoAuth != 0}
	for _, cat := range aclCategories(s) {
		c.Categories |= acl.CategoryFlag(strings.TrimPrefix(cat, "@"))
	}
	// keys, unless the first key spec names none (a shard channel is a
	// "not_key": Redis's doesCommandHaveKeys)
	if specs := s.KeySpecs(); (s.FirstKey != 0 || s.KeysFn != nil) && !(len(specs) > 0 && strings.Contains(specs[0].Flags, "not_key")) {
		c.Keys = aclKeys(s)
	}
	c.Channels = aclChannels(s.FullName())
	return c
}

// aclKeys gives the keys of a call of s with the flags of its key specs.
func aclKeys(s *Spec) func(argv [][]byte, buf []acl.KeyRef) []acl.KeyRef {
	static, fixed := acl.KeyFlags(0), s.KeyFlagsFn == nil && len(s.KeySpecs()) == 1
	if fixed {
		static = aclKeyFlags(s.KeySpecs()[0].FlagList())
	}
	flagsAt := func(argv [][]byte, i int) acl.KeyFlags {
		if fixed {
			return static
		}
		return aclKeyFlags(s.KeyFlagsAt(argv, i))
	}
	return func(argv [][]byte, buf []acl.KeyRef) []acl.KeyRef {
		if !CheckArity(s.Arity, len(argv)) { // redis.acl_check_cmd checks no arity
			return buf
		}
		if first, last, step, ok := s.KeyRange(len(argv)); ok {
			for i := first; i <= last; i += step {
				buf = append(buf, acl.KeyRef{Pos: i, Flags: flagsAt(argv, i)})
			}
			return buf
		}
		if s.KeysFn == nil {
			return buf
		}
		for _, i := range s.KeysFn(argv) {
			buf = append(buf, acl.KeyRef{Pos: i, Flags: flagsAt(argv, i)})
		}
		return buf
	}
}

// aclKeyFlags maps key-spec flags to those a permission check reads.
func aclKeyFlags(flags []string) acl.KeyFlags {
	var f acl.KeyFlags
	for _, fl := range flags {
		switch fl {
		case "access":
			f |= acl.KeyAccess
		case "insert":
			f |= acl.KeyInsert
		case "delete":
			f |= acl.KeyDelete
		case "update":
			f |= acl.KeyUpdate
		}
	}
	return f
}

// aclChannels gives the channel arguments of the Pub/Sub commands (Redis's
// commands_with_channels), nil for the others.
func aclChannels(name string) func(argv [][]byte, buf []acl.ChanRef) []acl.ChanRef {
	var flags acl.ChanFlags
	one := false
	switch name {
	case "subscribe", "ssubscribe":
		flags = acl.ChanSubscribe
	case "unsubscribe", "sunsubscribe":
		flags = acl.ChanUnsubscribe
	case "psubscribe":
		flags = acl.ChanSubscribe | acl.ChanPattern
	case "punsubscribe":
		flags = acl.ChanUnsubscribe | acl.ChanPattern
	case "publish", "spublish":
		flags, one = acl.ChanPublish, true
	default:
		return nil
	}
	return func(argv [][]byte, buf []acl.ChanRef) []acl.ChanRef {
		end := len(argv)
		if one {
			end = min(end, 2)
		}
		for i := 1; i < end; i++ {
			buf = append(buf, acl.ChanRef{Pos: i, Flags: flags})
		}
		return buf
	}
}
