package command

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/resp"
)

// BLESS (Redis 8.12's eviction protection, decision 0044): BLESS SET and
// BLESS CLEAR protect a key from eviction and remove the protection, BLESS
// GET lists a key's flags, BLESS SCAN iterates the protected keys of the
// database. NO-EVICT is the only flag. The keyspace keeps the protected keys
// (keyspace/bless.go); eviction skips them under every policy.

func blessCommands() []*Spec {
	return []*Spec{
		{Name: "bless", Arity: -2, Subs: []*Spec{
			{Name: "set", Arity: 4, Flags: Write | DenyOOM | Fast, ACL: []string{"@dangerous", "@write", "@fast"}, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW update", Run: blessSetCmd},
			{Name: "clear", Arity: 4, Flags: Write | Fast, ACL: []string{"@dangerous", "@write", "@fast"}, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW update", Run: blessClearCmd},
			{Name: "get", Arity: 3, Flags: ReadOnly | Fast, ACL: []string{"@keyspace", "@fast"}, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO access", Run: blessGetCmd},
			{Name: "scan", Arity: -4, Flags: ReadOnly, ACL: []string{"@keyspace", "@slow"}, Tips: []string{"nondeterministic_output"}, Run: blessScanCmd},
		}},
	}
}

var flagNoEvict = "NO-EVICT"

// blessFlag checks the flag argument: NO-EVICT, the only one.
func blessFlag(c *Ctx, a []byte) bool {
	if !eqFold(a, "no-evict") {
		c.Error("ERR unknown protection flag '" + string(a) + "'")
		return false
	}
	return true
}

// blessSetCmd: BLESS SET key NO-EVICT.
func blessSetCmd(c *Ctx) { blessChange(c, c.DB.Bless, "bless") }

// blessClearCmd: BLESS CLEAR key NO-EVICT.
func blessClearCmd(c *Ctx) { blessChange(c, c.DB.Unbless, "unbless") }

// blessChange is BLESS SET and CLEAR: change reports whether the key's
// protection changed, which announces event and replies 1.
func blessChange(c *Ctx, change func(key []byte) bool, event string) {
	key := c.Argv[2]
	if !blessFlag(c, c.Argv[3]) {
		return
	}
	if c.DB.LookupWrite(key) == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if !change(key) {
		c.W.Int(0)
		return
	}
	c.Notify('g', event, key)
	c.Dirty++
	c.W.Int(1)
}

// blessGetCmd: BLESS GET key.
func blessGetCmd(c *Ctx) {
	key := c.Argv[2]
	if c.DB.LookupRead(key, c.Client.NoTouch) == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if !c.DB.IsBlessed(string(key)) {
		c.W.ArrayLen(0)
		return
	}
	c.W.ArrayLen(1)
	c.W.Bulk([]byte(flagNoEvict))
}

// blessScanCmd: BLESS SCAN cursor NO-EVICT [COUNT count].
func blessScanCmd(c *Ctx) {
	cursor, ok := parseScanCursor(c.Argv[2])
	if !ok {
		c.Err(ErrCursor)
		return
	}
	if !blessFlag(c, c.Argv[3]) {
		return
	}
	count := int64(1024)
	for i := 4; i < len(c.Argv); i += 2 {
		if !eqFold(c.Argv[i], "count") || i+1 >= len(c.Argv) {
			c.Err(ErrSyntax)
			return
		}
		n, ok := resp.ParseInt(c.Argv[i+1])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		if n < 1 {
			c.Err(ErrSyntax)
			return
		}
		count = n
	}
	var found []string
	next := c.DB.ScanBlessed(cursor, int(min(count, 1<<20)), func(k string) { found = append(found, k) })
	keys := found[:0]
	for _, k := range found { // after the scan: a lookup may delete an expired key
		if c.DB.Lookup([]byte(k)) != nil {
			keys = append(keys, k)
		}
	}
	c.W.ArrayLen(2)
	c.W.Bulk([]byte(strconv.FormatUint(next, 10)))
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		c.W.Bulk([]byte(k))
	}
}
