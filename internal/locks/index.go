package locks

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// index finds a key's state: open addressing with linear probing over slots
// that hold the key's hash beside its state, so that a probe compares
// hashes in one cache line and reads a key (in its state: state.keyArr)
// only when they match. Go's map keyed by the key's bytes cost about twice
// the instructions of a lookup here (its own hash, and a comparison of the
// bytes behind every candidate). Entries of every database share it; a
// state's database is part of the match.
type index struct {
	slots []islot // a power of two long, or nil while empty
	n     int
}

type islot struct {
	h  uint64
	st *state // nil: the slot is free
}

// keySeed keys the index's hash, random per process.
var keySeed = uint64(maphash.Comparable(maphash.MakeSeed(), 0)) | 1

// hashKey is a key's hash for the index: wyhash's construction (the Go
// runtime's own hash where AES is not available), keyed by keySeed, with
// its loads inlined: about a third of the instructions of hash/maphash's
// call for a key of 10 to 30 bytes, which is what lock keys are.
func hashKey(key []byte) uint64 {
	const k1, k2, k3 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3
	n := len(key)
	h := keySeed ^ uint64(n)*k1
	p := key
	for len(p) > 16 {
		h = mix(le64(p)^k2, le64(p[8:])^h)
		p = p[16:]
	}
	var a, b uint64
	switch {
	case len(p) > 8:
		a, b = le64(p), le64(key[n-8:])
	case len(p) >= 4:
		a, b = uint64(le32(p)), uint64(le32(key[n-4:]))
	case len(p) > 0:
		a = uint64(p[0])<<16 | uint64(p[len(p)>>1])<<8 | uint64(p[len(p)-1])
	}
	return mix(mix(a^k2, b^h)^k3, h^k1)
}

// sameKey reports whether k and b hold the same bytes: for a key of 8 to 16
// bytes (a lock key's usual length) two words, the second overlapping,
// inlined; the runtime's comparison (a call) otherwise.
func sameKey(k string, b []byte) bool {
	n := len(b)
	if len(k) != n {
		return false
	}
	if uint(n-8) > 8 {
		return k == string(b)
	}
	p, q := unsafe.Pointer(unsafe.StringData(k)), unsafe.Pointer(unsafe.SliceData(b))
	return word(p) == word(q) && word(unsafe.Add(p, n-8)) == word(unsafe.Add(q, n-8))
}

// word is the 8 bytes at p, little-endian (one load where the machine allows it).
func word(p unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64((*[8]byte)(p)[:]) }

// mix is wyhash's mum: the two halves of a 128-bit product, xored.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// get is db's key's state, nil if none; h is hashKey(key).
func (x *index) get(db int, key []byte, h uint64) *state {
	if x.n == 0 {
		return nil
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.st == nil {
			return nil
		}
		if s.h == h && s.st.db == db && sameKey(s.st.key, key) {
			return s.st
		}
	}
}

// put adds st, whose key is not in the index, under its hash st.h.
func (x *index) put(st *state) {
	if (x.n+1)*4 > len(x.slots)*3 { // a load factor of at most 3/4
		x.resize(max(16, 2*len(x.slots)))
	}
	x.insert(st)
	x.n++
}

func (x *index) insert(st *state) {
	mask := uint64(len(x.slots) - 1)
	i := st.h & mask
	for x.slots[i].st != nil {
		i = (i + 1) & mask
	}
	x.slots[i] = islot{st.h, st}
}

// del removes st, shifting back the entries after it that its slot let
// probe past (no tombstones), and halves the slots when they are mostly
// free.
func (x *index) del(st *state) {
	mask := uint64(len(x.slots) - 1)
	i := st.h & mask
	for x.slots[i].st != st {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := x.slots[j]
		if s.st == nil {
			break
		}
		// the entry at j may move to i unless its home lies in (i, j]
		home := s.h & mask
		if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
			continue
		}
		x.slots[i] = s
		i = j
	}
	x.slots[i] = islot{}
	x.n--
	if len(x.slots) > 64 && x.n*8 < len(x.slots) {
		x.resize(len(x.slots) / 2)
	}
}

func (x *index) resize(size int) {
	old := x.slots
	x.slots = make([]islot, size)
	for _, s := range old {
		if s.st != nil {
			x.insert(s.st)
		}
	}
}

// states calls f for each state; f may not change the index.
func (x *index) states(f func(st *state)) {
	for _, s := range x.slots {
		if s.st != nil {
			f(s.st)
		}
	}
}

// all is every state, for callers that change the index as they go.
func (x *index) all() []*state {
	out := make([]*state, 0, x.n)
	x.states(func(st *state) { out = append(out, st) })
	return out
}
