// Package crc64 is Redis's CRC-64 (crc64.c: the Jones polynomial, reflected,
// no final xor), the checksum of RDB files and of DUMP and FUNCTION DUMP
// payloads.
package crc64

var table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // Jones, reflected
	for i := range t {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Update returns crc extended with b (crc64(crc, b, len) in Redis; start at 0).
func Update(crc uint64, b []byte) uint64 {
	for _, x := range b {
		crc = table[byte(crc)^x] ^ crc>>8
	}
	return crc
}
