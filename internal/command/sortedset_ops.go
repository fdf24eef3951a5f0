package command

import (
	"bytes"
	"math"
	"sort"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// The sorted-set commands over several keys or with many results: ZPOPMIN,
// ZPOPMAX, ZMPOP, ZRANDMEMBER, ZSCAN, ZUNION, ZINTER, ZDIFF (and their STORE
// variants) and ZINTERCARD.

// --- pops ---------------------------------------------------------------------

func zpopminCmd(c *Ctx) { zpopMinMax(c, false) }
func zpopmaxCmd(c *Ctx) { zpopMinMax(c, true) }

// zpopMinMax: ZPOPMIN|ZPOPMAX key [count].
func zpopMinMax(c *Ctx, max bool) {
	if len(c.Argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	count := int64(-1) // plain single pop
	if len(c.Argv) == 3 {
		v, ok := resp.ParseInt(c.Argv[2])
		if !ok || v < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		count = v
	}
	// A count gives nested pairs in RESP3; a plain pop is always flat.
	nested := c.W.Proto == 3 && count != -1
	zpopGeneric(c, c.Argv[1:2], max, false, count, nested, false)
}

// zpopGeneric is genericZpopCommand, the pop behind ZPOPMIN, ZPOPMAX and ZMPOP,
// and for the blocking variants once one of their keys is non-empty. It pops
// from the first of keys that exists (WRONGTYPE if that one is no sorted set);
// count -1 is a plain single pop. The reply: with emitKey and nested (ZMPOP,
// BZMPOP) [key, [[member, score], ...]]; with emitKey alone (BZPOPMIN/MAX)
// [key, member, score]; with nested alone [[member, score], ...]; otherwise a
// flat [member, score, ...]. With no key to pop from it replies a null array
// when nilWhenEmpty, else an empty array. It reports whether it deleted the
// key (it popped the last member).
func zpopGeneric(c *Ctx, keys [][]byte, max, emitKey bool, count int64, nested, nilWhenEmpty bool) (deleted bool) {
	var key []byte
	var z *keyspace.ZSet
	for _, k := range keys {
		zz, ok := lookupZSet(c, k, true)
		if !ok {
			return false
		}
		if zz != nil {
			key, z = k, zz
			break
		}
	}
	if z == nil {
		if nilWhenEmpty {
			c.W.NullArray()
		} else {
			c.W.ArrayLen(0)
		}
		return false
	}
	if count == 0 {
		c.W.ArrayLen(0)
		return false
	}
	if count == -1 {
		count = 1
	}
	n := int(min(count, int64(z.Len())))
	switch {
	case !nested && !emitKey:
		c.W.ArrayLen(2 * n)
	case nested && !emitKey:
		c.W.ArrayLen(n)
	case !nested && emitKey:
		c.W.ArrayLen(2*n + 1)
		c.W.Bulk(key)
	default:
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		c.W.ArrayLen(n)
	}
	emit := func(m []byte, s float64) {
		if nested {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(m)
		c.W.Double(s)
	}
	for i := 0; i < n; i++ {
		z.Pop(max, emit)
	}
	c.Dirty += n
	if c.Prop != nil && emitKey {
		// [B]ZMPOP is replicated as ZPOPMIN|ZPOPMAX key <popped>, BZPOPMIN|MAX
		// as ZPOPMIN|ZPOPMAX key (genericZpopCommand, blockingGenericZpopCommand)
		verb := wZpopmin
		if max {
			verb = wZpopmax
		}
		if nested {
			c.PropagateAs(verb, key, c.PropInt(int64(n)))
		} else {
			c.PropagateAs(verb, key)
		}
	}
	if max {
		c.Notify('z', "zpopmax", key)
	} else {
		c.Notify('z', "zpopmin", key)
	}
	if z.Len() == 0 {
		c.DB.Delete(key)
		c.Notify('g', "del", key)
		deleted = true
	}
	c.DB.Touch(key)
	return deleted
}

// zmpopCmd: ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func zmpopCmd(c *Ctx) {
	keys, max, count, ok := parseZmpop(c, 1)
	if !ok {
		return
	}
	zpopGeneric(c, keys, max, true, count, true, true)
}

// parseZmpop parses the arguments of ZMPOP (numkeys at numkeysIdx) and BZMPOP
// (numkeysIdx 2), replying the error if they are wrong: the keys, MIN or MAX, and
// the count (1 by default).
func parseZmpop(c *Ctx, numkeysIdx int) (keys [][]byte, max bool, count int64, ok bool) {
	numkeys, ok := resp.ParseInt(c.Argv[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if numkeys >= int64(len(c.Argv)-numkeysIdx-1) {
		c.Err(ErrSyntax)
		return nil, false, 0, false
	}
	whereIdx := numkeysIdx + int(numkeys) + 1
	switch w := c.Argv[whereIdx]; {
	case eqFold(w, "min"):
	case eqFold(w, "max"):
		max = true
	default:
		c.Err(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Argv); j++ {
		if count == -1 && eqFold(c.Argv[j], "count") && j+1 < len(c.Argv) {
			j++
			v, ok := resp.ParseInt(c.Argv[j])
			if !ok || v < 1 {
				c.Error("ERR count should be greater than 0")
				return nil, false, 0, false
			}
			count = v
			continue
		}
		c.Err(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return c.Argv[numkeysIdx+1 : whereIdx], max, count, true
}

// --- ZRANDMEMBER ---------------------------------------------------------------

// zrandmemberCmd: ZRANDMEMBER key [count [WITHSCORES]].
func zrandmemberCmd(c *Ctx) {
	if len(c.Argv) >= 3 {
		l, ok := resp.ParseInt(c.Argv[2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		if l == math.MinInt64 {
			c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		withScores := false
		if len(c.Argv) > 4 || (len(c.Argv) == 4 && !eqFold(c.Argv[3], "withscores")) {
			c.Err(ErrSyntax)
			return
		}
		if len(c.Argv) == 4 {
			withScores = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				c.Error("ERR value is out of range")
				return
			}
		}
		zrandmemberWithCount(c, l, withScores)
		return
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	m, _ := z.RandomMember(c.Rand)
	c.W.Bulk(m)
}

// zrandmemberWithCount is zrandmemberWithCountCommand. A negative count allows
// repeats and returns exactly -count members; a positive one returns distinct
// members, all of them when count >= size (from the highest score down, as Redis
// iterates).
func zrandmemberWithCount(c *Ctx, l int64, withScores bool) {
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.W.ArrayLen(0)
		return
	}
	size := int64(z.Len())
	if l < 0 || l == 1 {
		count := l
		if count < 0 {
			count = -count
		}
		zsetArrayLen(c, int(count), withScores)
		if z.IsCompact() {
			entries := z.Entries(nil)
			for ; count > 0; count-- {
				e := entries[c.Rand()%uint64(len(entries))]
				zsetReplyEntry(c, e.Member, e.Score, withScores)
			}
			return
		}
		for ; count > 0; count-- {
			m, s := z.RandomMember(c.Rand)
			zsetReplyEntry(c, m, s, withScores)
		}
		return
	}
	count := l
	if count >= size {
		zsetArrayLen(c, int(size), withScores)
		z.RangeByRank(0, int(size)-1, true, func(m []byte, s float64) { zsetReplyEntry(c, m, s, withScores) })
		return
	}
	zsetArrayLen(c, int(count), withScores)
	if z.IsCompact() || count*3 > size {
		// Compact sets (lpRandomPairsUnique) and counts close to the size: a random
		// subset, reported in the set's order.
		entries := z.Entries(make([]keyspace.ZEntry, 0, size))
		keep := make([]bool, len(entries))
		need := int(count)
		for i := range entries {
			left := len(entries) - i
			if int(c.Rand()%uint64(left)) < need {
				keep[i] = true
				need--
			}
		}
		for i, e := range entries {
			if keep[i] {
				zsetReplyEntry(c, e.Member, e.Score, withScores)
			}
		}
		return
	}
	// A few members of a big set: random picks, skipping repeats.
	seen := make(map[string]struct{}, count)
	for int64(len(seen)) < count {
		m, s := z.RandomMember(c.Rand)
		if _, dup := seen[string(m)]; dup {
			continue
		}
		seen[string(m)] = struct{}{}
		zsetReplyEntry(c, m, s, withScores)
	}
}

// --- ZSCAN --------------------------------------------------------------------

// zscanCmd: ZSCAN key cursor [MATCH pattern] [COUNT count]. Scores are bulk
// strings in both protocols, as Redis's scan replies are: a listpack's stored text
// (shortest round-trip), or for a skiplist the scan callback's "%.17Lg".
func zscanCmd(c *Ctx) {
	cursor, ok := parseScanCursor(c.Argv[2])
	if !ok {
		c.Err(ErrCursor)
		return
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		replyEmptyScan(c)
		return
	}
	o, ok := parseScanOpts(c, false, false)
	if !ok {
		return
	}
	count := o.count
	var items []keyspace.ZEntry
	sampled := int64(0)
	visit := func(m []byte, s float64) {
		sampled++
		if o.matches(m) {
			items = append(items, keyspace.ZEntry{Member: m, Score: s})
		}
	}
	if z.IsCompact() {
		cursor = z.Scan(cursor, visit)
	} else {
		maxIter := count * 10
		for {
			cursor = z.Scan(cursor, visit)
			maxIter--
			if cursor == 0 || maxIter <= 0 || sampled >= count {
				break
			}
		}
	}
	c.W.ArrayLen(2)
	var buf [32]byte
	c.W.Bulk(appendUint(buf[:0], cursor))
	c.W.ArrayLen(2 * len(items))
	for _, it := range items {
		c.W.Bulk(it.Member)
		if z.IsCompact() {
			// the listpack's own text for the score (d2string when it was stored)
			c.W.Bulk(resp.FormatDouble(buf[:0], it.Score))
		} else {
			c.W.Bulk(appendLD17(buf[:0], it.Score))
		}
	}
}

// appendLD17 is ld2string(LD_STR_AUTO), which Redis's scan callback uses for a
// skiplist's scores: "%.17Lg" of the double, "inf" and "-inf".
func appendLD17(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// --- ZUNION, ZINTER, ZDIFF ----------------------------------------------------

type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

// zsetSource is one input of a set operation (zsetopsrc); both fields are nil for
// a missing key.
type zsetSource struct {
	z      *keyspace.ZSet
	set    *keyspace.Set // a plain set: every member counts with score 1
	weight float64
}

func (s *zsetSource) len() int {
	switch {
	case s.z != nil:
		return s.z.Len()
	case s.set != nil:
		return s.set.Len()
	}
	return 0
}

// each calls fn for every member (a sorted set from the highest score down, as
// Redis's iterator goes).
func (s *zsetSource) each(fn func(m []byte, score float64) bool) {
	switch {
	case s.z != nil:
		if n := s.z.Len(); n > 0 {
			stop := false
			s.z.RangeByRank(0, n-1, true, func(m []byte, sc float64) {
				if !stop && !fn(m, sc) {
					stop = true
				}
			})
		}
	case s.set != nil:
		// a set may hand out members in a scratch buffer (intset): copy them
		s.set.Range(func(m []byte) bool { return fn(append([]byte(nil), m...), 1) })
	}
}

func (s *zsetSource) find(m []byte) (float64, bool) {
	switch {
	case s.z != nil:
		return s.z.Score(m)
	case s.set != nil && s.set.Has(m):
		return 1, true
	}
	return 0, false
}

func (s *zsetSource) same(o *zsetSource) bool {
	return (s.z != nil && s.z == o.z) || (s.set != nil && s.set == o.set)
}

const (
	aggSum = iota
	aggMin
	aggMax
)

// zsetAggregate is zunionInterAggregate.
func zsetAggregate(target *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) { // +inf + -inf
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

func zunionCmd(c *Ctx)      { zsetOpGeneric(c, nil, 1, zopUnion, false) }
func zinterCmd(c *Ctx)      { zsetOpGeneric(c, nil, 1, zopInter, false) }
func zdiffCmd(c *Ctx)       { zsetOpGeneric(c, nil, 1, zopDiff, false) }
func zintercardCmd(c *Ctx)  { zsetOpGeneric(c, nil, 1, zopInter, true) }
func zunionstoreCmd(c *Ctx) { zsetOpGeneric(c, c.Argv[1], 2, zopUnion, false) }
func zinterstoreCmd(c *Ctx) { zsetOpGeneric(c, c.Argv[1], 2, zopInter, false) }
func zdiffstoreCmd(c *Ctx)  { zsetOpGeneric(c, c.Argv[1], 2, zopDiff, false) }

// zsetOpGeneric is zunionInterDiffGenericCommand: numkeys is at numkeysIdx, the
// result goes to dstKey when set (the STORE variants), and cardOnly is ZINTERCARD.
func zsetOpGeneric(c *Ctx, dstKey []byte, numkeysIdx int, op zsetOp, cardOnly bool) {
	setnum, ok := resp.ParseInt(c.Argv[numkeysIdx])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if setnum < 1 {
		c.Error("ERR at least 1 input key is needed for '" + c.Spec.FullName() + "' command")
		return
	}
	if setnum > int64(len(c.Argv)-(numkeysIdx+1)) {
		c.Err(ErrSyntax)
		return
	}
	src := make([]zsetSource, setnum)
	j := numkeysIdx + 1
	for i := range src {
		src[i].weight = 1
		e := c.DB.LookupRead(c.Argv[j], c.Client.NoTouch)
		j++
		if e == nil {
			continue
		}
		switch e.Kind {
		case keyspace.KindZSet:
			src[i].z = e.Obj().(*keyspace.ZSet)
		case keyspace.KindSet:
			src[i].set = e.Obj().(*keyspace.Set)
		default:
			c.Err(ErrWrongType)
			return
		}
	}
	agg, withScores, limit := aggSum, false, int64(0)
	for j < len(c.Argv) {
		remaining := len(c.Argv) - j
		a := c.Argv[j]
		switch {
		case op != zopDiff && !cardOnly && remaining >= len(src)+1 && eqFold(a, "weights"):
			j++
			for i := range src {
				w, ok := resp.ParseFloat(c.Argv[j])
				if !ok {
					c.Error("ERR weight value is not a float")
					return
				}
				src[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && eqFold(a, "aggregate"):
			switch v := c.Argv[j+1]; {
			case eqFold(v, "sum"):
				agg = aggSum
			case eqFold(v, "min"):
				agg = aggMin
			case eqFold(v, "max"):
				agg = aggMax
			default:
				c.Err(ErrSyntax)
				return
			}
			j += 2
		case dstKey == nil && !cardOnly && eqFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && eqFold(a, "limit"):
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok || v < 0 {
				c.Error("ERR LIMIT can't be negative")
				return
			}
			limit = v
			j += 2
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if op != zopDiff {
		// smallest first, which makes the intersection cheap
		sort.SliceStable(src, func(a, b int) bool { return src[a].len() < src[b].len() })
	}
	if cardOnly {
		c.W.Int(zinterCard(src, limit))
		return
	}
	var result []keyspace.ZEntry
	switch op {
	case zopInter:
		result = zinter(src, agg)
	case zopUnion:
		result = zunion(src, agg)
	case zopDiff:
		result = zdiff(src)
	}
	sort.Slice(result, func(a, b int) bool {
		x, y := &result[a], &result[b]
		if x.Score != y.Score {
			return x.Score < y.Score
		}
		return bytes.Compare(x.Member, y.Member) < 0
	})
	if dstKey != nil {
		dst := c.KS.NewZSetSorted(result, c.KS.ZLimits())
		event := [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}[op]
		zsetStoreResult(c, dstKey, dst, event)
		return
	}
	zsetArrayLen(c, len(result), withScores)
	for _, e := range result {
		zsetReplyEntry(c, e.Member, e.Score, withScores)
	}
}

// zinter: the members of src[0] (the smallest) found in every other input, with
// aggregated weighted scores. Members alias the inputs.
func zinter(src []zsetSource, agg int) []keyspace.ZEntry {
	var out []keyspace.ZEntry
	if src[0].len() == 0 {
		return nil
	}
	src[0].each(func(m []byte, s float64) bool {
		score := src[0].weight * s
		if math.IsNaN(score) {
			score = 0
		}
		for j := 1; j < len(src); j++ {
			v, found := s, true
			if !src[j].same(&src[0]) {
				v, found = src[j].find(m)
			}
			if !found {
				return true
			}
			zsetAggregate(&score, v*src[j].weight, agg)
		}
		out = append(out, keyspace.ZEntry{Member: m, Score: score})
		return true
	})
	return out
}

// zinterCard counts the intersection, stopping at limit (0: no limit).
func zinterCard(src []zsetSource, limit int64) int64 {
	var n int64
	if src[0].len() == 0 {
		return 0
	}
	src[0].each(func(m []byte, _ float64) bool {
		for j := 1; j < len(src); j++ {
			if !src[j].same(&src[0]) {
				if _, found := src[j].find(m); !found {
					return true
				}
			}
		}
		n++
		return limit == 0 || n < limit
	})
	return n
}

// zunion aggregates every input's weighted scores per member, inputs in order.
func zunion(src []zsetSource, agg int) []keyspace.ZEntry {
	var out []keyspace.ZEntry
	idx := make(map[string]int)
	for i := range src {
		if src[i].len() == 0 {
			continue
		}
		w := src[i].weight
		src[i].each(func(m []byte, s float64) bool {
			score := w * s
			if math.IsNaN(score) {
				score = 0
			}
			if k, ok := idx[string(m)]; ok {
				zsetAggregate(&out[k].Score, score, agg)
			} else {
				idx[string(m)] = len(out)
				out = append(out, keyspace.ZEntry{Member: m, Score: score})
			}
			return true
		})
	}
	return out
}

// zdiff: the members of src[0] in no other input, with their src[0] scores
// (unweighted). An input that is src[0] itself empties the result.
func zdiff(src []zsetSource) []keyspace.ZEntry {
	if src[0].len() == 0 {
		return nil
	}
	for j := 1; j < len(src); j++ {
		if src[j].same(&src[0]) {
			return nil
		}
	}
	var out []keyspace.ZEntry
	src[0].each(func(m []byte, s float64) bool {
		for j := 1; j < len(src); j++ {
			if _, found := src[j].find(m); found {
				return true
			}
		}
		out = append(out, keyspace.ZEntry{Member: m, Score: s})
		return true
	})
	return out
}

var (
	wZpopmin = []byte("ZPOPMIN")
	wZpopmax = []byte("ZPOPMAX")
)
