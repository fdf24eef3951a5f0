package command

import (
	"bytes"
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// BITFIELD operations and overflow behaviours (bitops.c).
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

// bfOp is one parsed BITFIELD operation.
type bfOp struct {
	offset uint64
	value  int64 // SET value or INCRBY increment
	op     int
	ow     int // overflow behaviour in force for this operation
	bits   uint64
	signed bool
}

func bitfieldCmd(c *Ctx)   { bitfieldGeneric(c, false) }
func bitfieldROCmd(c *Ctx) { bitfieldGeneric(c, true) }

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// parseBitfieldType parses i<1..64> or u<1..63> (the prefix is case sensitive,
// and the width is read up to the first NUL byte, as Redis reads a C string).
func parseBitfieldType(b []byte) (signed bool, width uint64, ok bool) {
	if len(b) == 0 || (b[0] != 'i' && b[0] != 'u') {
		return false, 0, false
	}
	signed = b[0] == 'i'
	num := b[1:]
	if i := bytes.IndexByte(num, 0); i >= 0 {
		num = num[:i]
	}
	n, ok := resp.ParseInt(num)
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint64(n), true
}

// bitfieldGeneric: BITFIELD key [GET type offset | SET type offset value |
// INCRBY type offset increment | OVERFLOW WRAP|SAT|FAIL ...], and BITFIELD_RO
// (GET only). Every operation is parsed before any runs; a command with any
// write grows (or creates) the string up to the farthest bit written, even if
// every write then fails with OVERFLOW FAIL (which replies nil for it).
func bitfieldGeneric(c *Ctx, readonlyCmd bool) {
	argv := c.Argv
	ops := make([]bfOp, 0, 4)
	ow := bfWrap
	readonly := true
	var highest uint64
	for j := 2; j < len(argv); j++ {
		rem := len(argv) - j - 1
		sub := argv[j]
		var op int
		switch {
		case eqFold(sub, "get") && rem >= 2:
			op = bfGet
		case eqFold(sub, "set") && rem >= 3:
			op = bfSet
		case eqFold(sub, "incrby") && rem >= 3:
			op = bfIncrBy
		case eqFold(sub, "overflow") && rem >= 1:
			j++
			switch t := argv[j]; {
			case eqFold(t, "wrap"):
				ow = bfWrap
			case eqFold(t, "sat"):
				ow = bfSat
			case eqFold(t, "fail"):
				ow = bfFail
			default:
				c.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.Err(ErrSyntax)
			return
		}
		signed, width, ok := parseBitfieldType(argv[j+1])
		if !ok {
			c.Error(errBitfieldType)
			return
		}
		off, ok := parseBitOffset(c, argv[j+2], int(width))
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			readonly = false
			highest = max(highest, off+width-1)
			if v, ok = resp.ParseInt(argv[j+3]); !ok {
				c.Err(ErrNotInt)
				return
			}
			j += 3
		} else {
			j += 2
		}
		ops = append(ops, bfOp{offset: off, value: v, op: op, ow: ow, bits: width, signed: signed})
	}

	key := argv[1]
	var str []byte
	grown := false
	var entry *keyspace.Entry // the written string: its bytes are modified in place
	if readonly {
		e, wt := lookupString(c, key)
		if wt {
			return
		}
		if e != nil {
			str = e.Bytes()
		}
	} else {
		if readonlyCmd {
			c.Error("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		e, g := stringForBitWrite(c, key, highest)
		if e == nil {
			return
		}
		grown = g
		entry = e
	}

	c.W.ArrayLen(len(ops))
	changes := 0
	for i := range ops {
		o := &ops[i]
		if entry != nil {
			str = entry.Bytes()
		}
		if o.op == bfGet {
			var buf [9]byte
			byteIdx := o.offset >> 3
			if byteIdx < uint64(len(str)) {
				copy(buf[:], str[byteIdx:])
			}
			rel := o.offset - byteIdx*8
			if o.signed {
				c.W.Int(getSignedBits(buf[:], rel, o.bits))
			} else {
				c.W.Int(int64(getUnsignedBits(buf[:], rel, o.bits)))
			}
			continue
		}
		if o.signed {
			oldv := getSignedBits(str, o.offset, o.bits)
			var newv, ret, wrapped int64
			var overflow int
			if o.op == bfIncrBy {
				overflow, wrapped = signedOverflow(oldv, o.value, o.bits, o.ow)
				newv = oldv + o.value
				if overflow != 0 {
					newv = wrapped
				}
				ret = newv
			} else {
				newv = o.value
				overflow, wrapped = signedOverflow(newv, 0, o.bits, o.ow)
				if overflow != 0 {
					newv = wrapped
				}
				ret = oldv
			}
			if overflow != 0 && o.ow == bfFail {
				c.W.Null()
				continue
			}
			c.W.Int(ret)
			setUnsignedBits(str, o.offset, o.bits, uint64(newv))
			if grown || oldv != newv {
				changes++
			}
		} else {
			oldv := getUnsignedBits(str, o.offset, o.bits)
			var newv, ret, wrapped uint64
			var overflow int
			if o.op == bfIncrBy {
				newv = oldv + uint64(o.value)
				overflow, wrapped = unsignedOverflow(oldv, o.value, o.bits, o.ow)
				if overflow != 0 {
					newv = wrapped
				}
				ret = newv
			} else {
				newv = uint64(o.value)
				overflow, wrapped = unsignedOverflow(newv, 0, o.bits, o.ow)
				if overflow != 0 {
					newv = wrapped
				}
				ret = oldv
			}
			if overflow != 0 && o.ow == bfFail {
				c.W.Null()
				continue
			}
			c.W.Int(int64(ret))
			setUnsignedBits(str, o.offset, o.bits, newv)
			if grown || oldv != newv {
				changes++
			}
		}
	}
	if changes > 0 {
		c.DB.Touch(key)
		c.Notify('$', "setbit", key)
		c.Dirty += changes
	}
}

// getUnsignedBits reads a bits-wide unsigned integer at bit offset off of p
// (most significant bit first). p must hold the bits.
func getUnsignedBits(p []byte, off, bits uint64) uint64 {
	var v uint64
	for j := uint64(0); j < bits; j++ {
		b := p[off>>3] >> (7 - off&7) & 1
		v = v<<1 | uint64(b)
		off++
	}
	return v
}

// getSignedBits reads a two's complement bits-wide integer.
func getSignedBits(p []byte, off, bits uint64) int64 {
	v := int64(getUnsignedBits(p, off, bits))
	if bits < 64 && v&(1<<(bits-1)) != 0 {
		v |= -1 << bits
	}
	return v
}

// setUnsignedBits writes the low bits of v at bit offset off of p.
func setUnsignedBits(p []byte, off, bits, v uint64) {
	for j := uint64(0); j < bits; j++ {
		bit := byte(v>>(bits-1-j)) & 1
		i, sh := off>>3, 7-off&7
		p[i] = p[i]&^(1<<sh) | bit<<sh
		off++
	}
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: 0 when value+incr fits
// in bits (unsigned), else 1 (overflow) or -1 (underflow) and, for WRAP and
// SAT, the value to store instead.
func unsignedOverflow(value uint64, incr int64, bits uint64, ow int) (int, uint64) {
	maxv := uint64(1)<<bits - 1
	if bits == 64 {
		maxv = math.MaxUint64
	}
	maxincr := int64(maxv - value)
	minincr := -int64(value)
	wrap := func() uint64 {
		mask := ^uint64(0) << bits
		if bits == 64 {
			mask = 0
		}
		return (value + uint64(incr)) &^ mask
	}
	if value > maxv || (incr > 0 && incr > maxincr) {
		switch ow {
		case bfWrap:
			return 1, wrap()
		case bfSat:
			return 1, maxv
		}
		return 1, 0
	}
	if incr < 0 && incr < minincr {
		switch ow {
		case bfWrap:
			return 1, wrap() // Redis's wrap path reports 1 in both directions
		case bfSat:
			return -1, 0
		}
		return -1, 0
	}
	return 0, 0
}

// signedOverflow is checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, bits uint64, ow int) (int, int64) {
	maxv := int64(math.MaxInt64)
	if bits != 64 {
		maxv = 1<<(bits-1) - 1
	}
	minv := -maxv - 1
	maxincr := int64(uint64(maxv) - uint64(value))
	minincr := minv - value
	wrap := func() int64 {
		msb := uint64(1) << (bits - 1)
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := ^uint64(0) << bits
			if c&msb != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	if value > maxv || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
		switch ow {
		case bfWrap:
			return 1, wrap()
		case bfSat:
			return 1, maxv
		}
		return 1, 0
	}
	if value < minv || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr) {
		switch ow {
		case bfWrap:
			return 1, wrap()
		case bfSat:
			return -1, minv
		}
		return -1, 0
	}
	return 0, 0
}
