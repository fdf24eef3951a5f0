package command

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// stringCommands is redis.io's "string" group (Redis 8.4).
func stringCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "append", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: appendCmd},
		{Name: "decr", Arity: 2, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: decrCmd},
		{Name: "decrby", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: decrbyCmd},
		{Name: "delex", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW delete variable_flags", Begin: 1, Step: 1}}, KeyFlagsFn: delexKeyFlags, Run: delexCmd},
		{Name: "delifeq", Arity: 3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: delifeqCmd},
		{Name: "digest", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: digestCmd},
		{Name: "get", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: getCmd},
		{Name: "getdel", Arity: 2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: getdelCmd},
		{Name: "getex", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW access update", Begin: 1, Step: 1, Notes: "RW and UPDATE because it changes the TTL"}}, Run: getexCmd},
		{Name: "getrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: getrangeCmd},
		{Name: "getset", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: getsetCmd},
		{Name: "incr", Arity: 2, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: incrCmd},
		{Name: "incrby", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: incrbyCmd},
		{Name: "incrbyfloat", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: incrbyfloatCmd},
		{Name: "lcs", Arity: -3, Flags: r, FirstKey: 1, LastKey: 2, Step: 1, KeyFlags: "RO access", Run: lcsCmd},
		{Name: "mget", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO access", Tips: []string{"request_policy:multi_shard"}, Run: mgetCmd},
		{Name: "mset", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 2, KeyFlags: "OW update", Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"}, Run: msetCmd},
		{Name: "msetex", Arity: -4, Flags: w | d, Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"}, Run: msetexCmd, KeysFn: msetexKeys, Keys: []KeySpec{{Flags: "OW update", Begin: 1, Step: 2, Keynum: true}}},
		{Name: "msetnx", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 2, KeyFlags: "OW insert", Run: msetnxCmd},
		{Name: "psetex", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "OW update", Run: psetexCmd},
		{Name: "set", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW access update variable_flags", Begin: 1, Step: 1, Notes: "RW and ACCESS due to the optional `GET` argument"}}, KeyFlagsFn: setKeyFlags, Run: setCmd},
		{Name: "setex", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "OW update", Run: setexCmd},
		{Name: "setnx", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "OW insert", Run: setnxCmd},
		{Name: "setrange", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: setrangeCmd},
		{Name: "strlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: strlenCmd},
		{Name: "substr", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: getrangeCmd},
	}
}

// lookupString reads key for a read command: nil with no reply when missing,
// nil after a WRONGTYPE reply when it holds another kind.
func lookupString(c *Ctx, key []byte) (e *keyspace.Entry, wrongType bool) {
	e = c.DB.LookupRead(key, c.Client.NoTouch)
	if e != nil && e.Kind != keyspace.KindString {
		c.Err(ErrWrongType)
		return nil, true
	}
	return e, false
}

func getCmd(c *Ctx) {
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	replyValue(c, e)
}

// replyValue writes a string entry's value as a bulk reply. A long one is
// referred to rather than copied (resp.Writer.BulkRef), as Redis 8's copy
// avoidance: the entry is then shared, so that a change in place copies it
// first (keyspace.Entry.Writable) and the reply sends the value it read.
func replyValue(c *Ctx, e *keyspace.Entry) {
	if c.W.BulkRef(e.Bytes()) {
		e.Share()
	}
}

// setCmd: SET key value [NX|XX] [IFEQ v|IFNE v|IFDEQ d|IFDNE d] [GET] [EX|PX|EXAT|PXAT t|KEEPTTL]
// Validation order (redis-lock-commands.md §1.2): options, then the expire value,
// then GET's type check, then the condition (type, digest length only when the key
// exists), then NX/XX. Redis 8.6 sends two replies for GET with a badly formed
// digest; HotKV sends only the error (docs/decisions/0003-set-get-ifdeq-single-reply.md).
func setCmd(c *Ctx) {
	o, ok := parseSetOpts(c.Argv[3:], kindSet)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	at, msg := o.expireAt(c.Now, "set")
	if msg != "" {
		c.Error(msg)
		return
	}
	key, val := c.Argv[1], c.Argv[2]
	var e *keyspace.Entry
	if o.flags&optGet != 0 {
		// GET reads the key as GET does (getGenericCommand): a miss counts and
		// announces "keymiss"
		e = c.DB.LookupRead(key, c.Client.NoTouch)
	} else {
		e = c.DB.LookupWrite(key)
	}
	if o.flags&optGet != 0 && e != nil && e.Kind != keyspace.KindString {
		c.Err(ErrWrongType)
		return
	}
	cond := true
	if o.flags&optCond != 0 {
		var errMsg string
		cond, errMsg = checkCond(o.flags&optCond, o.condArg, e)
		if errMsg != "" {
			c.Error(errMsg)
			return
		}
	}
	if (o.flags&optNX != 0 && e != nil) || (o.flags&optXX != 0 && e == nil) {
		cond = false
		if at != 0 && o.flags&optNX != 0 {
			c.LockRefused(key) // a lock, held by someone else
		}
	}
	if o.flags&optGet != 0 {
		if e == nil {
			c.W.Null()
		} else {
			c.W.Bulk(e.Bytes()) // appended (copied) before the value is overwritten
		}
	}
	if !cond {
		if o.flags&optGet == 0 {
			c.W.Null()
		}
		return
	}
	lock := at != 0 && o.flags&optNX != 0
	if lock {
		c.LockAcquired(key, val, at) // before the set (Ctx.LockAcquired)
	}
	ne := setWithExpire(c, key, val, o.flags&optKeepTTL != 0, at)
	if lock {
		c.LockEntry(ne)
	}
	notifySetExpire(c, key, at)
	if o.flags&optGet == 0 {
		c.W.SimpleString("OK")
	}
	if at != 0 && o.flags&optNX != 0 && c.KS.ProtectLocks {
		protectLock(c, key, val, at)
		return
	}
	if c.Prop != nil {
		propagateSet(c, o.flags, at)
	}
}

var (
	wBless   = []byte("BLESS")
	wNoEvict = []byte("NO-EVICT")
)

// protectLock blesses a lock just taken (SET NX with an expiry, under
// protect-locks-from-eviction): eviction never takes it while it holds; it goes
// with the key (expiry, DELEX). The stream says so explicitly (SET ... PXAT,
// then BLESS SET), so that replicas and the AOF protect it whatever their
// own setting.
func protectLock(c *Ctx, key, val []byte, at int64) {
	c.DB.Bless(key)
	if c.Prop != nil {
		c.AlsoPropagate(wSet, key, val, wPXAT, c.PropInt(at))
		c.AlsoPropagate(wBless, wSet, key, wNoEvict)
		c.PreventPropagation()
	}
}

// Shared propagation words (Redis's shared.*).
var (
	wSet       = []byte("SET")
	wPXAT      = []byte("PXAT")
	wKeepTTL   = []byte("KEEPTTL")
	wDel       = []byte("DEL")
	wUnlink    = []byte("UNLINK")
	wPexpireat = []byte("PEXPIREAT")
	wPersist   = []byte("PERSIST")
)

// propagateSet is setGenericCommand's rewrite: a relative or EXAT deadline
// goes out as SET key value PXAT <ms> (the other options dropped); without a
// deadline, GET (which may repeat) is left out.
func propagateSet(c *Ctx, flags setFlags, at int64) {
	switch {
	case at != 0 && flags&optPXAT == 0:
		c.PropagateAs(wSet, c.Argv[1], c.Argv[2], wPXAT, c.PropInt(at))
	case at == 0 && flags&optGet != 0:
		var buf [8][]byte
		argv := buf[:0]
		for i, a := range c.Argv {
			if i >= 3 && eqFold(a, "get") {
				continue
			}
			argv = append(argv, a)
		}
		c.PropagateAs(argv...)
	}
}

// propagateDel rewrites the command as a deletion of key: UNLINK when the
// lazyfree parameter's value (lazy) is yes.
func propagateDel(c *Ctx, key []byte, lazy bool) {
	if lazy {
		c.PropagateAs(wUnlink, key)
	} else {
		c.PropagateAs(wDel, key)
	}
}

// setWithExpire stores a string and applies an absolute deadline (0: none), as
// Redis's setGenericCommand: a deadline already in the past is stored too, so
// the key is absent for every command from now on and expires (lazily or
// actively, announcing "expired") like any other. The keyspace announces
// "new" or "overwritten"/"type_changed"; the caller announces "set" and
// "expire" (notifySetExpire) in the order its command uses.
func setWithExpire(c *Ctx, key, val []byte, keepTTL bool, at int64) *keyspace.Entry {
	var ne *keyspace.Entry
	if len(val) >= keyspace.ShareMin && ownedArg(c, val) {
		ne = c.DB.SetStringOwned(key, val, keepTTL) // no copy of a big value
	} else {
		ne = c.DB.SetString(key, val, keepTTL)
	}
	c.Dirty++
	if at != 0 {
		c.DB.SetExpire(key, ne, at)
	}
	return ne
}

// ownedArg reports whether val is one of the command's arguments that it may
// keep (Ctx.Own).
func ownedArg(c *Ctx, val []byte) bool {
	if c.Own == 0 {
		return false
	}
	for i, a := range c.Argv {
		if i < 64 && c.Own&(1<<i) != 0 && unsafe.SliceData(a) == unsafe.SliceData(val) && len(a) == len(val) {
			return true
		}
	}
	return false
}

// notifySetExpire announces what the SET family announces after storing the
// value: "set", then "expire" when a deadline was given.
func notifySetExpire(c *Ctx, key []byte, at int64) {
	c.Notify('$', "set", key)
	if at != 0 {
		c.Notify('g', "expire", key)
	}
}

// checkCond evaluates IFEQ/IFNE/IFDEQ/IFDNE against the current entry (nil when
// missing). A missing key fails IFEQ/IFDEQ and passes IFNE/IFDNE without any
// validation; an existing key must be a string (WRONGTYPE) and a digest must be 16
// characters. Shared by SET and DELEX, which differ only in the type error.
func checkCond(cond setFlags, arg []byte, e *keyspace.Entry) (ok bool, errMsg string) {
	if e == nil {
		return cond == optIFNE || cond == optIFDNE, ""
	}
	if e.Kind != keyspace.KindString {
		return false, ErrWrongType.Text()
	}
	switch cond {
	case optIFEQ:
		return string(e.Bytes()) == string(arg), ""
	case optIFNE:
		return string(e.Bytes()) != string(arg), ""
	}
	if len(arg) != 16 {
		return false, ErrDigestLen.Text()
	}
	var d [16]byte
	same := eqFoldBytes(appendDigest(d[:0], e.Bytes()), arg)
	if cond == optIFDEQ {
		return same, ""
	}
	return !same, ""
}

// appendDigest appends DIGEST's text: XXH3-64 (seed 0) as 16 lowercase hex digits.
// Int-encoded values hash their decimal text, which is how HotKV stores them anyway.
func appendDigest(dst, val []byte) []byte { return appendHash(dst, xxh3.Hash(val)) }

// appendHash appends h as DIGEST prints a digest: 16 lowercase hex digits.
func appendHash(dst []byte, h uint64) []byte {
	const hexd = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hexd[(h>>uint(i))&0xf])
	}
	return dst
}

func eqFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 32
		}
		if 'A' <= y && y <= 'Z' {
			y += 32
		}
		if x != y {
			return false
		}
	}
	return true
}

func setnxCmd(c *Ctx) {
	if c.DB.LookupWrite(c.Argv[1]) != nil {
		c.W.Int(0)
		return
	}
	c.DB.SetString(c.Argv[1], c.Argv[2], false)
	c.Dirty++
	c.Notify('$', "set", c.Argv[1])
	c.W.Int(1)
}

func setexCmd(c *Ctx)  { setexGeneric(c, true, "setex") }
func psetexCmd(c *Ctx) { setexGeneric(c, false, "psetex") }

func setexGeneric(c *Ctx, seconds bool, name string) {
	at, msg := expireArgToAbs(c.Argv[2], seconds, false, c.Now, name)
	if msg != "" {
		c.Error(msg)
		return
	}
	setWithExpire(c, c.Argv[1], c.Argv[3], false, at)
	notifySetExpire(c, c.Argv[1], at)
	c.W.SimpleString("OK")
	c.PropagateAs(wSet, c.Argv[1], c.Argv[3], wPXAT, c.PropInt(at))
}

// getsetCmd reads the key as GET does (a miss announces "keymiss"), then
// sets it; replicas and the AOF get a SET (Redis's getsetCommand rewrites
// its argv[0]).
func getsetCmd(c *Ctx) {
	key := c.Argv[1]
	e, wt := lookupString(c, key)
	if wt {
		return
	}
	if e == nil {
		c.W.Null()
	} else {
		replyValue(c, e)
	}
	c.DB.SetString(key, c.Argv[2], false)
	c.Notify('$', "set", key)
	c.Dirty++
	c.PropagateAs(wSet, key, c.Argv[2])
}

func getdelCmd(c *Ctx) {
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	replyValue(c, e)
	c.DB.Delete(c.Argv[1])
	c.Notify('g', "del", c.Argv[1])
	c.Dirty++
	c.PropagateAs(wDel, c.Argv[1]) // getdelCommand: propagated as DEL
}

// getexCmd: GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]. Options are parsed
// first, then the key is looked up (missing: null even with a bad expire), then the
// type, then the expire value.
func getexCmd(c *Ctx) {
	o, ok := parseSetOpts(c.Argv[2:], kindGetex)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	key := c.Argv[1]
	e, wt := lookupString(c, key)
	if wt {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	at, msg := o.expireAt(c.Now, "getex")
	if msg != "" {
		c.Error(msg)
		return
	}
	replyValue(c, e)
	// getexCommand propagates DEL/UNLINK, PEXPIREAT key <ms> or PERSIST key
	switch {
	case at != 0 && at <= c.Now:
		c.DB.Delete(key)
		c.Notify('g', "del", key)
		c.Dirty++
		if c.Prop != nil {
			propagateDel(c, key, configYes(c, "lazyfree-lazy-expire"))
		}
	case at != 0:
		c.DB.SetExpire(key, e, at)
		c.Notify('g', "expire", key)
		c.Dirty++
		c.PropagateAs(wPexpireat, key, c.PropInt(at))
	case o.flags&optPersist != 0:
		if c.DB.Persist(key, e) {
			c.Notify('g', "persist", key)
			c.Dirty++
			c.PropagateAs(wPersist, key)
		}
	}
}

func strlenCmd(c *Ctx) {
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(len(e.Bytes())))
}

// getrangeCmd is GETRANGE and SUBSTR (Redis 7 semantics for negative indexes).
func getrangeCmd(c *Ctx) {
	start, ok1 := resp.ParseInt(c.Argv[2])
	end, ok2 := resp.ParseInt(c.Argv[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		c.W.BulkString("")
		return
	}
	n := int64(len(e.Bytes()))
	if start < 0 && end < 0 && start > end {
		c.W.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.BulkString("")
		return
	}
	c.W.Bulk(e.Bytes()[start : end+1])
}

// checkStringLength enforces proto-max-bulk-len on a value of cur bytes about to
// grow by add bytes, overflow included (Redis's checkStringLength).
func checkStringLength(c *Ctx, cur, add int64) bool {
	total := cur + add
	if total < cur || total < add || total > c.Srv.ProtoMaxBulkLen() {
		c.Err(ErrStringTooLong)
		return false
	}
	return true
}

func appendCmd(c *Ctx) {
	key, add := c.Argv[1], c.Argv[2]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.DB.SetString(key, add, false)
		c.Notify('$', "append", key)
		c.Dirty++
		c.W.Int(int64(len(add)))
		return
	}
	if e.Kind != keyspace.KindString {
		c.Err(ErrWrongType)
		return
	}
	if !checkStringLength(c, int64(len(e.Bytes())), int64(len(add))) {
		return
	}
	e.SetBytes(append(e.Bytes(), add...))
	e.Enc = keyspace.EncRaw
	c.DB.Touch(key)
	c.Notify('$', "append", key)
	c.Dirty++
	c.W.Int(int64(len(e.Bytes())))
}

func setrangeCmd(c *Ctx) {
	key, val := c.Argv[1], c.Argv[3]
	off, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if off < 0 {
		c.Err(ErrOffsetRange)
		return
	}
	e, ok := lookupKind(c, key, keyspace.KindString, true)
	if !ok {
		return
	}
	if len(val) == 0 {
		// nothing to write: report the current length, create nothing
		if e == nil {
			c.W.Int(0)
		} else {
			c.W.Int(int64(len(e.Bytes())))
		}
		return
	}
	if !checkStringLength(c, off, int64(len(val))) {
		return
	}
	if e == nil {
		e = c.DB.SetString(key, nil, false)
	}
	e.Writable() // a reply may still refer to the bytes
	need := int(off) + len(val)
	if cur := e.Bytes(); need > len(cur) {
		if need > cap(cur) {
			grown := make([]byte, need) // zeroed
			copy(grown, cur)
			e.SetBytes(grown)
		} else {
			e.SetBytes(cur[:need])
			clear(cur[len(cur):need])
		}
	}
	copy(e.Bytes()[off:], val)
	e.Enc = keyspace.EncRaw
	c.DB.Touch(key)
	c.Notify('$', "setrange", key)
	c.Dirty++
	c.W.Int(int64(len(e.Bytes())))
}

func incrCmd(c *Ctx) { incrBy(c, 1) }
func decrCmd(c *Ctx) { incrBy(c, -1) }

func incrbyCmd(c *Ctx) {
	n, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	incrBy(c, n)
}

func decrbyCmd(c *Ctx) {
	n, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if n == math.MinInt64 {
		c.Error("ERR decrement would overflow")
		return
	}
	incrBy(c, -n)
}

// incrBy adds n to the integer at key, in place and without allocating when the
// value's buffer has room for the new digits.
func incrBy(c *Ctx, n int64) {
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	var cur int64
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.Err(ErrWrongType)
			return
		}
		v, ok := resp.ParseInt(e.Bytes())
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		cur = v
	}
	if (n < 0 && cur < 0 && n < math.MinInt64-cur) || (n > 0 && cur > 0 && n > math.MaxInt64-cur) {
		c.Err(ErrOverflow)
		return
	}
	cur += n
	if e == nil {
		var buf [20]byte
		e = c.DB.SetString(key, strconv.AppendInt(buf[:0], cur, 10), false)
	} else {
		e.SetBytes(strconv.AppendInt(e.Writable()[:0], cur, 10))
		e.Enc = keyspace.EncInt
		c.DB.Touch(key)
	}
	c.Notify('$', "incrby", key)
	c.Dirty++
	c.W.Int(cur)
}

// incrbyfloatCmd computes in long double as Redis does (resp.LongDouble), so the
// digits and the range (beyond float64's 1.8e308) match Redis's.
func incrbyfloatCmd(c *Ctx) {
	key := c.Argv[1]
	incr, ok := resp.ParseLongDouble(c.Argv[2])
	if !ok {
		c.Err(ErrNotFloat)
		return
	}
	e := c.DB.LookupWrite(key)
	var cur resp.LongDouble
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.Err(ErrWrongType)
			return
		}
		if cur, ok = resp.ParseLongDouble(e.Bytes()); !ok {
			c.Err(ErrNotFloat)
			return
		}
	}
	sum := cur.Add(incr)
	if sum.IsNaN() || sum.IsInf() {
		c.Err(ErrNaNInf)
		return
	}
	out := sum.AppendText(nil)
	// the result is stored as text, never int-encoded (createStringObjectFromLongDouble);
	// an existing key's value is replaced in place, keeping its TTL and announcing
	// nothing but "incrbyfloat" (dbReplaceValue); a missing key is created ("new")
	ne := e
	if ne == nil {
		ne = c.DB.SetString(key, out, false)
	} else {
		ne.SetBytes(out)
		c.DB.Touch(key)
	}
	ne.Enc = keyspace.EncEmbstr
	if len(out) > 44 {
		ne.Enc = keyspace.EncRaw
	}
	ne.FitKey(key)
	c.Notify('$', "incrbyfloat", key)
	c.Dirty++
	c.W.Bulk(out)
	// replicated as SET with the result, so that float formatting can never
	// differ on the other side (incrbyfloatCommand)
	c.PropagateAs(wSet, key, out, wKeepTTL)
}

func mgetCmd(c *Ctx) {
	c.W.ArrayLen(len(c.Argv) - 1)
	for _, k := range c.Argv[1:] {
		e := c.DB.LookupRead(k, c.Client.NoTouch)
		if e == nil || e.Kind != keyspace.KindString {
			c.W.Null()
			continue
		}
		replyValue(c, e)
	}
}

func msetCmd(c *Ctx) {
	if len(c.Argv)%2 != 1 {
		c.Error(ErrArity("mset"))
		return
	}
	for i := 1; i < len(c.Argv); i += 2 {
		c.DB.SetString(c.Argv[i], c.Argv[i+1], false)
		c.Notify('$', "set", c.Argv[i])
		c.Dirty++
	}
	c.W.SimpleString("OK")
}

func msetnxCmd(c *Ctx) {
	if len(c.Argv)%2 != 1 {
		c.Error(ErrArity("msetnx"))
		return
	}
	for i := 1; i < len(c.Argv); i += 2 {
		if c.DB.LookupWrite(c.Argv[i]) != nil {
			c.W.Int(0)
			return
		}
	}
	for i := 1; i < len(c.Argv); i += 2 {
		c.DB.SetString(c.Argv[i], c.Argv[i+1], false)
		c.Notify('$', "set", c.Argv[i])
		c.Dirty++
	}
	c.W.Int(1)
}

// msetexNumkeys parses MSETEX's numkeys: 1..INT_MAX.
func msetexNumkeys(argv [][]byte) (int, bool) {
	n, ok := resp.ParseInt(argv[1])
	if !ok || n < 1 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

func msetexKeys(argv [][]byte) []int {
	n, ok := msetexNumkeys(argv)
	if !ok || n > (len(argv)-2)/2 {
		return nil
	}
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, 2+2*i)
	}
	return out
}

// msetexCmd: MSETEX numkeys key value [key value ...] [NX|XX] [EX|PX|EXAT|PXAT t|KEEPTTL].
// All or nothing: with NX every key must be missing, with XX every key must exist.
func msetexCmd(c *Ctx) {
	n, ok := msetexNumkeys(c.Argv)
	if !ok {
		c.Err(ErrNumkeys)
		return
	}
	if n > (len(c.Argv)-2)/2 {
		c.Err(ErrKVPairs)
		return
	}
	end := 2 + 2*n
	o, ok := parseSetOpts(c.Argv[end:], kindMsetex)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	at, msg := o.expireAt(c.Now, "msetex")
	if msg != "" {
		c.Error(msg)
		return
	}
	if o.flags&(optNX|optXX) != 0 {
		for i := 2; i < end; i += 2 {
			exists := c.DB.LookupWrite(c.Argv[i]) != nil
			if exists == (o.flags&optNX != 0) {
				c.W.Int(0)
				return
			}
		}
	}
	for i := 2; i < end; i += 2 {
		setWithExpire(c, c.Argv[i], c.Argv[i+1], o.flags&optKeepTTL != 0, at)
		if at != 0 {
			c.Notify('g', "expire", c.Argv[i])
		}
		c.Notify('$', "set", c.Argv[i])
	}
	c.W.Int(1)
	if c.Prop != nil && at != 0 && o.flags&optPXAT == 0 {
		// a relative (or EXAT) deadline goes out as PXAT <ms>
		argv := make([][]byte, 0, len(c.Argv))
		argv = append(argv, c.Argv[:end]...)
		for i := end; i < len(c.Argv); i++ {
			if a := c.Argv[i]; eqFold(a, "ex") || eqFold(a, "px") || eqFold(a, "exat") {
				i++
				continue
			}
			argv = append(argv, c.Argv[i])
		}
		c.PropagateAs(append(argv, wPXAT, c.PropInt(at))...)
	}
}

func digestCmd(c *Ctx) {
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	var d [16]byte
	c.W.Bulk(appendDigest(d[:0], e.Bytes()))
}

// delifeqCmd is Valkey 9's DELIFEQ key value, which clients written for
// Valkey send to release a lock: DELEX key IFEQ value, but a key of another
// type is WRONGTYPE (DELEX's own error names its options). Replicated as the
// DEL it did.
func delifeqCmd(c *Ctx) {
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.LockStale(key, nil)
		c.W.Int(0)
		return
	}
	if e.Kind != keyspace.KindString {
		c.Err(ErrWrongType)
		return
	}
	if ok, _ := checkCond(optIFEQ, c.Argv[2], e); !ok {
		c.LockStale(key, e)
		c.W.Int(0)
		return
	}
	c.LockReleased(key, e) // before the deletion (Ctx.LockReleased)
	c.DB.Delete(key)
	c.Notify('g', "del", key)
	c.Dirty++
	c.W.Int(1)
	c.PropagateAs(wDel, key)
}

// delexCmd: DELEX key [IFEQ v|IFNE v|IFDEQ d|IFDNE d]. The key is looked up before
// anything is validated (a missing key is :0 whatever the condition); a condition
// on a non-string is its own error, not WRONGTYPE.
func delexCmd(c *Ctx) {
	if len(c.Argv) != 2 && len(c.Argv) != 4 {
		c.Error(ErrArity("delex"))
		return
	}
	key := c.Argv[1]
	// a token release (IFEQ, IFDEQ) is a lock's release; one that deletes
	// nothing came from a holder that had lost the lock
	var cond setFlags
	if len(c.Argv) == 4 {
		cond = condFlag(c.Argv[2])
	}
	release := cond&(optIFEQ|optIFDEQ) != 0
	var e *keyspace.Entry
	if len(c.Argv) == 4 {
		// a condition reads the key as Redis's delexCommand does
		// (lookupKeyRead): a keyspace hit or miss, and "keymiss"
		e = c.DB.LookupRead(key, c.Client.NoTouch)
	} else {
		e = c.DB.LookupWrite(key)
	}
	if e == nil {
		if release {
			c.LockStale(key, nil)
		}
		c.W.Int(0)
		return
	}
	if len(c.Argv) == 4 {
		if e.Kind != keyspace.KindString {
			c.Err(ErrDelexType)
			return
		}
		if cond == 0 {
			c.Err(ErrDelexCond)
			return
		}
		ok, msg := checkCond(cond, c.Argv[3], e)
		if msg != "" {
			c.Error(msg)
			return
		}
		if !ok {
			if release {
				c.LockStale(key, e)
			}
			c.W.Int(0)
			return
		}
	}
	if release {
		c.LockReleased(key, e) // before the deletion (Ctx.LockReleased)
	}
	c.DB.Delete(key)
	c.Notify('g', "del", key)
	c.Dirty++
	c.W.Int(1)
	if len(c.Argv) == 4 {
		c.PropagateAs(wDel, key) // the condition held here: replay it as the deletion
	}
}
