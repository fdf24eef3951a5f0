package resp

import "strconv"

// AppendCommand appends argv as a RESP array of bulk strings: a command as
// a client sends it, and as the replication stream and the AOF carry it.
func AppendCommand(b []byte, argv ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(argv)), 10)
	b = append(b, '\r', '\n')
	for _, a := range argv {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
