// Package acl is Redis 8.6's access control lists: users, their passwords and
// selectors (which commands, keys and channels they may use), the rule grammar
// of ACL SETUSER and the ACL file, the permission check the admission gate
// runs for every command, and the ACL log (decision 0046).
//
// It is a core package: it knows the command table only through Commands,
// which the command package builds from its table (categories, key and
// channel positions), reads no clock (times are arguments) and does no
// network I/O. Everything in it runs under the engine lock: users are changed
// in place, so a connection authenticated as a user sees a changed user's
// rules at its next command, as in Redis.
package acl

import "strings"

// Reason is why a check denied (Redis's ACL_DENIED_*). The order matters:
// when no selector allows a command, the denial reported is the highest.
type Reason int

const (
	OK Reason = iota
	DeniedCmd
	DeniedKey
	DeniedAuth // only in the log
	DeniedChannel
	DeniedTLSCert // only in the log
)

// Context is where a denied command ran (Redis's ACL_LOG_CTX_*).
type Context int

const (
	CtxToplevel Context = iota
	CtxLua
	CtxMulti
	CtxModule
)

// categoryNames are Redis's ACL categories in its order: category i is bit i.
var categoryNames = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// Categories lists the category names in Redis's order (ACL CAT).
func Categories() []string { return categoryNames }

// CategoryFlag is the bit of the named category (any case, no '@'), or 0.
func CategoryFlag(name string) uint64 {
	for i, n := range categoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i
		}
	}
	return 0
}

// KeyFlags are the key-spec flags a permission check uses (Redis's
// CMD_KEY_ACCESS, _INSERT, _DELETE, _UPDATE): access needs a read
// permission, the others a write permission.
type KeyFlags uint8

const (
	KeyAccess KeyFlags = 1 << iota
	KeyInsert
	KeyDelete
	KeyUpdate
)

// KeyRef is one key of a call: its argv position and flags.
type KeyRef struct {
	Pos   int
	Flags KeyFlags
}

// ChanFlags say how a command uses a channel argument.
type ChanFlags uint8

const (
	ChanSubscribe ChanFlags = 1 << iota
	ChanPublish
	ChanUnsubscribe
	ChanPattern
)

// ChanRef is one channel argument of a call.
type ChanRef struct {
	Pos   int
	Flags ChanFlags
}

// Command is a command or subcommand as ACL sees it.
type Command struct {
	ID         int    // the command table's dense ID: the bit in a selector's bitmap
	Name       string // full name, lower case: "get", "client|kill"
	Categories uint64 // CategoryFlag bits
	NoAuth     bool   // runs without authentication (AUTH, HELLO): never denied
	Parent     *Command
	Subs       []*Command
	// Keys appends the keys of a call to buf (nil for a command without keys).
	Keys func(argv [][]byte, buf []KeyRef) []KeyRef
	// Channels appends the channel arguments of a call to buf (nil: none).
	Channels func(argv [][]byte, buf []ChanRef) []ChanRef

	subs map[string]*Command
}

// Commands is the command table as ACL sees it, by name and in table order.
type Commands struct {
	top    []*Command
	byName map[string]*Command
	byID   []*Command
	n      int
}

// NewCommands indexes the top-level commands top (their Subs filled in) of
// a table with numIDs IDs.
func NewCommands(top []*Command, numIDs int) *Commands {
	t := &Commands{top: top, byName: make(map[string]*Command, len(top)), byID: make([]*Command, numIDs), n: numIDs}
	for _, c := range top {
		t.byName[c.Name] = c
		t.byID[c.ID] = c
		if len(c.Subs) > 0 {
			c.subs = make(map[string]*Command, len(c.Subs))
			for _, s := range c.Subs {
				s.Parent = c
				c.subs[s.Name[strings.IndexByte(s.Name, '|')+1:]] = s
				t.byID[s.ID] = s
			}
		}
	}
	return t
}

// ByID is the command with the table's dense ID id.
func (t *Commands) ByID(id int) *Command { return t.byID[id] }

// Lookup finds "name" or "name|sub" (any case), as Redis's ACLLookupCommand.
func (t *Commands) Lookup(name string) *Command {
	if t == nil {
		return nil
	}
	name = strings.ToLower(name)
	main, sub, hasSub := strings.Cut(name, "|")
	c := t.byName[main]
	if c == nil || !hasSub {
		return c
	}
	if c.subs == nil {
		return nil
	}
	return c.subs[sub]
}

// InCategory lists the full names of the commands and subcommands in the
// category flag, in table order (ACL CAT category).
func (t *Commands) InCategory(flag uint64) []string {
	var out []string
	var walk func(cs []*Command)
	walk = func(cs []*Command) {
		for _, c := range cs {
			if c.Categories&flag != 0 {
				out = append(out, c.Name)
			}
			walk(c.Subs)
		}
	}
	if t != nil {
		walk(t.top)
	}
	return out
}

func (t *Commands) words() int {
	if t == nil {
		return 0
	}
	return (t.n + 63) / 64
}
