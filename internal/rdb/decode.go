package rdb

import (
	"bytes"
	"errors"
	"math"
	"slices"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// Value is a decoded value: Str for a string, Obj (*keyspace.List, *Set, *ZSet,
// *Hash) otherwise. Str and Obj own their memory.
type Value struct {
	Kind keyspace.Kind
	Str  []byte
	Obj  any
}

// Entry returns v as the content of a keyspace entry (string encoding
// classified as a fresh SET does), with no deadline and no access time.
func (v *Value) Entry() keyspace.Entry {
	var e keyspace.Entry
	if v.Kind == keyspace.KindString {
		e.SetBytes(v.Str)
		e.Enc = keyspace.StrEncoding(v.Str)
	} else {
		e.Kind = v.Kind
		e.SetObj(v.Obj)
	}
	return e
}

// errEmpty is rdbLoadObject's RDB_LOAD_ERR_EMPTY_KEY: a collection without
// elements (an RDB file skips the key; RESTORE reports bad data).
var errEmpty = errors.New("rdb: empty key")

// IsEmptyKey reports whether err is the empty-collection error, which an RDB
// file load skips.
func IsEmptyKey(err error) bool { return errors.Is(err, errEmpty) }

// decoder builds values into ks's encodings (rdbLoadObject).
type decoder struct {
	ks *keyspace.Keyspace
}

// value reads one value of RDB type t.
func (d *decoder) value(r *reader, t byte) (Value, error) {
	switch t {
	case TypeString:
		s, err := r.str()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: keyspace.KindString, Str: bytes.Clone(s)}, nil
	case TypeList:
		return d.listPlain(r)
	case TypeListQuicklist, TypeListQuicklist2:
		return d.quicklist(r, t)
	case TypeListZiplist:
		return d.listZiplist(r)
	case TypeSet:
		return d.setPlain(r)
	case TypeSetIntset:
		return d.setIntset(r)
	case TypeSetListpack:
		return d.setListpack(r)
	case TypeZSet, TypeZSet2:
		return d.zsetPlain(r, t)
	case TypeZSetListpack, TypeZSetZiplist:
		return d.zsetPacked(r, t)
	case TypeHash:
		return d.hashPlain(r)
	case TypeHashMetadata, TypeHashMetadataPreGA:
		return d.hashMetadata(r, t)
	case TypeHashListpack, TypeHashListpackEx, TypeHashListpackExPre, TypeHashZiplist:
		return d.hashPacked(r, t)
	case TypeHashZipmap:
		return d.hashZipmap(r)
	case TypeStreamListpacks, TypeStreamListpacks2, TypeStreamListpacks3, TypeStreamListpacks4:
		return d.stream(r, t)
	}
	// modules and unknown types: HotKV cannot hold them
	return Value{}, ErrBadData
}

// --- lists

func (d *decoder) listPlain(r *reader) (Value, error) {
	n, err := r.count(1)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	l := d.ks.NewList()
	for range n {
		v, err := r.str()
		if err != nil {
			return Value{}, err
		}
		l.TryGrow(d.ks, len(v), 1)
		l.Push(v, false)
	}
	return Value{Kind: keyspace.KindList, Obj: l}, nil
}

func (d *decoder) quicklist(r *reader, t byte) (Value, error) {
	n, err := r.count(2)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	b := d.ks.NewListBuilder()
	var elems [][]byte
	for range n {
		container := uint64(containerPacked)
		if t == TypeListQuicklist2 {
			if container, err = r.length(); err != nil {
				return Value{}, err
			}
			if container != containerPacked && container != containerPlain {
				return Value{}, ErrBadData
			}
		}
		data, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if len(data) == 0 {
			return Value{}, ErrBadData
		}
		if container == containerPlain {
			b.AppendNode([][]byte{data}, true)
			continue
		}
		elems = elems[:0]
		collect := func(e lpValue) error {
			elems = append(elems, e.bytes())
			return nil
		}
		if t == TypeListQuicklist2 {
			_, err = parseListpack(data, collect)
		} else {
			_, err = parseZiplist(data, collect)
		}
		if err != nil {
			return Value{}, err
		}
		b.AppendNode(elems, false)
	}
	if b.Len() == 0 {
		return Value{}, errEmpty
	}
	return Value{Kind: keyspace.KindList, Obj: b.Finish()}, nil
}

func (d *decoder) listZiplist(r *reader) (Value, error) {
	data, err := r.str()
	if err != nil {
		return Value{}, err
	}
	l := d.ks.NewList()
	l.TryGrow(d.ks, 0, math.MaxInt32) // Redis builds a quicklist
	_, err = parseZiplist(data, func(e lpValue) error {
		l.Push(e.bytes(), false)
		return nil
	})
	if err != nil {
		return Value{}, err
	}
	if l.Len() == 0 {
		return Value{}, errEmpty
	}
	return Value{Kind: keyspace.KindList, Obj: l}, nil
}

// --- sets

// dupChecker finds repeated members.
type dupChecker map[string]struct{}

func (c dupChecker) add(m []byte) bool {
	if _, ok := c[string(m)]; ok {
		return false
	}
	c[string(m)] = struct{}{}
	return true
}

// setPlain reads RDB_TYPE_SET and picks the encoding as rdbLoadObject does
// while it adds the members one by one: an intset while every member is an
// integer (and the set fits set-max-intset-entries), then a listpack while it
// fits set-max-listpack-entries and -value, else a hashtable.
func (d *decoder) setPlain(r *reader) (Value, error) {
	n, err := r.count(1)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	lim := d.ks.Limits
	members := make([][]byte, 0, prealloc(n))
	seen := make(dupChecker, prealloc(n))
	for range n {
		m, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if !seen.add(m) {
			return Value{}, ErrBadData
		}
		members = append(members, m)
	}
	ht := func() Value { return Value{Kind: keyspace.KindSet, Obj: d.ks.NewHashtableSetOf(members)} }
	if int64(n) > min(lim.SetMaxIntsetEntries(), 1<<30) {
		return ht(), nil
	}
	// the integers before the first other member went into an intset first
	var ints []int64
	first := n
	for i, m := range members {
		v, ok := keyspace.IntMember(m)
		if !ok {
			first = i
			break
		}
		ints = append(ints, v)
	}
	slices.Sort(ints)
	if first == n {
		return Value{Kind: keyspace.KindSet, Obj: d.ks.NewIntsetSetOf(ints)}, nil
	}
	maxLen := 0
	for _, m := range members {
		maxLen = max(maxLen, len(m))
	}
	if int64(n) > lim.SetMaxListpackEntries() || int64(maxLen) > lim.SetMaxListpackValue() {
		return ht(), nil
	}
	ordered := make([][]byte, 0, prealloc(n))
	for _, v := range ints {
		ordered = append(ordered, []byte(itoa(v)))
	}
	ordered = append(ordered, members[first:]...)
	return Value{Kind: keyspace.KindSet, Obj: d.ks.NewListpackSetOf(ordered)}, nil
}

func (d *decoder) setIntset(r *reader) (Value, error) {
	data, err := r.str()
	if err != nil {
		return Value{}, err
	}
	w, vals, err := parseIntset(data)
	if err != nil {
		return Value{}, err
	}
	n := len(vals) / w
	if int64(n) > d.ks.Limits.SetMaxIntsetEntries() {
		members := make([][]byte, n)
		for i := range n {
			members[i] = []byte(itoa(intsetGet(vals, w, i)))
		}
		return Value{Kind: keyspace.KindSet, Obj: d.ks.NewHashtableSetOf(members)}, nil
	}
	return Value{Kind: keyspace.KindSet, Obj: d.ks.NewIntsetSetRaw(w, vals)}, nil
}

func (d *decoder) setListpack(r *reader) (Value, error) {
	data, err := r.str()
	if err != nil {
		return Value{}, err
	}
	var members [][]byte
	seen := dupChecker{}
	if _, err := parseListpack(data, func(e lpValue) error {
		m := e.bytes()
		if !seen.add(m) {
			return ErrBadData
		}
		members = append(members, m)
		return nil
	}); err != nil {
		return Value{}, err
	}
	if len(members) == 0 {
		return Value{}, errEmpty
	}
	if int64(len(members)) > d.ks.Limits.SetMaxListpackEntries() {
		return Value{Kind: keyspace.KindSet, Obj: d.ks.NewHashtableSetOf(members)}, nil
	}
	return Value{Kind: keyspace.KindSet, Obj: d.ks.NewListpackSetOf(members)}, nil
}

// --- sorted sets

func sortZEntries(es []keyspace.ZEntry) {
	slices.SortFunc(es, func(a, b keyspace.ZEntry) int {
		switch {
		case a.Score < b.Score:
			return -1
		case a.Score > b.Score:
			return 1
		}
		return bytes.Compare(a.Member, b.Member)
	})
}

func (d *decoder) zsetPlain(r *reader, t byte) (Value, error) {
	n, err := r.count(2)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	es := make([]keyspace.ZEntry, 0, prealloc(n))
	seen := make(dupChecker, prealloc(n))
	for range n {
		m, err := r.str()
		if err != nil {
			return Value{}, err
		}
		var score float64
		if t == TypeZSet2 {
			score, err = r.binaryDouble()
		} else {
			score, err = r.textDouble()
		}
		if err != nil {
			return Value{}, err
		}
		if math.IsNaN(score) || !seen.add(m) {
			return Value{}, ErrBadData
		}
		es = append(es, keyspace.ZEntry{Member: m, Score: score})
	}
	sortZEntries(es)
	// zsetConvert to listpack when it fits both limits (NewZSetSorted's rule)
	return Value{Kind: keyspace.KindZSet, Obj: d.ks.NewZSetSorted(es, d.ks.ZLimits())}, nil
}

func (d *decoder) zsetPacked(r *reader, t byte) (Value, error) {
	data, err := r.str()
	if err != nil {
		return Value{}, err
	}
	var es []keyspace.ZEntry
	var member []byte
	odd := false
	seen := dupChecker{}
	collect := func(e lpValue) error {
		if !odd {
			member = e.bytes()
			if !seen.add(member) {
				return ErrBadData
			}
		} else {
			score := float64(e.v)
			if !e.isInt {
				var ok bool
				if score, ok = parseScore(e.s); !ok || math.IsNaN(score) {
					return ErrBadData
				}
			}
			es = append(es, keyspace.ZEntry{Member: member, Score: score})
		}
		odd = !odd
		return nil
	}
	if t == TypeZSetListpack {
		_, err = parseListpack(data, collect)
	} else {
		_, err = parseZiplist(data, collect)
	}
	if err != nil {
		return Value{}, err
	}
	if odd {
		return Value{}, ErrBadData
	}
	if len(es) == 0 {
		return Value{}, errEmpty
	}
	sortZEntries(es)
	lim := d.ks.ZLimits()
	if int64(len(es)) > lim.Entries {
		return Value{Kind: keyspace.KindZSet, Obj: d.ks.NewZSetSorted(es, lim)}, nil
	}
	return Value{Kind: keyspace.KindZSet, Obj: d.ks.NewListpackZSetOf(es)}, nil
}

// --- hashes

func (d *decoder) hashValue(fields []keyspace.HashField, listpack, ex bool) Value {
	var h *keyspace.Hash
	if listpack {
		h = keyspace.NewListpackHashOf(fields, ex)
	} else {
		h = keyspace.NewHashtableHashOf(fields, d.ks.HashOpts())
	}
	return Value{Kind: keyspace.KindHash, Obj: h}
}

// fitsListpack reports whether every field and value fits hash-max-listpack-value.
func fitsListpack(fields []keyspace.HashField, maxValue int) bool {
	for _, f := range fields {
		if len(f.F) > maxValue || len(f.V) > maxValue {
			return false
		}
	}
	return true
}

func (d *decoder) hashPlain(r *reader) (Value, error) {
	n, err := r.count(2)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	fields := make([]keyspace.HashField, 0, prealloc(n))
	seen := make(dupChecker, prealloc(n))
	for range n {
		f, err := r.str()
		if err != nil {
			return Value{}, err
		}
		v, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if !seen.add(f) {
			return Value{}, ErrBadData
		}
		fields = append(fields, keyspace.HashField{F: f, V: v})
	}
	o := d.ks.HashOpts()
	lp := n <= o.MaxEntries && fitsListpack(fields, o.MaxValue)
	return d.hashValue(fields, lp, false), nil
}

func (d *decoder) hashMetadata(r *reader, t byte) (Value, error) {
	var minExp int64
	if t == TypeHashMetadata {
		var err error
		if minExp, err = r.millis(); err != nil {
			return Value{}, err
		}
	}
	n, err := r.count(3)
	if err != nil {
		return Value{}, err
	}
	if n == 0 {
		return Value{}, errEmpty
	}
	var fields []keyspace.HashField
	seen := make(dupChecker, prealloc(n))
	for range n {
		ttl, err := r.length()
		if err != nil {
			return Value{}, err
		}
		exp := ttl
		if t == TypeHashMetadata && ttl != 0 {
			exp = ttl + uint64(minExp) - 1
		}
		if exp > ebExpireTimeMax {
			return Value{}, ErrBadData
		}
		f, err := r.str()
		if err != nil {
			return Value{}, err
		}
		v, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if !seen.add(f) {
			return Value{}, ErrBadData
		}
		fields = append(fields, keyspace.HashField{F: f, V: v, Exp: int64(exp)})
	}
	o := d.ks.HashOpts()
	if n > o.MaxEntries || !fitsListpack(fields, o.MaxValue) {
		return d.hashValue(fields, false, false), nil
	}
	// listpackExAddNew: a field with a deadline goes before the first field
	// without one or with a deadline >= its own; the others are appended
	ordered := make([]keyspace.HashField, 0, prealloc(n))
	for _, f := range fields {
		at := len(ordered)
		if f.Exp != 0 {
			for i, g := range ordered {
				if g.Exp == 0 || g.Exp >= f.Exp {
					at = i
					break
				}
			}
		}
		ordered = slices.Insert(ordered, at, f)
	}
	return d.hashValue(ordered, true, true), nil
}

func (d *decoder) hashPacked(r *reader, t byte) (Value, error) {
	if t == TypeHashListpackEx {
		if _, err := r.millis(); err != nil { // the min deadline: informative
			return Value{}, err
		}
	}
	data, err := r.str()
	if err != nil {
		return Value{}, err
	}
	ex := t == TypeHashListpackEx || t == TypeHashListpackExPre
	tuple := 2
	if ex {
		tuple = 3
	}
	var fields []keyspace.HashField
	var cur keyspace.HashField
	i := 0
	last := int64(-1)
	seen := dupChecker{}
	collect := func(e lpValue) error {
		switch i % tuple {
		case 0:
			cur = keyspace.HashField{F: e.bytes()}
			if !seen.add(cur.F) {
				return ErrBadData
			}
		case 1:
			cur.V = e.bytes()
			if !ex {
				fields = append(fields, cur)
			}
		case 2:
			// the deadline: an integer in range, deadlines ascending and
			// before the fields without one
			if !e.isInt || e.v < 0 || e.v > ebExpireTimeMax {
				return ErrBadData
			}
			if e.v != 0 && (last == 0 || e.v < last) {
				return ErrBadData
			}
			last = e.v
			cur.Exp = e.v
			fields = append(fields, cur)
		}
		i++
		return nil
	}
	if t == TypeHashZiplist {
		_, err = parseZiplist(data, collect)
	} else {
		_, err = parseListpack(data, collect)
	}
	if err != nil {
		return Value{}, err
	}
	if i%tuple != 0 {
		return Value{}, ErrBadData
	}
	if len(fields) == 0 {
		return Value{}, errEmpty
	}
	o := d.ks.HashOpts()
	return d.hashValue(fields, len(fields) <= o.MaxEntries, ex), nil
}

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if v < 0 {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
