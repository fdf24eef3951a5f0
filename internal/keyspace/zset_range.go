package keyspace

import "bytes"

// Score and lexicographic ranges over a ZSet (ZRANGEBYSCORE, ZRANGEBYLEX, ZCOUNT,
// ZLEXCOUNT, ZREMRANGEBY*), with Redis's semantics for offsets and limits.

// ScoreRange is Redis's zrangespec: [Min, Max], each end exclusive if its Ex is set.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

func (r *ScoreRange) gteMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

func (r *ScoreRange) lteMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// empty reports a range that can hold nothing whatever the set (zslIsInRange's
// first test).
func (r *ScoreRange) empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// LexBound is one end of a lex range: "-" (Inf -1), "+" (Inf 1), or a member with
// "[" (inclusive) or "(" (exclusive).
type LexBound struct {
	Inf   int8
	Value []byte
	Ex    bool
}

// LexRange is Redis's zlexrangespec.
type LexRange struct{ Min, Max LexBound }

// cmpLex is sdscmplex(value, bound).
func cmpLex(v []byte, b *LexBound) int {
	switch b.Inf {
	case -1:
		return 1
	case 1:
		return -1
	}
	return bytes.Compare(v, b.Value)
}

func (r *LexRange) gteMin(v []byte) bool {
	if r.Min.Ex {
		return cmpLex(v, &r.Min) > 0
	}
	return cmpLex(v, &r.Min) >= 0
}

func (r *LexRange) lteMax(v []byte) bool {
	if r.Max.Ex {
		return cmpLex(v, &r.Max) < 0
	}
	return cmpLex(v, &r.Max) <= 0
}

func (r *LexRange) empty() bool {
	var c int
	a, b := &r.Min, &r.Max
	switch {
	case a.Inf != 0 && a.Inf == b.Inf:
		c = 0
	case a.Inf == -1 || b.Inf == 1:
		c = -1
	case a.Inf == 1 || b.Inf == -1:
		c = 1
	default:
		c = bytes.Compare(a.Value, b.Value)
	}
	return c > 0 || (c == 0 && (a.Ex || b.Ex))
}

// zpred is the range predicate pair the walks below share. (Closures rather than
// an interface: the range then stays on the caller's stack.)
type zpred struct {
	gte, lte func(member []byte, score float64) bool
	empty    bool
}

func scorePred(r *ScoreRange) zpred {
	return zpred{
		gte:   func(_ []byte, s float64) bool { return r.gteMin(s) },
		lte:   func(_ []byte, s float64) bool { return r.lteMax(s) },
		empty: r.empty(),
	}
}

// lexPred leaves empty to the caller, which keeps it cheap enough to inline (and
// so its closures on the caller's stack).
func lexPred(r *LexRange) zpred {
	return zpred{
		gte: func(m []byte, _ float64) bool { return r.gteMin(m) },
		lte: func(m []byte, _ float64) bool { return r.lteMax(m) },
	}
}

// RangeByScore calls fn for the members in r in order (highest first with rev),
// skipping offset of them and stopping after limit (a negative limit means no
// limit); it returns how many it reported. A negative offset behaves as in Redis:
// nothing for a compact set, the position counted from the other end of the range
// for a big one (zslNthInRange).
func (z *zsetObj) RangeByScore(r *ScoreRange, offset, limit int, rev bool, fn func(member []byte, score float64)) int {
	return z.rangeWalk(scorePred(r), offset, limit, rev, fn)
}

// RangeByLex is RangeByScore for a lex range.
func (z *zsetObj) RangeByLex(r *LexRange, offset, limit int, rev bool, fn func(member []byte, score float64)) int {
	p := lexPred(r)
	p.empty = r.empty()
	return z.rangeWalk(p, offset, limit, rev, fn)
}

// CountByScore is ZCOUNT.
func (z *zsetObj) CountByScore(r *ScoreRange) int { return z.rangeCount(scorePred(r)) }

// CountByLex is ZLEXCOUNT.
func (z *zsetObj) CountByLex(r *LexRange) int {
	p := lexPred(r)
	p.empty = r.empty()
	return z.rangeCount(p)
}

// DeleteByScore is ZREMRANGEBYSCORE; it returns the number removed.
func (z *zsetObj) DeleteByScore(r *ScoreRange) int { return z.rangeDelete(scorePred(r)) }

// DeleteByLex is ZREMRANGEBYLEX.
func (z *zsetObj) DeleteByLex(r *LexRange) int {
	p := lexPred(r)
	p.empty = r.empty()
	return z.rangeDelete(p)
}

func (z *zsetObj) rangeWalk(r zpred, offset, limit int, rev bool, fn func([]byte, float64)) int {
	if z.big != nil {
		return z.bigRangeWalk(r, offset, limit, rev, fn)
	}
	if offset < 0 {
		return 0 // Redis's listpack walk runs off the end
	}
	count := 0
	if !rev {
		off := z.zlpFirstInRange(r)
		for ; off < len(z.lp) && offset > 0; offset-- {
			_, _, off = zlpDecode(z.lp, off)
		}
		for off < len(z.lp) && limit != 0 {
			m, s, nx := zlpDecode(z.lp, off)
			if !r.lte(m, s) {
				break
			}
			fn(m, s)
			count++
			limit--
			off = nx
		}
		return count
	}
	var stack [128]int
	offs := z.zlpOffsets(stack[:0])
	i := len(offs) - 1
	for ; i >= 0; i-- {
		m, s, _ := zlpDecode(z.lp, offs[i])
		if r.lte(m, s) {
			if !r.gte(m, s) {
				return 0
			}
			break
		}
	}
	i -= offset
	for ; i >= 0 && limit != 0; i-- {
		m, s, _ := zlpDecode(z.lp, offs[i])
		if !r.gte(m, s) {
			break
		}
		fn(m, s)
		count++
		limit--
	}
	return count
}

// nthInRange is zslNthInRange: the n-th (0-based) node of the range, or with a
// negative n the -n-th from its end; the walk is Redis's, step for step, so that
// lex ranges over members of different scores give Redis's answers too.
func (zsl *zskiplist) nthInRange(r zpred, n int) *zslNode {
	if r.empty || zsl.tail == nil {
		return nil
	}
	if !r.gte(strBytes(zsl.tail.member()), zsl.tail.score) {
		return nil
	}
	if f := zsl.first(); !r.lte(strBytes(f.member()), f.score) {
		return nil
	}
	out := func(x *zslNode) bool { return !r.gte(strBytes(x.member()), x.score) }
	in := func(x *zslNode) bool { return r.lte(strBytes(x.member()), x.score) }
	top := zsl.level - 1
	x, edge := zsl.walk(&zsl.header, 0, top, top, out)
	if n >= 0 {
		x, edge = zsl.walk(x, edge, top-1, 0, out)
		if edge+n >= zsl.length {
			return nil
		}
		x = zsl.byRank(edge + 1 + n)
		if x != nil && !r.lte(strBytes(x.member()), x.score) {
			return nil
		}
		return x
	}
	_, edge = zsl.walk(x, edge, top, 0, in)
	if edge < -n {
		return nil
	}
	x = zsl.byRank(edge + 1 + n)
	if x != nil && !r.gte(strBytes(x.member()), x.score) {
		return nil
	}
	return x
}

// walk advances from n (of rank r) on levels from..to (descending) while cond
// holds for the next node, and returns the node reached and its rank.
func (zsl *zskiplist) walk(n *zslNode, r, from, to int, cond func(*zslNode) bool) (*zslNode, int) {
	for i := from; i >= to; i-- {
		for {
			l := n.lv(i)
			if l.forward == nil || !cond(l.forward) {
				break
			}
			r += int(l.span)
			n = l.forward
		}
	}
	return n, r
}

func (z *zsetObj) bigRangeWalk(r zpred, offset, limit int, rev bool, fn func([]byte, float64)) int {
	zsl := z.big.zsl
	var x *zslNode
	if rev {
		x = zsl.nthInRange(r, -offset-1)
	} else {
		x = zsl.nthInRange(r, offset)
	}
	count := 0
	for x != nil && limit != 0 {
		m := strBytes(x.member())
		if rev {
			if !r.gte(m, x.score) {
				break
			}
		} else if !r.lte(m, x.score) {
			break
		}
		fn(m, x.score)
		count++
		limit--
		if rev {
			x = x.backward
		} else {
			x = x.lvl0.forward
		}
	}
	return count
}

func (z *zsetObj) rangeCount(r zpred) int {
	if z.big != nil {
		// ZCOUNT's skiplist path: ranks of the first and last nodes in range.
		zsl := z.big.zsl
		first := zsl.nthInRange(r, 0)
		if first == nil {
			return 0
		}
		count := zsl.length - (zsl.rank(first) - 1)
		if last := zsl.nthInRange(r, -1); last != nil {
			count -= zsl.length - zsl.rank(last)
		}
		return count
	}
	off := z.zlpFirstInRange(r)
	count := 0
	for off < len(z.lp) {
		m, s, nx := zlpDecode(z.lp, off)
		if !r.lte(m, s) {
			break
		}
		count++
		off = nx
	}
	return count
}

// zlpFirstInRange is zzlFirstInRange: the offset of the first entry at or above
// the range's minimum if it is also within its maximum, else len(lp).
func (z *zsetObj) zlpFirstInRange(r zpred) int {
	for off := 0; off < len(z.lp); {
		m, s, nx := zlpDecode(z.lp, off)
		if r.gte(m, s) {
			if r.lte(m, s) {
				return off
			}
			break
		}
		off = nx
	}
	return len(z.lp)
}

func (z *zsetObj) rangeDelete(r zpred) int {
	if z.big != nil {
		var update [zslMaxLevel]*zslNode
		zsl := z.big.zsl
		x := zsl.seekPrefix(func(x *zslNode) bool { return !r.gte(strBytes(x.member()), x.score) }, &update)
		removed := 0
		for x != nil && r.lte(strBytes(x.member()), x.score) {
			next := x.lvl0.forward
			zsl.unlink(x, &update)
			z.big.dict.DeleteString(x.member())
			removed++
			x = next
		}
		return removed
	}
	start := z.zlpFirstInRange(r)
	end, removed := start, 0
	for end < len(z.lp) {
		m, s, nx := zlpDecode(z.lp, end)
		if !r.lte(m, s) {
			break
		}
		removed++
		end = nx
	}
	if removed > 0 {
		z.zlpCut(start, end, removed)
	}
	return removed
}

// DeleteByRank is ZREMRANGEBYRANK for ranks start..end (0-based, inclusive,
// within 0 <= start <= end < Len()); it returns the number removed.
func (z *zsetObj) DeleteByRank(start, end int) int {
	n := end - start + 1
	if z.big != nil {
		var update [zslMaxLevel]*zslNode
		zsl := z.big.zsl
		x := zsl.seekRank(start+1, &update)
		for i := 0; i < n && x != nil; i++ {
			next := x.lvl0.forward
			zsl.unlink(x, &update)
			z.big.dict.DeleteString(x.member())
			x = next
		}
		return n
	}
	off := 0
	for i := 0; i < start; i++ {
		_, _, off = zlpDecode(z.lp, off)
	}
	end2 := off
	for i := 0; i < n; i++ {
		_, _, end2 = zlpDecode(z.lp, end2)
	}
	z.zlpCut(off, end2, n)
	return n
}
