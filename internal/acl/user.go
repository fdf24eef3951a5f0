package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// user flags
const (
	userEnabled = 1 << iota
	userDisabled
	userNoPass
	userSkipSanitize
	userSanitize
)

// userFlagNames are the flags in the order ACL LIST and GETUSER show them.
var userFlagNames = []struct {
	name string
	flag uint8
}{
	{"on", userEnabled}, {"off", userDisabled}, {"nopass", userNoPass},
	{"skip-sanitize-payload", userSkipSanitize}, {"sanitize-payload", userSanitize},
}

// A User is an ACL user: flags, password hashes (SHA-256, hex) and
// selectors, the root one first.
type User struct {
	Name      string
	flags     uint8
	passwords []string
	selectors []*Selector
	desc      string // the cached description (ACL LIST), "" when stale
}

func newUser(t *Commands, name string, pubsubAll bool) *User {
	root := newSelector(t, selRoot)
	if pubsubAll {
		root.flags |= selAllChannels
	}
	return &User{Name: name, flags: userDisabled | userSanitize, selectors: []*Selector{root}}
}

// copyFrom makes u's rules src's (ACLCopyUser); the name stays.
func (u *User) copyFrom(src *User) {
	u.flags = src.flags
	u.passwords = append([]string(nil), src.passwords...)
	u.selectors = make([]*Selector, len(src.selectors))
	for i, s := range src.selectors {
		u.selectors[i] = s.clone()
	}
	u.desc = ""
}

func (u *User) clone() *User {
	c := &User{Name: u.Name}
	c.copyFrom(u)
	return c
}

// Enabled reports whether the user may authenticate ("on").
func (u *User) Enabled() bool { return u.flags&userDisabled == 0 }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.flags&userNoPass != 0 }

// SkipSanitize reports whether RESTORE payloads go unchecked for the user.
func (u *User) SkipSanitize() bool { return u.flags&userSkipSanitize != 0 }

// Flags lists the user's flags in Redis's order (ACL GETUSER).
func (u *User) Flags() []string {
	var out []string
	for _, f := range userFlagNames {
		if u.flags&f.flag != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// Passwords are the password hashes.
func (u *User) Passwords() []string { return u.passwords }

// Root is the root selector; Selectors the others.
func (u *User) Root() *Selector        { return u.selectors[0] }
func (u *User) Selectors() []*Selector { return u.selectors[1:] }

// AllPerms reports whether the root selector allows every command, key and
// channel: the check can be skipped.
func (u *User) AllPerms() bool {
	const all = selAllCommands | selAllKeys | selAllChannels
	return u.selectors[0].flags&all == all
}

// HashPassword is the SHA-256 of pw in lower-case hex (ACLHashPassword).
func HashPassword(pw []byte) string {
	h := sha256.Sum256(pw)
	return hex.EncodeToString(h[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ruleHash is the password hash a rule names: >pw and <pw hash their
// password, #hash and !hash give it (it must be a valid one).
func ruleHash(op string) (string, error) {
	if op[0] == '>' || op[0] == '<' {
		return HashPassword([]byte(op[1:])), nil
	}
	if !validHash(op[1:]) {
		return "", errBadHash
	}
	return op[1:], nil
}

// CheckPassword reports whether pw authenticates u (enabled, and nopass or a
// matching hash), comparing in constant time.
func (u *User) CheckPassword(pw []byte) bool {
	if !u.Enabled() {
		return false
	}
	if u.NoPass() {
		return true
	}
	h := HashPassword(pw)
	ok := false
	for _, p := range u.passwords {
		if subtle.ConstantTimeCompare([]byte(h), []byte(p)) == 1 {
			ok = true
		}
	}
	return ok
}

// apply applies one rule to u (ACLSetUser).
func (u *User) apply(a *ACL, op string) error {
	u.desc = ""
	if op == "" {
		return nil
	}
	lop := strings.ToLower(op)
	switch {
	case lop == "on":
		u.flags = (u.flags | userEnabled) &^ userDisabled
	case lop == "off":
		u.flags = (u.flags | userDisabled) &^ userEnabled
	case lop == "skip-sanitize-payload":
		u.flags = (u.flags | userSkipSanitize) &^ userSanitize
	case lop == "sanitize-payload":
		u.flags = (u.flags | userSanitize) &^ userSkipSanitize
	case lop == "nopass":
		u.flags |= userNoPass
		u.passwords = nil
	case lop == "resetpass":
		u.flags &^= userNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h, err := ruleHash(op)
		if err != nil {
			return err
		}
		found := false
		for _, p := range u.passwords {
			if p == h {
				found = true
				break
			}
		}
		if !found {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= userNoPass
	case op[0] == '<' || op[0] == '!':
		h, err := ruleHash(op)
		if err != nil {
			return err
		}
		for i, p := range u.passwords {
			if p == h {
				u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
				return nil
			}
		}
		return errNoPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s, err := selectorFromOpSet(a.cmds, op, a.PubsubAll, a.Warn)
		if err != nil {
			return err
		}
		u.selectors = append(u.selectors, s)
	case lop == "clearselectors":
		u.selectors = u.selectors[:1]
	case lop == "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels"} {
			_ = u.apply(a, r)
		}
		if a.PubsubAll {
			_ = u.apply(a, "allchannels")
		}
		for _, r := range []string{"off", "sanitize-payload", "clearselectors", "-@all"} {
			_ = u.apply(a, r)
		}
	default:
		return u.selectors[0].apply(a.cmds, op, a.Warn)
	}
	return nil
}

// Describe is the user's rules as ACL LIST shows them, after "user <name> "
// (ACLDescribeUser).
func (u *User) Describe() string {
	if u.desc != "" {
		return u.desc
	}
	var b strings.Builder
	for _, f := range userFlagNames {
		if u.flags&f.flag != 0 {
			b.WriteString(f.name)
			b.WriteByte(' ')
		}
	}
	for _, p := range u.passwords {
		b.WriteByte('#')
		b.WriteString(p)
		b.WriteByte(' ')
	}
	b.WriteString(u.selectors[0].describe())
	for _, s := range u.selectors[1:] {
		b.WriteString(" (")
		b.WriteString(s.describe())
		b.WriteByte(')')
	}
	u.desc = b.String()
	return u.desc
}
