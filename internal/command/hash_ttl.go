package command

import (
	"math/bits"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// Hash field expiry (Redis 7.4+) and HGETDEL/HGETEX/HSETEX (Redis 8.0), after
// t_hash.c. Deadlines are absolute Unix ms, computed at parse time from the
// frozen now.

// hfeMaxAbsMs is HFE_MAX_ABS_TIME_MSEC: (2^48-1) >> 2, the largest field deadline.
const hfeMaxAbsMs = (1<<48 - 1) >> 2

// Redis's error texts for the FIELDS block.
const (
	errFieldsMissing  = "ERR Mandatory argument FIELDS is missing or not at the right position"
	errNumFieldsMatch = "ERR The `numfields` parameter must match the number of arguments"
	errNumFieldsPos   = "ERR Number of fields must be a positive integer"
)

// parseFieldExpire is parseExpireTime: a non-negative integer in seconds or ms,
// plus base (now for relative forms, 0 for absolute ones), within hfeMaxAbsMs.
func parseFieldExpire(c *Ctx, arg []byte, seconds bool, base int64, name string) (int64, bool) {
	v, ok := resp.ParseInt(arg)
	if !ok {
		c.Err(ErrNotInt)
		return 0, false
	}
	if v < 0 {
		c.Error("ERR invalid expire time, must be >= 0")
		return 0, false
	}
	if seconds {
		if v > hfeMaxAbsMs/1000 {
			c.Error(ErrInvalidExpire(name))
			return 0, false
		}
		v *= 1000
	}
	if v > hfeMaxAbsMs-base {
		c.Error(ErrInvalidExpire(name))
		return 0, false
	}
	return v + base, true
}

// parseFields reads "FIELDS numfields field..." with FIELDS at argv[at]: it
// returns the fields, or nil after an error reply (getRangeLongFromObjectOrReply
// with msg, then the count check).
func parseFields(c *Ctx, at int, msg string) [][]byte {
	if !eqFold(c.Argv[at], "fields") {
		c.Error(errFieldsMissing)
		return nil
	}
	n, ok := resp.ParseInt(c.Argv[at+1])
	if !ok || n < 1 {
		c.Error(msg)
		return nil
	}
	if n != int64(len(c.Argv)-at-2) {
		c.Error(errNumFieldsMatch)
		return nil
	}
	return c.Argv[at+2:]
}

// replyCodes replies an array of n copies of code (a missing key).
func replyCodes(c *Ctx, n int, code int64) {
	c.W.ArrayLen(n)
	for range n {
		c.W.Int(code)
	}
}

// finishFieldChange deletes the key if the hash is empty (with Redis's "del"
// event) and otherwise files it in the DB's field-expiry registry.
func finishFieldChange(c *Ctx, key []byte, h *keyspace.Hash) {
	if h.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
		return
	}
	c.DB.HashFieldTTLChanged(key, h)
}

// HEXPIRE's conditions (ExpireSetCond).
const (
	hfeNX = 1 + iota
	hfeXX
	hfeGT
	hfeLT
)

// Per-field replies of HEXPIRE (SetExRes).
const (
	hsetexNoField = -2
	hsetexNoCond  = 0
	hsetexOK      = 1
	hsetexDeleted = 2
)

func hexpireCmd(c *Ctx)    { hexpireGeneric(c, c.Now, true, "hexpire") }
func hpexpireCmd(c *Ctx)   { hexpireGeneric(c, c.Now, false, "hpexpire") }
func hexpireatCmd(c *Ctx)  { hexpireGeneric(c, 0, true, "hexpireat") }
func hpexpireatCmd(c *Ctx) { hexpireGeneric(c, 0, false, "hpexpireat") }

// parseHexpireArgs is Redis 8.6's parseHashCommandArgs after the deadline
// (argv[2]): the condition (NX, XX, GT or LT; one may repeat, two differ)
// and the FIELDS block in any order. It returns the condition and the
// fields, or ok=false after Redis's error.
func parseHexpireArgs(c *Ctx) (cond int, fields [][]byte, ok bool) {
	argv := c.Argv
	first, seen := -1, 0
	for i := 3; i < len(argv); i++ {
		switch arg := argv[i]; {
		case eqFold(arg, "fields"):
			if first != -1 {
				c.Error("ERR FIELDS keyword specified multiple times")
				return 0, nil, false
			}
			if i >= len(argv)-2 {
				c.Error("ERR FIELDS requires at least numfields and one field argument")
				return 0, nil, false
			}
			n, nok := resp.ParseInt(argv[i+1])
			if !nok || n < 1 || n > 1<<31-1 {
				c.Error("ERR Parameter `numFields` should be greater than 0")
				return 0, nil, false
			}
			first = i + 2
			if int64(first)+n > int64(len(argv)) {
				c.Error("ERR wrong number of arguments")
				return 0, nil, false
			}
			fields = argv[first : first+int(n)]
			i = first + int(n) - 1
		case eqFold(arg, "nx"):
			seen |= 1 << hfeNX
		case eqFold(arg, "xx"):
			seen |= 1 << hfeXX
		case eqFold(arg, "gt"):
			seen |= 1 << hfeGT
		case eqFold(arg, "lt"):
			seen |= 1 << hfeLT
		default:
			c.Error(sanitize(append([]byte("ERR unknown argument: "), arg...)))
			return 0, nil, false
		}
	}
	if first == -1 {
		c.Error("ERR missing FIELDS argument")
		return 0, nil, false
	}
	if bits.OnesCount(uint(seen)) > 1 {
		c.Error("ERR Multiple condition flags specified")
		return 0, nil, false
	}
	if seen != 0 {
		cond = bits.TrailingZeros(uint(seen))
	}
	return cond, fields, true
}

// hexpireGeneric is hexpireGenericCommand: HEXPIRE key time [NX|XX|GT|LT] FIELDS
// numfields field... The key's type is checked first, then the arguments. Every
// field gets a code: -2 no such field, 0 condition not met (a field without a
// deadline counts as never expiring: XX and GT fail, LT passes), 1 set, 2 deleted
// because the deadline is not in the future.
func hexpireGeneric(c *Ctx, base int64, seconds bool, name string) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	at, ok := parseFieldExpire(c, c.Argv[2], seconds, base, name)
	if !ok {
		return
	}
	cond, fields, ok := parseHexpireArgs(c)
	if !ok {
		return
	}
	if h == nil {
		replyCodes(c, len(fields), hsetexNoField)
		return
	}
	h.EnableFieldTTL()
	c.W.ArrayLen(len(fields))
	updated, deleted := 0, 0
	var prop fieldTTLProp
	for _, f := range fields {
		_, prev, exists := h.Get(f)
		switch {
		case !exists:
			c.W.Int(hsetexNoField)
		case prev == 0 && (cond == hfeXX || cond == hfeGT),
			prev != 0 && (cond == hfeNX || (cond == hfeGT && prev >= at) || (cond == hfeLT && prev <= at)):
			c.W.Int(hsetexNoCond)
		case at <= c.Now:
			h.Del(f)
			c.KS.Stats.ExpiredSubkeys++
			deleted++
			c.W.Int(hsetexDeleted)
			prop.deleted(c, key, f)
		default:
			h.SetFieldTTL(f, at)
			updated++
			c.W.Int(hsetexOK)
			prop.updated(c, f)
		}
	}
	prop.done(c, wHpexpireat, key, at)
	if updated+deleted > 0 {
		c.Dirty += updated + deleted
		c.DB.Touch(key)
		if deleted > 0 {
			c.Notify('h', "hdel", key)
		} else {
			c.Notify('h', "hexpire", key)
		}
	}
	finishFieldChange(c, key, h)
}

func httlCmd(c *Ctx)         { httlGeneric(c, false, false) }
func hpttlCmd(c *Ctx)        { httlGeneric(c, true, false) }
func hexpiretimeCmd(c *Ctx)  { httlGeneric(c, false, true) }
func hpexpiretimeCmd(c *Ctx) { httlGeneric(c, true, true) }

// httlGeneric is httlGenericCommand: per field -2 (no such field, or expired), -1
// (no deadline), or the time left (or the deadline); seconds are rounded up.
func httlGeneric(c *Ctx, ms, abs bool) {
	h, ok := hashLookup(c, c.Argv[1], false)
	if !ok {
		return
	}
	fields := parseFields(c, 2, errNumFieldsPos)
	if fields == nil {
		return
	}
	if h == nil {
		replyCodes(c, len(fields), -2)
		return
	}
	base := c.Now
	if abs {
		base = 0
	}
	c.W.ArrayLen(len(fields))
	for _, f := range fields {
		_, exp, exists := h.Get(f)
		switch {
		case !exists:
			c.W.Int(-2)
		case exp == 0:
			c.W.Int(-1)
		case exp <= c.Now:
			c.W.Int(-2)
		case ms:
			c.W.Int(exp - base)
		default:
			c.W.Int((exp + 999 - base) / 1000)
		}
	}
}

// hpersistCmd: per field -2 (no such field, or expired), -1 (no deadline), 1
// (deadline removed).
func hpersistCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	fields := parseFields(c, 2, errNumFieldsPos)
	if fields == nil {
		return
	}
	if h == nil {
		replyCodes(c, len(fields), -2)
		return
	}
	c.W.ArrayLen(len(fields))
	changed := false
	for _, f := range fields {
		_, exp, exists := h.Get(f)
		switch {
		case !exists:
			c.W.Int(-2)
		case exp == 0:
			c.W.Int(-1)
		case exp <= c.Now:
			c.W.Int(-2)
		default:
			h.SetFieldTTL(f, 0)
			changed = true
			c.W.Int(1)
		}
	}
	if changed {
		c.Notify('h', "hpersist", key)
		c.DB.Touch(key)
		c.Dirty++
		c.DB.HashFieldTTLChanged(key, h)
	}
}

// hgetdelCmd: HGETDEL key FIELDS numfields field... replies the values (null for
// missing or expired fields) and deletes the fields; the key goes with the last.
func hgetdelCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	fields := parseFields(c, 2, errNumFieldsPos)
	if fields == nil {
		return
	}
	c.W.ArrayLen(len(fields))
	if h == nil {
		for range fields {
			c.W.Null()
		}
		return
	}
	expired, deleted := 0, 0
	var prop fieldTTLProp
	for _, f := range fields {
		v, _, res := getField(c, key, h, f, lazyNoNotify|lazyKeepHash)
		if res != fieldOK {
			c.W.Null()
			if res == fieldExpired {
				expired++
			}
			continue
		}
		c.W.Bulk(v) // copied into the reply before the field goes
		h.Del(f)
		deleted++
		prop.updated(c, f)
	}
	if len(prop.fields) > 0 {
		c.PropagateAs(append([][]byte{wHdel, key}, prop.fields...)...) // replicated as HDEL
	}
	if expired == 0 && deleted == 0 {
		return
	}
	c.DB.Touch(key)
	if expired > 0 {
		c.Notify('h', "hexpired", key)
	}
	if deleted > 0 {
		c.Notify('h', "hdel", key)
		c.Dirty += deleted
	}
	finishFieldChange(c, key, h)
}

// Options of HGETEX and HSETEX.
const (
	hfeEX = 1 << iota
	hfePX
	hfeEXAT
	hfePXAT
	hfePersist
	hfeKeepTTL
	hfeFXX
	hfeFNX
	hfeAnyTTL = hfeEX | hfePX | hfeEXAT | hfePXAT
)

// hgetexCmd: HGETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] FIELDS numfields
// field... replies the values and, for fields that exist, sets or removes their
// deadline; a deadline not in the future deletes the field.
func hgetexCmd(c *Ctx) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	args, ok := parseHashExArgs(c, false)
	if !ok {
		return
	}
	cond, at, fields := args.flags, args.at, args.fields(c.Argv)
	c.W.ArrayLen(len(fields))
	if h == nil {
		for range fields {
			c.W.Null()
		}
		return
	}
	if cond != 0 {
		h.EnableFieldTTL()
	}
	expired, deleted, updated := 0, 0, 0
	var prop fieldTTLProp
	for _, f := range fields {
		v, exp, res := getField(c, key, h, f, lazyNoNotify|lazyKeepHash)
		if res != fieldOK {
			c.W.Null()
			if res == fieldExpired {
				expired++
			}
			continue
		}
		c.W.Bulk(v)
		switch {
		case cond == 0:
		case cond == hfePersist:
			if exp != 0 {
				h.SetFieldTTL(f, 0)
				updated++
				prop.updated(c, f)
			}
		case at <= c.Now:
			h.Del(f)
			c.KS.Stats.ExpiredSubkeys++
			deleted++
			prop.deleted(c, key, f)
		default:
			h.SetFieldTTL(f, at)
			updated++
			prop.updated(c, f)
		}
	}
	// replicated as HPEXPIREAT key <ms> / HPERSIST key FIELDS n <updated...>,
	// and HDEL for the fields it deleted
	if cond == hfePersist {
		prop.done(c, wHpersist, key, 0)
	} else {
		prop.done(c, wHpexpireat, key, at)
	}
	if expired == 0 && deleted == 0 && updated == 0 {
		return
	}
	c.Dirty += deleted + updated
	c.DB.Touch(key)
	if expired > 0 {
		c.Notify('h', "hexpired", key)
	}
	switch {
	case updated > 0 && cond == hfePersist:
		c.Notify('h', "hpersist", key)
	case updated > 0:
		c.Notify('h', "hexpire", key)
	case deleted > 0:
		c.Notify('h', "hdel", key)
	}
	finishFieldChange(c, key, h)
}

// hashExArgs are the arguments of HGETEX and HSETEX (parseHashExArgs).
type hashExArgs struct {
	flags int   // hfe*
	at    int64 // the deadline (Unix ms) of EX, PX, EXAT or PXAT
	atPos int   // where the deadline's value is in argv (0: none)
	first int   // the first field's position
	n     int   // numfields
	per   int   // arguments per field: 1 (HGETEX) or 2 (HSETEX: field value)
}

// fields are the FIELDS block's arguments: n fields (HGETEX) or field value
// pairs (HSETEX).
func (a *hashExArgs) fields(argv [][]byte) [][]byte {
	return argv[a.first : a.first+a.n*a.per]
}

// parseHashExArgs is Redis 8.6's parseHashFieldExpireArgs, for HGETEX and
// HSETEX (setex): the options and the FIELDS block in any order, FIELDS
// once; an option's deadline is checked as it is read. HGETEX takes one of
// EX, PX, EXAT, PXAT and PERSIST; HSETEX one of EX, PX, EXAT, PXAT and
// KEEPTTL, and one of FXX and FNX. Each error is Redis's, in Redis's order
// (an option of the other command is refused last: "unknown argument").
func parseHashExArgs(c *Ctx, setex bool) (a hashExArgs, ok bool) {
	argv := c.Argv
	a.first, a.per = -1, 1
	if setex {
		a.per = 2
	}
	for i := 2; i < len(argv); i++ {
		opt := 0
		switch arg := argv[i]; {
		case eqFold(arg, "fields"):
			if a.first != -1 {
				c.Error("ERR FIELDS keyword specified multiple times")
				return a, false
			}
			if i+1 >= len(argv) {
				c.Error(ErrArity(c.Spec.FullName()))
				return a, false
			}
			n, nok := resp.ParseInt(argv[i+1])
			if !nok || n < 1 || n > 1<<31-1 {
				c.Error("ERR invalid number of fields")
				return a, false
			}
			a.first, a.n = i+2, int(n)
			if int64(a.first)+n*int64(a.per) > int64(len(argv)) {
				c.Error("ERR wrong number of arguments")
				return a, false
			}
			i = a.first + a.n*a.per - 1
			continue
		case eqFold(arg, "ex"):
			opt = hfeEX
		case eqFold(arg, "px"):
			opt = hfePX
		case eqFold(arg, "exat"):
			opt = hfeEXAT
		case eqFold(arg, "pxat"):
			opt = hfePXAT
		case eqFold(arg, "persist"):
			opt = hfePersist
		case eqFold(arg, "keepttl"):
			opt = hfeKeepTTL
		case eqFold(arg, "fxx"):
			opt = hfeFXX
		case eqFold(arg, "fnx"):
			opt = hfeFNX
		default:
			c.Error(sanitize(append([]byte("ERR unknown argument: "), arg...)))
			return a, false
		}
		var clash int
		switch opt {
		case hfePersist:
			clash = hfeAnyTTL | hfePersist
		case hfeKeepTTL:
			clash = hfeAnyTTL | hfeKeepTTL
		case hfeFXX, hfeFNX:
			clash = hfeFXX | hfeFNX
		default:
			clash = hfeAnyTTL | hfeKeepTTL | hfePersist
		}
		if a.flags&clash != 0 {
			switch {
			case clash == hfeFXX|hfeFNX:
				c.Error("ERR Only one of FXX or FNX arguments can be specified")
			case setex:
				c.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
			default:
				c.Error("ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified")
			}
			return a, false
		}
		a.flags |= opt
		if opt&hfeAnyTTL == 0 {
			continue
		}
		if i >= len(argv)-1 {
			c.Error("ERR missing expire time")
			return a, false
		}
		i++
		base := int64(0)
		if opt&(hfeEX|hfePX) != 0 {
			base = c.Now
		}
		var pok bool
		if a.at, pok = parseFieldExpire(c, argv[i], opt&(hfeEX|hfeEXAT) != 0, base, c.Spec.FullName()); !pok {
			return a, false
		}
		a.atPos = i
	}
	if a.first == -1 {
		c.Error("ERR missing FIELDS argument")
		return a, false
	}
	if (!setex && a.flags&(hfeKeepTTL|hfeFXX|hfeFNX) != 0) || (setex && a.flags&hfePersist != 0) {
		c.Error("ERR unknown argument")
		return a, false
	}
	return a, true
}

// hsetexCmd replies 1 when it set every field, 0 when FNX or FXX refused. With
// EX/PX/EXAT/PXAT the fields get the deadline (a deadline not in the future
// deletes them again); with KEEPTTL existing fields keep theirs; otherwise the
// fields lose their deadlines. A field named twice is set twice, the last value
// winning.
func hsetexCmd(c *Ctx) {
	args, ok := parseHashExArgs(c, true)
	if !ok {
		return
	}
	flags, at, pairs := args.flags, args.at, args.fields(c.Argv)
	key := c.Argv[1]
	h, ok := hashLookup(c, key, true)
	if !ok {
		return
	}
	if h == nil {
		if flags&hfeFXX != 0 {
			c.W.Int(0)
			return
		}
		h = hashCreate(c, key)
	}
	expired, deleted, updated, set := 0, 0, 0, false
	if flags&(hfeFXX|hfeFNX) != 0 {
		found, n := 0, len(pairs)/2
		for i := 0; i < len(pairs); i += 2 {
			_, _, res := getField(c, key, h, pairs[i], lazyNoNotify|lazyKeepHash)
			exists := res == fieldOK
			if res == fieldExpired {
				expired++
			}
			if exists {
				found++
			}
			if (flags&hfeFXX != 0 && !exists) || (flags&hfeFNX != 0 && exists) {
				break
			}
		}
		if (flags&hfeFNX != 0 && found != 0) || (flags&hfeFXX != 0 && found != n) {
			c.W.Int(0)
			hsetexFinish(c, key, h, set, expired, deleted, updated)
			return
		}
	}
	o := c.KS.HashOpts()
	h.PrepareSets(pairs, o)
	withTTL := flags&hfeAnyTTL != 0
	if withTTL {
		h.EnableFieldTTL()
	}
	keep := flags&(hfeAnyTTL|hfeKeepTTL) != 0
	for i := 0; i < len(pairs); i += 2 {
		f := pairs[i]
		h.Set(f, pairs[i+1], keep, o)
		set = true
		switch {
		case !withTTL:
		case at <= c.Now:
			h.Del(f)
			c.KS.Stats.ExpiredSubkeys++
			deleted++
		default:
			h.SetFieldTTL(f, at)
			updated++
		}
	}
	c.Dirty += len(pairs) / 2
	c.W.Int(1)
	hsetexFinish(c, key, h, set, expired, deleted, updated)
	if c.Prop != nil && flags&(hfeEX|hfePX|hfeEXAT) != 0 {
		// a relative (or EXAT) deadline goes out as PXAT <ms>, in its place
		argv := append([][]byte(nil), c.Argv...)
		argv[args.atPos-1], argv[args.atPos] = wPXAT, c.PropInt(at)
		c.PropagateAs(argv...)
	}
}

var (
	wHpexpireat = []byte("HPEXPIREAT")
	wHpersist   = []byte("HPERSIST")
	wFields     = []byte("FIELDS")
)

// fieldTTLProp builds the propagation of a command that changed field
// deadlines (hexpireGenericCommand's rewrite): the fields it deleted go out as
// HDELs, the ones it updated as one <verb> key [<ms>] FIELDS n field...;
// nothing when no field was updated. Inert unless propagating.
type fieldTTLProp struct {
	fields [][]byte
}

func (p *fieldTTLProp) updated(c *Ctx, f []byte) {
	if c.Prop != nil {
		p.fields = append(p.fields, f)
	}
}

func (p *fieldTTLProp) deleted(c *Ctx, key, f []byte) {
	c.AlsoPropagate(wHdel, key, f)
}

func (p *fieldTTLProp) done(c *Ctx, verb, key []byte, at int64) {
	if c.Prop == nil {
		return
	}
	if len(p.fields) == 0 {
		c.PreventPropagation()
		return
	}
	argv := make([][]byte, 0, 5+len(p.fields))
	argv = append(argv, verb, key)
	if at != 0 {
		argv = append(argv, c.PropInt(at))
	}
	argv = append(argv, wFields, c.PropInt(int64(len(p.fields))))
	c.PropagateAs(append(argv, p.fields...)...)
}

func hsetexFinish(c *Ctx, key []byte, h *keyspace.Hash, set bool, expired, deleted, updated int) {
	if set || expired > 0 {
		c.DB.Touch(key)
		if expired > 0 {
			c.Notify('h', "hexpired", key)
		}
		if set {
			c.Notify('h', "hset", key)
			if deleted > 0 {
				c.Notify('h', "hdel", key)
			} else if updated > 0 {
				c.Notify('h', "hexpire", key)
			}
		}
	}
	finishFieldChange(c, key, h)
}
