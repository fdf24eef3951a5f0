package keyspace

import "math/bits"

// Keysizes: per database, how many keys of each type have a length in each
// power-of-two bin (Redis 8's INFO keysizes, db->keysizes_hist). The length is
// a string's byte length, a list's, set's, sorted set's or hash's element
// count (a hash's fields whose TTL passed but that are not deleted yet count,
// as hashTypeLength(o, 0)). Bin 0 holds length 0, bin i lengths 2^(i-1) to
// 2^i-1. Streams are not counted.
//
// The histogram is kept as keys change, never by a scan: each entry remembers
// the bin it is counted in (the high byte of Entry.meta, 0 when not counted),
// and the DB moves it when a key is stored, overwritten, deleted, renamed,
// moved, flushed or swapped, and when a command changes a value in place and
// says so (Touch), as does the hash field sweeper.

// KeysizesTypes are the types counted, in INFO's order (Redis's OBJ_STRING,
// OBJ_LIST, OBJ_SET, OBJ_ZSET, OBJ_HASH).
var KeysizesTypes = [...]Kind{KindString, KindList, KindSet, KindZSet, KindHash}

// KeysizesBins is the number of bins (Redis's MAX_KEYSIZES_BINS).
const KeysizesBins = 64

// Keysizes is a database's histogram: counts by type (KeysizesTypes' index)
// and bin.
type Keysizes [len(KeysizesTypes)][KeysizesBins]int64

func keysizesType(k Kind) int {
	switch k {
	case KindString:
		return 0
	case KindList:
		return 1
	case KindSet:
		return 2
	case KindZSet:
		return 3
	case KindHash:
		return 4
	}
	return -1
}

// keysizesBin is the bin of a length.
func keysizesBin(n int64) int {
	if n <= 0 {
		return 0
	}
	return min(bits.Len64(uint64(n)), KeysizesBins-1)
}

// Length is the length the histogram counts for e (0 for a stream).
func (e *Entry) Length() int64 {
	switch e.Kind {
	case KindString:
		return int64(len(e.Bytes()))
	case KindList:
		return int64((*List)(e).Len())
	case KindSet:
		return int64((*Set)(e).Len())
	case KindZSet:
		return int64((*ZSet)(e).Len())
	case KindHash:
		return int64((*Hash)(e).Len())
	}
	return 0
}

// The bin takes bits 24-30 of Entry.meta (at most KeysizesBins+1); bit 31 is
// the shared flag (value.go).
func (e *Entry) sizeBin() int     { return int(e.meta>>24) & 0x7f }
func (e *Entry) setSizeBin(b int) { e.meta = e.meta&(accessMask|sharedBit) | uint32(b)<<24 }

// ksCount counts e (stored in db) in its current bin.
func (db *DB) ksCount(e *Entry) {
	t := keysizesType(e.Kind)
	if t < 0 {
		e.setSizeBin(0)
		return
	}
	b := keysizesBin(e.Length())
	db.keysizes[t][b]++
	e.setSizeBin(b + 1)
}

// ksUncount takes e out of the histogram (it is leaving db or changing).
func (db *DB) ksUncount(e *Entry) {
	if b := e.sizeBin(); b != 0 {
		if t := keysizesType(e.Kind); t >= 0 {
			db.keysizes[t][b-1]--
		}
		e.setSizeBin(0)
	}
}

// ksResized moves e to the bin of its length now.
func (db *DB) ksResized(e *Entry) {
	db.ksUncount(e)
	db.ksCount(e)
}

// Resized re-bins the value of key after a command changed its length
// without Touch (it filled a value it had just created empty, which
// SetObject announced already).
func (db *DB) Resized(key []byte) {
	if e, ok := db.dict.Get(key); ok {
		db.ksResized(e)
	}
}

// Keysizes returns a copy of db's histogram.
func (db *DB) Keysizes() Keysizes { return db.keysizes }

// VerifyKeysizes recomputes db's histogram from its keys and reports whether
// it equals the one kept (DEBUG KEYSIZES-HIST-ASSERT).
func (db *DB) VerifyKeysizes() bool {
	var h Keysizes
	db.dict.Range(func(_ string, e *Entry) bool {
		if t := keysizesType(e.Kind); t >= 0 {
			h[t][keysizesBin(e.Length())]++
		}
		return true
	})
	return h == db.keysizes
}
