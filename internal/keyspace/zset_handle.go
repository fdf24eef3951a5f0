package keyspace

import "unsafe"

// ZSet is a sorted set, handled through the Entry that holds it, as Hash is
// (docs/decisions/0030-compact-collections-in-the-entry.md): a set in the
// listpack encoding lives in the entry (p the listpack, n its length, c the
// member count); a skiplist set is a *zsetObj the entry points to. Each method
// loads the inline form into a zsetObj on the caller's stack, runs it and
// stores it back. A ZSet from the constructors is a stand-alone entry:
// DB.SetObject and Entry.SetObj copy it, and the stored entry's handle
// (Entry.Obj) is the one to use afterwards.
type ZSet Entry

func (z *ZSet) e() *Entry { return (*Entry)(z) }

// openLim is open for a change that may convert the set: an inline set gets
// the seed of the skiplist it may become from lim.
func (z *ZSet) openLim(t *zsetObj, lim ZLimits) *zsetObj {
	x := z.open(t)
	if x == t {
		x.seed = lim.Seed
	}
	return x
}

// open returns the set's zsetObj: the boxed one, or the inline form loaded into t.
func (z *ZSet) open(t *zsetObj) *zsetObj {
	if z.Enc == compactBoxed {
		return (*zsetObj)(z.p)
	}
	t.lp = z.e().compactBytes()
	n, ok := z.e().compactCount()
	if !ok {
		n = t.countLP()
	}
	t.n = n
	return t
}

// close stores o back after a change made through open: inline while it is a
// listpack, boxed (in a copy on the heap) once it converted.
func (z *ZSet) close(o *zsetObj) {
	if z.Enc == compactBoxed {
		return
	}
	if o.big == nil {
		z.e().storeCompact(o.lp, o.n)
		return
	}
	boxCopy(z.e(), o)
}

// boxed returns the zsetObj of a skiplist set, nil for an inline listpack.
func (z *ZSet) boxed() *zsetObj { return (*zsetObj)(z.e().boxedPtr()) }

// newZSetOf wraps o in a stand-alone handle.
func newZSetOf(o *zsetObj) *ZSet {
	z := &ZSet{Kind: KindZSet}
	if o.big == nil {
		z.e().storeCompact(o.lp, o.n)
	} else {
		z.e().setBoxed(unsafe.Pointer(o))
	}
	return z
}

// countLP counts the members of the listpack by walking it.
func (z *zsetObj) countLP() int {
	n := 0
	for off := 0; off < len(z.lp); n++ {
		_, _, off = zlpDecode(z.lp, off)
	}
	return n
}

// Len is the number of members (ZCARD).
func (z *ZSet) Len() int {
	if n, ok := z.e().inlineLen(); ok {
		return n
	}
	var t zsetObj
	return z.open(&t).Len()
}

// Encoding is OBJECT ENCODING's text.
func (z *ZSet) Encoding() string {
	if z.Enc == compactBoxed {
		return "skiplist"
	}
	return "listpack"
}

// IsCompact reports whether the set is in the listpack encoding.
func (z *ZSet) IsCompact() bool { return z.Enc != compactBoxed }

// Clone deep-copies the set, keeping its encoding (COPY), into a stand-alone
// handle.
func (z *ZSet) Clone() any {
	if o := z.boxed(); o != nil {
		return newZSetOf(o.Clone())
	}
	c := ZSet(z.e().cloneInline())
	return &c
}

func (z *ZSet) usage(samples int) int64 {
	if o := z.boxed(); o != nil {
		return o.usage(samples)
	}
	return z.e().inlineUsage()
}

// Reserve sizes the listpack of a new, empty compact zset for the members
// pairs[2j+1] with scores[j] (ZADD's score/member arguments, scores parsed), which
// the caller is about to Add: one allocation instead of one per member, the
// garbage of a bulk load. It changes no encoding.
func (z *ZSet) Reserve(pairs [][]byte, scores []float64) {
	var t zsetObj
	x := z.open(&t)
	x.Reserve(pairs, scores)
	z.close(x)
}

// Score returns member's score (ZSCORE).
func (z *ZSet) Score(member []byte) (float64, bool) {
	var t zsetObj
	x := z.open(&t)
	return x.Score(member)
}

// Add is zsetAdd: it adds member or updates its score according to flags and
// returns what happened and the member's resulting score. A new member is copied.
// The set converts to the big encoding when the insert crosses lim.
func (z *ZSet) Add(member []byte, score float64, flags int, lim ZLimits) (out int, newScore float64) {
	var t zsetObj
	x := z.openLim(&t, lim)
	out, newScore = x.Add(member, score, flags, lim)
	z.close(x)
	return out, newScore
}

// AddAll is Add for each score/member pair (scores[j], pairs[2j+1]) in one
// pass over the set, so that a new set's reserved listpack (Reserve) is filled
// without a copy. After each member it calls fn with j and Add's results; it
// stops when fn returns false.
func (z *ZSet) AddAll(pairs [][]byte, scores []float64, flags int, lim ZLimits, fn func(j, out int, newScore float64) bool) {
	var t zsetObj
	x := z.openLim(&t, lim)
	for j, sc := range scores {
		out, ns := x.Add(pairs[2*j+1], sc, flags, lim)
		if !fn(j, out, ns) {
			break
		}
	}
	z.close(x)
}

// Presize is NewZSet's rule for a set just created empty in place (ZADD on a
// new key, without a stand-alone set to copy): it converts to the skiplist at
// once, sized for sizeHint members, when sizeHint or the first member's length
// lenHint exceeds the limits.
func (z *ZSet) Presize(sizeHint, lenHint int, lim ZLimits) {
	if z.Enc == compactBoxed || (int64(sizeHint) <= lim.Entries && int64(lenHint) <= lim.Value) {
		return
	}
	var t zsetObj
	x := z.openLim(&t, lim)
	x.toBig(sizeHint)
	z.close(x)
}

// MaybeConvert is zsetTypeMaybeConvert: a compact set about to receive sizeHint
// members converts at once if that exceeds the entry limit.
func (z *ZSet) MaybeConvert(sizeHint int, lim ZLimits) {
	var t zsetObj
	x := z.openLim(&t, lim)
	x.MaybeConvert(sizeHint, lim)
	z.close(x)
}

// Delete removes member (zsetDel); it reports whether it was present.
func (z *ZSet) Delete(member []byte) bool {
	var t zsetObj
	x := z.open(&t)
	res := x.Delete(member)
	z.close(x)
	return res
}

// Rank is zsetRank: member's 0-based rank from the lowest (or, with rev, the
// highest) score, and its score.
func (z *ZSet) Rank(member []byte, rev bool) (rank int, score float64, ok bool) {
	var t zsetObj
	x := z.open(&t)
	return x.Rank(member, rev)
}

// Range calls fn for every member in order.
func (z *ZSet) Range(fn func(member []byte, score float64)) {
	var t zsetObj
	x := z.open(&t)
	x.Range(fn)
}

// RangeByRank calls fn for ranks start..end (0-based, inclusive, within
// 0 <= start <= end < Len()), counted from the highest score with rev.
func (z *ZSet) RangeByRank(start, end int, rev bool, fn func(member []byte, score float64)) {
	var t zsetObj
	x := z.open(&t)
	x.RangeByRank(start, end, rev, fn)
}

// RangeDesc calls fn for each member from the highest score to the lowest (the
// order Redis saves a skiplist in).
func (z *ZSet) RangeDesc(fn func(member []byte, score float64)) {
	var t zsetObj
	x := z.open(&t)
	x.RangeDesc(fn)
}

// Scan is ZSCAN's step: a compact set reports everything and returns cursor 0; a
// big one walks its dict with Redis's reverse-binary cursor.
func (z *ZSet) Scan(cursor uint64, fn func(member []byte, score float64)) uint64 {
	var t zsetObj
	x := z.open(&t)
	return x.Scan(cursor, fn)
}

// Entries appends every entry in order to buf (members alias the set).
func (z *ZSet) Entries(buf []ZEntry) []ZEntry {
	var t zsetObj
	x := z.open(&t)
	return x.Entries(buf)
}

// RandomMember returns a random member (dictGetFairRandomKey for a big set, a
// uniform pick for a compact one). The set must not be empty.
func (z *ZSet) RandomMember(rnd func() uint64) ([]byte, float64) {
	var t zsetObj
	x := z.open(&t)
	return x.RandomMember(rnd)
}

// Pop calls fn with the lowest (or, with max, the highest) member and removes it.
// The set must not be empty.
func (z *ZSet) Pop(max bool, fn func(member []byte, score float64)) {
	var t zsetObj
	x := z.open(&t)
	x.Pop(max, fn)
	z.close(x)
}

// RangeByScore calls fn for the members in r in order (highest first with rev),
// skipping offset of them and stopping after limit (a negative limit means no
// limit); it returns how many it reported. A negative offset behaves as in Redis:
// nothing for a compact set, the position counted from the other end of the range
// for a big one (zslNthInRange).
func (z *ZSet) RangeByScore(r *ScoreRange, offset, limit int, rev bool, fn func(member []byte, score float64)) int {
	var t zsetObj
	x := z.open(&t)
	return x.RangeByScore(r, offset, limit, rev, fn)
}

// RangeByLex is RangeByScore for a lex range.
func (z *ZSet) RangeByLex(r *LexRange, offset, limit int, rev bool, fn func(member []byte, score float64)) int {
	var t zsetObj
	x := z.open(&t)
	return x.RangeByLex(r, offset, limit, rev, fn)
}

// CountByScore is ZCOUNT.
func (z *ZSet) CountByScore(r *ScoreRange) int {
	var t zsetObj
	x := z.open(&t)
	return x.CountByScore(r)
}

// CountByLex is ZLEXCOUNT.
func (z *ZSet) CountByLex(r *LexRange) int {
	var t zsetObj
	x := z.open(&t)
	return x.CountByLex(r)
}

// DeleteByScore is ZREMRANGEBYSCORE; it returns the number removed.
func (z *ZSet) DeleteByScore(r *ScoreRange) int {
	var t zsetObj
	x := z.open(&t)
	res := x.DeleteByScore(r)
	z.close(x)
	return res
}

// DeleteByLex is ZREMRANGEBYLEX.
func (z *ZSet) DeleteByLex(r *LexRange) int {
	var t zsetObj
	x := z.open(&t)
	res := x.DeleteByLex(r)
	z.close(x)
	return res
}

// DeleteByRank is ZREMRANGEBYRANK for ranks start..end (0-based, inclusive,
// within 0 <= start <= end < Len()); it returns the number removed.
func (z *ZSet) DeleteByRank(start, end int) int {
	var t zsetObj
	x := z.open(&t)
	res := x.DeleteByRank(start, end)
	z.close(x)
	return res
}
