package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// hscanCmd: HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]. As in
// Redis, the key is looked up before the options are parsed (a missing key
// replies an empty scan whatever follows). A listpack hash is returned whole
// with cursor 0; a table is walked with the reverse-binary cursor (Dict.Scan,
// SCAN's guarantee), visiting buckets until COUNT fields were seen or 10*COUNT
// buckets were visited. Expired fields are skipped, not deleted.
func hscanCmd(c *Ctx) {
	cursor, ok := parseScanCursor(c.Argv[2])
	if !ok {
		c.Err(ErrCursor)
		return
	}
	h, ok := hashLookup(c, c.Argv[1], false)
	if !ok {
		return
	}
	if h == nil {
		replyEmptyScan(c)
		return
	}
	o, ok := parseScanOpts(c, true, false)
	if !ok {
		return
	}
	count, noValues := o.count, o.noValues
	var items [][]byte // views: the hash is not modified before the reply is written
	sampled := int64(0)
	visit := func(f, v []byte, exp int64) {
		sampled++
		if !o.matches(f) {
			return
		}
		if !live(c, exp) {
			return
		}
		items = append(items, f)
		if !noValues {
			items = append(items, v)
		}
	}
	if h.Compact() {
		cursor = h.Scan(0, visit)
	} else {
		for maxIter := count * 10; ; {
			cursor = h.Scan(cursor, visit)
			if cursor == 0 || maxIter == 0 || sampled >= count {
				break
			}
			maxIter--
		}
	}
	c.W.ArrayLen(2)
	var buf [20]byte
	c.W.Bulk(appendUint(buf[:0], cursor))
	c.W.ArrayLen(len(items))
	for _, it := range items {
		c.W.Bulk(it)
	}
}

// expireAllFields is hashTypeExpireIfNeeded (HRANDFIELD): it deletes every
// expired field of h and reports whether that emptied and deleted the hash.
func expireAllFields(c *Ctx, key []byte, h *keyspace.Hash) bool {
	if m := h.MinExpire(); m == 0 || m > c.Now {
		return false
	}
	var fn func(f []byte)
	if c.Prop != nil {
		fn = func(f []byte) { c.AlsoPropagate(wHdel, key, f) }
	}
	c.DB.Changing(key)
	n := h.ExpireFields(c.Now, math.MaxInt, fn)
	c.KS.Stats.ExpiredSubkeys += int64(n)
	c.Notify('h', "hexpired", key)
	if h.Len() == 0 {
		c.Notify('g', "del", key)
		c.DB.Delete(key)
		return true
	}
	c.DB.HashFieldTTLChanged(key, h)
	c.DB.Touch(key)
	return false
}

// hrandfieldCmd: HRANDFIELD key [count [WITHVALUES]], after hrandfieldCommand.
// Randomness comes from the execution unit's seeded source.
func hrandfieldCmd(c *Ctx) {
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
		if len(c.Argv) > 4 || (len(c.Argv) == 4 && !eqFold(c.Argv[3], "withvalues")) {
			c.Err(ErrSyntax)
			return
		}
		withValues := len(c.Argv) == 4
		if withValues && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
			c.Error("ERR value is out of range")
			return
		}
		hrandfieldCount(c, l, withValues)
		return
	}
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	if h == nil || expireAllFields(c, key, h) {
		c.W.Null()
		return
	}
	if fv, ok := h.RandomField(c.Rand); ok {
		c.W.Bulk(fv.F)
		return
	}
	i := c.Rand() % uint64(h.Len()) // a listpack: a uniform pick
	h.Range(func(f, _ []byte, _ int64) bool {
		if i == 0 {
			c.W.Bulk(f)
			return false
		}
		i--
		return true
	})
}

// hrandfieldCount is hrandfieldWithCountCommand: a negative count allows
// repeats, a positive one returns distinct fields; RESP3 nests WITHVALUES pairs.
func hrandfieldCount(c *Ctx, l int64, withValues bool) {
	key := c.Argv[1]
	h, ok := hashLookup(c, key, false)
	if !ok {
		return
	}
	if h == nil {
		c.W.ArrayLen(0)
		return
	}
	count, uniq := uint64(l), true
	if l < 0 {
		count, uniq = uint64(-l), false
	}
	if expireAllFields(c, key, h) || count == 0 {
		c.W.ArrayLen(0)
		return
	}
	size := uint64(h.Len())
	resp3 := c.W.Proto == 3
	header := func(n uint64) {
		if withValues && !resp3 {
			c.W.ArrayLen(int(n * 2))
		} else {
			c.W.ArrayLen(int(n))
		}
	}
	emit := func(f, v []byte) {
		if withValues && resp3 {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(f)
		if withValues {
			c.W.Bulk(v)
		}
	}
	var es []keyspace.HashField
	if h.Compact() {
		es = h.Entries(nil)
	}

	// CASE 1: repeats allowed (or a single field): independent draws.
	if !uniq || count == 1 {
		header(count)
		for ; count > 0; count-- {
			if es != nil {
				e := es[c.Rand()%uint64(len(es))]
				emit(e.F, e.V)
			} else {
				fv, _ := h.RandomField(c.Rand)
				emit(fv.F, fv.V)
			}
		}
		return
	}
	header(min(count, size))

	// CASE 2: asking for at least the whole hash: all of it.
	if count >= size {
		h.Range(func(f, v []byte, _ int64) bool {
			emit(f, v)
			return true
		})
		return
	}

	// CASE 2.5: a listpack: distinct fields in listpack order (selection sampling,
	// as lpRandomPairsUnique).
	if es != nil {
		need := count
		for i := range es {
			if c.Rand()%uint64(len(es)-i) < need {
				emit(es[i].F, es[i].V)
				if need--; need == 0 {
					break
				}
			}
		}
		return
	}

	// CASE 3: a table not much bigger than count: drop random fields from a copy.
	if count*3 > size {
		all := h.Entries(make([]keyspace.HashField, 0, size))
		n := uint64(len(all))
		for n > count {
			i := c.Rand() % n
			all[i] = all[n-1]
			n--
		}
		for _, e := range all[:n] {
			emit(e.F, e.V)
		}
		return
	}

	// CASE 4: a big table: draw until count distinct fields.
	seen := make(map[string]struct{}, count)
	for uint64(len(seen)) < count {
		fv, _ := h.RandomField(c.Rand)
		if _, dup := seen[string(fv.F)]; dup {
			continue
		}
		seen[string(fv.F)] = struct{}{}
		emit(fv.F, fv.V)
	}
}
