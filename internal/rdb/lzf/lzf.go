// Package lzf is liblzf 3.6 as Redis builds it (lzfP.h: HLOG 16, VERY_FAST,
// hash slots as offsets into the input), so that strings compress to the same
// bytes as in Redis's RDB files and DUMP payloads.
package lzf

import "errors"

const (
	hlog   = 16
	hsize  = 1 << hlog
	maxLit = 1 << 5
	maxOff = 1 << 13
	maxRef = (1 << 8) + (1 << 3)
)

func idx(h uint32) uint32 { return ((h >> (3*8 - hlog)) - h*5) & (hsize - 1) }

// Compress is lzf_compress: it compresses in into at most outLen bytes and
// returns them, or nil when the result would not fit (Redis then stores the
// string uncompressed). The hash table starts zeroed (Redis leaves it
// uninitialised on the stack; a stale slot can only add a match in rare
// cases, so the output is the same for all practical inputs).
func Compress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen <= 0 {
		return nil
	}
	var htab [hsize]uint32 // offsets of the last position per hash; 0 = none
	out := make([]byte, outLen+1)
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
		ref := int(*slot)
		*slot = uint32(ip)
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
			htab[idx(hval)] = uint32(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = uint32(ip)
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
