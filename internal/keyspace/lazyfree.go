package keyspace

// FreeEffort is Redis's lazyfreeGetFreeEffort for e's value, as Redis would
// hold it: a quicklist's node count, a hashtable set's or hash's size, a
// skiplist's length, a stream's radix tree nodes plus its groups times one
// more than the first group's pending entries; 1 for a single allocation
// (strings and every compact encoding).
func (e *Entry) FreeEffort() int64 {
	switch e.Kind {
	case KindList:
		l := (*List)(e)
		if l.Encoding() != "quicklist" {
			return 1
		}
		var n int64
		l.ForEachNode(func([][]byte, bool) { n++ })
		return n
	case KindSet:
		if s := (*Set)(e); s.SetEnc() == SetHashtable {
			return int64(s.Len())
		}
	case KindZSet:
		if z := (*ZSet)(e); !z.IsCompact() {
			return int64(z.Len())
		}
	case KindHash:
		if h := (*Hash)(e); h.Encoding() == "hashtable" {
			return int64(h.Len())
		}
	case KindStream:
		s, _ := e.Obj().(*Stream)
		if s == nil {
			return 1
		}
		n := int64(s.RaxNodes())
		if g := s.Groups(); len(g) > 0 {
			n += int64(len(g)) * (1 + int64(g[0].PEL.Len()))
		}
		return n
	}
	return 1
}

// LazyFreeThreshold is LAZYFREE_THRESHOLD: a value whose free effort is
// above it Redis frees in its background thread (freeObjAsync), and counts in
// lazyfreed_objects (Stats.LazyFreed). Go's collector reclaims it either way.
const LazyFreeThreshold = 64
