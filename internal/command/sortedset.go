package command

import (
	"math"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// sortedSetCommands is redis.io's "sorted-set" group (t_zset.c), except the
// blocking BZPOPMIN, BZPOPMAX and BZMPOP, which build on zpopGeneric.
func sortedSetCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	storeKeys := []KeySpec{{Flags: "OW update", Begin: 1, Step: 1}, {Flags: "RO access", Begin: 2, Step: 1, Keynum: true}}
	numKeys := []KeySpec{{Flags: "RO access", Begin: 1, Step: 1, Keynum: true}}
	return []*Spec{
		{Name: "zadd", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: zaddCmd},
		{Name: "zcard", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: zcardCmd},
		{Name: "zcount", Arity: 4, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zcountCmd},
		{Name: "zdiff", Arity: -3, Flags: r, Keys: numKeys, KeysFn: zsetNumkeysKeys(1, false), Run: zdiffCmd},
		{Name: "zdiffstore", Arity: -4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: storeKeys, KeysFn: zsetNumkeysKeys(2, true), Run: zdiffstoreCmd},
		{Name: "zincrby", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: zincrbyCmd},
		{Name: "zinter", Arity: -3, Flags: r, Keys: numKeys, KeysFn: zsetNumkeysKeys(1, false), Run: zinterCmd},
		{Name: "zintercard", Arity: -3, Flags: r, Keys: numKeys, KeysFn: zsetNumkeysKeys(1, false), Run: zintercardCmd},
		{Name: "zinterstore", Arity: -4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: storeKeys, KeysFn: zsetNumkeysKeys(2, true), Run: zinterstoreCmd},
		{Name: "zlexcount", Arity: 4, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zlexcountCmd},
		{Name: "zmpop", Arity: -4, Flags: w, Keys: []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1, Keynum: true}}, KeysFn: zsetNumkeysKeys(1, false), Run: zmpopCmd},
		{Name: "zmscore", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zmscoreCmd},
		{Name: "zpopmax", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: zpopmaxCmd},
		{Name: "bzmpop", Arity: -5, Flags: w | Blocking, KeysFn: bzmpopKeys, Keys: []KeySpec{{Flags: "RW access delete", Begin: 2, Step: 1, Keynum: true}}, Run: bzmpopCmd},
		{Name: "bzpopmax", Arity: -3, Flags: w | Blocking | f, FirstKey: 1, LastKey: -2, Step: 1, KeyFlags: "RW access delete", Run: bzpopmaxCmd},
		{Name: "bzpopmin", Arity: -3, Flags: w | Blocking | f, FirstKey: 1, LastKey: -2, Step: 1, KeyFlags: "RW access delete", Run: bzpopminCmd},
		{Name: "zpopmin", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: zpopminCmd},
		{Name: "zrandmember", Tips: []string{"nondeterministic_output"}, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrandmemberCmd},
		{Name: "zrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrangeCmd},
		{Name: "zrangebylex", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrangebylexCmd},
		{Name: "zrangebyscore", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrangebyscoreCmd},
		{Name: "zrangestore", Arity: -5, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "OW update", Begin: 1, Step: 1}, {Flags: "RO access", Begin: 2, Step: 1}}, Run: zrangestoreCmd},
		{Name: "zrank", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrankCmd},
		{Name: "zrem", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: zremCmd},
		{Name: "zremrangebylex", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: zremrangebylexCmd},
		{Name: "zremrangebyrank", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: zremrangebyrankCmd},
		{Name: "zremrangebyscore", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: zremrangebyscoreCmd},
		{Name: "zrevrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrevrangeCmd},
		{Name: "zrevrangebylex", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrevrangebylexCmd},
		{Name: "zrevrangebyscore", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrevrangebyscoreCmd},
		{Name: "zrevrank", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zrevrankCmd},
		{Name: "zscan", Tips: []string{"nondeterministic_output"}, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zscanCmd},
		{Name: "zscore", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: zscoreCmd},
		{Name: "zunion", Arity: -3, Flags: r, Keys: numKeys, KeysFn: zsetNumkeysKeys(1, false), Run: zunionCmd},
		{Name: "zunionstore", Arity: -4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: storeKeys, KeysFn: zsetNumkeysKeys(2, true), Run: zunionstoreCmd},
	}
}

// zsetNumkeysKeys extracts the keys of a numkeys command: the numkeys argument at
// idx, the keys after it, and with dst also argv[1] first (the STORE variants).
// A numkeys that the command would reject gives no keys.
func zsetNumkeysKeys(idx int, dst bool) func(argv [][]byte) []int {
	return func(argv [][]byte) []int {
		if len(argv) <= idx {
			return nil
		}
		n, ok := resp.ParseInt(argv[idx])
		if !ok || n < 1 || n > int64(len(argv)-idx-1) {
			return nil
		}
		out := make([]int, 0, n+1)
		if dst {
			out = append(out, 1)
		}
		for i := 0; i < int(n); i++ {
			out = append(out, idx+1+i)
		}
		return out
	}
}

// lookupZSet returns key's sorted set (nil when missing); ok is false after a
// WRONGTYPE reply.
func lookupZSet(c *Ctx, key []byte, write bool) (z *keyspace.ZSet, ok bool) {
	e, ok := lookupKind(c, key, keyspace.KindZSet, write)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.ZSet), true
}

// zsetReplyEntry writes one member (and score), nested in a pair in RESP3 as
// Redis's WITHSCORES replies are.
func zsetReplyEntry(c *Ctx, member []byte, score float64, withScores bool) {
	if withScores && c.W.Proto == 3 {
		c.W.ArrayLen(2)
	}
	c.W.Bulk(member)
	if withScores {
		c.W.Double(score)
	}
}

// zsetArrayLen writes the header for n entries: 2n items for WITHSCORES in RESP2.
func zsetArrayLen(c *Ctx, n int, withScores bool) {
	if withScores && c.W.Proto != 3 {
		n *= 2
	}
	c.W.ArrayLen(n)
}

// deferArray and setDeferredArray are addReplyDeferredLen/setDeferredArrayLen:
// the header of an array whose length is known only after its items are written.
func deferArray(c *Ctx) int { return len(c.W.Buf) }

func setDeferredArray(c *Ctx, at, n int) {
	var hdr [24]byte
	h := append(strconv.AppendInt(append(hdr[:0], '*'), int64(n), 10), '\r', '\n')
	buf := append(c.W.Buf, h...)
	copy(buf[at+len(h):], buf[at:len(c.W.Buf)])
	copy(buf[at:], h)
	c.W.Buf = buf
}

// --- ZADD, ZINCRBY, ZREM ------------------------------------------------------

func zaddCmd(c *Ctx)    { zaddGeneric(c, 0) }
func zincrbyCmd(c *Ctx) { zaddGeneric(c, keyspace.ZAddIncr) }

// zaddGeneric is zaddGenericCommand: ZADD and ZINCRBY.
func zaddGeneric(c *Ctx, flags int) {
	key := c.Argv[1]
	ch := false
	idx := 2
opts:
	for ; idx < len(c.Argv); idx++ {
		o := c.Argv[idx]
		switch {
		case eqFold(o, "nx"):
			flags |= keyspace.ZAddNX
		case eqFold(o, "xx"):
			flags |= keyspace.ZAddXX
		case eqFold(o, "ch"):
			ch = true
		case eqFold(o, "incr"):
			flags |= keyspace.ZAddIncr
		case eqFold(o, "gt"):
			flags |= keyspace.ZAddGT
		case eqFold(o, "lt"):
			flags |= keyspace.ZAddLT
		default:
			break opts
		}
	}
	incr := flags&keyspace.ZAddIncr != 0
	nx, xx := flags&keyspace.ZAddNX != 0, flags&keyspace.ZAddXX != 0
	gt, lt := flags&keyspace.ZAddGT != 0, flags&keyspace.ZAddLT != 0
	elements := len(c.Argv) - idx
	if elements%2 != 0 || elements == 0 {
		c.Err(ErrSyntax)
		return
	}
	elements /= 2
	switch {
	case nx && xx:
		c.Error("ERR XX and NX options at the same time are not compatible")
		return
	case (gt && nx) || (lt && nx) || (gt && lt):
		c.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case incr && elements > 1:
		c.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	// Every score is parsed before anything changes: all or nothing.
	var stack [16]float64
	scores := stack[:0]
	if elements > len(stack) {
		scores = make([]float64, 0, elements)
	}
	for j := 0; j < elements; j++ {
		v, ok := resp.ParseFloat(c.Argv[idx+2*j])
		if !ok {
			c.Err(ErrNotFloat)
			return
		}
		scores = append(scores, v)
	}
	z, ok := lookupZSet(c, key, true)
	if !ok {
		return
	}
	added, updated, processed := 0, 0, 0
	score := 0.0
	if z == nil {
		if xx {
			zaddReply(c, incr, ch, processed, added, updated, score)
			return
		}
		// created in place: a nil *ZSet stores an empty set, nothing to copy
		z = c.DB.SetObject(key, keyspace.KindZSet, (*keyspace.ZSet)(nil)).Obj().(*keyspace.ZSet)
		z.Presize(elements, len(c.Argv[idx+1]), c.KS.ZLimits())
		if !incr {
			z.Reserve(c.Argv[idx:], scores)
		}
	} else {
		z.MaybeConvert(elements, c.KS.ZLimits())
	}
	nan := false
	z.AddAll(c.Argv[idx:], scores, flags, c.KS.ZLimits(), func(_, out int, ns float64) bool {
		if out&keyspace.ZNaN != 0 {
			nan = true
			return false
		}
		if out&keyspace.ZAdded != 0 {
			added++
		}
		if out&keyspace.ZUpdated != 0 {
			updated++
		}
		if out&keyspace.ZNop == 0 {
			processed++
		}
		score = ns
		return true
	})
	if nan {
		c.Error("ERR resulting score is not a number (NaN)")
		zaddNotify(c, key, incr, added+updated)
		return
	}
	c.Dirty += added + updated
	zaddReply(c, incr, ch, processed, added, updated, score)
	zaddNotify(c, key, incr, added+updated)
}

func zaddReply(c *Ctx, incr, ch bool, processed, added, updated int, score float64) {
	switch {
	case incr && processed > 0:
		c.W.Double(score)
	case incr:
		c.W.Null()
	case ch:
		c.W.Int(int64(added + updated))
	default:
		c.W.Int(int64(added))
	}
}

func zaddNotify(c *Ctx, key []byte, incr bool, changed int) {
	if changed == 0 {
		return
	}
	c.DB.Touch(key)
	if incr {
		c.Notify('z', "zincr", key)
	} else {
		c.Notify('z', "zadd", key)
	}
}

func zremCmd(c *Ctx) {
	key := c.Argv[1]
	z, ok := lookupZSet(c, key, true)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	deleted, removed := 0, false
	for _, m := range c.Argv[2:] {
		if z.Delete(m) {
			deleted++
		}
		if z.Len() == 0 {
			c.DB.Delete(key)
			removed = true
			break
		}
	}
	if deleted > 0 {
		c.Notify('z', "zrem", key)
		if removed {
			c.Notify('g', "del", key)
		}
		c.DB.Touch(key)
		c.Dirty += deleted
	}
	c.W.Int(int64(deleted))
}

// --- point reads --------------------------------------------------------------

func zcardCmd(c *Ctx) {
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.Len()))
}

func zscoreCmd(c *Ctx) {
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	if s, found := z.Score(c.Argv[2]); found {
		c.W.Double(s)
	} else {
		c.W.Null()
	}
}

func zmscoreCmd(c *Ctx) {
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, m := range c.Argv[2:] {
		if z == nil {
			c.W.Null()
			continue
		}
		if s, found := z.Score(m); found {
			c.W.Double(s)
		} else {
			c.W.Null()
		}
	}
}

func zrankCmd(c *Ctx)    { zrankGeneric(c, false) }
func zrevrankCmd(c *Ctx) { zrankGeneric(c, true) }

// zrankGeneric: Z[REV]RANK key member [WITHSCORE].
func zrankGeneric(c *Ctx, rev bool) {
	if len(c.Argv) > 4 {
		c.Error(ErrArity(c.Spec.FullName()))
		return
	}
	withScore := false
	if len(c.Argv) == 4 {
		if !eqFold(c.Argv[3], "withscore") {
			c.Err(ErrSyntax)
			return
		}
		withScore = true
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	rank, score, found := 0, 0.0, false
	if z != nil {
		rank, score, found = z.Rank(c.Argv[2], rev)
	}
	switch {
	case !found && withScore:
		c.W.NullArray()
	case !found:
		c.W.Null()
	case withScore:
		c.W.ArrayLen(2)
		c.W.Int(int64(rank))
		c.W.Double(score)
	default:
		c.W.Int(int64(rank))
	}
}

// --- ranges -------------------------------------------------------------------

// parseRangeFloat is a score range end as zslParseRange reads it (after any "("):
// fast_float's strtod must consume everything; NaN is refused, overflow gives
// ±inf, underflow 0, and an empty string is 0.
func parseRangeFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	for _, ch := range b {
		if ch == 'x' || ch == 'X' || ch == '_' {
			return 0, false // no hex floats in fast_float; no Go digit separators
		}
	}
	if v, ok := resp.ParseFloat(b); ok {
		return v, true
	}
	if isSpaceByte(b[0]) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	if math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

func isSpaceByte(ch byte) bool { return ch == ' ' || (ch >= '\t' && ch <= '\r') }

// parseScoreRange is zslParseRange: "(" makes an end exclusive.
func parseScoreRange(min, max []byte) (r keyspace.ScoreRange, ok bool) {
	parse := func(b []byte) (float64, bool, bool) {
		ex := len(b) > 0 && b[0] == '('
		if ex {
			b = b[1:]
		}
		v, ok := parseRangeFloat(b)
		return v, ex, ok
	}
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parse(min)
	r.Max, r.MaxEx, ok2 = parse(max)
	return r, ok1 && ok2
}

// parseLexBound is zslParseLexRangeItem. The bound aliases b.
func parseLexBound(b []byte) (keyspace.LexBound, bool) {
	if len(b) == 0 {
		return keyspace.LexBound{}, false
	}
	switch b[0] {
	case '+':
		return keyspace.LexBound{Inf: 1, Ex: true}, len(b) == 1
	case '-':
		return keyspace.LexBound{Inf: -1, Ex: true}, len(b) == 1
	case '(':
		return keyspace.LexBound{Value: b[1:], Ex: true}, true
	case '[':
		return keyspace.LexBound{Value: b[1:]}, true
	}
	return keyspace.LexBound{}, false
}

func parseLexRange(min, max []byte) (r keyspace.LexRange, ok bool) {
	var ok1, ok2 bool
	r.Min, ok1 = parseLexBound(min)
	r.Max, ok2 = parseLexBound(max)
	return r, ok1 && ok2
}

const (
	errMinMaxFloat = "ERR min or max is not a float"
	errMinMaxLex   = "ERR min or max not valid string range item"
)

func zcountCmd(c *Ctx) {
	r, ok := parseScoreRange(c.Argv[2], c.Argv[3])
	if !ok {
		c.Error(errMinMaxFloat)
		return
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.CountByScore(&r)))
}

func zlexcountCmd(c *Ctx) {
	r, ok := parseLexRange(c.Argv[2], c.Argv[3])
	if !ok {
		c.Error(errMinMaxLex)
		return
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.CountByLex(&r)))
}

type zrangeType uint8

const (
	zrAuto zrangeType = iota
	zrRank
	zrScore
	zrLex
)

type zrangeDir uint8

const (
	zdAuto zrangeDir = iota
	zdForward
	zdReverse
)

func zrangeCmd(c *Ctx)           { zrangeGeneric(c, 1, false, zrAuto, zdAuto) }
func zrangestoreCmd(c *Ctx)      { zrangeGeneric(c, 2, true, zrAuto, zdAuto) }
func zrevrangeCmd(c *Ctx)        { zrangeGeneric(c, 1, false, zrRank, zdReverse) }
func zrangebyscoreCmd(c *Ctx)    { zrangeGeneric(c, 1, false, zrScore, zdForward) }
func zrevrangebyscoreCmd(c *Ctx) { zrangeGeneric(c, 1, false, zrScore, zdReverse) }
func zrangebylexCmd(c *Ctx)      { zrangeGeneric(c, 1, false, zrLex, zdForward) }
func zrevrangebylexCmd(c *Ctx)   { zrangeGeneric(c, 1, false, zrLex, zdReverse) }
func zremrangebyrankCmd(c *Ctx)  { zremrangeGeneric(c, zrRank) }
func zremrangebyscoreCmd(c *Ctx) { zremrangeGeneric(c, zrScore) }
func zremrangebylexCmd(c *Ctx)   { zremrangeGeneric(c, zrLex) }

// sanitizeRank turns a rank range with negative indexes into 0 <= start <= end < n,
// or reports it empty.
func sanitizeRank(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		return 0, 0, false
	}
	if end >= n {
		end = n - 1
	}
	return start, end, true
}

// zrangeGeneric is zrangeGenericCommand: ZRANGE, ZRANGESTORE and the older
// Z[REV]RANGE[BYSCORE|BYLEX]. argStart is the source key's index: the syntax
// that follows is <src> <min> <max> [BYSCORE|BYLEX] [REV] [WITHSCORES] [LIMIT o c].
func zrangeGeneric(c *Ctx, argStart int, store bool, typ zrangeType, dir zrangeDir) {
	key := c.Argv[argStart]
	minIdx, maxIdx := argStart+1, argStart+2
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := argStart + 3; j < len(c.Argv); j++ {
		left := len(c.Argv) - j - 1
		a := c.Argv[j]
		switch {
		case !store && eqFold(a, "withscores"):
			withScores = true
		case eqFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			offset, ok1 = resp.ParseInt(c.Argv[j+1])
			if ok1 {
				limit, ok2 = resp.ParseInt(c.Argv[j+2])
			}
			if !ok1 || !ok2 {
				c.Err(ErrNotInt)
				return
			}
			j += 2
		case dir == zdAuto && eqFold(a, "rev"):
			dir = zdReverse
		case typ == zrAuto && eqFold(a, "bylex"):
			typ = zrLex
		case typ == zrAuto && eqFold(a, "byscore"):
			typ = zrScore
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if typ == zrAuto {
		typ = zrRank
	}
	rev := dir == zdReverse
	if limit != -1 && typ == zrRank {
		c.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && typ == zrLex {
		c.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	if rev && typ != zrRank {
		minIdx, maxIdx = maxIdx, minIdx // given as max, min
	}
	var start, end int64
	var sr keyspace.ScoreRange
	var lr keyspace.LexRange
	switch typ {
	case zrRank:
		var ok1, ok2 bool
		start, ok1 = resp.ParseInt(c.Argv[minIdx])
		if ok1 {
			end, ok2 = resp.ParseInt(c.Argv[maxIdx])
		}
		if !ok1 || !ok2 {
			c.Err(ErrNotInt)
			return
		}
	case zrScore:
		var ok bool
		if sr, ok = parseScoreRange(c.Argv[minIdx], c.Argv[maxIdx]); !ok {
			c.Error(errMinMaxFloat)
			return
		}
	case zrLex:
		var ok bool
		if lr, ok = parseLexRange(c.Argv[minIdx], c.Argv[maxIdx]); !ok {
			c.Error(errMinMaxLex)
			return
		}
	}
	e := c.DB.LookupRead(key, c.Client.NoTouch)
	if e != nil && e.Kind != keyspace.KindZSet {
		c.Err(ErrWrongType)
		return
	}
	var z *keyspace.ZSet
	if e != nil {
		z = e.Obj().(*keyspace.ZSet)
	}
	if store {
		zrangeStore(c, z, typ, rev, start, end, &sr, &lr, int(offset), int(limit))
		return
	}
	if z == nil {
		c.W.ArrayLen(0)
		return
	}
	emit := func(m []byte, s float64) { zsetReplyEntry(c, m, s, withScores) }
	switch typ {
	case zrRank:
		from, to, ok := sanitizeRank(start, end, int64(z.Len()))
		if !ok {
			c.W.ArrayLen(0)
			return
		}
		zsetArrayLen(c, int(to-from+1), withScores)
		z.RangeByRank(int(from), int(to), rev, emit)
	case zrScore:
		at := deferArray(c)
		n := 0
		if !(offset > 0 && offset >= int64(z.Len())) {
			n = z.RangeByScore(&sr, int(offset), int(limit), rev, emit)
		}
		if withScores && c.W.Proto != 3 {
			n *= 2
		}
		setDeferredArray(c, at, n)
	case zrLex:
		at := deferArray(c)
		n := z.RangeByLex(&lr, int(offset), int(limit), rev, emit)
		setDeferredArray(c, at, n)
	}
}

// zrangeStore is ZRANGESTORE's result handler: the range goes into a new set
// (zsetTypeCreate sized by the rank range, then zsetAdd per member) stored at
// argv[1]; an empty range deletes the destination.
func zrangeStore(c *Ctx, z *keyspace.ZSet, typ zrangeType, rev bool, start, end int64,
	sr *keyspace.ScoreRange, lr *keyspace.LexRange, offset, limit int) {
	dstKey := c.Argv[1]
	lim := c.KS.ZLimits()
	hint := 0
	var s, e int64
	ok := false
	if z != nil && typ == zrRank {
		if s, e, ok = sanitizeRank(start, end, int64(z.Len())); ok {
			hint = int(e - s + 1)
		}
	}
	dst := c.KS.NewZSet(hint, 0, lim)
	add := func(m []byte, score float64) { dst.Add(m, score, 0, lim) }
	if z != nil {
		switch typ {
		case zrRank:
			if ok {
				z.RangeByRank(int(s), int(e), rev, add)
			}
		case zrScore:
			if !(offset > 0 && offset >= z.Len()) {
				z.RangeByScore(sr, offset, limit, rev, add)
			}
		case zrLex:
			z.RangeByLex(lr, offset, limit, rev, add)
		}
	}
	zsetStoreResult(c, dstKey, dst, "zrangestore")
}

// zsetStoreResult stores a *STORE command's result: a non-empty set replaces the
// destination (any type, TTL cleared) and the reply is its size; an empty one
// deletes the destination and the reply is 0.
func zsetStoreResult(c *Ctx, dstKey []byte, dst *keyspace.ZSet, event string) {
	if n := dst.Len(); n > 0 {
		c.DB.SetObject(dstKey, keyspace.KindZSet, dst)
		c.W.Int(int64(n))
		c.Notify('z', event, dstKey)
		c.Dirty++
		return
	}
	c.W.Int(0)
	if c.DB.Delete(dstKey) {
		c.Notify('g', "del", dstKey)
		c.Dirty++
	}
}

// zremrangeGeneric is zremrangeGenericCommand: ZREMRANGEBYRANK, BYSCORE, BYLEX.
func zremrangeGeneric(c *Ctx, typ zrangeType) {
	key := c.Argv[1]
	var start, end int64
	var sr keyspace.ScoreRange
	var lr keyspace.LexRange
	var event string
	switch typ {
	case zrRank:
		event = "zremrangebyrank"
		var ok1, ok2 bool
		start, ok1 = resp.ParseInt(c.Argv[2])
		if ok1 {
			end, ok2 = resp.ParseInt(c.Argv[3])
		}
		if !ok1 || !ok2 {
			c.Err(ErrNotInt)
			return
		}
	case zrScore:
		event = "zremrangebyscore"
		var ok bool
		if sr, ok = parseScoreRange(c.Argv[2], c.Argv[3]); !ok {
			c.Error(errMinMaxFloat)
			return
		}
	case zrLex:
		event = "zremrangebylex"
		var ok bool
		if lr, ok = parseLexRange(c.Argv[2], c.Argv[3]); !ok {
			c.Error(errMinMaxLex)
			return
		}
	}
	z, ok := lookupZSet(c, key, true)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	deleted := 0
	switch typ {
	case zrRank:
		s, e, ok := sanitizeRank(start, end, int64(z.Len()))
		if !ok {
			c.W.Int(0)
			return
		}
		deleted = z.DeleteByRank(int(s), int(e))
	case zrScore:
		deleted = z.DeleteByScore(&sr)
	case zrLex:
		deleted = z.DeleteByLex(&lr)
	}
	removed := false
	if z.Len() == 0 {
		c.DB.Delete(key)
		removed = true
	}
	if deleted > 0 {
		c.DB.Touch(key)
		c.Notify('z', event, key)
		if removed {
			c.Notify('g', "del", key)
		}
	}
	c.Dirty += deleted
	c.W.Int(int64(deleted))
}
