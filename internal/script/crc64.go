package script

// CRC64 is Redis's crc64 (crc-64-jones, reflected, no final xor), as RDB files
// and DUMP payloads end with: crc is the running value (0 to start).
func CRC64(crc uint64, b []byte) uint64 { return crc64Jones(crc, b) }
