package resp

import (
	"strconv"
	"sync/atomic"
)

// Writer encodes replies by appending to Buf, byte for byte as Redis's
// addReply* functions do for the client's protocol version. It never
// writes to a connection: the caller writes Buf out and resets it with
// Buf = Buf[:0] (Reset, for a writer that takes references: writerref.go). Appending allocates only when Buf must grow, so a reused
// Writer settles at zero allocations.
//
// Proto selects the protocol: 3 for RESP3, anything else for RESP2 (the
// zero value included). The methods that exist only in RESP3 document what
// they write in RESP2.
type Writer struct {
	Buf   []byte
	Proto int
	// Refs are the long bulk replies referred to, not copied (writerref.go):
	// empty unless TakeRefs was called.
	Refs     []Ref
	refsOK   *atomic.Bool
	refBytes int
	// sealed is the reply's head that Seal moved out of Buf (writerref.go)
	sealed sealedHead
}

func (w *Writer) resp3() bool { return w.Proto == 3 }

// header appends <prefix><n>\r\n.
func (w *Writer) header(prefix byte, n int64) {
	if uint64(n) < 100 {
		w.smallHeader(prefix, byte(n))
		return
	}
	w.Buf = append(w.Buf, prefix)
	w.Buf = strconv.AppendInt(w.Buf, n, 10)
	w.Buf = append(w.Buf, '\r', '\n')
}

// smallHeader is header for 0 <= n < 100 (most lengths and counts), in one
// append.
func (w *Writer) smallHeader(prefix, n byte) {
	if n < 10 {
		w.Buf = append(w.Buf, prefix, '0'+n, '\r', '\n')
		return
	}
	w.Buf = append(w.Buf, prefix, '0'+n/10, '0'+n%10, '\r', '\n')
}

// appendLine appends s with CR and LF mapped to spaces, so that the reply
// stays one protocol line.
func (w *Writer) appendLine(s string) {
	n := len(w.Buf)
	w.Buf = append(w.Buf, s...)
	for i, c := range w.Buf[n:] {
		if c == '\r' || c == '\n' {
			w.Buf[n+i] = ' '
		}
	}
	w.Buf = append(w.Buf, '\r', '\n')
}

// SimpleString appends a status reply, +s\r\n. Redis never sends CR or LF
// inside one; should s contain them they are replaced by spaces.
func (w *Writer) SimpleString(s string) {
	w.Buf = append(w.Buf, '+')
	w.appendLine(s)
}

// Error appends an error reply, -msg\r\n. msg carries its error code, as in
// "ERR unknown command" or "WRONGTYPE Operation against ...". As in Redis's
// addReplyErrorFormat, CR and LF at either end of msg are dropped and those
// inside it become spaces.
func (w *Writer) Error(msg string) {
	i, j := 0, len(msg)
	for i < j && (msg[i] == '\r' || msg[i] == '\n') {
		i++
	}
	for j > i && (msg[j-1] == '\r' || msg[j-1] == '\n') {
		j--
	}
	w.Buf = append(w.Buf, '-')
	w.appendLine(msg[i:j])
}

// Int appends an integer reply, :n\r\n.
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk appends a bulk string, $<len>\r\n<b>\r\n. A nil b is an empty
// string, not a null: use Null for that.
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkString is Bulk for a string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkInt appends n as a bulk string, like addReplyBulkLongLong.
func (w *Writer) BulkInt(n int64) {
	var tmp [20]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null appends the null reply: $-1\r\n in RESP2, _\r\n in RESP3.
func (w *Writer) Null() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "$-1\r\n"...)
	}
}

// NullArray appends the null array: *-1\r\n in RESP2, _\r\n in RESP3.
func (w *Writer) NullArray() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "*-1\r\n"...)
	}
}

// ArrayLen appends the header of an array of n elements, *n\r\n.
func (w *Writer) ArrayLen(n int) { w.header('*', int64(n)) }

// MapLen appends the header of a map of n key/value pairs: %n\r\n in RESP3,
// and in RESP2 a flat array of 2n elements, *<2n>\r\n.
func (w *Writer) MapLen(n int) {
	if w.resp3() {
		w.header('%', int64(n))
	} else {
		w.header('*', 2*int64(n))
	}
}

// SetLen appends the header of a set of n elements: ~n\r\n in RESP3, an
// array header *n\r\n in RESP2.
func (w *Writer) SetLen(n int) {
	if w.resp3() {
		w.header('~', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// PushLen appends the header of an out-of-band push of n elements: >n\r\n
// in RESP3, an array header *n\r\n in RESP2 (how pub/sub messages travel).
func (w *Writer) PushLen(n int) {
	if w.resp3() {
		w.header('>', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// AttributeLen appends the header of an attribute map of n pairs, |n\r\n.
// Attributes do not exist in RESP2: there it writes nothing and returns
// false, and the caller must not write the n pairs either (Redis asserts
// RESP3 here). It returns true in RESP3.
func (w *Writer) AttributeLen(n int) bool {
	if !w.resp3() {
		return false
	}
	w.header('|', int64(n))
	return true
}

// Double appends f as Redis's addReplyDouble does: ,<text>\r\n in RESP3
// and a bulk string of the same text in RESP2, where the text is
// FormatDouble's (inf, -inf, nan, integers without a fraction, otherwise
// the shortest form Redis's Grisu code produces).
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	text := FormatDouble(tmp[:0], f)
	if w.resp3() {
		w.Buf = append(w.Buf, ',')
		w.Buf = append(w.Buf, text...)
		w.Buf = append(w.Buf, '\r', '\n')
	} else {
		w.Bulk(text)
	}
}

// Bool appends #t\r\n or #f\r\n in RESP3, :1\r\n or :0\r\n in RESP2.
func (w *Writer) Bool(b bool) {
	switch {
	case w.resp3() && b:
		w.Buf = append(w.Buf, "#t\r\n"...)
	case w.resp3():
		w.Buf = append(w.Buf, "#f\r\n"...)
	case b:
		w.Buf = append(w.Buf, ":1\r\n"...)
	default:
		w.Buf = append(w.Buf, ":0\r\n"...)
	}
}

// BigNumber appends the decimal integer s: (s\r\n in RESP3, a bulk string
// in RESP2.
func (w *Writer) BigNumber(s string) {
	if w.resp3() {
		w.Buf = append(w.Buf, '(')
		w.Buf = append(w.Buf, s...)
		w.Buf = append(w.Buf, '\r', '\n')
	} else {
		w.BulkString(s)
	}
}

// Verbatim appends s as a verbatim string of the given format ("txt",
// "mkd"): =<len+4>\r\n<fmt>:<s>\r\n in RESP3, where like addReplyVerbatim
// format is cut or padded with spaces to three bytes; a plain bulk string
// of s in RESP2.
func (w *Writer) Verbatim(format, s string) {
	if !w.resp3() {
		w.BulkString(s)
		return
	}
	w.header('=', int64(len(s))+4)
	for i := range 3 {
		if i < len(format) {
			w.Buf = append(w.Buf, format[i])
		} else {
			w.Buf = append(w.Buf, ' ')
		}
	}
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Raw appends b, which must already be encoded for w.Proto.
func (w *Writer) Raw(b []byte) { w.Buf = append(w.Buf, b...) }
