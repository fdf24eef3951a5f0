package command

import (
	"encoding/binary"
	"math"
)

// HyperLogLog values are strings in Redis's exact format (hyperloglog.c), so a
// value read with GET from Redis loads into HotKV with SET and counts the same,
// and the other way round:
//
//	+------+---+-----+----------+---------//
//	| HYLL | E | N/U | Cardin.  | registers
//	+------+---+-----+----------+---------//
//
// a 16-byte header (magic, encoding 0 dense / 1 sparse, 3 unused bytes, the
// cached cardinality as 64-bit little endian whose top bit marks it stale),
// then 16384 registers of 6 bits: packed LSB first in 12288 bytes (dense), or
// run-length coded (sparse) with the opcodes ZERO 00xxxxxx (1-64 zero
// registers), XZERO 01xxxxxx yyyyyyyy (1-16384 zero registers) and VAL
// 1vvvvvxx (1-4 registers of value 1-32). A sparse value turns dense when a
// register needs more than 32 or it would grow past hll-sparse-max-bytes.

const (
	hllP          = 14
	hllQ          = 64 - hllP
	hllRegisters  = 1 << hllP
	hllPMask      = hllRegisters - 1
	hllBits       = 6
	hllRegMax     = 1<<hllBits - 1
	hllHdrSize    = 16
	hllDenseSize  = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense      = 0
	hllSparse     = 1
	hllMaxEnc     = 1
	hllAlphaInf   = 0.721347520444481703680 // 0.5/ln(2)
	hllSparseVMax = 32                      // largest value a VAL opcode holds
	hllSparseVLen = 4                       // longest VAL run
	hllZeroMaxLen = 64
	hllXZeroMax   = 16384
	hllSeed       = 0xadc83b19
)

const (
	errHLLInvalid = "INVALIDOBJ Corrupted HLL object detected"
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
)

// murmurHash64A is Redis's MurmurHash2 64-bit (endian neutral: words are read
// little endian).
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if n := len(key); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element hashes to and the length of the
// 000..1 pattern of the rest of its hash (1..Q+1).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, hllSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// denseGet reads register i of the dense registers r (the byte after the last
// one, which Redis reads from the string's NUL terminator, is taken as 0).
func denseGet(r []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i*hllBits) & 7
	b0 := uint(r[b])
	var b1 uint
	if b+1 < len(r) {
		b1 = uint(r[b+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegMax)
}

func denseSet(r []byte, i int, v uint8) {
	b := i * hllBits / 8
	fb := uint(i*hllBits) & 7
	r[b] &^= byte(hllRegMax << fb)
	r[b] |= byte(uint(v) << fb)
	if b+1 < len(r) {
		r[b+1] &^= byte(hllRegMax >> (8 - fb))
		r[b+1] |= byte(uint(v) >> (8 - fb))
	}
}

// denseSetMax is hllDenseSet: raise register i to count; reports a change.
func denseSetMax(r []byte, i int, count uint8) bool {
	if count > denseGet(r, i) {
		denseSet(r, i, count)
		return true
	}
	return false
}

func hllInvalidate(s []byte) { s[15] |= 0x80 }

// sparse opcode accessors; at(p, i) reads 0 past the end (Redis reads the NUL
// terminator there).
func at(p []byte, i int) byte {
	if i < len(p) {
		return p[i]
	}
	return 0
}
func isZero(b byte) bool  { return b&0xc0 == 0 }
func isXZero(b byte) bool { return b&0xc0 == 0x40 }
func zeroLen(b byte) int  { return int(b&0x3f) + 1 }
func valValue(b byte) int { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int   { return int(b&3) + 1 }
func valOp(v, n int) byte { return byte((v-1)<<2|(n-1)) | 0x80 }
func xzeroLen(p []byte, i int) int {
	return (int(p[i]&0x3f)<<8 | int(at(p, i+1))) + 1
}

// appendZeros appends the ZERO or XZERO opcode for n zero registers.
func appendZeros(dst []byte, n int) []byte {
	if n > hllZeroMaxLen {
		return append(dst, byte((n-1)>>8)|0x40, byte(n-1))
	}
	return append(dst, byte(n-1))
}

// newHLL is createHLLObject: an empty sparse HLL (XZERO:16384).
func newHLL() []byte {
	s := make([]byte, hllHdrSize, hllHdrSize+2)
	copy(s, "HYLL")
	s[4] = hllSparse
	return appendZeros(s, hllRegisters)
}

// isHLL is isHLLObjectOrReply's validity check of a string value.
func isHLL(s []byte, intEncoded bool) bool {
	if intEncoded || len(s) < hllHdrSize || string(s[:4]) != "HYLL" || s[4] > hllMaxEnc {
		return false
	}
	return s[4] != hllDense || len(s) == hllDenseSize
}

// hllSparseToDense converts the sparse HLL *sp to dense (keeping the header,
// cached cardinality included). It reports false, leaving *sp alone, if the
// sparse representation is corrupt.
func hllSparseToDense(sp *[]byte) bool {
	s := *sp
	if s[4] == hllDense {
		return true
	}
	d := make([]byte, hllDenseSize)
	copy(d, s[:hllHdrSize])
	d[4] = hllDense
	regs := d[hllHdrSize:]
	idx := 0
	for p := hllHdrSize; p < len(s); {
		b := s[p]
		switch {
		case isZero(b):
			idx += zeroLen(b)
			p++
		case isXZero(b):
			idx += xzeroLen(s, p)
			p += 2
		default:
			n, v := valLen(b), valValue(b)
			if idx+n > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, uint8(v))
				idx++
			}
			p++
		}
		if idx > hllRegisters {
			return false
		}
	}
	if idx != hllRegisters {
		return false
	}
	*sp = d
	return true
}

// hllSparseSet is Redis's hllSparseSet: raise register index to count in the
// sparse HLL *sp, splitting and merging opcodes in place, or promoting the
// value to dense. It returns 1 if the register changed, 0 if not, -1 if the
// representation is corrupt.
func hllSparseSet(sp *[]byte, index int, count uint8, maxBytes int64) int {
	if count > hllSparseVMax {
		return hllPromote(sp, index, count)
	}
	s := *sp
	end := len(s)
	// Step 1: find the opcode covering the register.
	p, prev, first, span := hllHdrSize, -1, 0, 0
	for p < end {
		oplen := 1
		b := s[p]
		switch {
		case isZero(b):
			span = zeroLen(b)
		case b&0x80 != 0:
			span = valLen(b)
		default:
			span = xzeroLen(s, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return -1
	}
	b := s[p]
	next := p + 1
	if isXZero(b) {
		next = p + 2
	}
	if next >= end {
		next = -1
	}
	zero, xzero := isZero(b), isXZero(b)
	var runlen int
	switch {
	case zero:
		runlen = zeroLen(b)
	case xzero:
		runlen = xzeroLen(s, p)
	default:
		runlen = valLen(b)
	}
	// Step 2: the trivial cases.
	updated := false
	if !zero && !xzero {
		if valValue(b) >= int(count) {
			return 0
		}
		if runlen == 1 {
			s[p] = valOp(int(count), 1)
			updated = true
		}
	}
	if !updated && zero && runlen == 1 {
		s[p] = valOp(int(count), 1)
		updated = true
	}
	if !updated {
		// General case: split the opcode into up to three.
		var seqBuf [5]byte
		seq := seqBuf[:0]
		last := first + span - 1
		if zero || xzero {
			if index != first {
				seq = appendZeros(seq, index-first)
			}
			seq = append(seq, valOp(int(count), 1))
			if index != last {
				seq = appendZeros(seq, last-index)
			}
		} else {
			cur := valValue(b)
			if index != first {
				seq = append(seq, valOp(cur, index-first))
			}
			seq = append(seq, valOp(int(count), 1))
			if index != last {
				seq = append(seq, valOp(cur, last-index))
			}
		}
		oldlen := 1
		if xzero {
			oldlen = 2
		}
		delta := len(seq) - oldlen
		if delta > 0 && int64(len(s)+delta) > maxBytes {
			return hllPromote(sp, index, count)
		}
		if delta > 0 {
			s = append(s, make([]byte, delta)...)
		}
		if delta != 0 && next >= 0 {
			copy(s[next+delta:], s[next:end])
		}
		s = s[:end+delta]
		copy(s[p:], seq)
		end += delta
	}
	// Step 4: merge adjacent VAL opcodes of equal value, from prev on.
	q := hllHdrSize
	if prev >= 0 {
		q = prev
	}
	for scan := 5; q < end && scan > 0; {
		scan--
		c := s[q]
		if isXZero(c) {
			q += 2
			continue
		}
		if isZero(c) {
			q++
			continue
		}
		if q+1 < end && s[q+1]&0x80 != 0 {
			v1, v2 := valValue(c), valValue(s[q+1])
			if v1 == v2 {
				if n := valLen(c) + valLen(s[q+1]); n <= hllSparseVLen {
					s[q+1] = valOp(v1, n)
					copy(s[q:], s[q+1:end])
					end--
					s = s[:end]
					continue
				}
			}
		}
		q++
	}
	hllInvalidate(s)
	*sp = s
	return 1
}

func hllPromote(sp *[]byte, index int, count uint8) int {
	if !hllSparseToDense(sp) {
		return -1
	}
	denseSetMax((*sp)[hllHdrSize:], index, count)
	return 1
}

// hllAdd adds ele to the HLL *sp: 1 if a register changed, 0 if not, -1 if
// the value is corrupt.
func hllAdd(sp *[]byte, ele []byte, maxBytes int64) int {
	index, count := hllPatLen(ele)
	switch (*sp)[4] {
	case hllDense:
		if denseSetMax((*sp)[hllHdrSize:], index, count) {
			return 1
		}
		return 0
	case hllSparse:
		return hllSparseSet(sp, index, count, maxBytes)
	}
	return -1
}

// hllHisto computes the register histogram of an HLL value; invalid reports a
// sparse representation that does not cover exactly 16384 registers.
func hllHisto(s []byte, h *[64]int) (invalid bool) {
	regs := s[hllHdrSize:]
	if s[4] == hllDense {
		for i := 0; i < hllRegisters; i++ {
			h[denseGet(regs, i)]++
		}
		return false
	}
	idx := 0
	for p := 0; p < len(regs); {
		b := regs[p]
		switch {
		case isZero(b):
			n := zeroLen(b)
			idx += n
			h[0] += n
			p++
		case isXZero(b):
			n := xzeroLen(regs, p)
			idx += n
			h[0] += n
			p += 2
		default:
			n := valLen(b)
			idx += n
			h[valValue(b)] += n
			p++
		}
	}
	return idx != hllRegisters
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zp := z
		z += x * y
		y += y
		if zp == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zp := z
		y *= 0.5
		d := 1 - x
		z -= float64(d*d) * y
		if zp == z {
			return z / 3
		}
	}
}

// hllEstimate is hllCount's estimator (Otmar Ertl, "New cardinality
// estimation algorithms for HyperLogLog sketches") over a register histogram.
func hllEstimate(h *[64]int) uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(h[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(h[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

// hllMergeInto raises max[i] to every register of the HLL value s; false if a
// sparse value is corrupt.
func hllMergeInto(max *[hllRegisters]uint8, s []byte) bool {
	regs := s[hllHdrSize:]
	if s[4] == hllDense {
		for i := range max {
			if v := denseGet(regs, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := 0; p < len(regs); {
		b := regs[p]
		switch {
		case isZero(b):
			i += zeroLen(b)
			p++
		case isXZero(b):
			i += xzeroLen(regs, p)
			p += 2
		default:
			n, v := valLen(b), uint8(valValue(b))
			if i+n > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				if v > max[i] {
					max[i] = v
				}
				i++
			}
			p++
		}
		if i > hllRegisters {
			return false
		}
	}
	return i == hllRegisters
}
