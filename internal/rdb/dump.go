package rdb

import (
	"encoding/binary"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb/crc64"
)

// Dump is createDumpPayload: e's type and value, the RDB version (2 bytes) and
// a CRC64 of everything before it (8 bytes), both little endian.
func Dump(e *keyspace.Entry, compress bool) []byte {
	b := AppendValue(nil, e, compress)
	b = append(b, Version&0xff, Version>>8)
	return binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
}

// VerifyPayload is verifyDumpPayload: the footer's version must not be newer
// than the newest we read (MaxVersion) and its checksum must match, unless it is 0 (no checksum) or
// skipChecksum (DEBUG SET-SKIP-CHECKSUM-VALIDATION).
func VerifyPayload(p []byte, skipChecksum bool) error {
	if len(p) < 10 {
		return ErrBadVersionOrChecksum
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > MaxVersion {
		return ErrBadVersionOrChecksum
	}
	if skipChecksum {
		return nil
	}
	sum := binary.LittleEndian.Uint64(footer[2:])
	if sum == 0 || sum == crc64.Update(0, p[:len(p)-8]) {
		return nil
	}
	return ErrBadVersionOrChecksum
}

// DecodePayload reads the value of a DUMP payload that VerifyPayload accepted
// (RESTORE's rdbLoadObjectType and rdbLoadObject), building it with ks's
// encoding limits. Any error means RESTORE's "Bad data format"; an empty
// collection is one too.
func DecodePayload(p []byte, ks *keyspace.Keyspace) (Value, error) {
	// Redis reads the value from the whole payload: a value may run into the
	// footer, and bytes after it are ignored
	r := &reader{b: p}
	t, err := r.byte()
	if err != nil || !isObjectType(t) {
		return Value{}, ErrBadData
	}
	d := decoder{ks: ks}
	v, err := d.value(r, t)
	if err != nil {
		return Value{}, ErrBadData
	}
	return v, nil
}
