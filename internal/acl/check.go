package acl

import (
	"strings"
	"unsafe"

	"github.com/hotkv/hotkv/internal/glob"
)

// Scratch holds the buffers a check reuses, so that checking allocates
// nothing in the common case. One per goroutine (the engine's).
type Scratch struct {
	keys  []KeyRef
	chans []ChanRef
}

// Check reports whether u may run cmd with argv (argv[0] the command's
// name): OK, or the reason and the argv position of the key or channel that
// no selector allows (0 for the command itself) (ACLCheckAllUserCommandPerm).
// A nil user may run anything.
func (u *User) Check(cmd *Command, argv [][]byte, sc *Scratch) (Reason, int) {
	if u == nil || u.AllPerms() {
		return OK, 0
	}
	relevant, lastPos := DeniedCmd, 0
	keysDone := false
	for _, s := range u.selectors {
		r, pos := s.check(cmd, argv, sc, &keysDone)
		if r == OK {
			return OK, 0
		}
		if r > relevant || r == relevant && pos > lastPos {
			relevant, lastPos = r, pos
		}
	}
	return relevant, lastPos
}

// check is ACLSelectorCheckCmd.
func (s *Selector) check(cmd *Command, argv [][]byte, sc *Scratch, keysDone *bool) (Reason, int) {
	if s.flags&selAllCommands == 0 && !cmd.NoAuth && !s.bit(cmd.ID) {
		args := s.firstArgs[cmd.ID]
		if len(argv) < 2 || args == nil {
			return DeniedCmd, 0
		}
		idx := 1
		if cmd.Parent != nil {
			idx = 2
		}
		found := false
		for _, a := range args {
			if idx < len(argv) && strings.EqualFold(string(argv[idx]), a) {
				found = true
				break
			}
		}
		if !found {
			return DeniedCmd, 0
		}
	}
	if s.flags&selAllKeys == 0 && cmd.Keys != nil {
		if !*keysDone {
			sc.keys = cmd.Keys(argv, sc.keys[:0])
			*keysDone = true
		}
		for _, k := range sc.keys {
			if !s.keyAllowed(argv[k.Pos], k.Flags) {
				return DeniedKey, k.Pos
			}
		}
	}
	if s.flags&selAllChannels == 0 && cmd.Channels != nil {
		sc.chans = cmd.Channels(argv, sc.chans[:0])
		for _, c := range sc.chans {
			if c.Flags&(ChanPublish|ChanSubscribe) == 0 {
				continue
			}
			if !channelInList(s.channels, argv[c.Pos], c.Flags&ChanPattern != 0) {
				return DeniedChannel, c.Pos
			}
		}
	}
	return OK, 0
}

// keyAllowed is ACLSelectorCheckKey.
func (s *Selector) keyAllowed(key []byte, f KeyFlags) bool {
	if s.flags&selAllKeys != 0 {
		return true
	}
	need := permsFor(f)
	for _, p := range s.keys {
		if p.perm&need != need {
			continue
		}
		if matchString(p.pattern, key) {
			return true
		}
	}
	return false
}

// permsFor is the key permissions an access with key-spec flags f needs:
// read for access, write for insert, delete and update.
func permsFor(f KeyFlags) uint8 {
	need := uint8(0)
	if f&KeyAccess != 0 {
		need |= permRead
	}
	if f&(KeyInsert|KeyDelete|KeyUpdate) != 0 {
		need |= permWrite
	}
	return need
}

// matchString matches a key against a pattern without converting the key.
func matchString(pattern string, key []byte) bool {
	return glob.Match(unsafeBytes(pattern), key, false)
}

// unsafeBytes views s as bytes, which the matcher only reads.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// channelInList is ACLCheckChannelAgainstList: a channel matches the
// patterns; a PSUBSCRIBE pattern must equal one literally.
func channelInList(list []string, ch []byte, pattern bool) bool {
	for _, p := range list {
		if pattern && p == string(ch) || !pattern && matchString(p, ch) {
			return true
		}
	}
	return false
}

// CheckKey reports whether u may access key as f says (ACLUserCheckKeyPerm:
// one selector suffices).
func (u *User) CheckKey(key []byte, f KeyFlags) bool {
	if u == nil {
		return true
	}
	for _, s := range u.selectors {
		if s.keyAllowed(key, f) {
			return true
		}
	}
	return false
}

// CheckChannel reports whether u may use channel (ACLUserCheckChannelPerm).
func (u *User) CheckChannel(ch []byte, pattern bool) bool {
	if u == nil {
		return true
	}
	for _, s := range u.selectors {
		if s.flags&selAllChannels != 0 || channelInList(s.channels, ch, pattern) {
			return true
		}
	}
	return false
}

// CheckUnrestrictedKeys reports whether one selector of u both allows the
// command and grants f to every key (SORT's BY and GET patterns:
// ACLUserCheckCmdWithUnrestrictedKeyAccess).
func (u *User) CheckUnrestrictedKeys(cmd *Command, argv [][]byte, f KeyFlags, sc *Scratch) bool {
	if u == nil {
		return true
	}
	keysDone := false
	for _, s := range u.selectors {
		if r, _ := s.check(cmd, argv, sc, &keysDone); r == OK && s.unrestricted(f) {
			return true
		}
	}
	return false
}

func (s *Selector) unrestricted(f KeyFlags) bool {
	if s.flags&selAllKeys != 0 {
		return true
	}
	need := permsFor(f)
	for _, p := range s.keys {
		if p.perm&need == need && p.pattern == "*" {
			return true
		}
	}
	return false
}

// ErrorMessage is the text of a denial after "-NOPERM " (getAclErrorMessage);
// val is the key or channel. verbose names the user and the value (ACL
// DRYRUN).
func ErrorMessage(r Reason, u *User, cmd *Command, val []byte, verbose bool) string {
	switch r {
	case DeniedCmd:
		return "User " + u.Name + " has no permissions to run the '" + cmd.Name + "' command"
	case DeniedKey:
		if verbose {
			return "User " + u.Name + " has no permissions to access the '" + string(val) + "' key"
		}
		return "No permissions to access a key"
	case DeniedChannel:
		if verbose {
			return "User " + u.Name + " has no permissions to access the '" + string(val) + "' channel"
		}
		return "No permissions to access a channel"
	}
	return ""
}
