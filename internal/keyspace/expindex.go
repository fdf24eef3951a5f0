package keyspace

// expChunk is the number of items per chunk of an expIndex (16 KiB chunks).
const expChunk = 1024

// expFirst is the first chunk's size when a DB gets its first TTL; the first
// chunk doubles up to expChunk before a second one is added.
const expFirst = 16

// expIndex is a DB's set of keys with a TTL: a dense array of items addressed
// 0..len-1 (Entry.expIdx is the 1-based position), so that the active expiry
// cycle samples it uniformly, stored in fixed chunks rather than one slice. A
// slice grown by append copies itself at every growth and leaves the old arrays
// to the collector (for 1M TTL keys, about 64 MB of garbage while loading, and
// up to a quarter of the array unused after it); chunks never move, the last one
// is the only one partly empty, and a chunk emptied by deletions is freed at once.
// The first chunk starts at expFirst items and doubles while it is the only
// one (at most 16 KiB of garbage in all), so that a database with a few TTL
// keys holds a few hundred bytes for them, not 16 KiB: used_memory moves by
// about a key's size per key, as Redis's expires dict does (Redis's maxmemory
// tests set the limit 100 KB above used_memory). Every chunk's length is its
// capacity; pointers from at() are valid until the next push.
type expIndex struct {
	chunks [][]expItem
	n      int
	acct   allocCount // the chunks, as they are allocated and freed
}

// len is the number of items.
func (x *expIndex) len() int { return x.n }

// capacity is the number of items the chunks hold.
func (x *expIndex) capacity() int {
	c := 0
	for _, ch := range x.chunks {
		c += len(ch)
	}
	return c
}

// reserve sizes the first chunk for about n items (the next power of two, at
// most expChunk) while it is the only one, so that a load of n keys with a
// TTL does not regrow it step by step.
func (x *expIndex) reserve(n int) {
	if len(x.chunks) > 1 || n <= 0 {
		return
	}
	size := expFirst
	for size < n && size < expChunk {
		size *= 2
	}
	if len(x.chunks) == 1 && len(x.chunks[0]) >= size {
		return
	}
	grown := make([]expItem, size)
	if len(x.chunks) == 1 {
		copy(grown, x.chunks[0])
		x.acct.alloc(int64(size-len(x.chunks[0])) * expItemSize)
		x.chunks[0] = grown
		return
	}
	x.acct.alloc(int64(size) * expItemSize)
	x.chunks = append(x.chunks, grown)
}

// at returns item i (0 <= i < len).
func (x *expIndex) at(i int) *expItem { return &x.chunks[i/expChunk][i%expChunk] }

// push appends it and returns its 1-based position.
func (x *expIndex) push(it expItem) int32 {
	switch c := x.n / expChunk; {
	case c == len(x.chunks) && c == 0:
		x.chunks = append(x.chunks, make([]expItem, expFirst))
		x.acct.alloc(expFirst * expItemSize)
	case c == len(x.chunks):
		x.chunks = append(x.chunks, make([]expItem, expChunk))
		x.acct.alloc(expChunk * expItemSize)
	case c == 0 && x.n == len(x.chunks[0]):
		grown := make([]expItem, min(2*x.n, expChunk))
		copy(grown, x.chunks[0])
		x.acct.alloc(int64(len(grown)-len(x.chunks[0])) * expItemSize)
		x.chunks[0] = grown
	}
	*x.at(x.n) = it
	x.n++
	return int32(x.n)
}

// remove deletes item i by moving the last item into its place (swap-remove) and
// returns the moved item's new address, or nil if i was the last.
func (x *expIndex) remove(i int) *expItem {
	last := x.n - 1
	var moved *expItem
	if i != last {
		moved = x.at(i)
		*moved = *x.at(last)
	}
	*x.at(last) = expItem{}
	x.n = last
	if c := last / expChunk; last%expChunk == 0 && c < len(x.chunks) {
		// the last chunk is empty: free it (keeping one spare would let a key
		// that gains and loses a TTL at the boundary allocate every time)
		if c+1 < len(x.chunks) {
			x.acct.free(int64(len(x.chunks[c+1])) * expItemSize)
			x.chunks[c+1] = nil
			x.chunks = x.chunks[:c+1]
		}
	}
	return moved
}
