package script

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/hotkv/hotkv/internal/rdb/crc64"
	"github.com/hotkv/hotkv/internal/rdb/lzf"
)

// FUNCTION DUMP's payload, as Redis writes it (functionsDumpCommand): for each
// library the RDB opcode FUNCTION2 and the code as an RDB string, then the RDB
// version (2 bytes, little endian) and a CRC64 (Jones, little endian) of
// everything before it. Payloads from Redis load here (LZF-compressed and
// integer-encoded strings included) and ours load in Redis.

// RDBVersion is the RDB version of the payloads written and the newest read:
// Redis 8.6's 13, as internal/rdb's Version (a server test checks they agree).
const RDBVersion = 13

const (
	rdbOpcodeFunction2  = 245
	rdbOpcodeFunctionGA = 246 // FUNCTION_PRE_GA, written by Redis 7.0 release candidates
)

var errBadPayload = errors.New("ERR payload version or checksum are wrong")

// DumpLibraries encodes the libraries' code.
func DumpLibraries(libs []*Library) []byte {
	var b []byte
	for _, l := range libs {
		b = append(b, rdbOpcodeFunction2)
		// rdbSaveRawString with rdbcompression: LZF when it saves 4 bytes
		if len(l.Code) > 20 {
			if c := lzf.Compress([]byte(l.Code), len(l.Code)-4); c != nil {
				b = append(b, 0xc3)
				b = appendRDBLen(b, uint64(len(c)))
				b = appendRDBLen(b, uint64(len(l.Code)))
				b = append(b, c...)
				continue
			}
		}
		b = appendRDBLen(b, uint64(len(l.Code)))
		b = append(b, l.Code...)
	}
	b = append(b, RDBVersion&0xff, RDBVersion>>8)
	return binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
}

// ParseDump checks a FUNCTION RESTORE payload and returns the libraries' code.
func ParseDump(p []byte) ([]string, error) {
	if len(p) < 10 {
		return nil, errBadPayload
	}
	body := p[:len(p)-8]
	if binary.LittleEndian.Uint64(p[len(p)-8:]) != crc64.Update(0, body) {
		return nil, errBadPayload
	}
	if v := binary.LittleEndian.Uint16(body[len(body)-2:]); v > RDBVersion {
		return nil, errBadPayload
	}
	data := body[:len(body)-2]
	var codes []string
	for len(data) > 0 {
		op := data[0]
		data = data[1:]
		if op != rdbOpcodeFunction2 && op != rdbOpcodeFunctionGA {
			return nil, errors.New("ERR given type is not a function")
		}
		if op == rdbOpcodeFunctionGA {
			return nil, errors.New("ERR Pre-GA function format not supported")
		}
		s, rest, err := readRDBString(data)
		if err != nil {
			return nil, errors.New("ERR failed loading the library")
		}
		codes = append(codes, s)
		data = rest
	}
	return codes, nil
}

func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

var errShort = errors.New("short payload")

// readRDBLen reads an RDB length; enc reports the special-encoding form
// (11xxxxxx), whose low bits are returned as n.
func readRDBLen(b []byte) (n uint64, enc bool, rest []byte, err error) {
	if len(b) == 0 {
		return 0, false, nil, errShort
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false, b[1:], nil
	case 1:
		if len(b) < 2 {
			return 0, false, nil, errShort
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), false, b[2:], nil
	case 2:
		switch b[0] {
		case 0x80:
			if len(b) < 5 {
				return 0, false, nil, errShort
			}
			return uint64(binary.BigEndian.Uint32(b[1:])), false, b[5:], nil
		case 0x81:
			if len(b) < 9 {
				return 0, false, nil, errShort
			}
			return binary.BigEndian.Uint64(b[1:]), false, b[9:], nil
		}
		return 0, false, nil, errors.New("bad length")
	}
	return uint64(b[0] & 0x3f), true, b[1:], nil
}

func readRDBString(b []byte) (string, []byte, error) {
	n, enc, rest, err := readRDBLen(b)
	if err != nil {
		return "", nil, err
	}
	if !enc {
		if uint64(len(rest)) < n {
			return "", nil, errShort
		}
		return string(rest[:n]), rest[n:], nil
	}
	switch n {
	case 0, 1, 2: // int8, int16, int32, little endian
		size := 1 << n
		if len(rest) < size {
			return "", nil, errShort
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(rest[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(rest)))
		case 2:
			v = int64(int32(binary.LittleEndian.Uint32(rest)))
		}
		return strconv.FormatInt(v, 10), rest[size:], nil
	case 3: // LZF
		clen, _, r1, err := readRDBLen(rest)
		if err != nil {
			return "", nil, err
		}
		ulen, _, r2, err := readRDBLen(r1)
		if err != nil || uint64(len(r2)) < clen || ulen > 512<<20 {
			return "", nil, errShort
		}
		out, err := lzf.Decompress(r2[:clen], int(ulen))
		if err != nil {
			return "", nil, err
		}
		return string(out), r2[clen:], nil
	}
	return "", nil, errors.New("bad encoding")
}
