package introspect

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/resp"
)

// MonitorLine appends the line a MONITOR client reads for a command, as
// Redis's replicationFeedMonitors: +<seconds>.<microseconds> [<db> <who>]
// then each argument quoted (resp.AppendRepr), CRLF. who is "lua" for a
// script's commands, "unix:<path>" for a Unix socket client, else the
// client's ip:port.
func MonitorLine(dst []byte, nowUs int64, db int, who string, argv [][]byte) []byte {
	dst = append(dst, '+')
	dst = strconv.AppendInt(dst, nowUs/1e6, 10)
	dst = append(dst, '.')
	us := nowUs % 1e6
	for d := int64(100000); d > 1 && us < d; d /= 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, us, 10)
	dst = append(dst, " ["...)
	dst = strconv.AppendInt(dst, int64(db), 10)
	dst = append(dst, ' ')
	dst = append(dst, who...)
	dst = append(dst, "] "...)
	for j, a := range argv {
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = resp.AppendRepr(dst, a)
	}
	return append(dst, '\r', '\n')
}
