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
	if offset < 0 {
		return 0 // a negative LIMIT offset is no range, in either encoding (Redis 8's "invalid offset")
	}
	if z.big != nil {
		return z.bigRangeWalk(r, offset, limit, rev, fn)
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

// nthInRange is zslNthInRange: the 0-based rank of the n-th item of the range,
// or with a negative n of the -n-th from its end; -1 when there is none. The
// range's ends are found by descents (countWhile) that assume the order the
// range is in: for a lex range over members of different scores, which Redis
// leaves unspecified, the answer depends on the tree's shape, as Redis's does
// on its skiplist's.
func (t *zbtree) nthInRange(r zpred, n int) int {
	if r.empty || t.length == 0 {
		return -1
	}
	if l := t.tail; !r.gte(strBytes(l.members[l.n-1]), l.scores[l.n-1]) {
		return -1
	}
	if l := t.head; !r.lte(strBytes(l.members[0]), l.scores[0]) {
		return -1
	}
	if n >= 0 {
		edge := t.countWhile(func(m string, s float64) bool { return !r.gte(strBytes(m), s) })
		if edge+n >= t.length {
			return -1
		}
		if l, j := t.at(edge + n); !r.lte(strBytes(l.members[j]), l.scores[j]) {
			return -1
		}
		return edge + n
	}
	edge := t.countWhile(func(m string, s float64) bool { return r.lte(strBytes(m), s) })
	if edge < -n {
		return -1
	}
	if l, j := t.at(edge + n); !r.gte(strBytes(l.members[j]), l.scores[j]) {
		return -1
	}
	return edge + n
}

func (z *zsetObj) bigRangeWalk(r zpred, offset, limit int, rev bool, fn func([]byte, float64)) int {
	t := &z.big.tree
	var rank int
	if rev {
		rank = t.nthInRange(r, -offset-1)
	} else {
		rank = t.nthInRange(r, offset)
	}
	if rank < 0 {
		return 0
	}
	count := 0
	for l, j := t.at(rank); l != nil && limit != 0; {
		m, s := strBytes(l.members[j]), l.scores[j]
		if rev {
			if !r.gte(m, s) {
				break
			}
		} else if !r.lte(m, s) {
			break
		}
		fn(m, s)
		count++
		limit--
		if rev {
			l, j = zbtPrev(l, j)
		} else {
			l, j = zbtNext(l, j)
		}
	}
	return count
}

func (z *zsetObj) rangeCount(r zpred) int {
	if z.big != nil {
		// ZCOUNT's skiplist path: ranks of the first and last items in range.
		t := &z.big.tree
		first := t.nthInRange(r, 0)
		if first < 0 {
			return 0
		}
		count := t.length - first
		if last := t.nthInRange(r, -1); last >= 0 {
			count -= t.length - 1 - last
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
		t := &z.big.tree
		start := t.countWhile(func(m string, s float64) bool { return !r.gte(strBytes(m), s) })
		removed := 0
		if start < t.length {
			for l, j := t.at(start); l != nil && r.lte(strBytes(l.members[j]), l.scores[j]); l, j = zbtNext(l, j) {
				removed++
			}
		}
		t.deleteRange(start, removed, func(m string) { z.big.dict.DeleteString(m) })
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
		z.big.tree.deleteRange(start, n, func(m string) { z.big.dict.DeleteString(m) })
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
