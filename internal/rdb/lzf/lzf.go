// Package lzf is liblzf 3.6 as Redis builds it (lzfP.h: HLOG 16, VERY_FAST,
// hash slots as offsets into the input), so that strings compress to the same
// bytes as in Redis's RDB files and DUMP payloads.
package lzf

import (
	"errors"
	"math"
	"sync"
)

const (
	hlog   = 16
	hsize  = 1 << hlog
	maxLit = 1 << 5
	maxOff = 1 << 13
	maxRef = (1 << 8) + (1 << 3)
)

// table is Compress's hash table, kept between calls: a slot holds base +
// the input offset of the last position with its hash, and only values
// above the call's base are of this call (base moves past every offset of
// the last input; the table is zeroed when it would wrap). Offset 0 reads as
// "none", as in a zeroed table.
type table struct {
	h    [hsize]uint32
	base uint32
}

var tables = sync.Pool{New: func() any { return new(table) }}

// next returns the base of a call over n bytes of input.
func (t *table) next(n int) uint32 {
	if uint64(t.base)+uint64(n)+1 > math.MaxUint32 {
		t.h = [hsize]uint32{}
		t.base = 0
	}
	b := t.base
	t.base += uint32(n) + 1
	return b
}

func idx(h uint32) uint32 { return ((h >> (3*8 - hlog)) - h*5) & (hsize - 1) }

// Compress is lzf_compress: it compresses in into at most outLen bytes and
// returns them, or nil when the result would not fit (Redis then stores the
// string uncompressed). The hash table starts empty (Redis leaves it
// uninitialised on the stack; a stale slot can only add a match in rare
// cases, so the output is the same for all practical inputs). The table is
// reused from call to call instead of zeroed (256 KiB: zeroing it cost more
// than compressing a short string): see table.
func Compress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen <= 0 {
		return nil
	}
	return CompressInto(nil, in, outLen)
}

// CompressInto is Compress writing into dst's memory when it has room for
// outLen+1 bytes (so that a caller encoding many strings allocates nothing).
func CompressInto(dst []byte, in []byte, outLen int) []byte {
	if len(in) == 0 || outLen <= 0 {
		return nil
	}
	t := tables.Get().(*table)
	defer tables.Put(t)
	return compress(t, dst, in, outLen)
}

// compress is CompressInto with the table t.
func compress(t *table, dst []byte, in []byte, outLen int) []byte {
	inLen := len(in)
	base := t.next(inLen)
	htab := &t.h
	out := dst[:cap(dst)]
	if len(out) < outLen+1 {
		out = make([]byte, outLen+1)
	}
	op, ip := 0, 0
	lit := 0
	op++ // start run
	hval := uint32(in[0]) << 8
	if inLen > 1 {
		hval |= uint32(in[1])
	}
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := &htab[idx(hval)]
		ref := 0
		if *slot > base {
			ref = int(*slot - base)
		}
		*slot = base + uint32(ip)
		off := ip - ref - 1
		if off >= 0 && off < maxOff && ref > 0 &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			// match found at ref
			l := 2
			maxlen := inLen - ip - l
			if maxlen > maxRef {
				maxlen = maxRef
			}
			if op+3+1 >= outLen { // first a faster conservative test
				if op-b2i(lit == 0)+3+1 >= outLen { // then the exact one
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			op -= b2i(lit == 0)           // undo run if length is zero
			// liblzf unrolls the first 16 comparisons when maxlen > 16, without
			// the maxlen bound: a match may then run to the end of the input
			unrolledAll := false
			if maxlen > 16 {
				unrolledAll = true
				for k := 0; k < 16; k++ {
					l++
					if in[ref+l] != in[ip+l] {
						unrolledAll = false
						break
					}
				}
			}
			if maxlen <= 16 || unrolledAll {
				for {
					l++
					if !(l < maxlen && in[ref+l] == in[ip+l]) {
						break
					}
				}
			}
			l -= 2 // l is now #octets - 1
			ip++
			if l < 7 {
				out[op] = byte(off>>8 + l<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(l - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += l + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = base + uint32(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = base + uint32(ip)
			ip++
			continue
		}
		// one more literal byte we must copy
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1) // stop run
			lit = 0
			op++ // start run
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	op -= b2i(lit == 0)
	return out[:op:op]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ErrCorrupt reports compressed data that does not decompress to the
// announced length.
var ErrCorrupt = errors.New("lzf: corrupt data")

// Decompress is lzf_decompress: it decompresses in, which must produce exactly
// outLen bytes.
func Decompress(in []byte, outLen int) ([]byte, error) {
	out := make([]byte, 0, outLen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // literal run of ctrl+1 bytes
			n := ctrl + 1
			if i+n > len(in) || len(out)+n > outLen {
				return nil, ErrCorrupt
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		ref := len(out) - ((ctrl & 0x1f) << 8) - 1
		if n == 7 {
			if i >= len(in) {
				return nil, ErrCorrupt
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, ErrCorrupt
		}
		ref -= int(in[i])
		i++
		n += 2
		if ref < 0 || len(out)+n > outLen {
			return nil, ErrCorrupt
		}
		for k := 0; k < n; k++ {
			out = append(out, out[ref+k])
		}
	}
	if len(out) != outLen {
		return nil, ErrCorrupt
	}
	return out, nil
}
