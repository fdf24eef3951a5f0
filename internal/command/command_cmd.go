package command

import (
	"strings"

	"github.com/hotkv/hotkv/internal/glob"
)

// COMMAND and its subcommands, all derived from the table.

func commandSubcommands() []*Spec {
	f := Loading | Stale
	return []*Spec{
		{Name: "count", Arity: 2, Flags: f, Run: commandCount},
		{Name: "docs", Arity: -2, Flags: f, Tips: []string{"nondeterministic_output_order"}, Run: commandDocs},
		{Name: "getkeys", Arity: -3, Flags: f, Run: commandGetkeys},
		{Name: "getkeysandflags", Arity: -3, Flags: f, Run: commandGetkeysAndFlags},
		{Name: "help", Arity: 2, Flags: f, Run: commandHelp},
		{Name: "info", Arity: -2, Flags: f, Tips: []string{"nondeterministic_output_order"}, Run: commandInfo},
		{Name: "list", Arity: -2, Flags: f, Tips: []string{"nondeterministic_output_order"}, Run: commandList},
	}
}

// commandCmd is COMMAND with no subcommand: COMMAND INFO for every command.
func commandCmd(c *Ctx) {
	all := c.Srv.Table().All()
	c.W.ArrayLen(len(all))
	for _, s := range all {
		writeCommandInfo(c, s)
	}
}

func commandCount(c *Ctx) { c.W.Int(int64(c.Srv.Table().Len())) }

func commandInfo(c *Ctx) {
	t := c.Srv.Table()
	if len(c.Argv) == 2 {
		commandCmd(c)
		return
	}
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, name := range c.Argv[2:] {
		s := lookupFull(t, name)
		if s == nil {
			c.W.Null()
			continue
		}
		writeCommandInfo(c, s)
	}
}

// lookupFull finds "get" or "config|get".
func lookupFull(t *Table, name []byte) *Spec {
	if i := strings.IndexByte(string(name), '|'); i > 0 {
		p := t.Lookup(name[:i])
		if p == nil {
			return nil
		}
		return p.Sub(name[i+1:])
	}
	return t.Lookup(name)
}

// aclCategories derives a command's ACL categories from its group and flags, in
// the order of Redis's ACL category table (keyspace, read, write, ..., dangerous,
// connection).
func aclCategories(s *Spec) []string {
	if s.ACL != nil {
		return s.ACL
	}
	if len(s.Subs) > 0 && s.Run == nil {
		return []string{"@slow"} // a container is only its subcommands' door
	}
	var out []string
	if s.Group == "generic" {
		out = append(out, "@keyspace")
	}
	// scripts declare no access of their own: EVAL_RO is readonly but not @read
	if s.Flags&ReadOnly != 0 && s.Group != "scripting" {
		out = append(out, "@read")
	}
	if s.Flags&Write != 0 {
		out = append(out, "@write")
	}
	switch s.Group {
	case "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog", "geo", "stream":
		out = append(out, "@"+s.Group)
	case "pubsub":
		if s.Flags&PubSub != 0 { // not PUBSUB HELP
			out = append(out, "@pubsub")
		}
	}
	if s.Group == "sorted-set" {
		out = append(out, "@sortedset")
	}
	if s.Flags&Admin != 0 {
		out = append(out, "@admin")
	}
	if s.Flags&Fast != 0 {
		out = append(out, "@fast")
	} else {
		out = append(out, "@slow")
	}
	if s.Flags&Blocking != 0 {
		out = append(out, "@blocking")
	}
	if s.Flags&Admin != 0 {
		out = append(out, "@dangerous")
	}
	if s.Group == "transactions" {
		out = append(out, "@transaction")
	}
	if s.Group == "scripting" {
		out = append(out, "@scripting")
	}
	if s.Group == "connection" || (s.Parent() != nil && s.Parent().Name == "command") || s.Name == "command" {
		out = append(out, "@connection")
	}
	return out
}

func writeCommandInfo(c *Ctx, s *Spec) {
	w := c.W
	w.ArrayLen(10)
	w.BulkString(s.FullName())
	w.Int(int64(s.Arity))
	flags := s.Flags.Names()
	if s.KeysFn != nil {
		// Redis flags commands whose keys need a getkeys function (numkeys) as
		// movablekeys, after no_multi and before allow_busy
		at := len(flags)
		if at > 0 && flags[at-1] == "allow_busy" {
			at--
		}
		flags = append(flags[:at:at], append([]string{"movablekeys"}, flags[at:]...)...)
	}
	w.SetLen(len(flags))
	for _, f := range flags {
		w.SimpleString(f)
	}
	w.Int(int64(s.FirstKey))
	w.Int(int64(s.LastKey))
	w.Int(int64(s.Step))
	cats := aclCategories(s)
	w.SetLen(len(cats))
	for _, cat := range cats {
		w.SimpleString(cat)
	}
	w.SetLen(len(s.Tips)) // tips, key specs and no subcommands: sets, as Redis's
	for _, tip := range s.Tips {
		w.BulkString(tip)
	}
	writeKeySpecs(c, s)
	if len(s.Subs) == 0 {
		w.SetLen(0)
		return
	}
	w.ArrayLen(len(s.Subs))
	for _, sub := range s.Subs {
		writeCommandInfo(c, sub)
	}
}

// writeKeySpecs writes the command's key specs (Redis 7 format).
func writeKeySpecs(c *Ctx, s *Spec) {
	w := c.W
	specs := s.KeySpecs()
	w.SetLen(len(specs))
	for _, ks := range specs {
		if ks.Notes != "" {
			w.MapLen(4)
			w.BulkString("notes")
			w.BulkString(ks.Notes)
		} else {
			w.MapLen(3)
		}
		w.BulkString("flags")
		flags := ks.FlagList()
		w.SetLen(len(flags))
		for _, f := range flags {
			w.SimpleString(f)
		}
		w.BulkString("begin_search")
		w.MapLen(2)
		w.BulkString("type")
		if ks.Unknown {
			w.BulkString("unknown")
			w.BulkString("spec")
			w.MapLen(0)
			w.BulkString("find_keys")
			w.MapLen(2)
			w.BulkString("type")
			w.BulkString("unknown")
			w.BulkString("spec")
			w.MapLen(0)
			continue
		}
		if ks.Keyword != "" {
			w.BulkString("keyword")
			w.BulkString("spec")
			w.MapLen(2)
			w.BulkString("keyword")
			w.BulkString(ks.Keyword)
			w.BulkString("startfrom")
			w.Int(int64(ks.Begin))
		} else {
			w.BulkString("index")
			w.BulkString("spec")
			w.MapLen(1)
			w.BulkString("index")
			w.Int(int64(ks.Begin))
		}
		w.BulkString("find_keys")
		w.MapLen(2)
		w.BulkString("type")
		if ks.Keynum {
			w.BulkString("keynum")
			w.BulkString("spec")
			w.MapLen(3)
			w.BulkString("keynumidx")
			w.Int(0)
			w.BulkString("firstkey")
			w.Int(1)
			w.BulkString("keystep")
			w.Int(int64(ks.Step))
			continue
		}
		w.BulkString("range")
		w.BulkString("spec")
		w.MapLen(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.Last))
		w.BulkString("keystep")
		w.Int(int64(ks.Step))
		w.BulkString("limit")
		w.Int(int64(ks.Limit))
	}
}

func commandDocs(c *Ctx) {
	t := c.Srv.Table()
	var specs []*Spec
	if len(c.Argv) == 2 {
		specs = t.All()
	} else {
		for _, n := range c.Argv[2:] {
			if s := lookupFull(t, n); s != nil {
				specs = append(specs, s)
			}
		}
	}
	c.W.MapLen(len(specs))
	for _, s := range specs {
		c.W.BulkString(s.FullName())
		writeDoc(c, s)
	}
}

// commandList: COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|PATTERN pattern].
func commandList(c *Ctx) {
	var filter func(s *Spec) bool
	switch len(c.Argv) {
	case 2:
	case 5:
		if !eqFold(c.Argv[2], "filterby") {
			c.Err(ErrSyntax)
			return
		}
		arg := string(c.Argv[4])
		switch {
		case eqFold(c.Argv[3], "module"):
			filter = func(*Spec) bool { return false }
		case eqFold(c.Argv[3], "aclcat"):
			cat := "@" + strings.ToLower(arg)
			filter = func(s *Spec) bool {
				for _, x := range aclCategories(s) {
					if x == cat {
						return true
					}
				}
				return false
			}
		case eqFold(c.Argv[3], "pattern"):
			filter = func(s *Spec) bool { return glob.MatchString(arg, s.FullName(), true) }
		default:
			c.Err(ErrSyntax)
			return
		}
	default:
		c.Err(ErrSyntax)
		return
	}
	var names []string
	for _, s := range c.Srv.Table().All() {
		if filter == nil || filter(s) {
			names = append(names, s.FullName())
		}
		for _, sub := range s.Subs {
			if filter == nil || filter(sub) {
				names = append(names, sub.FullName())
			}
		}
	}
	c.W.ArrayLen(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// getkeysSpec resolves the command named in COMMAND GETKEYS and checks its arity.
func getkeysSpec(c *Ctx) (*Spec, [][]byte) {
	argv := c.Argv[2:]
	s := c.Srv.Table().Lookup(argv[0])
	if s != nil && len(s.Subs) > 0 && len(argv) > 1 {
		if sub := s.Sub(argv[1]); sub != nil {
			s = sub
		}
	}
	if s == nil {
		c.Error("ERR Invalid command specified")
		return nil, nil
	}
	if s.FirstKey == 0 && s.KeysFn == nil {
		c.Error("ERR The command has no key arguments")
		return nil, nil
	}
	if !CheckArity(s.Arity, len(argv)) {
		c.Error("ERR Invalid number of arguments specified for command")
		return nil, nil
	}
	idx := s.KeyIndexes(argv)
	if len(idx) == 0 {
		if s.Flags&NoMandatoryKeys != 0 { // EVAL ... 0: no keys is no error
			return s, [][]byte{}
		}
		c.Error("ERR Invalid arguments specified for command")
		return nil, nil
	}
	keys := make([][]byte, len(idx))
	for i, k := range idx {
		keys[i] = argv[k]
	}
	return s, keys
}

func commandGetkeys(c *Ctx) {
	_, keys := getkeysSpec(c)
	if keys == nil {
		return
	}
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

func commandGetkeysAndFlags(c *Ctx) {
	s, keys := getkeysSpec(c)
	if keys == nil {
		return
	}
	argv := c.Argv[2:]
	idx := s.KeyIndexes(argv)
	c.W.ArrayLen(len(keys))
	for i, k := range keys {
		c.W.ArrayLen(2)
		c.W.Bulk(k)
		flags := s.KeyFlagsAt(argv, idx[i])
		c.W.SetLen(len(flags))
		for _, f := range flags {
			c.W.SimpleString(f)
		}
	}
}

func commandHelp(c *Ctx) {
	writeHelp(c, "COMMAND",
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	)
}
