// Package resp implements the Redis protocol as Redis 8 speaks it: parsing
// client requests (multibulk and inline) and encoding RESP2 and RESP3
// replies, byte for byte, including Redis's error texts, limits and
// number formats. It depends only on the standard library.
//
// # Requests
//
// A Reader parses one connection's requests. A typical loop runs the
// commands already buffered before flushing replies, and blocks for more
// input only when none is left:
//
//	r := resp.NewReader(conn, limits)
//	w := &resp.Writer{Proto: 2}
//	for {
//		argv, err := r.ReadCommand() // blocks
//		for err == nil {
//			execute(argv, w)        // argv is valid until the next call
//			var ok bool
//			if argv, ok, err = r.TryCommand(); !ok && err == nil {
//				break
//			}
//		}
//		conn.Write(w.Buf) // flush a pipeline's replies at once
//		w.Buf = w.Buf[:0]
//		var perr *resp.ProtocolError
//		if errors.As(err, &perr) {
//			conn.Write([]byte("-ERR " + perr.Msg + "\r\n"))
//		}
//		if err != nil {
//			return // protocol error, query buffer limit, EOF, ...
//		}
//	}
//
// # Replies
//
// A Writer appends encoded replies to a byte slice; it never performs I/O.
//
// # Numbers
//
// ParseInt and ParseFloat accept exactly what Redis's string2ll and
// string2d accept. FormatDouble writes doubles as Redis 8's d2string does
// (its Grisu2 port, fpconv_dtoa). LongDouble reproduces the x87 long double
// arithmetic and printing of INCRBYFLOAT and HINCRBYFLOAT.
package resp
