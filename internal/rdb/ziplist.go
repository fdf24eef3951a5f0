package rdb

import (
	"encoding/binary"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// Ziplists and zipmaps: the compact encodings of RDB files before Redis 7.0
// (RDB versions up to 9), read only.

// parseZiplist is ziplistValidateIntegrity with deep checking: header
// (total bytes, tail offset, count), each entry's prevlen against the previous
// entry's size, encodings and bounds, the terminator. fn gets each element.
func parseZiplist(zl []byte, fn func(e lpValue) error) (int, error) {
	const hdr = 10
	if len(zl) < hdr+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xff {
		return 0, ErrBadData
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:]))
	want := int(binary.LittleEndian.Uint16(zl[8:]))
	end := len(zl) - 1
	count, prevSize, lastStart := 0, 0, hdr
	for p := hdr; p < end; {
		start := p
		// prevlen
		var prev int
		if zl[p] < 254 {
			prev = int(zl[p])
			p++
		} else if zl[p] == 254 {
			if p+5 > end {
				return 0, ErrBadData
			}
			prev = int(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		} else {
			return 0, ErrBadData
		}
		if prev != prevSize {
			return 0, ErrBadData
		}
		if p >= end {
			return 0, ErrBadData
		}
		var e lpValue
		c := zl[p]
		dlen := 0
		switch c >> 6 {
		case 0:
			dlen = int(c & 0x3f)
			p++
		case 1:
			if p+2 > end {
				return 0, ErrBadData
			}
			dlen = int(c&0x3f)<<8 | int(zl[p+1])
			p += 2
		case 2:
			if c != 0x80 || p+5 > end {
				return 0, ErrBadData
			}
			dlen = int(binary.BigEndian.Uint32(zl[p+1:]))
			p += 5
		default:
			e.isInt = true
			size := 0
			switch c {
			case 0xc0:
				size = 2
			case 0xd0:
				size = 4
			case 0xe0:
				size = 8
			case 0xf0:
				size = 3
			case 0xfe:
				size = 1
			default:
				if c < 0xf1 || c > 0xfd {
					return 0, ErrBadData
				}
				e.v = int64(c&0x0f) - 1
			}
			p++
			if size > 0 {
				if p+size > end {
					return 0, ErrBadData
				}
				var u uint64
				for i := size - 1; i >= 0; i-- {
					u = u<<8 | uint64(zl[p+i])
				}
				shift := 64 - 8*uint(size)
				e.v = int64(u<<shift) >> shift
				p += size
			}
		}
		if !e.isInt {
			if dlen > end-p {
				return 0, ErrBadData
			}
			e.s = zl[p : p+dlen : p+dlen]
			p += dlen
		}
		prevSize = p - start
		lastStart = start
		count++
		if err := fn(e); err != nil {
			return 0, err
		}
	}
	if count > 0 && tail != lastStart || count == 0 && tail != hdr {
		return 0, ErrBadData
	}
	if want != 65535 && want != count {
		return 0, ErrBadData
	}
	return count, nil
}

// hashZipmap reads RDB_TYPE_HASH_ZIPMAP (Redis 2.4 and older): a count byte,
// then per pair the field's length and bytes and the value's length, a free
// byte count, the bytes and the free bytes; 0xFF ends it. Lengths are one
// byte below 254, else 254 and four bytes.
func (d *decoder) hashZipmap(r *reader) (Value, error) {
	zm, err := r.str()
	if err != nil {
		return Value{}, err
	}
	if len(zm) < 2 || zm[len(zm)-1] != 0xff {
		return Value{}, ErrBadData
	}
	p, end := 1, len(zm)-1
	readLen := func() (int, bool) {
		if p >= end {
			return 0, false
		}
		if zm[p] < 254 {
			p++
			return int(zm[p-1]), true
		}
		if zm[p] != 254 || p+5 > end {
			return 0, false
		}
		n := int(binary.LittleEndian.Uint32(zm[p+1:]))
		p += 5
		return n, true
	}
	var fields []keyspace.HashField
	seen := dupChecker{}
	maxLen := 0
	for p < end {
		fl, ok := readLen()
		if !ok || fl > end-p {
			return Value{}, ErrBadData
		}
		f := zm[p : p+fl]
		p += fl
		vl, ok := readLen()
		if !ok || p >= end {
			return Value{}, ErrBadData
		}
		free := int(zm[p])
		p++
		if vl > end-p || free > end-p-vl {
			return Value{}, ErrBadData
		}
		v := zm[p : p+vl]
		p += vl + free
		if !seen.add(f) {
			return Value{}, ErrBadData
		}
		maxLen = max(maxLen, fl, vl)
		fields = append(fields, keyspace.HashField{F: f, V: v})
	}
	if len(fields) == 0 {
		return Value{}, errEmpty
	}
	o := d.ks.HashOpts()
	return d.hashValue(fields, len(fields) <= o.MaxEntries && maxLen <= o.MaxValue, false), nil
}
