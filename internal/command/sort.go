package command

import (
	"bytes"
	"github.com/hotkv/hotkv/internal/acl"
	"math"
	"sort"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// sortCommands is SORT and SORT_RO (sort.c), which redis.io files under the
// "generic" group while their ACL categories are the collection ones.
func sortCommands() []*Spec {
	specs := func(store bool) []KeySpec {
		ks := []KeySpec{
			{Flags: "RO access", Begin: 1, Step: 1},
			{Flags: "RO access", Unknown: true, Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
		}
		if store {
			ks = append(ks, KeySpec{Flags: "OW update", Unknown: true, Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"})
		}
		return ks
	}
	return []*Spec{
		{Name: "sort", Arity: -2, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Keys: specs(true), KeysFn: sortKeys, ACL: []string{"@write", "@set", "@sortedset", "@list", "@slow", "@dangerous"}, Run: sortCmd},
		{Name: "sort_ro", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Keys: specs(false), KeysFn: func([][]byte) []int { return []int{1} }, ACL: []string{"@read", "@set", "@sortedset", "@list", "@slow", "@dangerous"}, Run: sortROCmd},
	}
}

// sortKeys is sortGetKeys: the sorted key, and the key of the last STORE
// (skipping the arguments of LIMIT, GET and BY).
func sortKeys(argv [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(argv); i++ {
		switch {
		case eqFold(argv[i], "limit"):
			i += 2
		case eqFold(argv[i], "get"), eqFold(argv[i], "by"):
			i++
		case eqFold(argv[i], "store") && i+1 < len(argv):
			store = i + 1
		}
	}
	if store > 0 {
		keys = append(keys, store)
	}
	return keys
}

// SortableZSet is what SORT needs from a sorted set value (Entry.Obj() of a
// KindZSet key): its size and its members in rank order. Redis also converts a
// listpack sorted set to a skiplist for good when it sorts it; a type that
// models that implements SortConvert as well.
type SortableZSet interface {
	Len() int
	RangeByRank(start, end int, rev bool, fn func(member []byte, score float64))
}

// sortItem is one element of SORT's vector (redisSortObject).
type sortItem struct {
	obj   []byte
	score float64
	cmp   []byte // ALPHA with BY: the BY value (nil: missing)
}

func sortCmd(c *Ctx)   { sortGeneric(c, false) }
func sortROCmd(c *Ctx) { sortGeneric(c, true) }

// sortGeneric: SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA] [STORE destination] (no STORE for SORT_RO).
func sortGeneric(c *Ctx, readonly bool) {
	argv := c.Argv
	desc, alpha, dontsort := false, false, false
	limitStart, limitCount := int64(0), int64(-1)
	var sortby, storekey []byte
	var gets [][]byte
	for j := 2; j < len(argv); j++ {
		left := len(argv) - j - 1
		a := argv[j]
		switch {
		case eqFold(a, "asc"):
			desc = false
		case eqFold(a, "desc"):
			desc = true
		case eqFold(a, "alpha"):
			alpha = true
		case eqFold(a, "limit") && left >= 2:
			s, ok1 := parseLong(argv[j+1])
			n, ok2 := parseLong(argv[j+2])
			if !ok1 || !ok2 {
				c.Err(ErrNotInt)
				return
			}
			limitStart, limitCount = s, n
			j += 2
		case !readonly && eqFold(a, "store") && left >= 1:
			storekey = argv[j+1]
			j++
		case eqFold(a, "by") && left >= 1:
			sortby = argv[j+1]
			if bytes.IndexByte(sortby, '*') < 0 {
				dontsort = true
			} else if !sortPatternsAllowed(c) {
				c.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return
			}
			j++
		case eqFold(a, "get") && left >= 1:
			if !sortPatternsAllowed(c) {
				c.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return
			}
			gets = append(gets, argv[j+1])
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}

	e := c.DB.LookupRead(argv[1], c.Client.NoTouch)
	if e != nil && e.Kind != keyspace.KindSet && e.Kind != keyspace.KindList && e.Kind != keyspace.KindZSet {
		c.Err(ErrWrongType)
		return
	}
	kind := keyspace.KindList
	if e != nil {
		kind = e.Kind
	}
	// An unsorted set is sorted anyway when the result is stored or feeds a
	// script, so that replicas and AOF see the same order.
	if dontsort && kind == keyspace.KindSet && (storekey != nil || c.Client.Script) {
		dontsort, alpha, sortby = false, true, nil
	}
	var zs SortableZSet
	vectorlen := 0
	if e != nil {
		switch kind {
		case keyspace.KindList:
			vectorlen = e.Obj().(*keyspace.List).Len()
		case keyspace.KindSet:
			vectorlen = e.Obj().(*keyspace.Set).Len()
		case keyspace.KindZSet:
			var ok bool
			if zs, ok = e.Obj().(SortableZSet); !ok {
				c.Err(ErrWrongType) // every sorted set value implements it
				return
			}
			if conv, ok := e.Obj().(interface{ SortConvert() }); ok {
				conv.SortConvert()
			}
			vectorlen = zs.Len()
		}
	}

	// LIMIT, clamped to the collection as Redis does.
	start := min(max(limitStart, 0), int64(vectorlen))
	limitCount = min(max(limitCount, -1), int64(vectorlen))
	end := int64(vectorlen) - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= int64(vectorlen) {
		start, end = int64(vectorlen)-1, int64(vectorlen)-2
	}
	if end >= int64(vectorlen) {
		end = int64(vectorlen) - 1
	}

	// Load the vector. Lists and sorted sets that need no sorting load only
	// the requested range, in their own order (reversed for DESC).
	var vec []sortItem
	ranged := dontsort && (kind == keyspace.KindList || kind == keyspace.KindZSet) && e != nil
	switch {
	case e == nil:
	case ranged:
		if end >= start {
			n := int(end - start + 1)
			vec = make([]sortItem, 0, n)
			if kind == keyspace.KindList {
				l := e.Obj().(*keyspace.List)
				for i := 0; i < n; i++ {
					idx := int(start) + i
					if desc {
						idx = l.Len() - 1 - int(start) - i
					}
					v, _ := l.Index(idx)
					vec = append(vec, sortItem{obj: v})
				}
			} else {
				zs.RangeByRank(int(start), int(end), desc, func(m []byte, _ float64) {
					vec = append(vec, sortItem{obj: append([]byte(nil), m...)})
				})
			}
		}
		end -= start
		start = 0
	case kind == keyspace.KindList:
		l := e.Obj().(*keyspace.List)
		vec = make([]sortItem, l.Len())
		i := 0
		l.Range(func(v []byte) bool {
			vec[i].obj = v
			i++
			return true
		})
	case kind == keyspace.KindSet:
		members := e.Obj().(*keyspace.Set).Members(make([][]byte, 0, vectorlen))
		vec = make([]sortItem, len(members))
		for i, m := range members {
			vec[i].obj = m
		}
	case kind == keyspace.KindZSet:
		vec = make([]sortItem, 0, vectorlen)
		zs.RangeByRank(0, vectorlen-1, false, func(m []byte, _ float64) {
			vec = append(vec, sortItem{obj: append([]byte(nil), m...)})
		})
	}

	convErr := false
	if !dontsort {
		for i := range vec {
			byval := vec[i].obj
			if sortby != nil {
				v, ok := lookupByPattern(c, sortby, vec[i].obj)
				if !ok {
					continue
				}
				byval = v
			}
			if alpha {
				if sortby != nil {
					vec[i].cmp = append(make([]byte, 0, len(byval)), byval...)
				}
				continue
			}
			f, ok := sortScore(byval)
			if !ok {
				convErr = true
			}
			vec[i].score = f
		}
		less := sortLess(vec, alpha, sortby != nil, storekey != nil, desc)
		if sortby != nil && (start != 0 || end != int64(len(vec))-1) {
			pqsort(len(vec), less, swapItems(vec), int(start), int(end))
		} else {
			sort.SliceStable(vec, less)
		}
	}

	outputlen := int(end - start + 1)
	if len(gets) > 0 {
		outputlen *= len(gets)
	}
	if convErr {
		c.Error("ERR One or more scores can't be converted into double")
		return
	}
	if storekey == nil {
		c.W.ArrayLen(outputlen)
		for j := start; j <= end; j++ {
			if len(gets) == 0 {
				c.W.Bulk(vec[j].obj)
			}
			for _, g := range gets {
				if v, ok := lookupByPattern(c, g, vec[j].obj); ok {
					c.W.Bulk(v)
				} else {
					c.W.Null()
				}
			}
		}
		return
	}
	l := c.KS.NewList()
	for j := start; j <= end; j++ {
		if len(gets) == 0 {
			l.TryGrow(c.KS, len(vec[j].obj), 1)
			l.Push(vec[j].obj, false)
		}
		for _, g := range gets {
			v, _ := lookupByPattern(c, g, vec[j].obj)
			l.TryGrow(c.KS, len(v), 1)
			l.Push(v, false)
		}
	}
	if outputlen > 0 {
		c.DB.SetObject(storekey, keyspace.KindList, l)
		c.DB.Touch(storekey)
		c.Notify('l', "sortstore", storekey)
		c.Dirty += outputlen
	} else if c.DB.Delete(storekey) {
		c.DB.Touch(storekey)
		c.Notify('g', "del", storekey)
		c.Dirty++
	}
	c.W.Int(int64(outputlen))
}

// parseLong is getLongFromObject: a string2ll integer.
func parseLong(b []byte) (int64, bool) { return resp.ParseInt(b) }

// sortLess builds sortCompare. Numeric: by score, ties by the elements'
// bytes. ALPHA with BY: missing BY values first, then the values (byte order
// for STORE, strcoll otherwise: HotKV collates as the C locale, i.e. strcmp).
// ALPHA alone: the elements themselves.
func sortLess(vec []sortItem, alpha, byPattern, store, desc bool) func(i, j int) bool {
	cmp := func(a, b *sortItem) int {
		if !alpha {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare(a.obj, b.obj)
		}
		x, y := a.obj, b.obj
		if byPattern {
			if a.cmp == nil || b.cmp == nil {
				switch {
				case a.cmp == nil && b.cmp == nil:
					return 0
				case a.cmp == nil:
					return -1
				}
				return 1
			}
			x, y = a.cmp, b.cmp
		}
		if store {
			return bytes.Compare(x, y)
		}
		return strcmpC(x, y)
	}
	return func(i, j int) bool {
		r := cmp(&vec[i], &vec[j])
		if desc {
			r = -r
		}
		return r < 0
	}
}

// strcmpC compares a and b as C strings (up to their first NUL byte).
func strcmpC(a, b []byte) int {
	if i := bytes.IndexByte(a, 0); i >= 0 {
		a = a[:i]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return bytes.Compare(a, b)
}

func swapItems(vec []sortItem) func(i, j int) {
	return func(i, j int) { vec[i], vec[j] = vec[j], vec[i] }
}

// lookupByPattern is lookupKeyByPattern: "#" is the element itself; otherwise
// the first '*' of the pattern is replaced by the element to name a string key,
// or, with "->field" after the '*', a hash field (expired fields are deleted on
// the way, as a read of the field would). A pattern without '*' names nothing.
func lookupByPattern(c *Ctx, pattern, subst []byte) ([]byte, bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return subst, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	keyEnd := len(pattern)
	if f := bytes.Index(pattern[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(pattern) {
		keyEnd = star + 1 + f
		field = pattern[keyEnd+2:]
	}
	key := make([]byte, 0, keyEnd-1+len(subst))
	key = append(key, pattern[:star]...)
	key = append(key, subst...)
	key = append(key, pattern[star+1:keyEnd]...)
	e := c.DB.LookupRead(key, c.Client.NoTouch)
	if e == nil {
		return nil, false
	}
	if field != nil {
		if e.Kind != keyspace.KindHash {
			return nil, false
		}
		v, _, res := getField(c, key, e.Obj().(*keyspace.Hash), field, 0)
		return v, res == fieldOK
	}
	if e.Kind != keyspace.KindString {
		return nil, false
	}
	return e.Bytes(), true
}

// sortScore converts a SORT weight as Redis 8's fast_float_strtod does: the
// text up to the first NUL must be all one number ([-]digits[.digits][e[±]digits]
// or inf, infinity, nan in any case, no leading '+', space or hex); NaN and
// values out of a double's range are errors. Empty text is 0.
func sortScore(b []byte) (float64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	if b[0] == '-' {
		i++
	}
	rest := b[i:]
	lower := func(s []byte) string {
		out := make([]byte, len(s))
		for k, ch := range s {
			out[k] = ch | 0x20
		}
		return string(out)
	}
	if len(rest) >= 3 {
		switch w := lower(rest); {
		case w == "inf" || w == "infinity":
			if i == 1 {
				return math.Inf(-1), true
			}
			return math.Inf(1), true
		case w[:3] == "nan":
			return 0, false
		}
	}
	digits := 0
	for i < len(b) && b[i]-'0' <= 9 {
		i++
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && b[i]-'0' <= 9 {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j == len(b) || b[j]-'0' > 9 {
			return 0, false
		}
		for j < len(b) && b[j]-'0' <= 9 {
			j++
		}
		i = j
	}
	if i != len(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, false // out of range
	}
	return f, true
}

// pqsort is Redis's pqsort (a Bentley-McIlroy quicksort from NetBSD's libc,
// without the switch to insertion sort after a swapless pass, as Redis 7+ has it)
// over n elements: it leaves [lrange, rrange] in sorted order, skipping the
// partitions that lie entirely outside it. SORT uses it for BY with LIMIT, so
// elements that compare equal come out in the order Redis gives them.
func pqsort(n int, less func(i, j int) bool, swap func(i, j int), lrange, rrange int) {
	cmp := func(i, j int) int {
		switch {
		case less(i, j):
			return -1
		case less(j, i):
			return 1
		}
		return 0
	}
	pqsortRange(0, n, cmp, swap, lrange, rrange)
}

func pqsortRange(a, n int, cmp func(i, j int) int, swap func(i, j int), lrange, rrange int) {
	vecswap := func(i, j, k int) {
		for ; k > 0; k-- {
			swap(i, j)
			i++
			j++
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(x, y) < 0 {
			if cmp(y, z) < 0 {
				return y
			}
			if cmp(x, z) < 0 {
				return z
			}
			return x
		}
		if cmp(y, z) > 0 {
			return y
		}
		if cmp(x, z) < 0 {
			return x
		}
		return z
	}
	insertion := func() {
		for pm := a + 1; pm < a+n; pm++ {
			for pl := pm; pl > a && cmp(pl-1, pl) > 0; pl-- {
				swap(pl, pl-1)
			}
		}
	}
	for {
		if n < 7 {
			insertion()
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := cmp(pb, a)
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(pc, a)
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		// a partition is skipped when the range lies wholly before or after
		// it (Redis compares both ends, which matters for an empty range)
		outside := func(lo, k int) bool {
			return (lrange < lo && rrange < lo) || (lrange >= lo+k && rrange >= lo+k)
		}
		if r = pb - pa; r > 1 && !outside(a, r) {
			pqsortRange(a, r, cmp, swap, lrange, rrange)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		a, n = pn-r, r
		if outside(a, n) {
			return
		}
	}
}

// sortPatternsAllowed reports whether the client's user may read every key
// (BY and GET patterns name keys no key spec shows): Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess with read access.
func sortPatternsAllowed(c *Ctx) bool {
	u := c.Client.User
	if u == nil || u.AllPerms() {
		return true
	}
	var sc acl.Scratch
	return u.CheckUnrestrictedKeys(c.Srv.ACL().Commands().ByID(c.Spec.ID), c.Argv, acl.KeyAccess, &sc)
}
