package config

import (
	"strconv"
)

// Kind is the type of a parameter's value, which decides how it is parsed,
// printed by CONFIG GET and written by CONFIG REWRITE.
type Kind uint8

// The kinds, after Redis's createXxxConfig families.
const (
	KindBool    Kind = iota + 1 // yes/no
	KindInt                     // an integer; see ParamInfo.Memory, Percent, Octal
	KindEnum                    // one of a fixed set of names
	KindString                  // free text
	KindSpecial                 // a format of its own: save, bind, client-output-buffer-limit...
)

func (k Kind) String() string {
	switch k {
	case KindBool:
		return "bool"
	case KindInt:
		return "integer"
	case KindEnum:
		return "enum"
	case KindString:
		return "string"
	case KindSpecial:
		return "special"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// pflag holds a parameter's properties; the first group mirrors Redis's config
// flags, the second its numeric flags, the third string handling.
type pflag uint32

const (
	fImmutable pflag = 1 << iota // IMMUTABLE_CONFIG: CONFIG SET refuses it
	fProtected                   // PROTECTED_CONFIG: needs enable-protected-configs
	fSensitive                   // SENSITIVE_CONFIG: redact its value in logs
	fMulti                       // MULTI_ARG_CONFIG: the value is several words
	fHonoured                    // HotKV acts on it (not only stores it)
	fHidden                      // HIDDEN_CONFIG: CONFIG GET answers it by exact name only
	fVolatile                    // VOLATILE_CONFIG: CONFIG SET of the same value applies it again (a file reloaded)

	fMemory   // MEMORY_CONFIG: accepts 1k 1kb 1m 1mb 1g 1gb units
	fPercent  // PERCENT_CONFIG: accepts N% (stored as -N)
	fOctal    // OCTAL_CONFIG: read and printed in base 8
	fUnsigned // the C type is unsigned: bounds compare as uint64

	fNullable    // EMPTY_STRING_IS_NULL: "" means no value
	fNullDefault // the default is no value (NULL)
	fBinary      // an sds value: NUL bytes are kept (else cut, as a C string)
)

// enumEntry is one name of an enum parameter. Several names may share a value
// (oom-score-adj's yes and relative); CONFIG GET prints the first.
type enumEntry struct {
	name string
	val  int64
}

// paramDef is one row of the table: everything about a parameter except its
// current value.
type paramDef struct {
	name  string
	alias string // "" when none; Redis has at most one per parameter
	kind  Kind
	flags pflag
	doc   string

	lo, hi int64       // KindInt bounds as a C long long (see fUnsigned)
	defN   int64       // default of KindBool (0/1), KindInt and KindEnum
	defS   string      // default of KindString
	enum   []enumEntry // KindEnum names, in Redis's order

	validS func(string) string // KindString check; returns Redis's error text or ""
	normS  func(string) string // KindString: the value as CONFIG GET shows it (nil: as given)
	validN func(int64) string  // KindBool/KindInt check; returns error text or ""
	clamp  func(int64) int64   // normalises an accepted KindInt value (hz)
	sp     *special            // KindSpecial behaviour
}

// value is an immutable snapshot of a parameter's current value. Set replaces
// it; nothing mutates one after it is published.
type value struct {
	n    int64  // KindBool (0/1), KindInt, KindEnum
	s    string // the CONFIG GET text (every kind)
	null bool   // KindString: no value at all (Redis NULL); s is ""
	x    any    // KindSpecial: the parsed form
}

// setCtx says where a value comes from. Redis parses a parameter the same way
// from a file and from CONFIG SET except for save's lines, which accumulate
// while a file is read.
type setCtx struct {
	loading    bool
	saveLoaded *bool // loading only: a save line was already seen
}

// special is the behaviour of a KindSpecial parameter.
type special struct {
	// def returns the default value.
	def func() *value
	// set parses args (already split into words) against cur, returning the
	// new value, whether it differs (Redis's set returning 1 rather than 2),
	// or Redis's error text.
	set func(cur *value, args []string, ctx *setCtx) (*value, bool, string)
	// rewrite writes the value's lines for CONFIG REWRITE.
	rewrite func(name string, v *value, st *rewriteState)
}

// registry is the table, indexed: built once from paramTable.
type registry struct {
	defs  []paramDef
	index map[string]regEntry // lower-case name or alias -> entry
	names []regName           // every name then its alias, in table order
}

// regEntry is one name under which a parameter is registered. Redis registers
// an alias as a separate entry, which is visible in CONFIG GET * and in CONFIG
// SET's duplicate check.
type regEntry struct {
	idx   int
	alias bool
}

type regName struct {
	name string
	regEntry
}

func newRegistry(defs []paramDef) *registry {
	r := &registry{defs: defs, index: make(map[string]regEntry, 2*len(defs))}
	add := func(name string, e regEntry) {
		if _, dup := r.index[name]; dup || name != asciiLower(name) {
			panic("config: bad or duplicate parameter name " + strconv.Quote(name))
		}
		r.index[name] = e
		r.names = append(r.names, regName{name, e})
	}
	for i := range defs {
		add(defs[i].name, regEntry{idx: i})
		if defs[i].alias != "" {
			add(defs[i].alias, regEntry{idx: i, alias: true})
		}
	}
	return r
}

// lookup finds a registered name case-insensitively (ASCII), without
// allocating when name is already lower case.
func (r *registry) lookup(name string) (regEntry, bool) {
	if e, ok := r.index[name]; ok {
		return e, true
	}
	e, ok := r.index[asciiLower(name)]
	return e, ok
}

// regName returns the name e is registered under: what Redis calls
// config->name for that entry, used in CONFIG SET error texts.
func (r *registry) regName(e regEntry) string {
	if e.alias {
		return r.defs[e.idx].alias
	}
	return r.defs[e.idx].name
}

// reg is the one registry, built from the table in params.go.
var reg = newRegistry(paramTable())
