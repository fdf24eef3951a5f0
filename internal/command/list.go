package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// listCommands is redis.io's "list" group, as Redis 8.4's t_list.c serves it:
// replies, errors and their order, keyspace events, dirty counts, and the
// listpack/quicklist conversions at the points where t_list.c tries them.
//
// The blocking commands serve a client at once when one of their keys has
// elements, exactly as Redis does; when none has, they hand it to Ctx.Block
// (see block.go).
func listCommands() []*Spec {
	const w, r, d, f, b = Write, ReadOnly, DenyOOM, Fast, Blocking
	move := []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1}, {Flags: "RW insert", Begin: 2, Step: 1}}
	return []*Spec{
		{Name: "blmove", Arity: 6, Flags: w | d | b, FirstKey: 1, LastKey: 2, Step: 1, Keys: move, Run: blmoveCmd},
		{Name: "blmpop", Arity: -5, Flags: w | b, Keys: []KeySpec{{Flags: "RW access delete", Begin: 2, Step: 1, Keynum: true}}, KeysFn: blmpopKeys, Run: blmpopCmd},
		{Name: "blpop", Arity: -3, Flags: w | b, FirstKey: 1, LastKey: -2, Step: 1, KeyFlags: "RW access delete", Run: blpopCmd},
		{Name: "brpop", Arity: -3, Flags: w | b, FirstKey: 1, LastKey: -2, Step: 1, KeyFlags: "RW access delete", Run: brpopCmd},
		{Name: "brpoplpush", Arity: 4, Flags: w | d | b, FirstKey: 1, LastKey: 2, Step: 1, Keys: move, Run: brpoplpushCmd},
		{Name: "lindex", Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: lindexCmd},
		{Name: "linsert", Arity: 5, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: linsertCmd},
		{Name: "llen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: llenCmd},
		{Name: "lmove", Arity: 5, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, Keys: move, Run: lmoveCmd},
		{Name: "lmpop", Arity: -4, Flags: w, Keys: []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1, Keynum: true}}, KeysFn: lmpopKeys, Run: lmpopCmd},
		{Name: "lpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: lpopCmd},
		{Name: "lpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: lposCmd},
		{Name: "lpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: lpushCmd},
		{Name: "lpushx", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: lpushxCmd},
		{Name: "lrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: lrangeCmd},
		{Name: "lrem", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: lremCmd},
		{Name: "lset", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: lsetCmd},
		{Name: "ltrim", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: ltrimCmd},
		{Name: "rpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: rpopCmd},
		{Name: "rpoplpush", Arity: 3, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, Keys: move, Run: rpoplpushCmd},
		{Name: "rpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: rpushCmd},
		{Name: "rpushx", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: rpushxCmd},
	}
}

// lookupKind returns the entry of key if it holds kind; nil with no reply when
// missing; nil after WRONGTYPE otherwise.
func lookupKind(c *Ctx, key []byte, kind keyspace.Kind, write bool) (*keyspace.Entry, bool) {
	var e *keyspace.Entry
	if write {
		e = c.DB.LookupWrite(key)
	} else {
		e = c.DB.LookupRead(key, c.Client.NoTouch)
	}
	if e != nil && e.Kind != kind {
		c.Err(ErrWrongType)
		return nil, false
	}
	return e, true
}

// listOf returns the list stored in e.
func listOf(e *keyspace.Entry) *keyspace.List { return e.Obj().(*keyspace.List) }

// popEvent is the keyspace event of a pop from the head (front) or the tail.
func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

// listWhere parses LEFT/RIGHT (getListPositionFromObjectOrReply): front is LEFT.
func listWhere(c *Ctx, arg []byte) (front, ok bool) {
	switch {
	case eqFold(arg, "left"):
		return true, true
	case eqFold(arg, "right"):
		return false, true
	}
	c.Err(ErrSyntax)
	return false, false
}

// listElementsRemoved is t_list.c's housekeeping after a pop of count elements:
// the pop event, then either the key's deletion (and "del") or a shrinking
// conversion, WATCH invalidation and dirty.
func listElementsRemoved(c *Ctx, key []byte, front bool, l *keyspace.List, count int) {
	c.Notify('l', popEvent(front), key)
	if l.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
	} else {
		l.TryShrink()
		c.DB.Touch(key)
	}
	c.Dirty += count
}

// listRangeReply is addListRangeReply: elements start..end (negative from the
// tail, clamped) as an array, from end to start when reverse is set.
func listRangeReply(c *Ctx, l *keyspace.List, start, end int64, reverse bool) {
	n := int64(l.Len())
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
		c.W.ArrayLen(0)
		return
	}
	if end >= n {
		end = n - 1
	}
	k := int(end - start + 1)
	c.W.ArrayLen(k)
	from := start
	if reverse {
		from = end
	}
	it := l.Iter(int(from), reverse)
	for ; k > 0; k-- {
		c.W.Bulk(it.Next())
	}
}

// popRangeReply replies with up to count elements from one end of l (in pop
// order) and removes them; it returns how many.
func popRangeReply(c *Ctx, l *keyspace.List, front bool, count int64) int {
	n := min(count, int64(l.Len()))
	if front {
		listRangeReply(c, l, 0, n-1, false)
		l.DelRange(0, int(n))
	} else {
		listRangeReply(c, l, -n, -1, true)
		l.DelRange(l.Len()-int(n), int(n))
	}
	return int(n)
}

// --- LPUSH, RPUSH, LPUSHX, RPUSHX

func lpushCmd(c *Ctx)  { pushGeneric(c, true, false) }
func rpushCmd(c *Ctx)  { pushGeneric(c, false, false) }
func lpushxCmd(c *Ctx) { pushGeneric(c, true, true) }
func rpushxCmd(c *Ctx) { pushGeneric(c, false, true) }

// pushGeneric is pushGenericCommand; xx: only when the list exists.
func pushGeneric(c *Ctx, front, xx bool) {
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		if xx {
			c.W.Int(0)
			return
		}
		e = c.DB.SetObject(key, keyspace.KindList, (*keyspace.List)(nil))
	}
	l := listOf(e)
	vals := c.Argv[2:]
	l.PushAll(c.KS, vals, front)
	c.Dirty += len(vals)
	c.W.Int(int64(l.Len()))
	c.DB.Touch(key)
	c.Notify('l', pushEvent(front), key)
}

// --- LPOP, RPOP

func lpopCmd(c *Ctx) { popGeneric(c, true) }
func rpopCmd(c *Ctx) { popGeneric(c, false) }

// popGeneric is popGenericCommand: one element as a bulk string, or with a
// count an array of up to count elements.
func popGeneric(c *Ctx, front bool) {
	if len(c.Argv) > 3 {
		c.Error(ErrArity(c.Spec.FullName()))
		return
	}
	hasCount := len(c.Argv) == 3
	var count int64
	if hasCount {
		v, ok := resp.ParseInt(c.Argv[2])
		if !ok || v < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		count = v
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	if hasCount && count == 0 {
		c.W.ArrayLen(0)
		return
	}
	l := listOf(e)
	if !hasCount {
		c.W.Bulk(l.Pop(front))
		listElementsRemoved(c, key, front, l, 1)
		return
	}
	n := popRangeReply(c, l, front, count)
	listElementsRemoved(c, key, front, l, n)
}

// --- LLEN, LINDEX, LRANGE

func llenCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(listOf(e).Len()))
}

func lindexCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	i, iok := resp.ParseInt(c.Argv[2])
	if !iok {
		c.Err(ErrNotInt)
		return
	}
	if v, found := listOf(e).Index(int(i)); found {
		c.W.Bulk(v)
	} else {
		c.W.Null()
	}
}

func lrangeCmd(c *Ctx) {
	start, ok1 := resp.ParseInt(c.Argv[2])
	end, ok2 := resp.ParseInt(c.Argv[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.ArrayLen(0)
		return
	}
	listRangeReply(c, listOf(e), start, end, false)
}

// --- LINSERT, LSET

func linsertCmd(c *Ctx) {
	var after bool
	switch {
	case eqFold(c.Argv[2], "after"):
		after = true
	case eqFold(c.Argv[2], "before"):
	default:
		c.Err(ErrSyntax)
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := listOf(e)
	// converted before the pivot is searched, so even when it is not found
	l.TryGrow(c.KS, len(c.Argv[4]), 1)
	if !l.Insert(c.Argv[3], c.Argv[4], after) {
		c.W.Int(-1)
		return
	}
	c.DB.Touch(key)
	c.Notify('l', "linsert", key)
	c.Dirty++
	c.W.Int(int64(l.Len()))
}

func lsetCmd(c *Ctx) {
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	i, iok := resp.ParseInt(c.Argv[2])
	if !iok {
		c.Err(ErrNotInt)
		return
	}
	l := listOf(e)
	l.TryGrow(c.KS, len(c.Argv[3]), 1) // even when the index is out of range
	// listTypeReplaceAtIndex takes an int: Redis 7.2+ cuts the index to 32 bits
	if !l.Set(int(int32(i)), c.Argv[3]) {
		c.Error("ERR index out of range")
		return
	}
	c.W.SimpleString("OK")
	c.DB.Touch(key)
	c.Notify('l', "lset", key)
	c.Dirty++
	l.TryShrink()
}

// --- LTRIM, LREM

func ltrimCmd(c *Ctx) {
	start, ok1 := resp.ParseInt(c.Argv[2])
	end, ok2 := resp.ParseInt(c.Argv[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.SimpleString("OK")
		return
	}
	l := listOf(e)
	n := int64(l.Len())
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	var ltrim, rtrim int64
	if start > end || start >= n {
		ltrim, rtrim = n, 0
	} else {
		end = min(end, n-1)
		ltrim, rtrim = start, n-end-1
	}
	l.DelRange(0, int(ltrim))
	l.DelRange(l.Len()-int(rtrim), int(rtrim))
	c.Notify('l', "ltrim", key)
	if l.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
	} else {
		l.TryShrink()
		c.DB.Touch(key)
	}
	c.Dirty += int(ltrim + rtrim)
	c.W.SimpleString("OK")
}

func lremCmd(c *Ctx) {
	count, cok := resp.ParseInt(c.Argv[2])
	if !cok {
		c.Err(ErrNotInt)
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := listOf(e)
	removed := l.Rem(int(count), c.Argv[3])
	c.Dirty += removed
	if removed > 0 {
		c.DB.Touch(key)
		c.Notify('l', "lrem", key)
	}
	if l.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
	} else if removed > 0 {
		l.TryShrink()
	}
	c.W.Int(int64(removed))
}

// --- LPOS

// lposCmd is LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]:
// options are checked before the key is looked up.
func lposCmd(c *Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Argv); j++ {
		opt, more := c.Argv[j], len(c.Argv)-1-j > 0
		switch {
		case eqFold(opt, "rank") && more:
			j++
			v, ok := resp.ParseInt(c.Argv[j])
			switch {
			case !ok:
				c.Err(ErrNotInt)
				return
			case v == math.MinInt64:
				c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
				return
			case v == 0:
				c.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = v
		case eqFold(opt, "count") && more:
			j++
			v, ok := resp.ParseInt(c.Argv[j])
			if !ok || v < 0 {
				c.Error("ERR COUNT can't be negative")
				return
			}
			count = v
		case eqFold(opt, "maxlen") && more:
			j++
			v, ok := resp.ParseInt(c.Argv[j])
			if !ok || v < 0 {
				c.Error("ERR MAXLEN can't be negative")
				return
			}
			maxlen = v
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	rev := rank < 0
	if rev {
		rank = -rank
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		if count != -1 {
			c.W.ArrayLen(0)
		} else {
			c.W.Null()
		}
		return
	}
	l := listOf(e)
	ele := c.Argv[2]
	n := int64(l.Len())
	var stack [16]int64
	found := stack[:0]
	from := int64(0)
	if rev {
		from = n - 1
	}
	it := l.Iter(int(from), rev)
	matches := int64(0)
	for index := int64(0); index < n && (maxlen == 0 || index < maxlen); index++ {
		if string(it.Next()) != string(ele) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		pos := index
		if rev {
			pos = n - index - 1
		}
		found = append(found, pos)
		if count == -1 || count > 0 && matches-rank+1 >= count {
			break
		}
	}
	if count == -1 {
		if len(found) == 0 {
			c.W.Null()
		} else {
			c.W.Int(found[0])
		}
		return
	}
	c.W.ArrayLen(len(found))
	for _, p := range found {
		c.W.Int(p)
	}
}

// --- LMOVE, RPOPLPUSH

func lmoveCmd(c *Ctx) {
	from, ok := listWhere(c, c.Argv[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Argv[4])
	if !ok {
		return
	}
	lmoveGeneric(c, from, to)
}

func rpoplpushCmd(c *Ctx) { lmoveGeneric(c, false, true) }

// lmoveGeneric is lmoveGenericCommand: pop from the source, push to the
// destination (created if missing; it may be the source), reply the element.
// Events: the push on the destination, then the pop (and "del") on the source.
func lmoveGeneric(c *Ctx, fromFront, toFront bool) {
	src, dst := c.Argv[1], c.Argv[2]
	se, ok := lookupKind(c, src, keyspace.KindList, true)
	if !ok {
		return
	}
	if se == nil {
		c.W.Null()
		return
	}
	de, ok := lookupKind(c, dst, keyspace.KindList, true)
	if !ok {
		return
	}
	sl := listOf(se)
	// Redis pops a packed quicklist integer as an integer object, whose bytes
	// the destination's conversion check does not count
	intObj := sl.PopsIntObject(fromFront)
	var stack [128]byte
	v := append(stack[:0], sl.Pop(fromFront)...) // the push may reuse the popped bytes
	if de == nil {
		de = c.DB.SetObject(dst, keyspace.KindList, (*keyspace.List)(nil))
	}
	dl := listOf(de)
	add := len(v)
	if intObj {
		add = 0
	}
	dl.TryGrow(c.KS, add, 1)
	dl.Push(v, toFront)
	c.DB.Touch(dst)
	c.Notify('l', pushEvent(toFront), dst)
	c.W.Bulk(v)
	listElementsRemoved(c, src, fromFront, sl, 1)
}

// --- LMPOP

func lmpopCmd(c *Ctx) { lmpopGeneric(c, 1, false) }

// lmpopKeys is lmpopGetKeys: the numkeys keys after argv[1].
func lmpopKeys(argv [][]byte) []int { return numkeysKeys(argv, 1) }

// blmpopKeys is blmpopGetKeys: the numkeys keys after argv[2].
func blmpopKeys(argv [][]byte) []int { return numkeysKeys(argv, 2) }

// numkeysKeys returns the positions of the numkeys keys after argv[at].
func numkeysKeys(argv [][]byte, at int) []int {
	if len(argv) <= at {
		return nil
	}
	n, ok := resp.ParseInt(argv[at])
	if !ok || n < 1 || n > int64(len(argv)-at-1) {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = at + 1 + i
	}
	return out
}

// mpopArgs parses [B]LMPOP's numkeys, keys, LEFT|RIGHT and COUNT, with numkeys
// at argv[at] (lmpopGenericCommand).
func mpopArgs(c *Ctx, at int) (numkeys int, front bool, count int64, ok bool) {
	n, nok := resp.ParseInt(c.Argv[at])
	if !nok || n < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return 0, false, 0, false
	}
	if n >= int64(len(c.Argv)-at-1) { // no room for the direction
		c.Err(ErrSyntax)
		return 0, false, 0, false
	}
	where := at + int(n) + 1
	if front, ok = listWhere(c, c.Argv[where]); !ok {
		return 0, false, 0, false
	}
	count = -1
	for j := where + 1; j < len(c.Argv); j++ {
		if count == -1 && eqFold(c.Argv[j], "count") && j+1 < len(c.Argv) {
			j++
			v, vok := resp.ParseInt(c.Argv[j])
			if !vok || v < 1 {
				c.Error("ERR count should be greater than 0")
				return 0, false, 0, false
			}
			count = v
			continue
		}
		c.Err(ErrSyntax)
		return 0, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return int(n), front, count, true
}

func lmpopGeneric(c *Ctx, at int, block bool) {
	n, front, count, ok := mpopArgs(c, at)
	if !ok {
		return
	}
	if !block {
		if !serveListPop(c, c.Argv[at+1:at+1+n], front, count) {
			c.W.NullArray()
		}
		return
	}
	timeout, ok := parseTimeout(c, c.Argv[1])
	if !ok {
		return
	}
	blockingPop(c, c.Argv[at+1:at+1+n], front, count, timeout)
}

// --- BLPOP, BRPOP, BLMPOP

func blpopCmd(c *Ctx)  { bpopGeneric(c, true) }
func brpopCmd(c *Ctx)  { bpopGeneric(c, false) }
func blmpopCmd(c *Ctx) { lmpopGeneric(c, 2, true) }

func bpopGeneric(c *Ctx, front bool) {
	timeout, ok := parseTimeout(c, c.Argv[len(c.Argv)-1])
	if !ok {
		return
	}
	blockingPop(c, c.Argv[1:len(c.Argv)-1], front, -1, timeout)
}

// blockingPop is blockingPopGenericCommand: serve from the first non-empty
// key, else park the client (its command runs again when a key changes), else
// (a client that may not block, or the timeout passed) the null reply.
func blockingPop(c *Ctx, keys [][]byte, front bool, count, timeout int64) {
	if serveListPop(c, keys, front, count) {
		return
	}
	if !c.Block(keyspace.KindList, keys, timeout, false) {
		c.W.NullArray()
	}
}

// serveListPop pops from the first key that holds a list, replying [key,
// element] (count -1: BLPOP/BRPOP) or [key, [elements]] (LMPOP/BLMPOP). It
// replies WRONGTYPE for a key of another type met first. It reports whether it
// replied; with no list among keys it replies nothing.
func serveListPop(c *Ctx, keys [][]byte, front bool, count int64) bool {
	for _, key := range keys {
		e, ok := lookupKind(c, key, keyspace.KindList, true)
		if !ok {
			return true
		}
		if e == nil {
			continue
		}
		l := listOf(e)
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		// replicated as [LR]POP key [count] (blockingPopGenericCommand,
		// listPopRangeAndReplyWithKey)
		pop := wLpop
		if !front {
			pop = wRpop
		}
		if count == -1 {
			c.W.Bulk(l.Pop(front))
			listElementsRemoved(c, key, front, l, 1)
			c.PropagateAs(pop, key)
			return true
		}
		n := popRangeReply(c, l, front, count)
		listElementsRemoved(c, key, front, l, n)
		c.PropagateAs(pop, key, c.PropInt(int64(n)))
		return true
	}
	return false
}

// --- BLMOVE, BRPOPLPUSH

func blmoveCmd(c *Ctx) {
	from, ok := listWhere(c, c.Argv[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Argv[4])
	if !ok {
		return
	}
	timeout, ok := parseTimeout(c, c.Argv[5])
	if !ok {
		return
	}
	blmoveGeneric(c, from, to, timeout)
}

func brpoplpushCmd(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Argv[3])
	if !ok {
		return
	}
	blmoveGeneric(c, false, true, timeout)
}

// blmoveGeneric is blmoveGenericCommand: an LMOVE when the source holds a list;
// otherwise a null reply for a client that may not block, else the client is
// parked on the source.
func blmoveGeneric(c *Ctx, from, to bool, timeout int64) {
	if serveListMove(c, from, to) {
		// replicated as the non-blocking command (LMOVE, RPOPLPUSH)
		if len(c.Argv) == 6 {
			c.PropagateAs(wLmove, c.Argv[1], c.Argv[2], c.Argv[3], c.Argv[4])
		} else {
			c.PropagateAs(wRpoplpush, c.Argv[1], c.Argv[2])
		}
		return
	}
	if !c.Block(keyspace.KindList, c.Argv[1:2], timeout, false) {
		if c.NoBlock {
			c.W.NullArray() // the timeout reply of every blocked list command
		} else {
			c.W.Null() // a client that may not block: blmoveGenericCommand's null
		}
	}
}

// serveListMove runs LMOVE on Argv's source and destination when the source
// exists (or replies WRONGTYPE); it reports whether it replied.
func serveListMove(c *Ctx, from, to bool) bool {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, true)
	if ok && e == nil {
		return false
	}
	if ok {
		lmoveGeneric(c, from, to)
	}
	return true
}

var (
	wLpop      = []byte("LPOP")
	wRpop      = []byte("RPOP")
	wLmove     = []byte("LMOVE")
	wRpoplpush = []byte("RPOPLPUSH")
)
