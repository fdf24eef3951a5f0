package acl

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
)

// ACL is the set of users, the default user among them, and the ACL log.
// Engine lock held for everything.
type ACL struct {
	cmds  *Commands
	users map[string]*User
	// Default is the user new connections start as; its pointer never
	// changes (ACL LOAD copies the file's default user into it).
	Default *User
	// PubsubAll is acl-pubsub-default allchannels: new users and selectors
	// start with every channel.
	PubsubAll bool
	// Warn logs a warning (the deprecation of first-argument rules); may be nil.
	Warn func(string)
	// Hooks act on the connections of changed users; may be nil.
	Hooks Hooks

	Log   Log
	Stats Stats

	// defaultOpen mirrors "the default user is on and nopass" for readers
	// without the engine lock (a connection being accepted)
	defaultOpen atomic.Bool
}

// Hooks are what the server does to connections when users change.
type Hooks struct {
	// Deleted closes the connections authenticated as u (deleted, or gone
	// from a loaded ACL file).
	Deleted func(u *User)
	// ChannelsRevoked closes u's subscribers that hold a subscription
	// allowed rejects (pattern: a PSUBSCRIBE pattern).
	ChannelsRevoked func(u *User, allowed func(name []byte, pattern bool) bool)
}

// Stats are INFO stats' acl_access_denied_* counters.
type Stats struct {
	Auth, Cmd, Key, Channel, TLSCert int64
}

// New builds the ACL with the default user ("on nopass ~* &* +@all") over
// the command table t.
func New(t *Commands) *ACL {
	a := &ACL{cmds: t, users: map[string]*User{}}
	a.Default = a.newDefaultUser()
	a.users["default"] = a.Default
	a.syncDefault()
	return a
}

// DefaultOpen reports whether the default user is on and needs no password:
// a new connection starts authenticated, and protected mode applies. Any
// goroutine.
func (a *ACL) DefaultOpen() bool { return a.defaultOpen.Load() }

// syncDefault refreshes DefaultOpen after a change of users.
func (a *ACL) syncDefault() { a.defaultOpen.Store(a.Default.NoPass() && a.Default.Enabled()) }

func (a *ACL) newDefaultUser() *User {
	u := newUser(a.cmds, "default", a.PubsubAll)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = u.apply(a, op)
	}
	return u
}

// Commands is the command table the rules refer to.
func (a *ACL) Commands() *Commands { return a.cmds }

// User finds a user by name, or nil.
func (a *ACL) User(name string) *User { return a.users[name] }

// Users lists the users sorted by name (ACL LIST, ACL USERS).
func (a *ACL) Users() []*User {
	names := make([]string, 0, len(a.users))
	for n := range a.users {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*User, len(names))
	for i, n := range names {
		out[i] = a.users[n]
	}
	return out
}

// RequireAuth reports whether a connection that has not authenticated must
// (the default user has a password, or is off).
func (a *ACL) RequireAuth() bool {
	return !a.Default.NoPass() || !a.Default.Enabled()
}

// Authenticate finds the user name authenticates as with pw, or nil.
func (a *ACL) Authenticate(name string, pw []byte) *User {
	u := a.users[name]
	if u == nil || !u.CheckPassword(pw) {
		return nil
	}
	return u
}

// SetDefaultPassword is requirepass: the default user's passwords become pw,
// or nopass when pw is empty (ACLUpdateDefaultUserPassword).
func (a *ACL) SetDefaultPassword(pw string) {
	_ = a.Default.apply(a, "resetpass")
	if pw != "" {
		_ = a.Default.apply(a, ">"+pw)
	} else {
		_ = a.Default.apply(a, "nopass")
	}
	a.syncDefault()
}

// ErrUnmatched is a selector's opening parenthesis without its closing one.
type ErrUnmatched struct{ Arg string }

func (e *ErrUnmatched) Error() string {
	return "Unmatched parenthesis in acl selector starting at '" + e.Arg + "'."
}

// mergeSelectorArgs joins a selector spread over several arguments ("(~x"
// "+get)") into one (ACLMergeSelectorArguments); bad is the index of an
// unmatched opening argument, or -1.
func mergeSelectorArgs(args []string) (merged []string, bad int) {
	open := -1
	var sel string
	for j, op := range args {
		if open == -1 && op != "" && op[0] == '(' && op[len(op)-1] != ')' {
			sel, open = op, j
			continue
		}
		if open != -1 {
			sel += " " + op
			if op != "" && op[len(op)-1] == ')' {
				open = -1
				merged = append(merged, sel)
			}
			continue
		}
		merged = append(merged, op)
	}
	if open != -1 {
		return nil, open
	}
	return merged, -1
}

// SetUser is ACL SETUSER: the rules are applied to a copy of the user (a new
// one when name is unknown) and, when all of them are valid, the user takes
// them; otherwise nothing changes and the error is the reply's text
// (ACLStringSetUser).
func (a *ACL) SetUser(name string, rules []string) error {
	if hasSpaces(name) {
		return errors.New("Usernames can't contain spaces or null characters")
	}
	merged, bad := mergeSelectorArgs(rules)
	if bad >= 0 {
		return &ErrUnmatched{rules[bad]}
	}
	u := a.users[name]
	var tmp *User
	if u != nil {
		tmp = u.clone()
	} else {
		tmp = newUser(a.cmds, name, a.PubsubAll)
	}
	for _, op := range merged {
		if err := tmp.apply(a, op); err != nil {
			return errors.New("Error in ACL SETUSER modifier '" + op + "': " + err.Error())
		}
	}
	if u == nil {
		a.users[name] = tmp
		return nil
	}
	a.revokeChannels(u, tmp)
	u.copyFrom(tmp)
	a.syncDefault()
	return nil
}

// DelUser removes the named users and closes their connections; it returns
// how many existed. The default user cannot be removed (check first).
func (a *ACL) DelUser(names []string) int {
	n := 0
	for _, name := range names {
		if u := a.users[name]; u != nil {
			delete(a.users, name)
			if a.Hooks.Deleted != nil {
				a.Hooks.Deleted(u)
			}
			n++
		}
	}
	return n
}

// revokeChannels closes the subscribers of old that the channel
// permissions of upcoming no longer allow (ACLKillPubsubClientsIfNeeded).
func (a *ACL) revokeChannels(old, upcoming *User) {
	if a.Hooks.ChannelsRevoked == nil {
		return
	}
	if allowed := channelsRevoked(upcoming, old); allowed != nil {
		a.Hooks.ChannelsRevoked(old, allowed)
	}
}

// channelsRevoked is getUpcomingChannelList: nil when next allows every
// channel orig did, else the test a subscription must pass.
func channelsRevoked(next, orig *User) func(name []byte, pattern bool) bool {
	var upcoming []string
	for _, s := range next.selectors {
		if s.flags&selAllChannels != 0 {
			return nil
		}
		upcoming = append(upcoming, s.channels...)
	}
	match := true
	for _, s := range orig.selectors {
		if s.flags&selAllChannels != 0 {
			match = false
			break
		}
		for _, c := range s.channels {
			if !slices.Contains(upcoming, c) {
				match = false
				break
			}
		}
		if !match {
			break
		}
	}
	if match {
		return nil
	}
	return func(name []byte, pattern bool) bool { return channelInList(upcoming, name, pattern) }
}

// ValidateUserLine checks a config file's "user name rules..." line as
// Redis's ACLAppendUserForLoading: rules naming commands that are unknown
// pass (they are checked at load). It returns the merged rules, or the index
// (in argv) of the bad argument and the error.
func ValidateUserLine(argv []string) (rules []string, bad int, err error) {
	if len(argv) < 2 || !strings.EqualFold(argv[0], "user") {
		return nil, 0, errSyntax
	}
	merged, b := mergeSelectorArgs(argv[2:])
	if b >= 0 {
		return nil, b, errSyntax
	}
	a := New(nil)
	u := newUser(nil, argv[1], false)
	for j, op := range merged {
		if err := u.apply(a, op); err != nil && err != errUnknown {
			return nil, j, err
		}
	}
	return merged, 0, nil
}

// ErrDuplicateUser is a config file's second "user" line for one name.
var ErrDuplicateUser = errDuplicate

// LoadConfigured creates the users of the config file's "user" lines
// (each: name, then its merged rules), in order (ACLLoadConfiguredUsers);
// the error is what Redis logs before it exits. disabled receives the
// names of users left off.
func (a *ACL) LoadConfigured(lines [][]string, disabled func(name string)) error {
	for _, l := range lines {
		name := l[0]
		if hasSpaces(name) {
			return errors.New("Spaces not allowed in ACL usernames")
		}
		u := a.users[name]
		if u == nil {
			u = newUser(a.cmds, name, a.PubsubAll)
			a.users[name] = u
		} else {
			_ = u.apply(a, "reset")
		}
		for _, op := range l[1:] {
			if err := u.apply(a, op); err != nil {
				return errors.New("Error loading ACL rule '" + op + "' for the user named '" + name + "': " + err.Error())
			}
		}
		if !u.Enabled() && disabled != nil {
			disabled(name)
		}
	}
	a.syncDefault()
	return nil
}
