package keyspace

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"
)

// ZSet is a sorted set value (KindZSet): unique members ordered by score, and by
// member bytes (memcmp) among equal scores. Like Redis it has two encodings:
//
//   - compact ("listpack"): one byte buffer of entries in order, each a uvarint
//     header (member length << 1 | float flag), the member bytes, then the score:
//     a zigzag varint when it is an integer of at most 53 bits, else
//     eight bytes of IEEE 754. Lookups are linear; it holds at most
//     zset-max-listpack-entries members of at most zset-max-listpack-value bytes.
//   - big (OBJECT ENCODING "skiplist", Redis's name): a Dict from member to
//     score plus an order-statistic B+tree of (score, member) (zset_btree.go),
//     where Redis has a skiplist with spans; ranks in O(log n) all the same.
//
// A set converts from compact to big when an insert crosses a limit and never
// converts back, except where Redis does (the *STORE commands build their result
// and pick its encoding at the end).
//
// Member slices handed to callbacks alias the set's storage: they are valid only
// during the callback and must not be modified; callbacks must not modify the set.
type zsetObj struct {
	lp   []byte // compact entries (big == nil)
	n    int    // number of compact entries
	big  *zsetBig
	seed uint64 // hash seed for the big encoding's dict
}

type zsetBig struct {
	tree zbtree
	dict Dict[float64]
}

// ZLimits are the zset-max-listpack-entries and zset-max-listpack-value thresholds
// a command works with.
type ZLimits struct {
	Entries, Value int64
	Seed           uint64 // of the tables a compact set converts into (Keyspace.ZLimits)
}

// ZLimits returns the live sorted-set thresholds and the keyspace's seed for the
// tables of sets that convert.
func (ks *Keyspace) ZLimits() ZLimits {
	l := ks.Limits.ZSet()
	l.Seed = ks.zsetSeed()
	return l
}

func (ks *Keyspace) zsetSeed() uint64 { return ks.seed ^ 0x5a5e7 }

// ZSet returns the live sorted-set thresholds.
func (l *EncodingLimits) ZSet() ZLimits {
	return ZLimits{Entries: l.ZSetMaxListpackEntries(), Value: l.ZSetMaxListpackValue()}
}

// NewZSet is zsetTypeCreate: an empty set for about sizeHint members, the first
// of lenHint bytes. It starts big when the hints already exceed the limits.
func (ks *Keyspace) NewZSet(sizeHint, lenHint int, lim ZLimits) *ZSet {
	z := &ZSet{Kind: KindZSet}
	lim.Seed = ks.zsetSeed()
	z.Presize(sizeHint, lenHint, lim)
	return z
}

// ZEntry is a member and its score.
type ZEntry struct {
	Member []byte
	Score  float64
}

// NewZSetSorted builds the result of ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE from
// entries sorted by (score, member) with unique members: compact when it fits the
// limits (zsetConvertToListpackIfNeeded), big otherwise. Members are copied.
func (ks *Keyspace) NewZSetSorted(entries []ZEntry, lim ZLimits) *ZSet {
	return newZSetOf(ks.newZSetSorted(entries, lim))
}

func (ks *Keyspace) newZSetSorted(entries []ZEntry, lim ZLimits) *zsetObj {
	z := &zsetObj{seed: ks.zsetSeed()}
	maxLen := 0
	total := 0
	for _, e := range entries {
		maxLen = max(maxLen, len(e.Member))
		total += len(e.Member) + 3
	}
	if int64(len(entries)) <= lim.Entries && int64(maxLen) <= lim.Value {
		z.lp = make([]byte, 0, total)
		for _, e := range entries {
			z.lp = zlpAppend(z.lp, e.Member, e.Score)
		}
		z.n = len(entries)
		return z
	}
	i := 0
	z.buildBig(len(entries), len(entries), func() ([]byte, float64) {
		e := &entries[i]
		i++
		return e.Member, e.Score
	})
	return z
}

// Len is the number of members (ZCARD).
func (z *zsetObj) Len() int {
	if z.big != nil {
		return z.big.tree.length
	}
	return z.n
}

// Encoding is OBJECT ENCODING's text.
func (z *zsetObj) Encoding() string {
	if z.big != nil {
		return "skiplist"
	}
	return "listpack"
}

// Clone deep-copies the set, keeping its encoding (COPY).
func (z *zsetObj) Clone() *zsetObj {
	c := &zsetObj{seed: z.seed, n: z.n}
	if z.big == nil {
		c.lp = append([]byte(nil), z.lp...)
		return c
	}
	l, j := z.big.tree.head, 0
	c.buildBig(z.Len(), z.Len(), func() ([]byte, float64) {
		m, s := l.members[j], l.scores[j]
		l, j = zbtNext(l, j)
		return strBytes(m), s
	})
	return c
}

// --- compact encoding ---------------------------------------------------------

// zlpIntScore reports whether score is stored as a varint. -0 is stored as 0: a
// listpack keeps integral scores as integers and so loses the sign of zero too.
func zlpIntScore(score float64) (int64, bool) {
	if score >= -(1<<53) && score <= 1<<53 && score == math.Trunc(score) {
		return int64(score), true
	}
	return 0, false
}

// zlpEntrySize is the encoded size of an entry.
func zlpEntrySize(member []byte, score float64) int {
	var tmp [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(tmp[:], uint64(len(member))<<1) + len(member)
	if iv, ok := zlpIntScore(score); ok {
		return n + binary.PutVarint(tmp[:], iv)
	}
	return n + 8
}

// Reserve sizes the listpack of a new, empty compact zset for the members
// pairs[2j+1] with scores[j] (ZADD's score/member arguments, scores parsed), which
// the caller is about to Add: one allocation instead of one per member, the
// garbage of a bulk load. It changes no encoding.
func (z *zsetObj) Reserve(pairs [][]byte, scores []float64) {
	if z.big != nil || z.n != 0 || len(scores) < 2 || len(pairs) < 2*len(scores) {
		return
	}
	need := 0
	for j, sc := range scores {
		need += zlpEntrySize(pairs[2*j+1], sc)
	}
	if cap(z.lp) < need {
		z.lp = growCompact(z.lp[:0], need)[:0]
	}
}

// zlpPut encodes an entry at the start of dst, which must be large enough.
func zlpPut(dst []byte, member []byte, score float64) {
	iv, isInt := zlpIntScore(score)
	h := uint64(len(member)) << 1
	if !isInt {
		h |= 1
	}
	n := binary.PutUvarint(dst, h)
	n += copy(dst[n:], member)
	if isInt {
		binary.PutVarint(dst[n:], iv)
	} else {
		binary.LittleEndian.PutUint64(dst[n:], math.Float64bits(score))
	}
}

func zlpAppend(dst []byte, member []byte, score float64) []byte {
	n := len(dst)
	dst = growCompact(dst, zlpEntrySize(member, score))
	zlpPut(dst[n:], member, score)
	return dst
}

// zlpUvarint decodes a uvarint, with a fast path for one byte.
func zlpUvarint(b []byte, off int) (uint64, int) {
	if c := b[off]; c < 0x80 {
		return uint64(c), off + 1
	}
	v, n := binary.Uvarint(b[off:])
	return v, off + n
}

// zlpDecode decodes the entry at off and returns the offset of the next one.
func zlpDecode(lp []byte, off int) (member []byte, score float64, next int) {
	h, off := zlpUvarint(lp, off)
	end := off + int(h>>1)
	member = lp[off:end:end]
	if h&1 != 0 {
		return member, math.Float64frombits(binary.LittleEndian.Uint64(lp[end:])), end + 8
	}
	u, next := zlpUvarint(lp, end)
	return member, float64(int64(u>>1) ^ -int64(u&1)), next
}

// zlpFind returns the offset, end and score of member's entry.
func (z *zsetObj) zlpFind(member []byte) (off, next int, score float64, ok bool) {
	for off < len(z.lp) {
		m, s, nx := zlpDecode(z.lp, off)
		if bytes.Equal(m, member) {
			return off, nx, s, true
		}
		off = nx
	}
	return 0, 0, 0, false
}

// zlpInsert inserts a member that is not present at its place (zzlInsert).
func (z *zsetObj) zlpInsert(member []byte, score float64) {
	off := 0
	for off < len(z.lp) {
		m, s, nx := zlpDecode(z.lp, off)
		if s > score || (s == score && bytes.Compare(m, member) > 0) {
			break
		}
		off = nx
	}
	size := zlpEntrySize(member, score)
	old := len(z.lp)
	z.lp = growCompact(z.lp, size)
	copy(z.lp[off+size:], z.lp[off:old])
	zlpPut(z.lp[off:], member, score)
	z.n++
}

// zlpCut removes the bytes [off, next) holding count entries.
func (z *zsetObj) zlpCut(off, next, count int) {
	z.lp = append(z.lp[:off], z.lp[next:]...)
	z.n -= count
}

// zlpOffsets appends the offset of every entry to buf.
func (z *zsetObj) zlpOffsets(buf []int) []int {
	for off := 0; off < len(z.lp); {
		buf = append(buf, off)
		h, o := zlpUvarint(z.lp, off)
		o += int(h >> 1)
		if h&1 != 0 {
			off = o + 8
		} else {
			_, off = zlpUvarint(z.lp, o)
		}
	}
	return buf
}

// --- big encoding -------------------------------------------------------------

// toBig converts to the big encoding (zsetConvertAndExpand), sizing the dict for
// capacity members.
func (z *zsetObj) toBig(capacity int) {
	if z.big != nil {
		return
	}
	lp, off := z.lp, 0
	z.buildBig(z.n, capacity, func() ([]byte, float64) {
		m, s, next := zlpDecode(lp, off)
		off = next
		return m, s
	})
}

// buildBig makes z big with the n members next returns in order (each
// copied), its dict sized for capacity members.
func (z *zsetObj) buildBig(n, capacity int, next func() ([]byte, float64)) {
	b := &zsetBig{}
	b.dict.seed = z.seed
	b.dict.insertRehash = collectionRehash
	b.dict.Expand(capacity)
	b.tree = zbtBuild(n, func() (float64, string) {
		m, s := next()
		return s, b.put(m, s)
	})
	z.big, z.lp, z.n = b, nil, 0
}

// put stores a copy of member, not present, with its score in the dict and
// returns that copy, for the tree to share.
func (b *zsetBig) put(member []byte, score float64) string {
	e, _ := b.dict.upsertEntry(dictView(member), true)
	e.val = score
	return e.key()
}

// bigInsert adds a member that is not present.
func (z *zsetObj) bigInsert(member []byte, score float64) {
	z.big.tree.insert(score, z.big.put(member, score))
}

// bigDelete removes member, of the given score.
func (z *zsetObj) bigDelete(member string, score float64) {
	z.big.tree.delete(score, member)
	z.big.dict.DeleteString(member)
}

func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// --- point operations ---------------------------------------------------------

// Score returns member's score (ZSCORE).
func (z *zsetObj) Score(member []byte) (float64, bool) {
	if z.big != nil {
		v, ok := z.big.dict.Get(member)
		if !ok {
			return 0, false
		}
		return *v, true
	}
	_, _, s, ok := z.zlpFind(member)
	return s, ok
}

// ZADD input flags (zsetAdd's in_flags).
const (
	ZAddIncr = 1 << iota
	ZAddNX
	ZAddXX
	ZAddGT
	ZAddLT
)

// ZADD result flags (zsetAdd's out_flags).
const (
	ZAdded = 1 << iota
	ZUpdated
	ZNop
	ZNaN // the (incremented) score is NaN: nothing changed
)

// Add is zsetAdd: it adds member or updates its score according to flags and
// returns what happened and the member's resulting score. A new member is copied.
// The set converts to the big encoding when the insert crosses lim.
func (z *zsetObj) Add(member []byte, score float64, flags int, lim ZLimits) (out int, newScore float64) {
	if math.IsNaN(score) {
		return ZNaN, 0
	}
	incr, nx, xx := flags&ZAddIncr != 0, flags&ZAddNX != 0, flags&ZAddXX != 0
	gt, lt := flags&ZAddGT != 0, flags&ZAddLT != 0
	if z.big == nil {
		if off, next, cur, ok := z.zlpFind(member); ok {
			if nx {
				return ZNop, 0
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					return ZNaN, 0
				}
			}
			if (lt && score >= cur) || (gt && score <= cur) {
				return ZNop, 0
			}
			if score != cur {
				z.zlpCut(off, next, 1)
				z.zlpInsert(member, score)
				return ZUpdated, score
			}
			return 0, score
		}
		if xx {
			return ZNop, 0
		}
		if int64(z.n+1) > lim.Entries || int64(len(member)) > lim.Value {
			z.toBig(z.n + 1)
		} else {
			z.zlpInsert(member, score)
			return ZAdded, score
		}
	}
	if e := z.big.dict.findEntry(member); e != nil {
		if nx {
			return ZNop, 0
		}
		cur := e.val
		if incr {
			score += cur
			if math.IsNaN(score) {
				return ZNaN, 0
			}
		}
		if (lt && score >= cur) || (gt && score <= cur) {
			return ZNop, 0
		}
		if score != cur {
			z.big.tree.move(cur, e.key(), score)
			e.val = score
			return ZUpdated, score
		}
		return 0, score
	}
	if xx {
		return ZNop, 0
	}
	z.bigInsert(member, score)
	return ZAdded, score
}

// MaybeConvert is zsetTypeMaybeConvert: a compact set about to receive sizeHint
// members converts at once if that exceeds the entry limit.
func (z *zsetObj) MaybeConvert(sizeHint int, lim ZLimits) {
	if z.big == nil && int64(sizeHint) > lim.Entries {
		z.toBig(sizeHint)
	}
}

// Delete removes member (zsetDel); it reports whether it was present.
func (z *zsetObj) Delete(member []byte) bool {
	if z.big != nil {
		e := z.big.dict.findEntry(member)
		if e == nil {
			return false
		}
		z.bigDelete(e.key(), e.val)
		return true
	}
	off, next, _, ok := z.zlpFind(member)
	if ok {
		z.zlpCut(off, next, 1)
	}
	return ok
}

// Rank is zsetRank: member's 0-based rank from the lowest (or, with rev, the
// highest) score, and its score.
func (z *zsetObj) Rank(member []byte, rev bool) (rank int, score float64, ok bool) {
	n := z.Len()
	if z.big != nil {
		e := z.big.dict.findEntry(member)
		if e == nil {
			return 0, 0, false
		}
		rank = z.big.tree.rank(e.val, e.key())
		score = e.val
	} else {
		found := false
		for off := 0; off < len(z.lp); rank++ {
			m, s, nx := zlpDecode(z.lp, off)
			if bytes.Equal(m, member) {
				score, found = s, true
				break
			}
			off = nx
		}
		if !found {
			return 0, 0, false
		}
	}
	if rev {
		rank = n - 1 - rank
	}
	return rank, score, true
}

// --- walks --------------------------------------------------------------------

// Range calls fn for every member in order.
func (z *zsetObj) Range(fn func(member []byte, score float64)) {
	if z.big != nil {
		z.big.tree.each(func(s float64, m string) { fn(strBytes(m), s) })
		return
	}
	for off := 0; off < len(z.lp); {
		m, s, nx := zlpDecode(z.lp, off)
		fn(m, s)
		off = nx
	}
}

// RangeByRank calls fn for ranks start..end (0-based, inclusive, within
// 0 <= start <= end < Len()), counted from the highest score with rev.
func (z *zsetObj) RangeByRank(start, end int, rev bool, fn func(member []byte, score float64)) {
	n := end - start + 1
	if z.big != nil {
		t := &z.big.tree
		if rev {
			for l, j := t.at(t.length - 1 - start); n > 0 && l != nil; n-- {
				fn(strBytes(l.members[j]), l.scores[j])
				l, j = zbtPrev(l, j)
			}
		} else {
			for l, j := t.at(start); n > 0 && l != nil; n-- {
				fn(strBytes(l.members[j]), l.scores[j])
				l, j = zbtNext(l, j)
			}
		}
		return
	}
	if rev {
		var stack [128]int
		offs := z.zlpOffsets(stack[:0])
		for i := len(offs) - 1 - start; n > 0; i, n = i-1, n-1 {
			m, s, _ := zlpDecode(z.lp, offs[i])
			fn(m, s)
		}
		return
	}
	off := 0
	for i := 0; i < start; i++ {
		_, _, off = zlpDecode(z.lp, off)
	}
	for ; n > 0; n-- {
		m, s, nx := zlpDecode(z.lp, off)
		fn(m, s)
		off = nx
	}
}

// Scan is ZSCAN's step: a compact set reports everything and returns cursor 0; a
// big one walks its dict with Redis's reverse-binary cursor.
func (z *zsetObj) Scan(cursor uint64, fn func(member []byte, score float64)) uint64 {
	if z.big == nil {
		z.Range(fn)
		return 0
	}
	return z.big.dict.Scan(cursor, func(k string, s *float64) { fn(strBytes(k), *s) })
}

// Entries appends every entry in order to buf (members alias the set).
func (z *zsetObj) Entries(buf []ZEntry) []ZEntry {
	z.Range(func(m []byte, s float64) { buf = append(buf, ZEntry{m, s}) })
	return buf
}

// RandomMember returns a random member (dictGetFairRandomKey for a big set, a
// uniform pick for a compact one). The set must not be empty.
func (z *zsetObj) RandomMember(rnd func() uint64) ([]byte, float64) {
	if z.big != nil {
		k, s, _ := z.big.dict.Random(rnd)
		return strBytes(k), *s
	}
	i := int(rnd() % uint64(z.n))
	off := 0
	for ; i > 0; i-- {
		_, _, off = zlpDecode(z.lp, off)
	}
	m, s, _ := zlpDecode(z.lp, off)
	return m, s
}

// IsCompact reports whether the set uses the compact encoding.
func (z *zsetObj) IsCompact() bool { return z.big == nil }

// Pop calls fn with the lowest (or, with max, the highest) member and removes it.
// The set must not be empty.
func (z *zsetObj) Pop(max bool, fn func(member []byte, score float64)) {
	if z.big != nil {
		l, j := z.big.tree.head, 0
		if max {
			l = z.big.tree.tail
			j = l.n - 1
		}
		m, s := l.members[j], l.scores[j]
		fn(strBytes(m), s)
		z.bigDelete(m, s)
		return
	}
	off := 0
	if max {
		var stack [128]int
		offs := z.zlpOffsets(stack[:0])
		off = offs[len(offs)-1]
	}
	m, s, next := zlpDecode(z.lp, off)
	fn(m, s)
	z.zlpCut(off, next, 1)
}
