package command

import "strings"

// KeySpec is one Redis 7 key specification: where a command's keys are and how
// it uses them. Flags are Redis's: RW/RO/OW/RM, then access/update/insert/delete.
type KeySpec struct {
	Flags  string // e.g. "RW access update"
	Begin  int    // index of the first key (Keynum: of the numkeys argument)
	Last   int    // range: last key relative to Begin (0 one key, -1 to the end)
	Step   int
	Keynum bool   // keys follow a numkeys argument at Begin
	Notes  string // Redis's notes on the spec, shown by COMMAND INFO
	// Unknown marks a spec whose keys cannot be located from the arguments
	// alone (SORT's BY/GET patterns and STORE): begin_search and find_keys
	// are of type "unknown".
	Unknown bool
	// Keyword makes begin_search a keyword search (GEORADIUS's STORE): the key
	// follows the first argument equal to Keyword (any case) found from
	// argument index Begin (startfrom) on.
	Keyword string
	// Limit is find_keys' range limit (XREAD: 2, the keys are the first half
	// of what follows STREAMS).
	Limit int
}

// FlagList splits Flags.
func (k KeySpec) FlagList() []string { return strings.Fields(k.Flags) }

// KeySpecs returns the command's key specs: Keys when declared, else one spec
// derived from the legacy first/last/step range with KeyFlags (or flags derived
// from write/readonly).
func (s *Spec) KeySpecs() []KeySpec {
	if s.Keys != nil {
		return s.Keys
	}
	if s.FirstKey == 0 {
		return nil
	}
	flags := s.KeyFlags
	if flags == "" {
		flags = "RO access"
		if s.Flags&Write != 0 {
			flags = "RW update"
		}
	}
	last := s.LastKey
	if last > 0 {
		last -= s.FirstKey
	}
	return []KeySpec{{Flags: flags, Begin: s.FirstKey, Last: last, Step: s.Step}}
}

// KeyFlagsAt returns the flags of the key at argv index i, as COMMAND
// GETKEYSANDFLAGS reports them: KeyFlagsFn's for a command whose flags
// depend on its arguments, else its key spec's.
func (s *Spec) KeyFlagsAt(argv [][]byte, i int) []string {
	if s.KeyFlagsFn != nil {
		return s.KeyFlagsFn(argv)
	}
	specs := s.KeySpecs()
	for _, ks := range specs {
		if ks.Keyword != "" {
			if i-1 >= ks.Begin && i-1 < len(argv) && eqFoldBytes(argv[i-1], []byte(ks.Keyword)) {
				return ks.FlagList()
			}
			continue
		}
		if ks.Keynum || i == ks.Begin || ks.Last != 0 && i > ks.Begin {
			return ks.FlagList()
		}
	}
	if len(specs) > 0 {
		return specs[len(specs)-1].FlagList()
	}
	return nil
}

// setKeyFlags is setGetKeys: GET reads the old value (RW access update), a
// condition (IFEQ, IFNE, IFDEQ, IFDNE) reads it too (RW update), else SET
// overwrites (OW update).
func setKeyFlags(argv [][]byte) []string {
	actual, access := "OW", false
	for _, a := range argv[3:] {
		switch {
		case eqFold(a, "get"):
			actual, access = "RW", true
		case eqFold(a, "ifeq"), eqFold(a, "ifne"), eqFold(a, "ifdeq"), eqFold(a, "ifdne"):
			actual = "RW"
		}
	}
	switch {
	case access:
		return flagsRWAccessUpdate
	case actual == "RW":
		return flagsRWUpdate
	}
	return flagsOWUpdate
}

// the key flags the KeyFlagsFn functions return, shared (not to be changed):
// the check of every command's keys (ACL) calls them and allocates nothing
var (
	flagsRWAccessUpdate = []string{"RW", "access", "update"}
	flagsRWUpdate       = []string{"RW", "update"}
	flagsOWUpdate       = []string{"OW", "update"}
	flagsRWDelete       = []string{"RW", "delete"}
	flagsRMDelete       = []string{"RM", "delete"}
	flagsROAccess       = []string{"RO", "access"}
)

// delexKeyFlags is delexGetKeys: RW delete with a condition, RM delete
// without.
func delexKeyFlags(argv [][]byte) []string {
	for _, a := range argv[2:] {
		if eqFold(a, "ifeq") || eqFold(a, "ifne") || eqFold(a, "ifdeq") || eqFold(a, "ifdne") {
			return flagsRWDelete
		}
	}
	return flagsRMDelete
}

// bitfieldKeyFlags is bitfieldGetKeys: RO access when every operation is a
// GET (and OVERFLOW), RW access update otherwise (a syntax error counts as
// a write).
func bitfieldKeyFlags(argv [][]byte) []string {
	for i := 2; i < len(argv); i++ {
		rem := len(argv) - i - 1
		switch a := argv[i]; {
		case eqFold(a, "get") && rem >= 2:
			i += 2
		case eqFold(a, "overflow") && rem >= 1:
			i++
		default: // SET, INCRBY, or a syntax error
			return flagsRWAccessUpdate
		}
	}
	return flagsROAccess
}
