package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Kind is the type of a reply as hiredis (and so redis-cli) sees it.
type Kind uint8

// Reply kinds. The RESP2 null bulk string, the RESP2 null array and the RESP3
// null all become KindNil, as they do in hiredis.
const (
	KindString   Kind = iota + 1 // bulk string ($)
	KindStatus                   // simple string (+)
	KindError                    // simple (-) or blob (!) error
	KindInteger                  // :
	KindNil                      // $-1, *-1, _
	KindArray                    // *
	KindMap                      // % (Elems holds key, value, key, value...)
	KindSet                      // ~
	KindPush                     // >
	KindDouble                   // , (Str holds the text as sent)
	KindBool                     // # (Int is 1 or 0)
	KindBigNum                   // ( (Str holds the digits)
	KindVerbatim                 // = (Format holds the 3-byte type, Str the body)
)

// Reply is one parsed server reply.
type Reply struct {
	Kind   Kind
	Str    []byte
	Int    int64
	Format string
	Elems  []*Reply
	// Attrib is the RESP3 attribute map (|) that preceded this reply, if any.
	// The formatters skip it, as the RESP3 spec asks clients that do not use
	// attributes to do.
	Attrib *Reply
}

// ProtocolError is a malformed reply; its text follows hiredis's wording.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

// maxDepth bounds nesting like hiredis's REDIS_READER_STACK (7 levels in hiredis
// 1.0; ours is generous but finite so a hostile stream cannot blow the stack).
const maxDepth = 512

// ReadReply reads one complete reply from br. Attributes are attached to the
// reply that follows them.
func ReadReply(br *bufio.Reader) (*Reply, error) { return readReply(br, 0) }

func readReply(br *bufio.Reader, depth int) (*Reply, error) {
	if depth > maxDepth {
		return nil, &ProtocolError{"Protocol error, nesting too deep"}
	}
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, &ProtocolError{"Protocol error, got \"\\r\" as reply type byte"}
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return &Reply{Kind: KindStatus, Str: body}, nil
	case '-':
		return &Reply{Kind: KindError, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return nil, &ProtocolError{"Bad integer value"}
		}
		return &Reply{Kind: KindInteger, Int: n}, nil
	case ',':
		return &Reply{Kind: KindDouble, Str: body}, nil
	case '(':
		return &Reply{Kind: KindBigNum, Str: body}, nil
	case '#':
		if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
			return nil, &ProtocolError{"Bad bool value"}
		}
		r := &Reply{Kind: KindBool}
		if body[0] == 't' {
			r.Int = 1
		}
		return r, nil
	case '_':
		return &Reply{Kind: KindNil}, nil
	case '$', '!', '=':
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil || n < -1 {
			return nil, &ProtocolError{"Bad bulk string length"}
		}
		if n == -1 {
			return &Reply{Kind: KindNil}, nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, eofErr(err)
		}
		data = data[:n]
		switch line[0] {
		case '!':
			return &Reply{Kind: KindError, Str: data}, nil
		case '=':
			if len(data) < 4 || data[3] != ':' {
				return nil, &ProtocolError{"Verbatim string 4 bytes of content type are missing or incorrectly encoded."}
			}
			return &Reply{Kind: KindVerbatim, Format: string(data[:3]), Str: data[4:]}, nil
		}
		return &Reply{Kind: KindString, Str: data}, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil || n < -1 {
			return nil, &ProtocolError{"Bad multi-bulk length"}
		}
		if n == -1 {
			return &Reply{Kind: KindNil}, nil
		}
		count := n
		if line[0] == '%' || line[0] == '|' {
			count *= 2
		}
		r := &Reply{}
		switch line[0] {
		case '*':
			r.Kind = KindArray
		case '~':
			r.Kind = KindSet
		case '>':
			r.Kind = KindPush
		default:
			r.Kind = KindMap
		}
		if count > 0 {
			r.Elems = make([]*Reply, 0, min(count, 1024))
		}
		for i := int64(0); i < count; i++ {
			e, err := readReply(br, depth+1)
			if err != nil {
				return nil, err
			}
			r.Elems = append(r.Elems, e)
		}
		if line[0] == '|' {
			next, err := readReply(br, depth)
			if err != nil {
				return nil, err
			}
			next.Attrib = r
			return next, nil
		}
		return r, nil
	}
	return nil, &ProtocolError{fmt.Sprintf("Protocol error, got %s as reply type byte", Repr(nil, line[:1]))}
}

// readLine returns the next CRLF-terminated line without its terminator.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A very long simple string: collect it.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return nil, eofErr(err)
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, &ProtocolError{"Protocol error, line not terminated by CRLF"}
	}
	return append([]byte(nil), line[:len(line)-2]...), nil
}

// ErrServerClosed is hiredis's REDIS_ERR_EOF text.
var ErrServerClosed = errors.New("Server closed the connection")

func eofErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrServerClosed
	}
	return err
}
