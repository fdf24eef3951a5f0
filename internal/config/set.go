package config

import (
	"errors"
	"slices"
	"strings"
)

// Set applies CONFIG SET name value [name value ...] for a client that is not
// local (see SetFrom). It is SetFrom(false, pairs...).
func (c *Config) Set(pairs ...[2]string) error {
	return c.SetFrom(false, pairs...)
}

// SetFrom applies CONFIG SET name value [name value ...] atomically, as Redis 7+
// does, for a client that is local (Unix socket or loopback) or not; locality
// matters only for protected parameters when enable-protected-configs is
// "local". The returned error's Error() is Redis's reply text without the
// leading '-':
//
//   - the first name that is unknown: "ERR Unknown option or number of
//     arguments for CONFIG SET - 'foo'";
//   - immutable: "ERR CONFIG SET failed (possibly related to argument
//     'databases') - can't set immutable config"; protected: "... - can't set
//     protected config";
//   - a name given twice: "... (possibly related to argument 'port') -
//     duplicate parameter" (as in Redis, a parameter given once by name and
//     once by alias is not a duplicate: both apply, the last wins);
//   - a value the parameter refuses: "... (possibly related to argument
//     'maxclients') - argument must be between 1 and 4294967295 inclusive".
//
// The name checks report the name as the client spelled it, a bad value the
// name as registered (lower case; the alias when set by its alias). Values
// are validated before anything changes, so on any of these errors nothing
// does. Values of multi-word parameters (save, bind, client-output-buffer-limit
// ...) are split on single spaces, as Redis does.
//
// Then the hooks registered with OnChange run, for each parameter whose value
// changed (for bind, save and the other special parameters, for each one that
// was set), in the order of the pairs. If a hook fails, every parameter is
// restored to its previous value, the hooks that had already succeeded are run
// again with the previous values (their errors ignored), and the error is
// "ERR CONFIG SET failed (possibly related to argument 'port') - " followed by
// the hook's error text. Set holds the writer lock while hooks run: a hook may
// read the Config but must not call a writer method. With no pairs, Set does
// nothing.
func (c *Config) SetFrom(local bool, pairs ...[2]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()

	entries := make([]regEntry, len(pairs))
	for i, pr := range pairs {
		e, ok := reg.lookup(pr[0])
		if !ok {
			return errors.New("ERR Unknown option or number of arguments for CONFIG SET - '" + pr[0] + "'")
		}
		d := &reg.defs[e.idx]
		if d.flags&fImmutable != 0 {
			return setError(pr[0], "can't set immutable config")
		}
		if d.flags&fProtected != 0 && !c.protectedAllowed(local) {
			return setError(pr[0], "can't set protected config")
		}
		for j := 0; j < i; j++ {
			if entries[j] == e {
				return setError(pr[0], "duplicate parameter")
			}
		}
		entries[i] = e
	}

	// Parse every value against the value it replaces: the current one, or
	// the one an earlier pair (the same parameter by its other name) set.
	type change struct {
		idx     int
		regName string
	}
	work := make(map[int]*value, len(pairs))
	var changed []change
	ctx := &setCtx{}
	for i, pr := range pairs {
		e := entries[i]
		d := &reg.defs[e.idx]
		cur, ok := work[e.idx]
		if !ok {
			cur = c.vals[e.idx].Load()
		}
		args := []string{pr[1]}
		if d.flags&fMulti != 0 {
			args = splitSpaces(pr[1])
		}
		nv, diff, errText := d.parse(cur, args, ctx)
		if errText != "" {
			return setError(reg.regName(e), errText)
		}
		work[e.idx] = nv
		if d.flags&fVolatile != 0 {
			diff = true // a certificate file set again is read again
		}
		if diff && !slices.ContainsFunc(changed, func(ch change) bool { return ch.idx == e.idx }) {
			changed = append(changed, change{e.idx, reg.regName(e)})
		}
	}

	// Commit, then apply.
	old := make(map[int]*value, len(work))
	for _, e := range entries {
		if _, done := old[e.idx]; !done {
			old[e.idx] = c.vals[e.idx].Swap(work[e.idx])
		}
	}
	type applied struct {
		idx int
		fn  func(string) error
	}
	var ok []applied
	for _, ch := range changed {
		for _, fn := range c.hooks[ch.idx] {
			if err := fn(c.vals[ch.idx].Load().s); err != nil {
				for idx, v := range old {
					c.vals[idx].Store(v)
				}
				for _, a := range ok {
					_ = a.fn(old[a.idx].s)
				}
				return setError(ch.regName, err.Error())
			}
			ok = append(ok, applied{ch.idx, fn})
		}
	}
	return nil
}

// protectedAllowed is allowProtectedAction(server.enable_protected_configs, c).
func (c *Config) protectedAllowed(local bool) bool {
	switch c.String("enable-protected-configs") {
	case "yes":
		return true
	case "local":
		return local
	}
	return false
}

func setError(name, text string) error {
	return errors.New("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + text)
}

// splitSpaces is sdssplitlen(value, " "): every space separates, so "a  b"
// holds an empty word, and "" is no words at all.
func splitSpaces(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

// OnChange registers fn to run when CONFIG SET changes name (a name or alias
// of a mutable parameter), after the new value is stored; fn receives the
// value as CONFIG GET prints it and may read the Config's typed getters. A
// non-nil error vetoes the change: Set restores the previous values and
// reports the error's text, which should read like Redis's own ("Unable to
// listen on this port. Check server logs."). fn must leave things as they were
// when it fails; it may be called again with the previous value if a later
// hook of the same Set fails. Hooks of one parameter run in registration
// order. Loading a file (LoadFile, ParseArgs) runs no hooks. OnChange panics
// when name is unknown.
func (c *Config) OnChange(name string, fn func(value string) error) {
	e, ok := reg.lookup(name)
	if !ok {
		panic("config: OnChange for unknown parameter " + name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks[e.idx] = append(c.hooks[e.idx], fn)
}
