// Package command declares every HotKV command once, in one table, and implements
// each Redis command group in its own file (string.go, generic.go, ...).
// Everything else — arity and unknown-command errors, COMMAND and its subcommands,
// key extraction, readonly routing — is derived from the table (docs/ARCHITECTURE.md §3).
//
// Handlers contain mechanics only: the server's admission gate (admit) has
// already checked arity, auth, MULTI state, pub/sub mode and every other policy
// before Run is called (by the server's call, the one place handlers run), and
// the engine holds its serialisation point and has frozen now for the execution
// unit.
package command

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Flag is a command flag as COMMAND INFO reports it.
type Flag uint32

// Command flags (Redis's names, in COMMAND INFO order).
const (
	Write Flag = 1 << iota
	ReadOnly
	DenyOOM
	Module
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Fast
	NoAuth
	MayReplicate
	NoMandatoryKeys
	NoMulti
	AllowBusy
	NoAsyncLoading
	Asking
	// The flags below are HotKV's own: COMMAND INFO does not list them. They
	// are the properties that Redis's processCommand, call() and friends test
	// by comparing command procedures (c->cmd->proc == execCommand, ...): here
	// the table states them, and the execution path asks the table.

	// RunsInMulti: the command runs at once inside MULTI instead of being
	// queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
	RunsInMulti
	// EndsMulti: the command ends a transaction or the connection (EXEC,
	// DISCARD, QUIT, RESET); inside MULTI it is not refused when out of
	// memory, as queuing is.
	EndsMulti
	// RunsCommands: the command is an execution unit of other commands (EXEC,
	// the EVAL and FCALL families). It never propagates itself, only the
	// effects of what it runs; whether it writes or may be refused when out
	// of memory depends on what it runs; it is not a tracked read itself.
	RunsCommands
	// PushReply: the command's reply is the push confirmation of each channel
	// ((P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE: Redis's cmdHasPushAsReply); CLIENT
	// REPLY OFF|SKIP does not drop it.
	PushReply
	// SubscribedOK: a RESP2 client with subscriptions may send the command.
	SubscribedOK
	// TouchesArbitraryKeys: the command may lazily expire keys it was not
	// given (SCAN, RANDOMKEY: Redis's CMD_TOUCHES_ARBITRARY_KEYS).
	TouchesArbitraryKeys
	// Protected: the command is gated by the parameter its Spec's Gate
	// names (Redis's CMD_PROTECTED: DEBUG by enable-debug-command, MODULE
	// LOAD, LOADEX and UNLOAD by enable-module-command).
	Protected
	// HealthCheck: refused with MISCONF while writes are, though it writes
	// nothing (PING, as Redis's processCommand does).
	HealthCheck
	// KeepsCaching, on a container: its subcommands (CLIENT's) leave CLIENT
	// CACHING's one-command yes in place for the next command.
	KeepsCaching
	// ReportsMemory: the command reports used memory (INFO, MEMORY STATS,
	// MEMORY DOCTOR). With maxmemory set, the eviction pass before it acts
	// on the figure the report will show (the estimate settled by a GC on a
	// small heap), so that the report does not read over the limit an
	// eviction on that figure would have kept it under.
	ReportsMemory
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{Write, "write"}, {ReadOnly, "readonly"}, {DenyOOM, "denyoom"}, {Module, "module"},
	{Admin, "admin"}, {PubSub, "pubsub"}, {NoScript, "noscript"}, {Blocking, "blocking"},
	{Loading, "loading"}, {Stale, "stale"}, {SkipMonitor, "skip_monitor"},
	{SkipSlowlog, "skip_slowlog"}, {Asking, "asking"}, {Fast, "fast"}, {NoAuth, "no_auth"},
	// MayReplicate is not listed: Redis hides it on purpose (addReplyCommandFlags)
	{NoMandatoryKeys, "no_mandatory_keys"}, {NoAsyncLoading, "no_async_loading"}, {NoMulti, "no_multi"}, {AllowBusy, "allow_busy"},
}

// Names lists the flag names of f in COMMAND INFO order.
func (f Flag) Names() []string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// Spec declares one command or subcommand.
type Spec struct {
	Name     string // lower case; subcommands: "client|list" is derived, Name is "list"
	Arity    int    // Redis convention: n exactly n words, -n at least n
	Flags    Flag
	FirstKey int // 0: no keys
	LastKey  int // -1: last argument
	Step     int
	Group    string // redis.io group: string, generic, connection, server, list, hash
	// Since and Summary come from the command's COMMAND DOCS entry
	// (fillFromDocs); a Spec states them only where HotKV's differ.
	Since   string
	Summary string
	Run     func(c *Ctx)
	Subs    []*Spec // subcommands; Run of the parent is then unused
	// KeyFlags are the key spec flags of the single derived key spec (default
	// "RW update" for writes, "RO access" for reads).
	KeyFlags string
	// Keys declares the key specs of commands with more than one (RENAME, COPY).
	Keys []KeySpec
	// KeyFlagsFn gives the flags of the key of a command whose key spec has
	// variable_flags (SET, DELEX, BITFIELD): what its arguments make of it
	// (Redis's getkeys procs setGetKeys, delexGetKeys, bitfieldGetKeys), for
	// COMMAND GETKEYSANDFLAGS.
	KeyFlagsFn func(argv [][]byte) []string
	// ScriptArg says what argv[1] names for a command that runs a script
	// (EVAL: its body, EVALSHA: its SHA1, FCALL: a function): admission
	// judges such a command by the script's flags (Redis's getCommandFlags).
	ScriptArg ScriptArg
	// Gate is the parameter that allows a Protected command ("yes", or
	// "local" for a loopback client), and the command's name in the refusal.
	Gate *Gate
	// KeysFn extracts key positions for commands whose keys aren't a simple range
	// (e.g. MSETEX numkeys). It returns indexes into argv.
	KeysFn func(argv [][]byte) []int
	// ACL lists the command's ACL categories when they cannot be derived from
	// Group and Flags (SORT is in the generic group but not @keyspace).
	ACL []string
	// Tips are Redis's command tips as COMMAND INFO lists them (e.g.
	// "nondeterministic_output").
	Tips []string

	// ID is a dense index (0..Table.NumIDs()-1) assigned when the table is built,
	// for per-command statistics kept in slices.
	ID int

	parent  *Spec
	subByLC map[string]*Spec
}

// Gate is what allows a Protected command: a parameter and the name the
// refusal gives the command.
type Gate struct {
	Param, Command string
}

// Refusal is Redis's reply to a Protected command the parameter refuses.
func (g *Gate) Refusal() string {
	return "ERR " + g.Command + " command not allowed. If the " + g.Param + " option is set to \"local\", " +
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
		"and then restart the server."
}

var (
	debugGate  = &Gate{Param: "enable-debug-command", Command: "DEBUG"}
	moduleGate = &Gate{Param: "enable-module-command", Command: "MODULE"}
)

// ScriptArg is what a script command's first argument names.
type ScriptArg uint8

// Script arguments.
const (
	NoScriptArg    ScriptArg = iota
	ScriptBody               // the script's text (EVAL, EVAL_RO)
	ScriptSHA                // the SHA1 of a cached script (EVALSHA, EVALSHA_RO)
	ScriptFunction           // a function's name (FCALL, FCALL_RO)
)

// FullName is "get" or "client|list".
func (s *Spec) FullName() string {
	if s.parent != nil {
		return s.parent.Name + "|" + s.Name
	}
	return s.Name
}

// RunsQueue reports EXEC: the command that ends MULTI by running the queue.
func (s *Spec) RunsQueue() bool {
	return s.Flags&(EndsMulti|RunsCommands) == EndsMulti|RunsCommands
}

// Parent returns the container command of a subcommand, or nil.
func (s *Spec) Parent() *Spec { return s.parent }

// Sub finds a subcommand by name (any case).
func (s *Spec) Sub(name []byte) *Spec {
	if s.subByLC == nil {
		return nil
	}
	return s.subByLC[lowerKey(name)]
}

// Table is the set of all commands, indexed by lower-case name.
type Table struct {
	byName map[string]*Spec
	list   []*Spec
	byID   []*Spec
	// fast holds byName's names of up to fastMax bytes, hashed by their
	// length and three of their letters (fastSlot): Lookup's common
	// case is a short bucket and a comparison of a few bytes, not a map's
	// hash of a lower-cased copy (about 40 instructions instead of 190).
	// Written when the table is built and by Rename (configuration, before
	// serving), read only after.
	fast [fastBuckets][]fastName
}

type fastName struct {
	name string // lower case
	spec *Spec
}

const (
	fastBuckets = 1 << fastBits
	fastBits    = 10 // Redis 8.6's names: 1.13 comparisons a lookup on average, 3 at most
	fastMax     = 32
)

// fastSlot is the bucket of name (1 to fastMax bytes): its length, its
// first, second and last bytes in any case (|0x20 folds a letter's case;
// other bytes fold alike in the name and the query), multiplied.
func fastSlot(name []byte) int {
	n := len(name)
	k := uint32(n)<<24 | uint32(name[0]|0x20)<<16 | uint32(name[min(1, n-1)]|0x20)<<8 | uint32(name[n-1]|0x20)
	return int(k * 0x85ebca6b >> (32 - fastBits))
}

// index fills fast from byName.
func (t *Table) index() {
	t.fast = [fastBuckets][]fastName{}
	for name, s := range t.byName {
		if n := len(name); n > 0 && n <= fastMax {
			b := &t.fast[fastSlot([]byte(name))]
			*b = append(*b, fastName{name, s})
		}
	}
}

// NumIDs is the number of commands and subcommands (the range of Spec.ID).
func (t *Table) NumIDs() int { return len(t.byID) }

// ByID returns the spec with the given ID.
func (t *Table) ByID(id int) *Spec { return t.byID[id] }

// NewTable builds the table from every command family. The families are listed
// explicitly: there is no init() registration (docs/ARCHITECTURE.md §8.9).
func NewTable() *Table {
	t, err := buildTable(
		family{"string", stringCommands()},
		family{"generic", genericCommands()},
		family{"generic", sortCommands()},
		family{"generic", serializeCommands()},
		family{"connection", connectionCommands()},
		family{"server", serverCommands()},
		family{"server", aclCommands()},
		family{"server", memoryCommands()},
		family{"server", introspectCommands()},
		family{"server", hotkeysCommands()},
		family{"server", locksCommands()},
		family{"server", replicationCommands()},
		family{"server", persistCommands()},
		family{"generic", blessCommands()},
		family{"list", listCommands()},
		family{"hash", hashCommands()},
		family{"set", setCommands()},
		family{"bitmap", bitmapCommands()},
		family{"hyperloglog", hyperloglogCommands()},
		family{"scripting", scriptingCommands()},
		family{"transactions", transactionCommands()},
		family{"pubsub", pubsubCommands()},
		family{"sorted-set", sortedSetCommands()},
		family{"geo", geoCommands()},
		family{"stream", streamCommands()},
		family{"cluster", clusterCommands()},
	)
	if err != nil {
		panic(err) // a malformed table is a programming error, caught by TestTable
	}
	return t
}

// family is one command group's declarations.
type family struct {
	group string
	specs []*Spec
}

func buildTable(families ...family) (*Table, error) {
	t := &Table{byName: map[string]*Spec{}}
	for _, fam := range families {
		for _, s := range fam.specs {
			s.Group = fam.group
			s.fillFromDocs()
			if err := checkSpec(s); err != nil {
				return nil, err
			}
			if _, dup := t.byName[s.Name]; dup {
				return nil, fmt.Errorf("command %q declared twice", s.Name)
			}
			t.byName[s.Name] = s
			t.list = append(t.list, s)
			s.ID = len(t.byID)
			t.byID = append(t.byID, s)
			if len(s.Subs) > 0 {
				s.subByLC = map[string]*Spec{}
				for _, sub := range s.Subs {
					sub.parent = s
					if sub.Group == "" {
						sub.Group = s.Group
					}
					sub.fillFromDocs()
					if err := checkSpec(sub); err != nil {
						return nil, err
					}
					if _, dup := s.subByLC[sub.Name]; dup {
						return nil, fmt.Errorf("subcommand %q declared twice", sub.FullName())
					}
					s.subByLC[sub.Name] = sub
					sub.ID = len(t.byID)
					t.byID = append(t.byID, sub)
				}
			}
		}
	}
	sort.Slice(t.list, func(i, j int) bool { return t.list[i].Name < t.list[j].Name })
	t.index()
	return t, nil
}

// fillFromDocs takes a command's summary and since from its COMMAND DOCS
// entry (docs_data.go, generated from Redis's command table), where the
// declaration does not state its own: each is declared once. A Spec states
// them only where HotKV's differ from Redis's (testdata/docs/spec_disagreements.txt).
func (s *Spec) fillFromDocs() {
	d := docsTable[s.FullName()]
	if d == nil {
		return
	}
	if s.Summary == "" {
		s.Summary = d.Summary
	}
	if s.Since == "" {
		s.Since = d.Since
	}
}

func checkSpec(s *Spec) error {
	switch {
	case s.Name == "" || s.Name != strings.ToLower(s.Name):
		return fmt.Errorf("command name %q must be lower case", s.Name)
	case s.Arity == 0:
		return fmt.Errorf("%s: arity 0", s.FullName())
	case s.Run == nil && len(s.Subs) == 0:
		return fmt.Errorf("%s: no handler", s.FullName())
	case s.FirstKey < 0 || (s.FirstKey > 0 && s.Step <= 0):
		return fmt.Errorf("%s: bad key range", s.FullName())
	case s.FirstKey > 0 && s.LastKey > 0 && s.LastKey < s.FirstKey:
		return fmt.Errorf("%s: last key before first", s.FullName())
	case s.Arity > 0 && s.LastKey > 0 && s.LastKey >= s.Arity:
		return fmt.Errorf("%s: last key beyond arity", s.FullName())
	case s.Flags&Write != 0 && s.Flags&ReadOnly != 0:
		return fmt.Errorf("%s: both write and readonly", s.FullName())
	}
	return nil
}

// Lookup finds a command by name in any case, without allocating.
func (t *Table) Lookup(name []byte) *Spec {
	n := len(name)
	if n == 0 || n > fastMax {
		return t.byName[strings.ToLower(string(name))] // a long rename-command name
	}
next:
	for _, f := range t.fast[fastSlot(name)] {
		if len(f.name) != n {
			continue
		}
		for i, c := range name {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != f.name[i] {
				continue next
			}
		}
		return f.spec
	}
	return nil
}

// Rename is rename-command: the command name is known as to from now on,
// and no longer by its name; to "" takes it away. Redis's errors: "No such
// command in rename-command", "Target command name already exists". ACL
// rules keep the original names (acl.Commands), as Redis's orig_commands.
func (t *Table) Rename(name, to string) error {
	name, to = strings.ToLower(name), strings.ToLower(to)
	s := t.byName[name]
	if s == nil {
		return errors.New("No such command in rename-command")
	}
	if to != "" {
		if _, taken := t.byName[to]; taken {
			return errors.New("Target command name already exists")
		}
	}
	delete(t.byName, name)
	if to != "" {
		t.byName[to] = s
	}
	t.index()
	return nil
}

// All lists the top-level commands sorted by name.
func (t *Table) All() []*Spec { return t.list }

// Len is COMMAND COUNT: the number of top-level commands.
func (t *Table) Len() int { return len(t.list) }

// CheckArity reports whether argc words satisfy arity.
func CheckArity(arity, argc int) bool {
	if arity > 0 {
		return argc == arity
	}
	return argc >= -arity
}

// KeyIndexes returns the argv positions of s's keys for this call.
func (s *Spec) KeyIndexes(argv [][]byte) []int {
	if s.KeysFn != nil {
		return s.KeysFn(argv)
	}
	first, last, step, ok := s.KeyRange(len(argv))
	if !ok {
		return nil
	}
	var out []int
	for i := first; i <= last; i += step {
		out = append(out, i)
	}
	return out
}

// KeyRange returns the argv positions of s's keys for a call of argc
// arguments, first to last (inclusive, below argc) every step, without
// allocating (the event loop's prefetch); ok is false when s names no keys by
// position (none, or a KeysFn) or the call has none of them.
func (s *Spec) KeyRange(argc int) (first, last, step int, ok bool) {
	if s.KeysFn != nil || s.FirstKey == 0 {
		return 0, 0, 0, false
	}
	last = s.LastKey
	if last < 0 {
		last += argc
	}
	last = min(last, argc-1)
	return s.FirstKey, last, s.Step, s.FirstKey <= last
}

func lowerKey(b []byte) string { return strings.ToLower(string(b)) }
