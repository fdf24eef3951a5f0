package command

import (
	"math"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// hashCommands is redis.io's "hash" group (Redis 8.4), field expiry included.
// The field-expiry commands and HGETDEL/HGETEX/HSETEX are in hash_ttl.go,
// HSCAN and HRANDFIELD in hash_scan.go.
func hashCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "hdel", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: hdelCmd},
		{Name: "hexists", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: hexistsCmd},
		{Name: "hexpire", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hexpireCmd},
		{Name: "hexpireat", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hexpireatCmd},
		{Name: "hexpiretime", Arity: -5, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: hexpiretimeCmd},
		{Name: "hget", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: hgetCmd},
		{Name: "hgetall", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output_order"}, Run: hgetallCmd},
		{Name: "hgetdel", Arity: -5, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: hgetdelCmd},
		{Name: "hgetex", Arity: -5, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW access update", Begin: 1, Step: 1, Notes: "RW and UPDATE because it changes the TTL"}}, Run: hgetexCmd},
		{Name: "hincrby", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: hincrbyCmd},
		{Name: "hincrbyfloat", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: hincrbyfloatCmd},
		{Name: "hkeys", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output_order"}, Run: hkeysCmd},
		{Name: "hlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: hlenCmd},
		{Name: "hmget", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: hmgetCmd},
		{Name: "hmset", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hmsetCmd},
		{Name: "hpersist", Arity: -5, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hpersistCmd},
		{Name: "hpexpire", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hpexpireCmd},
		{Name: "hpexpireat", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hpexpireatCmd},
		{Name: "hpexpiretime", Arity: -5, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: hpexpiretimeCmd},
		{Name: "hpttl", Arity: -5, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: hpttlCmd},
		{Name: "hrandfield", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: hrandfieldCmd},
		{Name: "hscan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: hscanCmd},
		{Name: "hset", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hsetCmd},
		{Name: "hsetex", Arity: -6, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: hsetexCmd},
		{Name: "hsetnx", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: hsetnxCmd},
		{Name: "hstrlen", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: hstrlenCmd},
		{Name: "httl", Arity: -5, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: httlCmd},
		{Name: "hvals", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output_order"}, Run: hvalsCmd},
	}
}

// Expired fields. A field whose deadline is <= now is logically gone, but, as in
// Redis 8.4, it stays in the hash until something deletes it, and the commands
// differ in what they do with it (see Redis's hashTypeGetValue callers):
//   - commands that look a field up by name (HGET, HMGET, HEXISTS, HSTRLEN,
//     HINCRBY*, HSETNX, HGETDEL, HGETEX, HSETEX's FNX/FXX) delete it on the way
//     (expired_subkeys, "hexpired", and the key when it was the last field);
//   - commands that list fields (HGETALL, HKEYS, HVALS, HSCAN) skip it;
//   - HRANDFIELD deletes every expired field first;
//   - HLEN counts it, HDEL deletes it (and counts it), HSET/HMSET/HSETEX overwrite
//     it as an existing field, HEXPIRE* treat it as existing, HTTL/HPERSIST report
//     it as missing.
// The active expiry cycle (DB.ActiveExpireHashFields) reclaims the rest.

// Lazy field expiry options of getField (Redis's HFE_LAZY_* flags).
const (
	lazyNoNotify = 1 << iota // the caller sends one "hexpired" for the command
	lazyKeepHash             // the caller deletes the key if the hash is left empty
)

// Results of getField (Redis's GetFieldRes).
const (
	fieldOK          = iota
	fieldNotFound    // no such field
	fieldExpired     // its deadline had passed: deleted
	fieldExpiredHash // ... and it was the last field: the key was deleted too
)

// hashLookup returns the hash stored at key (nil if none), or ok=false after a
// WRONGTYPE reply.
func hashLookup(c *Ctx, key []byte, write bool) (h *keyspace.Hash, ok bool) {
	e, ok := lookupKind(c, key, keyspace.KindHash, write)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.Hash), true
}

// hashCreate stores a new empty hash at key.
func hashCreate(c *Ctx, key []byte) *keyspace.Hash {
	// a nil *Hash stores an empty hash without a stand-alone one to copy
	return c.DB.SetObject(key, keyspace.KindHash, (*keyspace.Hash)(nil)).Obj().(*keyspace.Hash)
}

// getField is Redis's hashTypeGetValue: it returns field f of the hash h stored at
// key, deleting it instead if its deadline has passed.
func getField(c *Ctx, key []byte, h *keyspace.Hash, f []byte, flags int) ([]byte, int64, int) {
	v, exp, ok := h.Get(f)
	if !ok {
		return nil, 0, fieldNotFound
	}
	if exp == 0 || exp > c.Now {
		return v, exp, fieldOK
	}
	c.DB.Changing(key)
	h.Del(f)
	c.KS.Stats.ExpiredSubkeys++
	c.AlsoPropagate(wHdel, key, f) // propagateHashFieldDeletion
	res := fieldExpired
	if flags&lazyNoNotify == 0 {
		c.Notify('h', "hexpired", key)
	}
	if h.Len() == 0 && flags&lazyKeepHash == 0 {
		if flags&lazyNoNotify == 0 {
			c.Notify('g', "del", key)
		}
		c.DB.Delete(key)
		return nil, 0, fieldExpiredHash
	}
	c.DB.HashFieldTTLChanged(key, h)
	c.DB.Touch(key)
	return nil, 0, res
}

// live reports whether a field with deadline exp is visible at c.Now.
func live(c *Ctx, exp int64) bool { return exp == 0 || exp > c.Now }

func hsetCmd(c *Ctx)  { hsetGeneric(c, "hset") }
func hmsetCmd(c *Ctx) { hsetGeneric(c, "hmset") }

// hsetGeneric is HSET and HMSET: one allocation-free pass over a listpack hash
// (the redis-benchmark hot path) or a table.
func hsetGeneric(c *Ctx, name string) {
	if len(c.Argv)%2 != 0 {
		c.Error(ErrArity(name))
		return
	}
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		h = hashCreate(c, key)
	}
	ttls := h.FieldTTLs()
	created := h.SetPairs(c.Argv[2:], c.KS.HashOpts())
	if ttls != 0 {
		c.DB.HashFieldTTLChanged(key, h)
	}
	if name == "hset" {
		c.W.Int(int64(created))
	} else {
		c.W.SimpleString("OK")
	}
	c.DB.Touch(key)
	c.Notify('h', "hset", key)
	c.Dirty += (len(c.Argv) - 2) / 2
}

func hsetnxCmd(c *Ctx) {
	key, f := c.Argv[1], c.Argv[2]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		h = hashCreate(c, key)
	}
	switch _, _, res := getField(c, key, h, f, 0); res {
	case fieldOK:
		c.W.Int(0)
		return
	case fieldExpiredHash:
		h = hashCreate(c, key)
	}
	h.SetPairs(c.Argv[2:4], c.KS.HashOpts())
	c.W.Int(1)
	c.DB.Touch(key)
	c.Notify('h', "hset", key)
	c.Dirty++
}

func hgetCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	if h == nil {
		c.W.Null()
		return
	}
	if v, _, res := getField(c, key, h, c.Argv[2], 0); res == fieldOK {
		c.W.Bulk(v)
	} else {
		c.W.Null()
	}
}

func hmgetCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Argv) - 2)
	expired, deleted := 0, false
	for _, f := range c.Argv[2:] {
		if h == nil || deleted {
			c.W.Null()
			continue
		}
		v, _, res := getField(c, key, h, f, lazyNoNotify)
		switch res {
		case fieldOK:
			c.W.Bulk(v)
			continue
		case fieldExpired:
			expired++
		case fieldExpiredHash:
			deleted = true
		}
		c.W.Null()
	}
	// as Redis's hmgetCommand: the events go out only if a field expired
	// without emptying the hash
	if expired > 0 {
		c.Notify('h', "hexpired", key)
		if deleted {
			c.Notify('g', "del", key)
		}
	}
}

func hdelCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	ttls := h.FieldTTLs()
	deleted, removed := 0, false
	for _, f := range c.Argv[2:] {
		if h.Del(f) {
			deleted++
			if h.Len() == 0 {
				c.DB.Delete(key)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		c.DB.Touch(key)
		c.Notify('h', "hdel", key)
		if removed {
			c.Notify('g', "del", key)
		} else if ttls > 0 {
			c.DB.HashFieldTTLChanged(key, h)
		}
		c.Dirty += deleted
	}
	c.W.Int(int64(deleted))
}

// hlenCmd counts fields whose deadline passed but that were not deleted yet, as
// Redis does.
func hlenCmd(c *Ctx) {
	h, ok := hashLookup(c, c.Argv[1], false)
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(h.Len()))
}

func hstrlenCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	v, _, res := getField(c, key, h, c.Argv[2], 0)
	if res != fieldOK {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(len(v)))
}

func hexistsCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	if _, _, res := getField(c, key, h, c.Argv[2], 0); res == fieldOK {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// Parts of a hash that HGETALL, HKEYS and HVALS list.
const (
	listFields = 1 << iota
	listValues
)

func hkeysCmd(c *Ctx)   { hgetallGeneric(c, listFields) }
func hvalsCmd(c *Ctx)   { hgetallGeneric(c, listValues) }
func hgetallCmd(c *Ctx) { hgetallGeneric(c, listFields|listValues) }

// hgetallGeneric is genericHgetallCommand: HGETALL replies with a map (a flat
// array in RESP2), HKEYS and HVALS with arrays; expired fields are skipped, not
// deleted.
func hgetallGeneric(c *Ctx, what int) {
	h, ok := hashLookup(c, c.Argv[1], false)
	if !ok {
		return
	}
	both := what == listFields|listValues
	n := 0
	if h != nil {
		n = h.Len()
		if h.FieldTTLs() > 0 {
			n = 0
			h.Range(func(_, _ []byte, exp int64) bool {
				if live(c, exp) {
					n++
				}
				return true
			})
		}
	}
	if both {
		c.W.MapLen(n)
	} else {
		c.W.ArrayLen(n)
	}
	if n == 0 {
		return
	}
	h.Range(func(f, v []byte, exp int64) bool {
		if live(c, exp) {
			if what&listFields != 0 {
				c.W.Bulk(f)
			}
			if what&listValues != 0 {
				c.W.Bulk(v)
			}
		}
		return true
	})
}

func hincrbyCmd(c *Ctx) {
	incr, ok := resp.ParseInt(c.Argv[3])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	key, f := c.Argv[1], c.Argv[2]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		h = hashCreate(c, key)
	}
	var cur int64
	switch v, _, res := getField(c, key, h, f, 0); res {
	case fieldOK:
		if cur, ok = resp.ParseInt(v); !ok {
			c.Error("ERR hash value is not an integer")
			return
		}
	case fieldExpiredHash:
		h = hashCreate(c, key)
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		c.Err(ErrOverflow)
		return
	}
	cur += incr
	var buf [20]byte
	h.Set(f, strconv.AppendInt(buf[:0], cur, 10), true, c.KS.HashOpts())
	c.W.Int(cur)
	c.DB.Touch(key)
	c.Notify('h', "hincrby", key)
	c.Dirty++
}

// hincrbyfloatCmd computes in long double and formats the result as Redis's
// ld2string(LD_STR_HUMAN) does (resp.LongDouble), like INCRBYFLOAT. The field
// keeps its deadline.
func hincrbyfloatCmd(c *Ctx) {
	incr, ok := resp.ParseLongDouble(c.Argv[3])
	if !ok {
		c.Err(ErrNotFloat)
		return
	}
	if incr.IsNaN() || incr.IsInf() {
		c.Err(ErrIncrFloatNaN)
		return
	}
	key, f := c.Argv[1], c.Argv[2]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		h = hashCreate(c, key)
	}
	var cur resp.LongDouble
	switch v, _, res := getField(c, key, h, f, 0); res {
	case fieldOK:
		if cur, ok = resp.ParseLongDouble(v); !ok {
			c.Error("ERR hash value is not a float")
			return
		}
	case fieldExpiredHash:
		h = hashCreate(c, key)
	}
	sum := cur.Add(incr)
	if sum.IsNaN() || sum.IsInf() {
		c.Err(ErrNaNInf)
		return
	}
	out := sum.AppendText(nil)
	h.Set(f, out, true, c.KS.HashOpts())
	c.W.Bulk(out)
	c.DB.Touch(key)
	c.Notify('h', "hincrbyfloat", key)
	c.Dirty++
	// hincrbyfloatCommand (8.6): replicated as HSETEX with the result, keeping
	// the field's TTL
	c.PropagateAs(wHsetex, key, wKeepTTL, wFields, wOne, f, out)
}

var (
	wHset   = []byte("HSET")
	wHsetex = []byte("HSETEX")
	wHdel   = []byte("HDEL")
	wOne    = []byte("1")
)
