package keyspace

import (
	"slices"
	"strconv"
)

// Views and builders for the RDB format (internal/rdb, DUMP, RESTORE, DEBUG
// RELOAD). The views expose the layout Redis serialises (the quicklist's nodes,
// an intset's width, the encodings' element orders); the builders make a value
// in exactly the encoding Redis's rdbLoadObject gives it, which is not always
// what the commands' conversion rules would give (a listpack set or hash loads
// as a listpack whatever its element lengths, a list keeps its nodes).

// ForEachNode is List.ForEachNode.
func (l *listObj) ForEachNode(fn func(elems [][]byte, plain bool)) {
	var elems [][]byte
	for i := range l.numNodes() {
		n := l.node(i)
		elems = elems[:0]
		for p := int(n.off); p < len(n.b); {
			var v []byte
			v, p = n.entryAt(p)
			elems = append(elems, v)
		}
		fn(elems, n.plain)
	}
}

// ListBuilder makes a list node by node, as rdbLoadObject does for a
// QUICKLIST_2 payload (quicklistAppendListpack, quicklistAppendPlainNode).
type ListBuilder struct{ l *listObj }

// NewListBuilder starts a quicklist with the live list-max-listpack-size.
func (ks *Keyspace) NewListBuilder() *ListBuilder {
	l := &listObj{ks: ks, enc: ListQuicklist}
	l.fill = int16(min(max(l.serverFill(), -5), fillMax))
	return &ListBuilder{l: l}
}

// AppendNode appends a node holding elems (copied); an empty packed node is
// skipped, as Redis skips empty listpacks.
func (b *ListBuilder) AppendNode(elems [][]byte, plain bool) {
	if len(elems) == 0 {
		return
	}
	n := qnode{sz: lpEmptyBytes, plain: plain}
	size := 0
	for _, v := range elems {
		size += entrySize(len(v))
	}
	n.b = make([]byte, 0, size)
	for _, v := range elems {
		k := len(n.b)
		n.b = n.b[:k+entrySize(len(v))]
		putEntry(n.b[k:], v)
		n.count++
		if plain {
			n.sz = len(v)
		} else {
			n.sz += lpEntrySize(v)
		}
	}
	b.l.insertNode(b.l.numNodes(), n)
	b.l.count += len(elems)
}

// Len is the number of elements appended so far.
func (b *ListBuilder) Len() int { return b.l.count }

// Finish returns the list after listTypeTryConversion(LIST_CONV_AUTO): a
// quicklist of one packed node within list-max-listpack-size becomes a listpack.
func (b *ListBuilder) Finish() *List {
	l := b.l
	if l.numNodes() == 1 && !l.node(0).plain {
		size, count := nodeLimit(l.serverFill())
		if n := l.node(0); uint64(n.sz) <= size && uint64(n.count) <= count {
			l.enc = ListListpack
		}
	}
	return newListOf(l)
}

// IntsetRaw returns an intset's width in bytes and its contents (sorted
// little-endian integers), as intset.c lays them out. Only for SetIntset.
func (s *setObj) IntsetRaw() (width int, data []byte) {
	return int(s.w), s.buf[:int(s.n)*int(s.w)]
}

// NewIntsetSetRaw makes an intset from the contents of a valid intset
// (sorted, unique, of width 2, 4 or 8), keeping its width.
func (ks *Keyspace) NewIntsetSetRaw(width int, data []byte) *Set {
	return newSetOf(&setObj{ks: ks, enc: SetIntset, w: uint8(width), n: int32(len(data) / width),
		buf: append(make([]byte, 0, len(data)), data...)})
}

// NewIntsetSetOf makes an intset of the distinct sorted vals, of the smallest
// width that holds them (as intsetAdd builds it).
func (ks *Keyspace) NewIntsetSetOf(vals []int64) *Set {
	s := ks.intsetOf(vals)
	return newSetOf(&s)
}

// intsetOf is NewIntsetSetOf's set, by value.
func (ks *Keyspace) intsetOf(vals []int64) setObj {
	var w uint8 = 2
	if len(vals) > 0 {
		w = max(intWidth(vals[0]), intWidth(vals[len(vals)-1]))
	}
	buf := make([]byte, len(vals)*int(w))
	for i, v := range vals {
		putInt(buf[i*int(w):], w, v)
	}
	return setObj{ks: ks, enc: SetIntset, w: w, buf: buf, n: int32(len(vals))}
}

// NewListpackSetOf makes a listpack set of the distinct members, in order,
// whatever their number and lengths.
func (ks *Keyspace) NewListpackSetOf(members [][]byte) *Set {
	size := 0
	for _, m := range members {
		size += uvarintLen(uint64(len(m))) + len(m)
	}
	s := &setObj{ks: ks, enc: SetListpack, buf: make([]byte, 0, size)}
	for _, m := range members {
		s.lpAppend(m)
	}
	return newSetOf(s)
}

// NewHashtableSetOf makes a hashtable set of the distinct members.
func (ks *Keyspace) NewHashtableSetOf(members [][]byte) *Set {
	s := &setObj{ks: ks, enc: SetHashtable, ht: ks.newSetDict(len(members))}
	for _, m := range members {
		s.ht.Upsert(m)
	}
	return newSetOf(s)
}

// IntMember reports whether m is a member an intset can hold (a canonical
// int64) and its value.
func IntMember(m []byte) (int64, bool) {
	if !isCanonicalInt(m) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(m), 10, 64)
	return v, err == nil
}

// NewListpackZSetOf makes a listpack sorted set of entries sorted by (score,
// member) with distinct members, whatever their number and lengths.
func (ks *Keyspace) NewListpackZSetOf(entries []ZEntry) *ZSet {
	z := &zsetObj{seed: ks.zsetSeed()}
	for _, e := range entries {
		z.lp = zlpAppend(z.lp, e.Member, e.Score)
	}
	z.n = len(entries)
	return newZSetOf(z)
}

// RangeDesc calls fn for each member from the highest score to the lowest (the
// order Redis saves a skiplist in).
func (z *zsetObj) RangeDesc(fn func(member []byte, score float64)) {
	z.RangeByRank(0, z.Len()-1, true, fn)
}

// NewListpackHashOf makes a listpack hash of the distinct fields, in order,
// whatever their number and lengths; with ex it is a listpackex and each
// field keeps its deadline (the fields must then be in deadline order: the
// ones with a deadline first, ascending, then the others).
func NewListpackHashOf(fields []HashField, ex bool) *Hash {
	h := &hashObj{}
	if ex {
		h.enc = encListpackEx
	}
	size := 0
	for _, f := range fields {
		size += h.entrySize(f.F, f.V, f.Exp)
	}
	h.lp = make([]byte, 0, size)
	for _, f := range fields {
		h.lpReplace(len(h.lp), len(h.lp), f.F, f.V, f.Exp)
		h.n++
		if f.Exp != 0 {
			h.ttls++
		}
	}
	return newHashOf(h)
}

// NewHashtableHashOf makes a hashtable hash of the distinct fields with their
// deadlines.
func NewHashtableHashOf(fields []HashField, o HashOpts) *Hash {
	h := &hashObj{}
	h.toTable(o, len(fields))
	for _, f := range fields {
		x, existed := h.t.d.UpsertRoom(f.F, valRoom(len(f.V)))
		if existed {
			h.tableSetExp("", x, 0)
		}
		x.set(f.V)
		if f.Exp != 0 {
			key, _ := h.t.d.KeyOf(f.F)
			h.tableSetExp(key, x, f.Exp)
		}
	}
	return newHashOf(h)
}

// SortHashFieldsByDeadline orders fields as a listpackex keeps them: fields
// with a deadline first, ascending (ties in their order), then the others.
func SortHashFieldsByDeadline(fields []HashField) {
	slices.SortStableFunc(fields, func(a, b HashField) int {
		switch {
		case a.Exp == b.Exp:
			return 0
		case a.Exp == 0:
			return 1
		case b.Exp == 0:
			return -1
		case a.Exp < b.Exp:
			return -1
		}
		return 1
	})
}

// NewAccess is the Access word of a value created now (createObject): the LRU
// clock, or under an LFU policy the current minutes and LFUInitVal.
func (ks *Keyspace) NewAccess() uint32 { return ks.newAccess() }

// SetFreq gives e the LFU counter freq (0..255) as of now (RESTORE ... FREQ,
// objectSetLRUOrLFU under an LFU policy).
func (ks *Keyspace) SetFreq(e *Entry, freq int64) {
	e.SetAccess(ks.lfuMinutes()<<8 | uint32(min(max(freq, 0), 255)))
}

// SetIdle makes e look idle for secs seconds (RESTORE ... IDLETIME,
// objectSetLRUOrLFU).
func (ks *Keyspace) SetIdle(e *Entry, secs int64) {
	e.SetAccess(uint32(int64(ks.lruClock())-secs) & (1<<24 - 1))
}
