package keyspace

import "slices"

// growCompact returns b extended by extra bytes (their content is unspecified:
// callers overwrite them). It is the growth policy of the compact encodings'
// buffers (listpack hashes, sets and zsets, intsets, list nodes), which Redis
// reallocates to the exact size at each insert: a new array is sized to the
// allocator's size class of the new length, plus an eighth above 256 bytes to
// keep repeated inserts amortised, and its whole size class is usable
// capacity. append's doubling would leave up to half of a small buffer unused
// for good (a 5-field hash of 75 bytes sat in 128), which is most of the
// memory of a small collection (BENCHMARKS.md "Memory per key").
func growCompact(b []byte, extra int) []byte {
	n := len(b) + extra
	if n <= cap(b) {
		return b[:n]
	}
	c := n
	if n > 256 {
		c += n / 8
	}
	nb := slices.Grow([]byte(nil), c)[:n] // cap: c rounded up to its size class
	copy(nb, b)
	return nb
}
