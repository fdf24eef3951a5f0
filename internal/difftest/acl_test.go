package difftest

import (
	"net"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The ACL rule grammar, its errors and its descriptions (ACL LIST,
// GETUSER in both protocols), byte for byte.
var aclScripted = [][]string{
	{"ACL", "SETUSER", "alice", "on", ">pw", "~app:*", "+@read", "+@write", "-flushall"},
	{"ACL", "GETUSER", "alice"}, {"ACL", "LIST"}, {"ACL", "USERS"},
	{"ACL", "SETUSER", "alice", "%R~r:*", "%W~w:*", "%RW~rw:*", "&chan:*", "+config|get", "+select|0", "-@dangerous"},
	{"ACL", "GETUSER", "alice"}, {"ACL", "LIST"},
	{"ACL", "SETUSER", "alice", "~app:*"}, {"ACL", "GETUSER", "alice"},
	{"ACL", "SETUSER", "bob", "on", "nopass", "(~x* +get)", "(", "%R~y*", "+@string", ")", "allchannels"},
	{"ACL", "GETUSER", "bob"}, {"ACL", "LIST"},
	{"ACL", "SETUSER", "bob", "clearselectors", "resetchannels", "&a", "&b", "&a"}, {"ACL", "GETUSER", "bob"},
	{"ACL", "SETUSER", "bob", "reset"}, {"ACL", "GETUSER", "bob"},
	{"ACL", "SETUSER", "carol", "#" + strings.Repeat("a", 64), "#" + strings.Repeat("b", 64), "!" + strings.Repeat("a", 64)},
	{"ACL", "GETUSER", "carol"},
	{"ACL", "SETUSER", "carol", "allcommands", "-@all", "+@all", "-get", "+get|x", "-config|get", "+client|kill"},
	{"ACL", "GETUSER", "carol"},
	{"ACL", "SETUSER", "carol", "nocommands", "+client", "-client|kill", "+@hash", "-hset", "+@hash"},
	{"ACL", "GETUSER", "carol"},
	{"ACL", "SETUSER", "carol", "skip-sanitize-payload", "off"}, {"ACL", "GETUSER", "carol"},
	// errors
	{"ACL", "SETUSER", "x", "nosuchrule"}, {"ACL", "SETUSER", "x", "+nosuchcmd"}, {"ACL", "SETUSER", "x", "+@nosuchcat"},
	{"ACL", "SETUSER", "x", "allkeys", "~foo"}, {"ACL", "SETUSER", "x", "allchannels", "&foo"},
	{"ACL", "SETUSER", "x", "<nopw"}, {"ACL", "SETUSER", "x", "#abc"}, {"ACL", "SETUSER", "x", "!ABC"},
	{"ACL", "SETUSER", "x", "+config|get|x"}, {"ACL", "SETUSER", "x", "+get|"}, {"ACL", "SETUSER", "x", "(~x", "+get"},
	{"ACL", "SETUSER", "x", "%X~x"}, {"ACL", "SETUSER", "x", "%~x"}, {"ACL", "SETUSER", "x", "%RR~x"},
	{"ACL", "SETUSER", "x", "(nosuch)"}, {"ACL", "SETUSER", "x y"}, {"ACL", "SETUSER", "x", "-config|nosuch"},
	{"ACL", "GETUSER", "x"}, {"ACL", "GETUSER", "nosuch"},
	{"ACL", "DELUSER", "default"}, {"ACL", "DELUSER", "nosuch", "carol"}, {"ACL", "DELUSER", "carol"},
	{"ACL", "DRYRUN", "alice", "get", "app:1"}, {"ACL", "DRYRUN", "alice", "get", "other"},
	{"ACL", "DRYRUN", "alice", "set", "r:1", "v"}, {"ACL", "DRYRUN", "alice", "flushall"},
	{"ACL", "DRYRUN", "alice", "nosuch"}, {"ACL", "DRYRUN", "nosuch", "get", "x"}, {"ACL", "DRYRUN", "alice", "get"},
	{"ACL", "DRYRUN", "alice", "publish", "chan:1", "m"}, {"ACL", "DRYRUN", "alice", "publish", "other", "m"},
	{"ACL", "DRYRUN", "alice", "config", "get", "x"}, {"ACL", "DRYRUN", "alice", "config", "set", "x", "y"},
	{"ACL", "DRYRUN", "bob", "get", "x"}, {"ACL", "DRYRUN", "alice", "select", "0"}, {"ACL", "DRYRUN", "alice", "select", "1"},
	{"ACL", "DRYRUN", "alice", "set", "app:1", "v", "GET"}, {"ACL", "DRYRUN", "alice", "set", "w:1", "v", "GET"},
	{"ACL", "DRYRUN", "alice", "set", "w:1", "v"}, {"ACL", "DRYRUN", "alice", "get", "w:1"},
	{"ACL", "DRYRUN", "alice", "get", "r:1"}, {"ACL", "DRYRUN", "alice", "copy", "r:1", "w:1"},
	{"ACL", "DRYRUN", "alice", "copy", "w:1", "r:1"}, {"ACL", "DRYRUN", "alice", "subscribe", "chan:1", "x"},
	{"ACL", "CAT", "nosuch"}, {"ACL", "CAT", "a", "b"}, {"ACL", "GENPASS", "0"}, {"ACL", "GENPASS", "4097"},
	{"ACL", "GENPASS", "x"}, {"ACL", "LOG", "x"}, {"ACL", "LOG", "1", "2"}, {"ACL", "LOAD"}, {"ACL", "SAVE"},
	{"ACL", "HELP"}, {"ACL", "NOSUCH"}, {"ACL", "WHOAMI"}, {"ACL", "CAT"},
	{"AUTH", "nosuch", "pw"}, {"AUTH", "alice", "bad"}, {"AUTH", "pw"}, {"AUTH", "alice", "pw"}, {"ACL", "WHOAMI"},
	{"CLIENT", "KILL", "USER", "nosuch"},
}

func TestDiffACLScripted(t *testing.T) {
	p := newPair(t)
	for _, args := range aclScripted {
		p.same(args...)
	}
	p.do("HELLO", "3") // the reply lists Redis's modules
	for _, u := range []string{"alice", "bob", "default"} {
		p.same("ACL", "GETUSER", u)
	}
}

// Every category holds the same commands (ACL CAT's order is Redis's hash
// order: compared as sets), so the categories COMMAND INFO shows and the
// rules apply equal Redis's for every command.
func TestDiffACLCategories(t *testing.T) {
	p := newPair(t)
	cats := parseArray(p.same("ACL", "CAT"))
	if len(cats) != 21 {
		t.Fatalf("ACL CAT: %q", cats)
	}
	hk, rd := map[string][]string{}, map[string][]string{}
	hkAll, rdAll := map[string]bool{}, map[string]bool{}
	for _, c := range cats {
		h, r := p.do("ACL", "CAT", c)
		hk[c], rd[c] = parseArray(h), parseArray(r)
		for _, n := range hk[c] {
			hkAll[n] = true
		}
		for _, n := range rd[c] {
			rdAll[n] = true
		}
	}
	// the commands only one side has (HotKV's BLESS, Redis's SLOWLOG...) aside
	common := func(names []string, other map[string]bool) string {
		var out []string
		for _, n := range names {
			if other[n] {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	for _, c := range cats {
		if h, r := common(hk[c], rdAll), common(rd[c], hkAll); h != r {
			t.Errorf("ACL CAT %s:\n hotkv %s\n redis %s", c, h, r)
		}
	}
	if len(hkAll) < 300 {
		t.Errorf("only %d commands in HotKV's categories", len(hkAll))
	}
}

// A restricted user's commands: denials and their errors, MULTI, scripts,
// AUTH failures, and the ACL LOG they leave (times and client details set
// aside).
func TestDiffACLDenials(t *testing.T) {
	p := newPair(t)
	p.same("ACL", "SETUSER", "app", "on", ">pw", "~app:*", "%R~ro:*", "&news", "+@all", "-flushall", "-debug", "+acl|log")
	p.same("SET", "ro:1", "v")
	p.same("AUTH", "app", "wrong")
	p.same("AUTH", "app", "pw")
	for _, args := range [][]string{
		{"SET", "app:1", "v"}, {"GET", "app:1"}, {"SET", "other", "v"}, {"GET", "ro:1"}, {"SET", "ro:1", "v"},
		{"FLUSHALL"}, {"MSET", "app:2", "1", "other", "2"}, {"PUBLISH", "news", "m"}, {"PUBLISH", "sports", "m"},
		{"EVAL", "return redis.call('get', KEYS[1])", "1", "other"},
		{"EVAL", "return redis.call('set', 'other', 'x')", "0"},
		{"EVAL", "return redis.acl_check_cmd('get', 'other')", "0"},
		{"EVAL", "return redis.acl_check_cmd('get', 'app:1')", "0"},
		{"EVAL", "return redis.acl_check_cmd('nosuch')", "0"},
		{"EVAL", "return redis.acl_check_cmd('eval','script')", "0"},
		{"MULTI"}, {"SET", "app:3", "v"}, {"SET", "other", "v"}, {"EXEC"},
		{"MULTI"}, {"SET", "app:4", "v"}, {"GET", "app:4"}, {"EXEC"},
		{"SORT", "app:l", "BY", "x"}, {"SORT", "app:l", "GET", "#"}, {"SORT", "app:l"},
		{"SUBSCRIBE", "sports"},
	} {
		p.same(args...)
	}
	hk, rd := p.do("ACL", "LOG")
	if hk, rd = normalizeACLLog(hk), normalizeACLLog(rd); hk != rd {
		t.Errorf("ACL LOG\n hotkv %q\n redis %q", hk, rd)
	}
	p.same("ACL", "LOG", "RESET")
	p.same("ACL", "LOG")
}

// normalizeACLLog blanks what differs between two servers in ACL LOG:
// times, and the client details (address, buffers) beyond its user, command
// and flags.
func normalizeACLLog(r string) string {
	for _, re := range aclLogVolatile {
		r = re.ReplaceAllString(r, "$1")
	}
	return r
}

var aclLogVolatile = []*regexp.Regexp{
	regexp.MustCompile(`(age-seconds\r\n)\$\d+\r\n[^\r]*\r\n`),
	regexp.MustCompile(`(timestamp-(?:created|last-updated)\r\n):\d+\r\n`),
	regexp.MustCompile(`(client-info\r\n)\$\d+\r\n[^\r]*cmd=(\S+) user=(\S+) [^\r]*\r\n`),
}

// Changing a user's rules while a transaction is queued: EXEC checks again.
func TestDiffACLExecRecheck(t *testing.T) {
	p := newPair(t)
	admin := p.another()
	admin.same("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all")
	p.same("AUTH", "u", "x")
	p.same("MULTI")
	p.same("SET", "k", "v")
	p.same("GET", "k")
	p.same("PUBLISH", "c", "m")
	admin.same("ACL", "SETUSER", "u", "-set", "resetkeys", "~k2")
	p.same("EXEC")
	if hk, rd := admin.do("ACL", "LOG", "1"); normalizeACLLog(hk) != normalizeACLLog(rd) {
		t.Errorf("ACL LOG 1\n hotkv %q\n redis %q", hk, rd)
	}
	// deleting the user closes its connection
	admin.same("ACL", "DELUSER", "u")
	for name, c := range map[string]net.Conn{"hotkv": p.hk, "redis": p.rd} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("%s: the deleted user's connection is open (%d bytes)", name, n)
		}
	}
}
