package command

import (
	"encoding/binary"
	"math/bits"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// bitmapCommands is redis.io's "bitmap" group (Redis 8.4, bitops.c): bit access,
// population count, bit search, bitwise operations between strings and integer
// bitfields (bitfield.go). Bitmaps are plain strings: bit 0 is the most
// significant bit of the first byte, and strings grow with zero bytes.
func bitmapCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "bitcount", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: bitcountCmd},
		{Name: "bitfield", Arity: -2, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW access update variable_flags", Begin: 1, Step: 1, Notes: "This command allows both access and modification of the key"}}, KeyFlagsFn: bitfieldKeyFlags, Run: bitfieldCmd},
		{Name: "bitfield_ro", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: bitfieldROCmd},
		{Name: "bitop", Arity: -4, Flags: w | d, FirstKey: 2, LastKey: -1, Step: 1, Keys: []KeySpec{{Flags: "OW update", Begin: 2, Step: 1}, {Flags: "RO access", Begin: 3, Last: -1, Step: 1}}, Run: bitopCmd},
		{Name: "bitpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: bitposCmd},
		{Name: "getbit", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: getbitCmd},
		{Name: "setbit", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Run: setbitCmd},
	}
}

const errBitOffset = "ERR bit offset is not an integer or out of range"

// parseBitOffset is Redis's getBitOffsetFromArgument: a non-negative integer
// whose byte lies within proto-max-bulk-len. With hashBits > 0 (BITFIELD), the
// form #n means n*hashBits (the multiplication wraps as C's does).
func parseBitOffset(c *Ctx, b []byte, hashBits int) (uint64, bool) {
	hash := hashBits > 0 && len(b) > 0 && b[0] == '#'
	if hash {
		b = b[1:]
	}
	v, ok := resp.ParseInt(b)
	if ok && hash {
		v *= int64(hashBits)
	}
	if !ok || v < 0 || v>>3 >= c.Srv.ProtoMaxBulkLen() {
		c.Error(errBitOffset)
		return 0, false
	}
	return uint64(v), true
}

// stringForBitWrite is lookupStringForBitCommand: the string at key, created
// (zero bytes) when missing and grown with zero bytes so that bit maxbit exists.
// A value written this way is "raw" (dbUnshareStringValue). grown reports
// whether the string was created or lengthened. nil after a WRONGTYPE reply.
func stringForBitWrite(c *Ctx, key []byte, maxbit uint64) (e *keyspace.Entry, grown bool) {
	e, ok := lookupKind(c, key, keyspace.KindString, true)
	if !ok {
		return nil, false
	}
	need := int(maxbit>>3) + 1
	if e != nil {
		e.Writable() // a reply may still refer to the bytes
	}
	if e == nil {
		e = c.DB.SetString(key, nil, false)
		e.SetBytes(make([]byte, need))
		grown = true
	} else if need > len(e.Bytes()) {
		if need <= cap(e.Bytes()) {
			old := len(e.Bytes())
			e.SetBytes(e.Bytes()[:need])
			clear(e.Bytes()[old:])
		} else {
			s := make([]byte, need, max(need, 2*len(e.Bytes())))
			copy(s, e.Bytes())
			e.SetBytes(s)
		}
		grown = true
	}
	e.Enc = keyspace.EncRaw
	return e, grown
}

// setbitCmd: SETBIT key offset 0|1; replies with the previous bit. The key
// counts as changed only when it was created or grew, or the bit flipped.
func setbitCmd(c *Ctx) {
	off, ok := parseBitOffset(c, c.Argv[2], 0)
	if !ok {
		return
	}
	on, ok := resp.ParseInt(c.Argv[3])
	if !ok || on&^1 != 0 {
		c.Error("ERR bit is not an integer or out of range")
		return
	}
	key := c.Argv[1]
	e, grown := stringForBitWrite(c, key, off)
	if e == nil {
		return
	}
	byteIdx := off >> 3
	mask := byte(1) << (7 - off&7)
	old := int64(0)
	if e.Bytes()[byteIdx]&mask != 0 {
		old = 1
	}
	if grown || old != on {
		if on == 1 {
			e.Bytes()[byteIdx] |= mask
		} else {
			e.Bytes()[byteIdx] &^= mask
		}
		c.DB.Touch(key)
		c.Notify('$', "setbit", key)
		c.Dirty++
	}
	c.W.Int(old)
}

func getbitCmd(c *Ctx) {
	off, ok := parseBitOffset(c, c.Argv[2], 0)
	if !ok {
		return
	}
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	byteIdx := off >> 3
	if e == nil || byteIdx >= uint64(len(e.Bytes())) {
		c.W.Int(0)
		return
	}
	if e.Bytes()[byteIdx]&(1<<(7-off&7)) != 0 {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// popcount counts the set bits of b.
func popcount(b []byte) int64 {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return int64(n)
}

// parseBitUnit parses BITCOUNT's and BITPOS's BYTE|BIT argument.
func parseBitUnit(b []byte) (isBit, ok bool) {
	switch {
	case eqFold(b, "bit"):
		return true, true
	case eqFold(b, "byte"):
		return false, true
	}
	return false, false
}

// bitRange resolves BITCOUNT/BITPOS start and end (possibly negative, in bytes
// or bits) against a string of n bytes, as bitops.c does: negative indexes count
// from the end, both are clamped into the string. In bit mode the edges are
// returned as masks of the out-of-range bits of the first and last byte, and
// start and end become byte indexes.
func bitRange(start, end, n int64, isBit bool) (s, e int64, firstMask, lastMask byte) {
	tot := n
	if isBit {
		tot <<= 3
	}
	if start < 0 {
		start += tot
	}
	if end < 0 {
		end += tot
	}
	start = max(start, 0)
	end = max(end, 0)
	if end >= tot {
		end = tot - 1
	}
	if isBit && start <= end {
		firstMask = ^byte((1 << (8 - start&7)) - 1)
		lastMask = byte((1 << (7 - end&7)) - 1)
		start >>= 3
		end >>= 3
	}
	return start, end, firstMask, lastMask
}

// bitcountCmd: BITCOUNT key [start end [BYTE|BIT]]. Redis 8 validates the
// arguments before it looks the key up.
func bitcountCmd(c *Ctx) {
	var start, end int64
	var firstMask, lastMask byte
	argc := len(c.Argv)
	switch argc {
	case 4, 5:
		var ok1, ok2 bool
		start, ok1 = resp.ParseInt(c.Argv[2])
		if !ok1 {
			c.Err(ErrNotInt)
			return
		}
		end, ok2 = resp.ParseInt(c.Argv[3])
		if !ok2 {
			c.Err(ErrNotInt)
			return
		}
		isBit := false
		if argc == 5 {
			var ok bool
			if isBit, ok = parseBitUnit(c.Argv[4]); !ok {
				c.Err(ErrSyntax)
				return
			}
		}
		e, wt := lookupString(c, c.Argv[1])
		if wt {
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		if e == nil {
			c.W.Int(0)
			return
		}
		start, end, firstMask, lastMask = bitRange(start, end, int64(len(e.Bytes())), isBit)
		c.W.Int(countRange(e.Bytes(), start, end, firstMask, lastMask))
	case 2:
		e, wt := lookupString(c, c.Argv[1])
		if wt {
			return
		}
		if e == nil {
			c.W.Int(0)
			return
		}
		c.W.Int(popcount(e.Bytes()))
	default:
		c.Err(ErrSyntax)
	}
}

func countRange(p []byte, start, end int64, firstMask, lastMask byte) int64 {
	if start > end {
		return 0
	}
	n := popcount(p[start : end+1])
	n -= int64(bits.OnesCount8(p[start]&firstMask) + bits.OnesCount8(p[end]&lastMask))
	return n
}

// bitposCmd: BITPOS key bit [start [end [BYTE|BIT]]]. A missing key is an
// endless run of zero bits. Without an explicit end, a search for a clear bit
// that finds none answers the first bit past the string (it is zero padded);
// with one, -1.
func bitposCmd(c *Ctx) {
	bit, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	argc := len(c.Argv)
	var start, end int64
	isBit, endGiven := false, false
	switch {
	case argc >= 4 && argc <= 6:
		if start, ok = resp.ParseInt(c.Argv[3]); !ok {
			c.Err(ErrNotInt)
			return
		}
		if argc == 6 {
			if isBit, ok = parseBitUnit(c.Argv[5]); !ok {
				c.Err(ErrSyntax)
				return
			}
		}
		if argc >= 5 {
			if end, ok = resp.ParseInt(c.Argv[4]); !ok {
				c.Err(ErrNotInt)
				return
			}
			endGiven = true
		}
	case argc == 3:
	default:
		c.Err(ErrSyntax)
		return
	}
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	if e == nil {
		if bit == 1 {
			c.W.Int(-1)
		} else {
			c.W.Int(0)
		}
		return
	}
	n := int64(len(e.Bytes()))
	if argc == 3 {
		start, end = 0, n-1
	} else if !endGiven {
		end = n - 1
	}
	// the range in bits, first..last inclusive
	tot := n
	if isBit {
		tot <<= 3
	}
	if start < 0 {
		start += tot
	}
	if end < 0 {
		end += tot
	}
	start, end = max(start, 0), max(end, 0)
	if end >= tot {
		end = tot - 1
	}
	first, last := start, end
	if !isBit {
		first, last = start<<3, end<<3+7
	}
	if start > end {
		c.W.Int(-1)
		return
	}
	if pos := findBit(e.Bytes(), first, last, bit == 1); pos >= 0 {
		c.W.Int(pos)
		return
	}
	if bit == 0 && !endGiven {
		c.W.Int(last + 1)
		return
	}
	c.W.Int(-1)
}

// findBit returns the position of the first bit equal to one in p[first..last]
// (bit positions, inclusive), or -1.
func findBit(p []byte, first, last int64, one bool) int64 {
	skip := byte(0xff)
	if one {
		skip = 0
	}
	for pos := first; pos <= last; {
		b := p[pos>>3]
		if pos&7 == 0 && pos+7 <= last && b == skip {
			pos += 8
			continue
		}
		if (b&(0x80>>(pos&7)) != 0) == one {
			return pos
		}
		pos++
	}
	return -1
}

// BITOP operations (bitops.c).
const (
	bitopAnd = iota
	bitopOr
	bitopXor
	bitopNot
	bitopDiff  // X & ^(A1 | ... | An)
	bitopDiff1 // ^X & (A1 | ... | An)
	bitopAndOr // X & (A1 | ... | An)
	bitopOne   // bits set in exactly one source
)

// bitopCmd: BITOP AND|OR|XOR|NOT|DIFF|DIFF1|ANDOR|ONE destkey key [key ...].
// Missing sources are empty strings, shorter ones are zero padded; the result
// (as long as the longest source) replaces destkey as a raw string, or deletes
// it when every source is empty. Replies with the result's length.
func bitopCmd(c *Ctx) {
	name := c.Argv[1]
	var op int
	switch {
	case eqFold(name, "and"):
		op = bitopAnd
	case eqFold(name, "or"):
		op = bitopOr
	case eqFold(name, "xor"):
		op = bitopXor
	case eqFold(name, "not"):
		op = bitopNot
	case eqFold(name, "diff"):
		op = bitopDiff
	case eqFold(name, "diff1"):
		op = bitopDiff1
	case eqFold(name, "andor"):
		op = bitopAndOr
	case eqFold(name, "one"):
		op = bitopOne
	default:
		c.Err(ErrSyntax)
		return
	}
	if op == bitopNot && len(c.Argv) != 4 {
		c.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	if (op == bitopDiff || op == bitopDiff1 || op == bitopAndOr) && len(c.Argv) < 5 {
		c.Error("ERR BITOP " + upper(string(name)) + " must be called with at least two source keys.")
		return
	}
	srcs := make([][]byte, 0, len(c.Argv)-3)
	maxlen := 0
	for _, k := range c.Argv[3:] {
		e, wt := lookupString(c, k)
		if wt {
			return
		}
		var s []byte
		if e != nil {
			s = e.Bytes()
		}
		srcs = append(srcs, s)
		maxlen = max(maxlen, len(s))
	}
	dest := c.Argv[2]
	if maxlen == 0 {
		if c.DB.Delete(dest) {
			c.DB.Touch(dest)
			c.Notify('g', "del", dest)
			c.Dirty++
		}
		c.W.Int(0)
		return
	}
	res := bitopCompute(op, srcs, maxlen)
	ne := c.DB.SetString(dest, res, false)
	ne.Enc = keyspace.EncRaw
	c.DB.Touch(dest)
	c.Notify('$', "set", dest)
	c.Dirty++
	c.W.Int(int64(maxlen))
}

// bitopCompute computes op over srcs (each zero padded to n bytes) into a new
// n-byte slice.
func bitopCompute(op int, srcs [][]byte, n int) []byte {
	res := make([]byte, n)
	copy(res, srcs[0])
	rest := srcs[1:]
	switch op {
	case bitopAnd:
		for _, s := range rest {
			andBytes(res[:len(s)], s)
			clear(res[len(s):])
		}
	case bitopOr:
		for _, s := range rest {
			orBytes(res[:len(s)], s)
		}
	case bitopXor:
		for _, s := range rest {
			xorBytes(res[:len(s)], s)
		}
	case bitopNot:
		for i := range res {
			res[i] = ^res[i]
		}
	case bitopDiff, bitopDiff1, bitopAndOr:
		disj := make([]byte, n)
		for _, s := range rest {
			orBytes(disj[:len(s)], s)
		}
		for i := range res {
			switch op {
			case bitopDiff:
				res[i] &^= disj[i]
			case bitopDiff1:
				res[i] = ^res[i] & disj[i]
			default:
				res[i] &= disj[i]
			}
		}
	case bitopOne:
		common := make([]byte, n)
		for _, s := range rest {
			for i, b := range s {
				common[i] |= res[i] & b
				res[i] = (res[i] ^ b) &^ common[i]
			}
		}
	}
	return res
}

func andBytes(dst, src []byte) {
	for len(dst) >= 8 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(dst)&binary.LittleEndian.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range dst {
		dst[i] &= src[i]
	}
}

func orBytes(dst, src []byte) {
	for len(dst) >= 8 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(dst)|binary.LittleEndian.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range dst {
		dst[i] |= src[i]
	}
}

func xorBytes(dst, src []byte) {
	for len(dst) >= 8 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(dst)^binary.LittleEndian.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range dst {
		dst[i] ^= src[i]
	}
}
