package config

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/glob"
)

// Config holds the current value of every parameter. The zero value is not
// usable; call New. See the package doc for what runs concurrently.
type Config struct {
	vals []atomic.Pointer[value] // by table index

	mu    sync.Mutex                   // serialises writers; guards hooks
	hooks [][]func(value string) error // by table index

	file atomic.Pointer[string] // absolute path of the config file, or nil

	users   [][]string  // the file's "user" lines: each the name, then its rules
	renames [][2]string // the file's rename-command lines: command, new name ("" removes it)
	// userLines gives CONFIG REWRITE the users' lines (SetUserLines)
	userLines func() []string
}

// Renames are the config file's rename-command lines, in order: the
// command and its new name ("" takes the command away).
func (c *Config) Renames() [][2]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renames
}

// SetUserLines gives CONFIG REWRITE the "user" lines of the current users
// ("user <name> <rules>"); without an aclfile they replace the file's.
// Call before serving.
func (c *Config) SetUserLines(f func() []string) {
	c.mu.Lock()
	c.userLines = f
	c.mu.Unlock()
}

// Users are the config file's "user" lines, in order: each the user's name,
// then its rules (a selector spread over several words joined into one).
// The server creates the users at start-up (internal/acl).
func (c *Config) Users() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.users
}

// New returns a Config holding Redis 8's defaults (HotKV's for bind and save;
// see paramTable). dir defaults to the current working directory.
func New() *Config {
	c := &Config{
		vals:  make([]atomic.Pointer[value], len(reg.defs)),
		hooks: make([][]func(string) error, len(reg.defs)),
	}
	for i := range reg.defs {
		c.vals[i].Store(reg.defs[i].defaultValue())
	}
	return c
}

// param returns the table index of name (a name or alias, any ASCII case),
// panicking when there is none or when it is not of kind k: asking for an
// unknown parameter, or for one with the wrong getter, is a programming error.
func (c *Config) param(name string, kinds ...Kind) int {
	e, ok := reg.lookup(name)
	if !ok {
		panic("config: unknown parameter " + strconv.Quote(name))
	}
	d := &reg.defs[e.idx]
	for _, k := range kinds {
		if d.kind == k {
			return e.idx
		}
	}
	panic("config: parameter " + strconv.Quote(name) + " is a " + d.kind.String() + ", not a " + kinds[0].String())
}

// Int returns an integer parameter. Memory values are in bytes; a negative
// maxmemory-clients of -N means N percent; unsigned values above MaxInt64
// (only maxmemory can hold one) read as MaxInt64. It does not lock and does
// not allocate when name is lower case. It panics when name is unknown or not
// an integer parameter.
func (c *Config) Int(name string) int64 {
	i := c.param(name, KindInt)
	return reg.defs[i].intOf(c.vals[i].Load())
}

func (d *paramDef) intOf(v *value) int64 {
	if d.flags&fUnsigned != 0 && v.n < 0 {
		return math.MaxInt64
	}
	return v.n
}

// IntFunc returns a function that reads an integer parameter as Int does,
// without the name lookup: for the hottest paths. It panics as Int does.
func (c *Config) IntFunc(name string) func() int64 {
	i := c.param(name, KindInt)
	d, p := &reg.defs[i], &c.vals[i]
	return func() int64 { return d.intOf(p.Load()) }
}

// Bool returns a yes/no parameter. It panics when name is unknown or not a
// bool parameter.
func (c *Config) Bool(name string) bool {
	i := c.param(name, KindBool)
	return c.vals[i].Load().n != 0
}

// BoolFunc returns a function that reads a yes/no parameter as Bool does,
// without the name lookup: for the hottest paths. It panics as Bool does.
func (c *Config) BoolFunc(name string) func() bool {
	p := &c.vals[c.param(name, KindBool)]
	return func() bool { return p.Load().n != 0 }
}

// String returns a string, enum or special parameter as CONFIG GET prints it
// (an enum's name; "" for a string with no value). It panics when name is
// unknown or a bool or integer parameter (use Bool or Int).
func (c *Config) String(name string) string {
	i := c.param(name, KindString, KindEnum, KindSpecial)
	return c.vals[i].Load().s
}

// Bind returns the bind addresses (a copy; empty when bind is "").
func (c *Config) Bind() []string {
	i := c.param("bind", KindSpecial)
	return append([]string(nil), c.vals[i].Load().x.([]string)...)
}

// NotifyKeyspaceEvents returns notify-keyspace-events parsed.
func (c *Config) NotifyKeyspaceEvents() NotifyFlags {
	i := c.param("notify-keyspace-events", KindSpecial)
	return c.vals[i].Load().x.(NotifyFlags)
}

// LatencyPercentiles returns latency-tracking-info-percentiles (a copy).
func (c *Config) LatencyPercentiles() []float64 {
	i := c.param("latency-tracking-info-percentiles", KindSpecial)
	return append([]float64(nil), c.vals[i].Load().x.([]float64)...)
}

// ReplicaOf returns replicaof: the master's host and port; host is "" on a
// master.
func (c *Config) ReplicaOf() (host string, port int64) {
	i := c.param("replicaof", KindSpecial)
	r := c.vals[i].Load().x.(replicaOf)
	return r.Host, r.Port
}

// SetReplicaOf records what REPLICAOF did (host "": a master), so that
// CONFIG GET and CONFIG REWRITE show it, as Redis's come from its
// replication state. CONFIG SET cannot change replicaof (immutable).
func (c *Config) SetReplicaOf(host string, port int64) {
	i := c.param("replicaof", KindSpecial)
	v := &value{x: replicaOf{}}
	if host != "" {
		v = &value{s: host + " " + strconv.FormatInt(port, 10), x: replicaOf{host, port}}
	}
	c.vals[i].Store(v)
}

// Save returns the snapshot rules (a copy; empty when save is "").
func (c *Config) Save() []SavePoint {
	i := c.param("save", KindSpecial)
	return append([]SavePoint(nil), c.vals[i].Load().x.([]SavePoint)...)
}

// ClientOutputBufferLimits returns client-output-buffer-limit for the normal,
// replica and pubsub classes, in that order.
func (c *Config) ClientOutputBufferLimits() [3]OBufLimit {
	i := c.param("client-output-buffer-limit", KindSpecial)
	return c.vals[i].Load().x.([3]OBufLimit)
}

// Get returns a parameter's value as CONFIG GET prints it: "yes"/"no",
// integers in decimal (memory values in bytes, "N%" for percentages, base 8
// for unixsocketperm), an enum's name, a string ("" when unset), and Redis's
// own formats for the special parameters (save "3600 1 300 100", bind
// "127.0.0.1 ::1", client-output-buffer-limit "normal 0 0 0 slave ..."). name
// is a parameter name or alias in any ASCII case; ok is false when there is
// no such parameter.
func (c *Config) Get(name string) (val string, ok bool) {
	e, ok := reg.lookup(name)
	if !ok {
		return "", false
	}
	return c.vals[e.idx].Load().s, true
}

// Sensitive reports whether name (any case, or an alias) is a parameter
// whose value logs, the slow log and MONITOR must not show (Redis's
// SENSITIVE_CONFIG).
func (c *Config) Sensitive(name string) bool {
	e, ok := reg.lookup(name)
	return ok && reg.defs[e.idx].flags&fSensitive != 0
}

// Match answers CONFIG GET pattern [pattern ...]: name/value pairs, each name
// at most once. As in Redis 7+, a pattern without glob characters (*, ? or
// [) is looked up directly, any case, and answered under the name as given; a
// pattern with them is matched case-insensitively against every registered
// name, aliases included, so "*" lists lua-time-limit beside
// busy-reply-threshold and slave-read-only beside replica-read-only. Names are
// deduplicated case-insensitively. Pairs come in the order found (Redis
// replies in hash order, which clients must not rely on).
func (c *Config) Match(patterns ...string) [][2]string {
	var out [][2]string
	seen := make(map[string]bool)
	add := func(name string, idx int) {
		out = append(out, [2]string{name, c.vals[idx].Load().s})
		seen[asciiLower(name)] = true
	}
	for _, pat := range patterns {
		if !strings.ContainsAny(pat, "[*?") {
			if seen[asciiLower(pat)] {
				continue
			}
			if e, ok := reg.lookup(pat); ok {
				add(pat, e.idx)
			}
			continue
		}
		for _, rn := range reg.names {
			if reg.defs[rn.idx].flags&fHidden != 0 {
				continue // hidden configs need their exact name
			}
			if !seen[rn.name] && glob.MatchString(pat, rn.name, true) {
				add(rn.name, rn.idx)
			}
		}
	}
	return out
}

// File returns the absolute path of the configuration file loaded by
// LoadFile or ParseArgs, or "" when there is none (INFO's config_file).
func (c *Config) File() string {
	if p := c.file.Load(); p != nil {
		return *p
	}
	return ""
}

// ParamInfo describes one parameter, for documentation and tooling.
type ParamInfo struct {
	Name      string
	Alias     string // "" when none
	Kind      Kind
	Memory    bool     // KindInt: accepts 1k 1kb 1m 1mb 1g 1gb units
	Percent   bool     // KindInt: accepts N%
	Octal     bool     // KindInt: written in base 8
	Min, Max  string   // KindInt: bounds as error messages print them
	Values    []string // KindEnum: the accepted names
	Default   string   // as CONFIG GET prints it
	Mutable   bool     // CONFIG SET may change it
	Protected bool     // CONFIG SET needs enable-protected-configs
	Sensitive bool     // its value must be redacted from logs, SLOWLOG and MONITOR
	Honoured  bool     // HotKV acts on it today; the others are only stored
	Doc       string   // one line
}

// Params describes every parameter, in table order.
func (c *Config) Params() []ParamInfo {
	out := make([]ParamInfo, 0, len(reg.defs))
	for i := range reg.defs {
		d := &reg.defs[i]
		pi := ParamInfo{
			Name: d.name, Alias: d.alias, Kind: d.kind, Doc: d.doc,
			Memory:    d.flags&fMemory != 0,
			Percent:   d.flags&fPercent != 0,
			Octal:     d.flags&fOctal != 0,
			Default:   d.defaultValue().s,
			Mutable:   d.flags&fImmutable == 0,
			Protected: d.flags&fProtected != 0,
			Sensitive: d.flags&fSensitive != 0,
			Honoured:  d.flags&fHonoured != 0,
		}
		if d.kind == KindInt {
			if d.flags&fUnsigned != 0 {
				base := 10
				if pi.Octal {
					base = 8
				}
				pi.Min = strconv.FormatUint(uint64(d.lo), base) // C casts
				pi.Max = strconv.FormatUint(uint64(d.hi), base) // C casts
			} else {
				pi.Min, pi.Max = strconv.FormatInt(d.lo, 10), strconv.FormatInt(d.hi, 10)
			}
		}
		for _, e := range d.enum {
			pi.Values = append(pi.Values, e.name)
		}
		out = append(out, pi)
	}
	return out
}
