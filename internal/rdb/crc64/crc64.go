// Package crc64 is Redis's CRC-64 (crc64.c: the Jones polynomial, reflected,
// no final xor), the checksum of RDB files and of DUMP and FUNCTION DUMP
// payloads.
package crc64

import "encoding/binary"

// tables[0] is the byte-at-a-time table; tables[k] advances a byte through
// k more zero bytes, for slicing-by-8 (eight bytes a step: a replica's full
// sync checksums every byte of the snapshot).
var tables = func() (t [8][256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // Jones, reflected
	for i := range t[0] {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range t[0] {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][byte(c)] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// Update returns crc extended with b (crc64(crc, b, len) in Redis; start at 0).
func Update(crc uint64, b []byte) uint64 {
	t := &tables
	for len(b) >= 8 {
		crc ^= binary.LittleEndian.Uint64(b)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(crc>>32)] ^ t[2][byte(crc>>40)] ^ t[1][byte(crc>>48)] ^ t[0][byte(crc>>56)]
		b = b[8:]
	}
	for _, x := range b {
		crc = t[0][byte(crc)^x] ^ crc>>8
	}
	return crc
}
