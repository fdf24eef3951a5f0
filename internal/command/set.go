package command

import (
	"math"
	"sort"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// setCommands is redis.io's "set" group (Redis 8.4's t_set.c).
func setCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	storeKeys := func(dst string) []KeySpec {
		return []KeySpec{{Flags: dst, Begin: 1, Step: 1}, {Flags: "RO access", Begin: 2, Last: -1, Step: 1}}
	}
	order, random := []string{"nondeterministic_output_order"}, []string{"nondeterministic_output"}
	return []*Spec{
		{Name: "sadd", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: saddCmd},
		{Name: "scard", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: scardCmd},
		{Name: "sdiff", Tips: order, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO access", Run: sdiffCmd},
		{Name: "sdiffstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, Keys: storeKeys("OW update"), Run: sdiffstoreCmd},
		{Name: "sinter", Tips: order, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO access", Run: sinterCmd},
		{Name: "sintercard", Arity: -3, Flags: r, Keys: []KeySpec{{Flags: "RO access", Begin: 1, Step: 1, Keynum: true}}, KeysFn: sintercardKeys, Run: sintercardCmd},
		{Name: "sinterstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, Keys: storeKeys("OW update"), Run: sinterstoreCmd},
		{Name: "sismember", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: sismemberCmd},
		{Name: "smembers", Tips: order, Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: smembersCmd},
		{Name: "smismember", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: smismemberCmd},
		{Name: "smove", Arity: 4, Flags: w | f, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "RW access delete", Begin: 1, Step: 1}, {Flags: "RW insert", Begin: 2, Step: 1}}, Run: smoveCmd},
		{Name: "spop", Tips: random, Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Run: spopCmd},
		{Name: "srandmember", Tips: random, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: srandmemberCmd},
		{Name: "srem", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: sremCmd},
		{Name: "sscan", Tips: random, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: sscanCmd},
		{Name: "sunion", Tips: order, Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO access", Run: sunionCmd},
		{Name: "sunionstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, Keys: storeKeys("OW update"), Run: sunionstoreCmd},
	}
}

// setOf returns the set stored in e (nil for nil).
func setOf(e *keyspace.Entry) *keyspace.Set {
	if e == nil {
		return nil
	}
	return e.Obj().(*keyspace.Set)
}

// SADD key member [member ...]
func saddCmd(c *Ctx) {
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindSet, true)
	if !ok {
		return
	}
	members := c.Argv[2:]
	var s *keyspace.Set
	created := e == nil
	if created {
		// created in place: a nil *Set stores an empty set, nothing to copy
		s = c.DB.SetObject(key, keyspace.KindSet, (*keyspace.Set)(nil)).Obj().(*keyspace.Set)
		s.Presize(c.KS, members[0], len(members))
	} else {
		s = setOf(e)
		s.MaybeConvert(c.KS, len(members))
	}
	added := s.AddAll(c.KS, members)
	if added > 0 {
		if created {
			c.DB.Resized(key) // SetObject announced the key; its size is new
		} else {
			c.DB.Touch(key)
		}
		c.Notify('s', "sadd", key)
	}
	c.Dirty += added
	c.W.Int(int64(added))
}

// SREM key member [member ...]
func sremCmd(c *Ctx) {
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindSet, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	s := setOf(e)
	deleted, removed := 0, false
	for _, m := range c.Argv[2:] {
		if s.Remove(m) {
			deleted++
			if s.Len() == 0 {
				c.DB.Delete(key)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		c.DB.Touch(key)
		c.Notify('s', "srem", key)
		if removed {
			c.Notify('g', "del", key)
		}
		c.Dirty += deleted
	}
	c.W.Int(int64(deleted))
}

// SMOVE source destination member
func smoveCmd(c *Ctx) {
	srcKey, dstKey, m := c.Argv[1], c.Argv[2], c.Argv[3]
	src := c.DB.LookupWrite(srcKey)
	dst := c.DB.LookupWrite(dstKey)
	if src == nil {
		c.W.Int(0)
		return
	}
	if src.Kind != keyspace.KindSet || (dst != nil && dst.Kind != keyspace.KindSet) {
		c.Err(ErrWrongType)
		return
	}
	ss := setOf(src)
	if src == dst {
		if ss.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	if !ss.Remove(m) {
		c.W.Int(0)
		return
	}
	c.Notify('s', "srem", srcKey)
	if ss.Len() == 0 {
		c.DB.Delete(srcKey)
		c.Notify('g', "del", srcKey)
	}
	var ds *keyspace.Set
	if dst == nil {
		ds = c.DB.SetObject(dstKey, keyspace.KindSet, (*keyspace.Set)(nil)).Obj().(*keyspace.Set)
		ds.Presize(c.KS, m, 1)
	} else {
		ds = setOf(dst)
	}
	c.DB.Touch(srcKey)
	c.Dirty++
	if ds.Add(c.KS, m) {
		c.Dirty++
		c.DB.Touch(dstKey)
		c.Notify('s', "sadd", dstKey)
	}
	c.W.Int(1)
}

// SISMEMBER key member
func sismemberCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e != nil && setOf(e).Has(c.Argv[2]) {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// SMISMEMBER key member [member ...]: a missing key is an empty set.
func smismemberCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	s := setOf(e)
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, m := range c.Argv[2:] {
		if s != nil && s.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

// SCARD key
func scardCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(setOf(e).Len()))
}

// SMEMBERS key: a set reply, in the set's own order.
func smembersCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.SetLen(0)
		return
	}
	s := setOf(e)
	c.W.SetLen(s.Len())
	s.Range(func(m []byte) bool {
		c.W.Bulk(m)
		return true
	})
}

// spopMoveStrategyMul is SPOP_MOVE_STRATEGY_MUL: SPOP with a count rebuilds the
// set from the members it keeps once count is 5 times what remains.
const spopMoveStrategyMul = 5

// SPOP key [count]
func spopCmd(c *Ctx) {
	if len(c.Argv) == 3 {
		spopWithCount(c)
		return
	}
	if len(c.Argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindSet, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	s := setOf(e)
	var scratch [64]byte
	m := s.Pop(c.Rand, scratch[:0])
	c.Notify('s', "spop", key)
	c.W.Bulk(m)
	c.PropagateAs(wSrem, key, m) // spopCommand: replicated as SREM
	if s.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
	} else {
		c.DB.Touch(key)
	}
	c.Dirty++
}

// spopWithCount is spopWithCountCommand, with its three code paths: the whole
// set (then the key is deleted), count random pops, or, when few members
// remain, a new set built from the members that stay.
func spopWithCount(c *Ctx) {
	n, ok := resp.ParseInt(c.Argv[2])
	if !ok || n < 0 {
		c.Error("ERR value is out of range, must be positive")
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindSet, true)
	if !ok {
		return
	}
	if e == nil || n == 0 {
		c.W.SetLen(0)
		return
	}
	s := setOf(e)
	size := int64(s.Len())
	c.Notify('s', "spop", key)
	c.Dirty += int(min(n, size))
	if n >= size {
		// CASE 1: reply with the whole set (as SUNION of the key), then delete it
		sunionDiff(c, c.Argv[1:2], nil, false)
		c.DB.Delete(key)
		c.Notify('g', "del", key)
		if c.Prop != nil {
			propagateDel(c, key, configYes(c, "lazyfree-lazy-server-del"))
		}
		return
	}
	count, remaining := int(n), int(size-n)
	c.W.SetLen(count)
	// the popped members are replicated as SREMs of up to 1024 members each
	// (Redis 7.2+'s batches; 7.0 sent one SREM per member)
	var prop *sremBatch
	if c.Prop != nil {
		prop = &sremBatch{c: c, key: key}
		defer prop.done()
	}
	reply := func(m []byte) {
		c.W.Bulk(m)
		prop.add(m)
	}
	switch {
	case remaining*spopMoveStrategyMul > count && s.SetEnc() == keyspace.SetListpack:
		// CASE 2, listpack: count members picked in one ordered pass
		s.PopOrdered(c.Rand, count, reply)
	case remaining*spopMoveStrategyMul > count:
		// CASE 2: count random pops
		var scratch [64]byte
		for range count {
			reply(s.Pop(c.Rand, scratch[:0]))
		}
	default:
		// CASE 3: move the members that stay to a new set, reply with the rest
		var ns *keyspace.Set
		if s.SetEnc() == keyspace.SetListpack {
			ns = c.KS.NewListpackSet()
			s.PopOrdered(c.Rand, remaining, func(m []byte) { ns.Add(c.KS, m) })
		} else {
			var scratch [64]byte
			for range remaining {
				m := s.Random(c.Rand, scratch[:0])
				if ns == nil {
					if s.SetEnc() == keyspace.SetIntset {
						ns = c.KS.NewIntsetSet()
					} else {
						ns = c.KS.NewListpackSet()
					}
				}
				ns.Add(c.KS, m)
				s.Remove(m)
			}
		}
		s.Range(func(m []byte) bool {
			reply(m)
			return true
		})
		e.SetObj(ns) // dbReplaceValue: the key keeps its TTL
	}
	c.DB.Touch(key)
}

// srandmemberSubStrategyMul is SRANDMEMBER_SUB_STRATEGY_MUL: with a positive
// count, copy the set and remove members once count is over a third of it.
const srandmemberSubStrategyMul = 3

// SRANDMEMBER key [count]
func srandmemberCmd(c *Ctx) {
	if len(c.Argv) == 3 {
		srandmemberWithCount(c)
		return
	}
	if len(c.Argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	var scratch [24]byte
	c.W.Bulk(setOf(e).Random(c.Rand, scratch[:0]))
}

// srandmemberWithCount is srandmemberWithCountCommand: a negative count repeats
// members (random order); a positive one returns distinct members: the whole
// set when count covers it, an ordered sample for a listpack, else a random
// subset.
func srandmemberWithCount(c *Ctx) {
	l, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if l == math.MinInt64 {
		c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	uniq, count := l >= 0, l
	if !uniq {
		count = -l
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		c.W.ArrayLen(0)
		return
	}
	s := setOf(e)
	var scratch [24]byte
	// CASE 1: negative count, or 1: independent random picks
	if !uniq || count == 1 {
		c.W.ArrayLen(int(count))
		for ; count > 0; count-- {
			c.W.Bulk(s.Random(c.Rand, scratch[:0]))
		}
		return
	}
	size := int64(s.Len())
	// CASE 2: the whole set
	if count >= size {
		c.W.ArrayLen(int(size))
		s.Range(func(m []byte) bool {
			c.W.Bulk(m)
			return true
		})
		return
	}
	n := int(count)
	c.W.ArrayLen(n)
	// CASE 2.5: listpack, sampled in one ordered pass
	if s.SetEnc() == keyspace.SetListpack {
		s.SampleOrdered(c.Rand, n, func(m []byte) { c.W.Bulk(m) })
		return
	}
	// CASE 3: a large share: a random subset of a copy
	if count*srandmemberSubStrategyMul > size {
		all := s.Members(make([][]byte, 0, size))
		for i := 0; i < n; i++ {
			j := i + int(c.Rand()%uint64(len(all)-i))
			all[i], all[j] = all[j], all[i]
			c.W.Bulk(all[i])
		}
		return
	}
	// CASE 4: a small share: random picks until n distinct
	seen := make(map[string]struct{}, n)
	for len(seen) < n {
		m := s.Random(c.Rand, scratch[:0])
		if _, dup := seen[string(m)]; dup {
			continue
		}
		seen[string(m)] = struct{}{}
		c.W.Bulk(m)
	}
}

// bySize sorts sets by ascending cardinality, keeping the order of equals.
func bySize(sets []*keyspace.Set, desc bool) {
	size := func(s *keyspace.Set) int {
		if s == nil {
			return 0
		}
		return s.Len()
	}
	sort.SliceStable(sets, func(i, j int) bool {
		if desc {
			return size(sets[i]) > size(sets[j])
		}
		return size(sets[i]) < size(sets[j])
	})
}

// lookupSets reads the set at each key (nil for a missing key); false after a
// WRONGTYPE reply.
func lookupSets(c *Ctx, keys [][]byte) ([]*keyspace.Set, bool) {
	sets := make([]*keyspace.Set, len(keys))
	for j, k := range keys {
		e := c.DB.LookupRead(k, c.Client.NoTouch)
		if e == nil {
			continue
		}
		if e.Kind != keyspace.KindSet {
			c.Err(ErrWrongType)
			return nil, false
		}
		sets[j] = setOf(e)
	}
	return sets, true
}

// storeSet is the end of every *STORE command: a non-empty result overwrites
// dst (any type, TTL dropped), an empty one deletes it.
func storeSet(c *Ctx, dst []byte, res *keyspace.Set, event string) {
	if res.Len() > 0 {
		c.DB.SetObject(dst, keyspace.KindSet, res)
		c.W.Int(int64(res.Len()))
		c.Notify('s', event, dst)
		c.Dirty++
		return
	}
	c.W.Int(0)
	if c.DB.Delete(dst) {
		c.Dirty++
		c.Notify('g', "del", dst)
	}
}

// insertSetLen inserts a set header for n elements at c.W.Buf[start:], before
// the elements already written there (addReplyDeferredLen).
func insertSetLen(c *Ctx, start, n int) {
	var tmp [24]byte
	hw := resp.Writer{Buf: tmp[:0], Proto: c.W.Proto}
	hw.SetLen(n)
	h := len(hw.Buf)
	buf := append(c.W.Buf, hw.Buf...)
	copy(buf[start+h:], buf[start:len(buf)-h])
	copy(buf[start:], hw.Buf)
	c.W.Buf = buf
}

// sinterGeneric is sinterGenericCommand: SINTER (dst nil), SINTERSTORE, and
// SINTERCARD (cardOnly, stopping at limit if > 0).
func sinterGeneric(c *Ctx, keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	for _, s := range sets {
		if s != nil {
			continue
		}
		// an intersection with an empty set is empty
		switch {
		case dst != nil:
			if c.DB.Delete(dst) {
				c.Notify('g', "del", dst)
				c.Dirty++
			}
			c.W.Int(0)
		case cardOnly:
			c.W.Int(0)
		default:
			c.W.SetLen(0)
		}
		return
	}
	bySize(sets, false)
	var res *keyspace.Set
	if dst != nil {
		if sets[0].SetEnc() == keyspace.SetIntset {
			res = c.KS.NewIntsetSet()
		} else {
			res = c.KS.NewListpackSet()
		}
	}
	start := len(c.W.Buf)
	card := int64(0)
	sets[0].Range(func(m []byte) bool {
		for _, o := range sets[1:] {
			if o != sets[0] && !o.Has(m) {
				return true
			}
		}
		switch {
		case cardOnly:
			card++
			if limit > 0 && card >= limit {
				return false
			}
		case dst == nil:
			c.W.Bulk(m)
			card++
		default:
			res.Add(c.KS, m)
		}
		return true
	})
	switch {
	case cardOnly:
		c.W.Int(card)
	case dst == nil:
		insertSetLen(c, start, int(card))
	default:
		if res.Len() > 0 && res.AllIntegers() {
			res.ToIntsetIfFits(c.KS)
		}
		res.ShrinkToFit()
		storeSet(c, dst, res, "sinterstore")
	}
}

// sunionDiff is sunionDiffGenericCommand: SUNION/SDIFF (dst nil) and their
// STORE forms. The result is built in a set that starts as an intset, so its
// encoding and order are Redis's.
func sunionDiff(c *Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	sameset := false
	for _, s := range sets[1:] {
		if s != nil && s == sets[0] {
			sameset = true
		}
	}
	// DIFF algorithm 1 walks the first set (O(N*M)); algorithm 2 adds the first
	// set and removes the others (O(total)). Choose as Redis does.
	algo := 1
	if diff && sets[0] != nil && !sameset {
		one, two := 0, 0
		for _, s := range sets {
			if s != nil {
				one += sets[0].Len()
				two += s.Len()
			}
		}
		if one/2 > two {
			algo = 2
		}
		if algo == 1 && len(sets) > 1 {
			bySize(sets[1:], true)
		}
	}
	res := c.KS.NewIntsetSet()
	switch {
	case !diff:
		for _, s := range sets {
			if s == nil {
				continue
			}
			s.Range(func(m []byte) bool {
				res.Add(c.KS, m)
				return true
			})
		}
	case sameset || sets[0] == nil:
		// empty result
	case algo == 1:
		sets[0].Range(func(m []byte) bool {
			for _, o := range sets[1:] {
				if o != nil && o.Has(m) {
					return true
				}
			}
			res.Add(c.KS, m)
			return true
		})
	default:
		for j, s := range sets {
			if s == nil {
				continue
			}
			s.Range(func(m []byte) bool {
				if j == 0 {
					res.Add(c.KS, m)
				} else {
					res.Remove(m)
				}
				return true
			})
			if res.Len() == 0 {
				break
			}
		}
	}
	if dst == nil {
		c.W.SetLen(res.Len())
		res.Range(func(m []byte) bool {
			c.W.Bulk(m)
			return true
		})
		return
	}
	event := "sunionstore"
	if diff {
		event = "sdiffstore"
	}
	storeSet(c, dst, res, event)
}

func sinterCmd(c *Ctx)      { sinterGeneric(c, c.Argv[1:], nil, false, 0) }
func sinterstoreCmd(c *Ctx) { sinterGeneric(c, c.Argv[2:], c.Argv[1], false, 0) }
func sunionCmd(c *Ctx)      { sunionDiff(c, c.Argv[1:], nil, false) }
func sunionstoreCmd(c *Ctx) { sunionDiff(c, c.Argv[2:], c.Argv[1], false) }
func sdiffCmd(c *Ctx)       { sunionDiff(c, c.Argv[1:], nil, true) }
func sdiffstoreCmd(c *Ctx)  { sunionDiff(c, c.Argv[2:], c.Argv[1], true) }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func sintercardCmd(c *Ctx) {
	numkeys, ok := resp.ParseInt(c.Argv[1])
	if !ok || numkeys < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(c.Argv)-2) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(c.Argv); j++ {
		if eqFold(c.Argv[j], "limit") && j+1 < len(c.Argv) {
			j++
			v, ok := resp.ParseInt(c.Argv[j])
			if !ok || v < 0 {
				c.Error("ERR LIMIT can't be negative")
				return
			}
			limit = v
		} else {
			c.Err(ErrSyntax)
			return
		}
	}
	sinterGeneric(c, c.Argv[2:2+numkeys], nil, true, limit)
}

// sintercardKeys is sintercardGetKeys: the numkeys keys after argv[1].
func sintercardKeys(argv [][]byte) []int {
	if len(argv) < 2 {
		return nil
	}
	n, ok := resp.ParseInt(argv[1])
	if !ok || n < 1 || n > int64(len(argv)-2) {
		return nil
	}
	out := make([]int, 0, n)
	for i := range int(n) {
		out = append(out, 2+i)
	}
	return out
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. The cursor is checked first,
// then the key, then the options (scanGenericCommand). A compact set is
// returned whole with cursor 0; a hashtable is walked with Redis's dictScan
// cursor, up to COUNT members visited per call (at most 10*COUNT steps).
func sscanCmd(c *Ctx) {
	cursor, ok := parseScanCursor(c.Argv[2])
	if !ok {
		c.Err(ErrCursor)
		return
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindSet, false)
	if !ok {
		return
	}
	if e == nil {
		replyEmptyScan(c)
		return
	}
	o, ok := parseScanOpts(c, false, true)
	if !ok {
		return
	}
	count := o.count
	s := setOf(e)
	c.W.ArrayLen(2)
	if s.SetEnc() != keyspace.SetHashtable {
		c.W.BulkString("0")
		start, n := len(c.W.Buf), 0
		s.Range(func(m []byte) bool {
			if o.matches(m) {
				c.W.Bulk(m)
				n++
			}
			return true
		})
		insertArrayLen(c, start, n)
		return
	}
	var found [][]byte // views of the set's own member strings
	sampled, maxIter := int64(0), count*10
	for {
		cursor = s.ScanStep(cursor, func(m []byte) {
			sampled++
			if o.matches(m) {
				found = append(found, m)
			}
		})
		if cursor == 0 || maxIter == 0 {
			break
		}
		maxIter--
		if sampled >= count {
			break
		}
	}
	var buf [20]byte
	c.W.Bulk(appendUint(buf[:0], cursor))
	c.W.ArrayLen(len(found))
	for _, m := range found {
		c.W.Bulk(m)
	}
}

// insertArrayLen is insertSetLen for an array header.
func insertArrayLen(c *Ctx, start, n int) {
	var tmp [24]byte
	hw := resp.Writer{Buf: tmp[:0], Proto: c.W.Proto}
	hw.ArrayLen(n)
	h := len(hw.Buf)
	buf := append(c.W.Buf, hw.Buf...)
	copy(buf[start+h:], buf[start:len(buf)-h])
	copy(buf[start:], hw.Buf)
	c.W.Buf = buf
}

var wSrem = []byte("SREM")

// sremBatch collects SPOP's popped members into SREM commands of up to 1024
// members (spopWithCountCommand's propagation); only used while propagating.
type sremBatch struct {
	c    *Ctx
	key  []byte
	argv [][]byte
}

func (b *sremBatch) add(m []byte) {
	if b == nil {
		return
	}
	if len(b.argv) == 0 {
		b.argv = append(b.argv, wSrem, b.key)
	}
	b.argv = append(b.argv, append([]byte(nil), m...))
	if len(b.argv) == 2+1024 {
		b.flush()
	}
}

func (b *sremBatch) flush() {
	if len(b.argv) > 2 {
		b.c.AlsoPropagate(b.argv...)
	}
	b.argv = b.argv[:0]
}

// done sends the last batch; SPOP itself is not propagated.
func (b *sremBatch) done() {
	b.flush()
	b.c.PreventPropagation()
}
