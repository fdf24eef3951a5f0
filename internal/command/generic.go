package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/glob"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// genericCommands is redis.io's "generic" group (keyspace commands).
func genericCommands() []*Spec {
	const w, r, f = Write, ReadOnly, Fast
	return []*Spec{
		{Name: "copy", Arity: -3, Flags: w | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "RO access", Begin: 1, Step: 1}, {Flags: "OW update", Begin: 2, Step: 1}}, Run: copyCmd},
		{Name: "del", Arity: -2, Flags: w, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RM delete", Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: delCmd},
		{Name: "exists", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO", Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: existsCmd},
		{Name: "expire", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: expireCmd},
		{Name: "expireat", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: expireatCmd},
		{Name: "expiretime", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: expiretimeCmd},
		{Name: "keys", Arity: 2, Flags: r, ACL: []string{"@keyspace", "@read", "@slow", "@dangerous"}, Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"}, Run: keysCmd},
		{Name: "move", Arity: 3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: moveCmd},
		{Name: "object", Arity: -2, Subs: objectSubcommands()},
		{Name: "migrate", Arity: -6, Flags: w, ACL: []string{"@keyspace", "@write", "@slow", "@dangerous"}, FirstKey: 3, LastKey: 3, Step: 1,
			Keys:   []KeySpec{{Flags: "RW access delete", Begin: 3, Step: 1}, {Flags: "RW access delete incomplete", Begin: -2, Last: -1, Step: 1, Keyword: "KEYS"}},
			KeysFn: migrateKeys, KeyFlagsFn: migrateKeyFlags, Tips: []string{"nondeterministic_output"}, Run: migrateCmd},
		{Name: "persist", Arity: 2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: persistCmd},
		{Name: "pexpire", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: pexpireCmd},
		{Name: "pexpireat", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: pexpireatCmd},
		{Name: "pexpiretime", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: pexpiretimeCmd},
		{Name: "pttl", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: pttlCmd},
		{Name: "randomkey", Arity: 1, Flags: r | TouchesArbitraryKeys, Tips: []string{"request_policy:all_shards", "response_policy:special", "nondeterministic_output"}, Run: randomkeyCmd},
		{Name: "rename", Arity: 3, Flags: w, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1}, {Flags: "OW update", Begin: 2, Step: 1}}, Run: renameCmd},
		{Name: "renamenx", Arity: 3, Flags: w | f, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1}, {Flags: "OW insert", Begin: 2, Step: 1}}, Run: renamenxCmd},
		{Name: "scan", Arity: -2, Flags: r | TouchesArbitraryKeys, Tips: []string{"nondeterministic_output", "request_policy:special", "response_policy:special"}, Run: scanCmd},
		{Name: "touch", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO", Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: touchCmd},
		{Name: "ttl", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: ttlCmd},
		{Name: "type", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: typeCmd},
		{Name: "unlink", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RM delete", Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: delCmd},
	}
}

func delCmd(c *Ctx) {
	n := 0
	lazy := -1 // UNLINK, or DEL with lazyfree-lazy-user-del: decided on the first big value
	for _, k := range c.Argv[1:] {
		if e := c.DB.Lookup(k); e != nil && e.FreeEffort() > keyspace.LazyFreeThreshold {
			if lazy < 0 {
				lazy = 0
				if c.Spec.Name == "unlink" || configYes(c, "lazyfree-lazy-user-del") {
					lazy = 1
				}
			}
			c.KS.Stats.LazyFreed += int64(lazy)
		}
		if c.DB.Delete(k) {
			c.Notify('g', "del", k)
			n++
		}
	}
	c.Dirty += n
	c.W.Int(int64(n))
}

// existsCmd counts a key once per time it is named (EXISTS k k is 2).
func existsCmd(c *Ctx) {
	n := 0
	for _, k := range c.Argv[1:] {
		if c.DB.LookupRead(k, true) != nil {
			n++
		}
	}
	c.W.Int(int64(n))
}

func touchCmd(c *Ctx) {
	n := 0
	for _, k := range c.Argv[1:] {
		if c.DB.LookupRead(k, c.Client.NoTouch) != nil {
			n++
		}
	}
	c.W.Int(int64(n))
}

func typeCmd(c *Ctx) {
	e := c.DB.LookupRead(c.Argv[1], true)
	if e == nil {
		c.W.SimpleString("none")
		return
	}
	c.W.SimpleString(e.Kind.String())
}

func expireCmd(c *Ctx)    { expireGeneric(c, c.Now, true, "expire") }
func pexpireCmd(c *Ctx)   { expireGeneric(c, c.Now, false, "pexpire") }
func expireatCmd(c *Ctx)  { expireGeneric(c, 0, true, "expireat") }
func pexpireatCmd(c *Ctx) { expireGeneric(c, 0, false, "pexpireat") }

const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// expireGeneric is Redis's expireGenericCommand: options, then the value (with
// overflow checks), then the key, then the NX/XX/GT/LT conditions (no TTL counts as
// infinite), then a deadline not in the future deletes the key.
func expireGeneric(c *Ctx, base int64, seconds bool, name string) {
	flags := 0
	for _, opt := range c.Argv[3:] {
		switch {
		case eqFold(opt, "nx"):
			flags |= expNX
		case eqFold(opt, "xx"):
			flags |= expXX
		case eqFold(opt, "gt"):
			flags |= expGT
		case eqFold(opt, "lt"):
			flags |= expLT
		default:
			c.Error("ERR Unsupported option " + string(opt))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		c.Err(ErrNXXXGTLT)
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		c.Err(ErrGTLT)
		return
	}
	when, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.Error(ErrInvalidExpire(name))
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.Error(ErrInvalidExpire(name))
		return
	}
	when += base
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	cur := c.DB.ExpireAt(e)
	if (flags&expNX != 0 && cur != 0) ||
		(flags&expXX != 0 && cur == 0) ||
		(flags&expGT != 0 && (cur == 0 || when <= cur)) ||
		(flags&expLT != 0 && cur != 0 && when >= cur) {
		c.W.Int(0)
		return
	}
	if when <= c.Now {
		// a deadline not in the future deletes the key, announced as "del"
		// (and propagated as DEL) by Redis's expireGenericCommand
		c.DB.Delete(key)
		c.Notify('g', "del", key)
		if c.Prop != nil {
			propagateDel(c, key, configYes(c, "lazyfree-lazy-expire"))
		}
	} else {
		c.DB.SetExpire(key, e, when)
		c.Notify('g', "expire", key)
		if c.Prop != nil && name != "pexpireat" {
			// propagated as PEXPIREAT key <ms> [options]: the command name
			// and the time are rewritten, the options kept
			var buf [8][]byte
			argv := append(buf[:0], c.Argv...)
			argv[0], argv[2] = wPexpireat, c.PropInt(when)
			c.PropagateAs(argv...)
		}
	}
	c.Dirty++
	c.W.Int(1)
}

func ttlCmd(c *Ctx)         { ttlGeneric(c, false, false) }
func pttlCmd(c *Ctx)        { ttlGeneric(c, true, false) }
func expiretimeCmd(c *Ctx)  { ttlGeneric(c, false, true) }
func pexpiretimeCmd(c *Ctx) { ttlGeneric(c, true, true) }

// ttlGeneric: -2 for a missing key, -1 without TTL; seconds are rounded as Redis
// does ((ms+500)/1000).
func ttlGeneric(c *Ctx, ms, abs bool) {
	e := c.DB.LookupRead(c.Argv[1], true)
	if e == nil {
		c.W.Int(-2)
		return
	}
	t := c.DB.ExpireAt(e)
	if t == 0 {
		c.W.Int(-1)
		return
	}
	if !abs {
		t = max(t-c.Now, 0)
	}
	if !ms {
		t = (t + 500) / 1000
	}
	c.W.Int(t)
}

func persistCmd(c *Ctx) {
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil || !c.DB.Persist(key, e) {
		c.W.Int(0)
		return
	}
	c.Notify('g', "persist", key)
	c.Dirty++
	c.W.Int(1)
}

func keysCmd(c *Ctx) {
	pat := c.Argv[1]
	all := len(pat) == 1 && pat[0] == '*'
	var keys []string
	c.DB.Range(func(k string, _ *keyspace.Entry) bool {
		if all || glob.MatchString(string(pat), k, false) {
			keys = append(keys, k)
		}
		return true
	})
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

func randomkeyCmd(c *Ctx) {
	k, ok := c.DB.Random(c.Rand)
	if !ok {
		c.W.Null()
		return
	}
	c.W.BulkString(k)
}

// scanCmd: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. A key present for
// the whole iteration is returned at least once: the keyspace's dict uses Redis's
// reverse-binary cursor, which survives growth, shrinking and rehashing.
func scanCmd(c *Ctx) {
	cursor, ok := parseScanCursor(c.Argv[1])
	if !ok {
		c.Err(ErrCursor)
		return
	}
	count := int64(10)
	var pat []byte
	typ, hasType := keyspace.KindNone, false
	for j := 2; j < len(c.Argv); j++ {
		more := len(c.Argv) - 1 - j
		opt := c.Argv[j]
		switch {
		case eqFold(opt, "count") && more > 0:
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 1 {
				c.Err(ErrSyntax)
				return
			}
			count = v
			j++
		case eqFold(opt, "match") && more > 0:
			pat = c.Argv[j+1]
			j++
		case eqFold(opt, "type") && more > 0:
			// an unknown type name filters out everything: Redis 8 still has the
			// "unknown type name" error commented out (db.c, "TODO: uncomment in redis 8.0")
			typ, hasType = kindByName(c.Argv[j+1]), true
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	matchAll := pat == nil || (len(pat) == 1 && pat[0] == '*')
	var keys []string
	maxIter := count * 10
	for {
		cursor = c.DB.Scan(cursor, func(k string, _ *keyspace.Entry) {
			if matchAll || glob.MatchString(string(pat), k, false) {
				keys = append(keys, k)
			}
		})
		maxIter--
		if cursor == 0 || maxIter <= 0 || int64(len(keys)) >= count {
			break
		}
	}
	// filter expired keys (deleting them) and the TYPE filter after the scan step,
	// never during it
	live := keys[:0]
	for _, k := range keys {
		e := c.DB.Lookup([]byte(k))
		if e == nil || (hasType && e.Kind != typ) {
			continue
		}
		live = append(live, k)
	}
	c.W.ArrayLen(2)
	var buf [20]byte
	c.W.Bulk(appendUint(buf[:0], cursor))
	c.W.ArrayLen(len(live))
	for _, k := range live {
		c.W.BulkString(k)
	}
}

// scanOpts are the options of HSCAN, SSCAN and ZSCAN after the cursor.
type scanOpts struct {
	count    int64
	pat      []byte
	noValues bool
}

// matchAll reports whether every element matches (no MATCH, or MATCH *).
func (o *scanOpts) matchAll() bool { return o.pat == nil || (len(o.pat) == 1 && o.pat[0] == '*') }

// matches reports whether element m passes MATCH.
func (o *scanOpts) matches(m []byte) bool { return o.matchAll() || glob.Match(o.pat, m, false) }

// parseScanOpts parses [MATCH pattern] [COUNT count] and the type flags from
// c.Argv[3:] as scanGenericCommand does: NOVALUES is accepted for HSCAN only
// (hash) and refused with Redis's error elsewhere; NOSCORES is refused with its
// error by SSCAN (set). On error it replies and returns false.
func parseScanOpts(c *Ctx, hash, set bool) (scanOpts, bool) {
	o := scanOpts{count: 10}
	for j := 3; j < len(c.Argv); j++ {
		opt, more := c.Argv[j], j+1 < len(c.Argv)
		switch {
		case eqFold(opt, "count") && more:
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return o, false
			}
			if v < 1 {
				c.Err(ErrSyntax)
				return o, false
			}
			o.count = v
			j++
		case eqFold(opt, "match") && more:
			o.pat = c.Argv[j+1]
			j++
		case eqFold(opt, "novalues") && hash:
			o.noValues = true
		case eqFold(opt, "novalues"):
			c.Error("ERR NOVALUES option can only be used in HSCAN")
			return o, false
		case eqFold(opt, "noscores") && set:
			c.Error("ERR NOSCORES option can only be used in ZSCAN")
			return o, false
		default:
			c.Err(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// replyEmptyScan is the reply of a scan of a missing key.
func replyEmptyScan(c *Ctx) {
	c.W.ArrayLen(2)
	c.W.BulkString("0")
	c.W.ArrayLen(0)
}

// parseScanCursor accepts an unsigned 64-bit decimal, as Redis's strtoull-based
// parseScanCursorOrReply does (no sign, no spaces, no overflow).
func parseScanCursor(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func appendUint(dst []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

func kindByName(b []byte) keyspace.Kind {
	for k := keyspace.KindString; k <= keyspace.KindStream; k++ {
		if eqFold(b, k.String()) {
			return k
		}
	}
	return keyspace.KindNone
}

func renameCmd(c *Ctx)   { renameGeneric(c, false) }
func renamenxCmd(c *Ctx) { renameGeneric(c, true) }

func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Argv[1], c.Argv[2]
	if c.DB.LookupWrite(src) == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.SimpleString("OK")
		}
		return
	}
	d := c.DB.LookupWrite(dst)
	if nx && d != nil {
		c.W.Int(0)
		return
	}
	srcKind := c.DB.Lookup(src).Kind
	overwritten, typeChanged := d != nil, d != nil && d.Kind != srcKind
	// Redis's renameGenericCommand: dst is deleted and added ("new"), then
	// "rename_from", "rename_to", and "overwritten"/"type_changed" for a
	// replaced dst
	c.DB.Rename(src, dst)
	c.Notify('g', "rename_from", src)
	c.Notify('g', "rename_to", dst)
	if overwritten {
		c.Notify('o', "overwritten", dst)
		if typeChanged {
			c.Notify('c', "type_changed", dst)
		}
	}
	c.Dirty++
	if nx {
		c.W.Int(1)
	} else {
		c.W.SimpleString("OK")
	}
}

// parseDBIndex parses a database number: not an integer is ErrNotInt, outside
// 0..databases-1 is ErrDBIndex.
func parseDBIndex(c *Ctx, b []byte) (int, bool) {
	v, ok := resp.ParseInt(b)
	if !ok || v < math.MinInt32 || v > math.MaxInt32 {
		c.Err(ErrNotInt)
		return 0, false
	}
	if v < 0 || v >= int64(len(c.KS.DBs)) {
		c.Err(ErrDBIndex)
		return 0, false
	}
	return int(v), true
}

func moveCmd(c *Ctx) {
	dbid, ok := parseDBIndex(c, c.Argv[2])
	if !ok {
		return
	}
	if dbid == c.DB.ID {
		c.Err(ErrSameObject)
		return
	}
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	dst := c.KS.DBs[dbid]
	if dst.LookupWrite(key) != nil {
		c.W.Int(0)
		return
	}
	v, at := *e, c.DB.ExpireAt(e)
	c.DB.Delete(key)
	dst.Insert(key, v, at) // "new" in the destination database
	c.Notify('g', "move_from", key)
	c.NotifyIn(dst, 'g', "move_to", key)
	c.Dirty++
	c.W.Int(1)
}

// copyCmd: COPY source destination [DB destination-db] [REPLACE].
func copyCmd(c *Ctx) {
	src, dstKey := c.Argv[1], c.Argv[2]
	dst := c.DB
	replace := false
	for j := 3; j < len(c.Argv); j++ {
		more := len(c.Argv) - 1 - j
		switch {
		case eqFold(c.Argv[j], "replace"):
			replace = true
		case eqFold(c.Argv[j], "db") && more > 0:
			id, ok := parseDBIndex(c, c.Argv[j+1])
			if !ok {
				return
			}
			dst = c.KS.DBs[id]
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if dst == c.DB && string(src) == string(dstKey) {
		c.Err(ErrSameObject)
		return
	}
	e := c.DB.LookupRead(src, true)
	if e == nil {
		c.W.Int(0)
		return
	}
	d := dst.LookupWrite(dstKey)
	if d != nil && !replace {
		c.W.Int(0)
		return
	}
	overwritten, typeChanged := d != nil, d != nil && d.Kind != e.Kind
	// Redis's copyCommand: "new" (dbAdd), "copy_to", then "overwritten" and
	// "type_changed" for a replaced destination, all in the destination db
	dst.Insert(dstKey, e.Clone(), c.DB.ExpireAt(e))
	c.NotifyIn(dst, 'g', "copy_to", dstKey)
	if overwritten {
		c.NotifyIn(dst, 'o', "overwritten", dstKey)
		if typeChanged {
			c.NotifyIn(dst, 'c', "type_changed", dstKey)
		}
	}
	c.Dirty++
	c.W.Int(1)
}

func objectSubcommands() []*Spec {
	return []*Spec{
		{Name: "encoding", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO", Tips: []string{"nondeterministic_output"}, Run: objectEncoding},
		{Name: "freq", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO", Tips: []string{"nondeterministic_output"}, Run: objectFreq},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: objectHelp},
		{Name: "idletime", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO", Tips: []string{"nondeterministic_output"}, Run: objectIdletime},
		{Name: "refcount", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO", Tips: []string{"nondeterministic_output"}, Run: objectRefcount},
	}
}

func objectLookup(c *Ctx) *keyspace.Entry {
	e := c.DB.Lookup(c.Argv[2])
	if e == nil {
		c.W.Null()
	}
	return e
}

func objectEncoding(c *Ctx) {
	if e := objectLookup(c); e != nil {
		c.W.BulkString(e.EncodingName())
	}
}

func objectIdletime(c *Ctx) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if c.Srv.LFU() {
		c.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		return
	}
	c.W.Int(c.KS.IdleSeconds(e))
}

func objectFreq(c *Ctx) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if !c.Srv.LFU() {
		c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		return
	}
	c.W.Int(c.KS.LFUFreq(e)) // LFUDecrAndReturn: decayed to now, not stored
}

// objectRefcount: one reference. Redis 8 stores a key and its value in one
// object (kvobj), so even the small integers Redis 7 shared (and reported as
// INT_MAX) have their own: Redis 8.6.3 replies 1 for every key.
func objectRefcount(c *Ctx) {
	if objectLookup(c) != nil {
		c.W.Int(1)
	}
}

func objectHelp(c *Ctx) {
	writeHelp(c, "OBJECT",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
	)
}

// writeHelp writes a HELP reply the way Redis's addReplyHelp does: a header line,
// the lines, and the trailing HELP line, as status strings.
func writeHelp(c *Ctx, cmd string, lines ...string) {
	c.W.ArrayLen(len(lines) + 3)
	c.W.SimpleString(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.SimpleString(l)
	}
	c.W.SimpleString("HELP")
	c.W.SimpleString("    Print this help.")
}
