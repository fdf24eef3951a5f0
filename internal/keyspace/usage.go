package keyspace

import "unsafe"

// Memory estimates (MEMORY USAGE, eviction accounting), in the manner of
// Redis's objectComputeSize: the bytes of the key, its value and the table
// entry that holds them. Every fixed part is unsafe.Sizeof of the structure
// HotKV really allocates, so a change of layout keeps the estimate true; each
// allocation is rounded up to the Go allocator's size class (as Redis uses
// zmalloc_size). Collections count their container exactly and their
// elements by sampling: the first `samples` elements (0 < samples), averaged
// and multiplied by the element count, as Redis does; samples <= 0 means all.

// defaultSamples is OBJ_COMPUTE_SIZE_DEF_SAMPLES.
const defaultSamples = 5

const ptrSize = int64(unsafe.Sizeof(uintptr(0)))

// goSizeClasses are the Go allocator's small-object size classes
// (runtime/sizeclasses.go); larger objects take whole 8 KiB pages.
var goSizeClasses = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240,
	256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536,
	1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728,
	10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocSize is the bytes the Go allocator uses for an object of n bytes.
func allocSize(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n > 32768 {
		return (n + 8191) &^ 8191
	}
	return goSizeClasses[sizeClass(int(n))]
}

// Usage is MEMORY USAGE: the estimated bytes of key, its value and its
// entry, or false when key is not in the table. Like Redis's dbFind it
// reports a key whose deadline passed but that was not reclaimed yet.
func (db *DB) Usage(key []byte, samples int) (int64, bool) {
	e, ok := db.dict.Get(key)
	if !ok {
		return 0, false
	}
	return entryUsage(unsafeView(key), e, samples), true
}

// entryUsage is the whole footprint of one key.
func entryUsage(key string, e *Entry, samples int) int64 {
	return keyOverhead(e) + valueUsage(e, samples)
}

// expItemSize is a TTL's place in the expiring set.
const expItemSize = int64(unsafe.Sizeof(expItem{}))

// allocCount counts a structure's own allocations in the keyspace's Added
// and Freed, where they happen: the key tables' bucket arrays (Dict) and the
// expiring set's chunks (expIndex), 16 KiB allocations that the runtime's
// counter learns of late (decision 0022). The zero value counts nothing (the
// dicts of collections).
type allocCount struct{ added, freed *int64 }

func (ks *Keyspace) allocCount() allocCount { return allocCount{&ks.Added, &ks.Freed} }

func (a allocCount) alloc(n int64) {
	if a.added != nil {
		*a.added += n
	}
}

func (a allocCount) free(n int64) {
	if a.freed != nil {
		*a.freed += n
	}
}

// keyAllocs is what storing a key allocates beside its value when the value
// is not embedded: its dict entry, which holds the Entry and the key's bytes
// inline.
func keyAllocs(key string) int64 { return dictEntrySize[Entry](len(key)) }

// keyOverhead is the part of a key's footprint that is not its value: the
// dict entry e is in (which holds the Entry, the key's bytes and an embedded
// string's), and its place in the expiring set. As in Redis's
// kvobjAllocSize, the key's bucket slot is not counted: MEMORY USAGE of a
// small string is its allocations (MEMORY STATS counts the tables).
// Keyspace.Added and .Freed count the dict entries; the bucket arrays and the
// expiring set they count by array and by chunk.
func keyOverhead(e *Entry) int64 {
	n := dictEntryBytes(e)
	if e.expIdx != 0 {
		n += expItemSize
	}
	return n
}

// embedMaxWords bounds the tail of an entry that embeds a string: at most 8
// words past the padding (key and value of up to about 68 bytes together).
const embedMaxWords = 8

// embedRoom is the room to ask of a new dict entry for a string value of n
// bytes under a key of klen bytes: n when the entry with the value in it
// takes no more than the entry and the value's own allocation (one object
// less for the collector, and often a size class less: a 16-byte key and a
// 3-byte value take 64 bytes, not 64 + 8), -1 otherwise. A table lookup:
// SET asks on every call.
func embedRoom(klen, n int) int {
	if uint(klen) >= embedSpan || uint(n) >= embedSpan || !embedTab[klen][n] {
		return -1
	}
	return n
}

// embedSpan bounds the key and value lengths embedTab covers: an entry's
// padding and embedMaxWords words.
const embedSpan = 8*embedMaxWords + 8

// embedTab[klen][n] is embedRoom's verdict.
var embedTab = func() (t [embedSpan][embedSpan]bool) {
	for k := range embedSpan {
		for n := 1; n < embedSpan; n++ {
			w := dictTail[Entry](k + n)
			t[k][n] = w >= 0 && w <= embedMaxWords &&
				dictEntrySize[Entry](k+n) <= dictEntrySize[Entry](k)+allocSize(int64(n))
		}
	}
	return
}()

// embed copies val into the room of e's dict entry, which must have room for
// it (an entry made with embedRoom's room), and makes it e's string.
func (e *Entry) embed(val []byte) {
	room := dictRoom(e)
	copy(room, val)
	e.Kind = KindString
	e.p = unsafe.Pointer(unsafe.SliceData(room))
	e.n = uint32(len(val))
	e.c = embedCode + uint16(len(room)-len(val))
}

// valueUsage is the footprint of e's value.
func valueUsage(e *Entry, samples int) int64 {
	switch e.Kind {
	case KindString:
		if e.embedded() {
			return 0 // in the dict entry: keyOverhead counts it
		}
		return allocSize(int64(cap(e.Bytes())))
	case KindList:
		if l, ok := e.Obj().(*List); ok && l != nil {
			return l.usage(samples)
		}
	case KindHash:
		if h, ok := e.Obj().(*Hash); ok && h != nil {
			return h.usage(samples)
		}
	case KindSet:
		if s, ok := e.Obj().(*Set); ok && s != nil {
			return s.usage(samples)
		}
	case KindZSet:
		if z, ok := e.Obj().(*ZSet); ok && z != nil {
			return z.usage(samples)
		}
	case KindStream:
		if st, ok := e.Obj().(*Stream); ok && st != nil {
			return st.usage(samples)
		}
	}
	return 0
}

// sampled returns total*average over the n sampled elements (or all when n >= count).
func sampled(sum int64, n, count int) int64 {
	if n == 0 {
		return 0
	}
	if n >= count {
		return sum
	}
	return int64(float64(sum) / float64(n) * float64(count))
}

func want(samples int) int {
	if samples <= 0 {
		return int(^uint(0) >> 1)
	}
	return samples
}

func (l *listObj) usage(samples int) int64 {
	n := allocSize(int64(unsafe.Sizeof(*l)))
	nodes := l.nodes()
	if cap(l.buf) > 0 {
		n += allocSize(int64(cap(l.buf)) * int64(unsafe.Sizeof(qnode{})))
	}
	var sum int64
	k := 0
	for i := range nodes {
		if k >= want(samples) {
			break
		}
		sum += allocSize(int64(cap(nodes[i].b)))
		k++
	}
	return n + sampled(sum, k, len(nodes))
}

func (h *hashObj) usage(samples int) int64 {
	n := allocSize(int64(unsafe.Sizeof(*h)))
	if h.t == nil {
		return n + allocSize(int64(cap(h.lp)))
	}
	t := h.t
	n += allocSize(int64(unsafe.Sizeof(*t))) + dictTableBytes(&t.d)
	n += allocSize(int64(cap(t.heap)) * int64(unsafe.Sizeof(ttlRef{})))
	var sum int64
	k := 0
	t.d.Range(func(f string, v *hval) bool {
		if k >= want(samples) {
			return false
		}
		sum += dictEntryBytes(v)
		if v.x != nil {
			sum += allocSize(int64(unsafe.Sizeof(hext{}))) + allocSize(int64(cap(v.x.v)))
		}
		k++
		return true
	})
	return n + sampled(sum, k, t.d.Len())
}

func (s *setObj) usage(samples int) int64 {
	n := allocSize(int64(unsafe.Sizeof(*s)))
	if s.ht == nil {
		return n + allocSize(int64(cap(s.buf)))
	}
	n += allocSize(int64(unsafe.Sizeof(*s.ht))) + dictTableBytes(s.ht)
	var sum int64
	k := 0
	s.ht.Range(func(m string, _ *struct{}) bool {
		if k >= want(samples) {
			return false
		}
		sum += dictEntrySize[struct{}](len(m))
		k++
		return true
	})
	return n + sampled(sum, k, s.ht.Len())
}

func (z *zsetObj) usage(samples int) int64 {
	n := allocSize(int64(unsafe.Sizeof(*z)))
	if z.big == nil {
		return n + allocSize(int64(cap(z.lp)))
	}
	b := z.big
	n += allocSize(int64(unsafe.Sizeof(*b))) + dictTableBytes(&b.dict)
	n += int64(b.tree.leafCount)*allocSize(int64(unsafe.Sizeof(zbtLeaf{}))) +
		int64(b.tree.innerCount)*allocSize(int64(unsafe.Sizeof(zbtInner{})))
	var sum int64
	k := 0
	b.dict.Range(func(m string, _ *float64) bool {
		if k >= want(samples) {
			return false
		}
		sum += dictEntrySize[float64](len(m))
		k++
		return true
	})
	return n + sampled(sum, k, b.dict.Len())
}

// dictTableBytes is the bucket arrays of d (both while rehashing).
func dictTableBytes[V any](d *Dict[V]) int64 {
	return allocSize(int64(len(d.ht[0]))*ptrSize) + allocSize(int64(len(d.ht[1]))*ptrSize)
}

// Overhead is MEMORY STATS' per-database overhead: the key table (its bucket
// arrays and one dict entry per key) and the expiring set, in bytes, and the
// bucket arrays alone, and the old table of a rehash in progress.
func (db *DB) Overhead() (main, expires, lut, rehashing int64) {
	lut = dictTableBytes(db.dict)
	if db.dict.Rehashing() {
		rehashing = allocSize(int64(len(db.dict.ht[0])) * ptrSize)
	}
	main = lut + int64(db.dict.Len())*allocSize(int64(unsafe.Sizeof(dictEntry[Entry]{})))
	expires = int64(len(db.expiring.chunks)) * allocSize(int64(unsafe.Sizeof([expChunk]expItem{})))
	return main, expires, lut, rehashing
}

// usage of a stream (objectComputeSize's stream case): the struct and node
// index, the listpack nodes (sampled, extrapolated to all), and per consumer
// group its struct, its pending entries and its consumers.
func (s *Stream) usage(samples int) int64 {
	n := allocSize(int64(unsafe.Sizeof(*s))) + allocSize(int64(cap(s.nodes))*ptrSize)
	node := allocSize(int64(unsafe.Sizeof(streamNode{})))
	var sum int64
	k := 0
	for _, nd := range s.nodes {
		if k >= want(samples) {
			break
		}
		sum += node + allocSize(int64(cap(nd.lp)))
		k++
	}
	n += sampled(sum, k, len(s.nodes))
	nack := allocSize(int64(unsafe.Sizeof(StreamNACK{})))
	for _, g := range s.groups {
		n += allocSize(int64(unsafe.Sizeof(*g))) + allocSize(int64(len(g.Name)))
		n += int64(g.PEL.Len()) * (nack + ptrSize)
		for _, c := range g.consumers {
			n += allocSize(int64(unsafe.Sizeof(*c))) + allocSize(int64(len(c.Name))) + int64(c.PEL.Len())*ptrSize
		}
	}
	return n + s.idmpUsage()
}
