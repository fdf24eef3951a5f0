package resp

// AppendRepr appends s quoted and escaped as Redis's sdscatrepr does: \\ \"
// \n \r \t \a \b, printable ASCII as is, every other byte as \xHH (MONITOR's
// arguments, redis-cli's quoted output).
func AppendRepr(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e { // isprint in the C locale
				dst = append(dst, c)
			} else {
				const hex = "0123456789abcdef"
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(dst, '"')
}
