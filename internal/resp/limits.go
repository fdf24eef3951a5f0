package resp

import (
	"errors"
	"sync/atomic"
)

// Redis constants that shape the request parser (server.h, networking.c).
const (
	// DefaultMaxBulkLen is proto-max-bulk-len's default, 512 MiB.
	DefaultMaxBulkLen = 512 << 20
	// DefaultMaxQueryBuf is client-query-buffer-limit's default, 1 GiB.
	DefaultMaxQueryBuf = 1 << 30

	// inlineMax is PROTO_INLINE_MAX_SIZE: the most bytes an inline request,
	// or a "*<count>" / "$<len>" header line, may occupy while its line
	// terminator has not arrived yet.
	inlineMax = 64 << 10
	// bigArg is PROTO_MBULK_BIG_ARG: a bulk at least this long that has not
	// fully arrived yet is read into an allocation of its own, of exactly
	// its size, instead of through the shared buffer.
	bigArg = 32 << 10
	// maxMultibulk is INT_MAX, the largest count "*<n>" may announce.
	maxMultibulk = 1<<31 - 1
	// Limits Redis applies while authRequired(c) is true.
	unauthMaxArgs     = 10
	unauthMaxBulk     = 16384
	unauthMaxQueryBuf = 1 << 20
)

// Limits holds the configurable limits of the request parser. They are read
// on every parse, so CONFIG SET can change them at run time for every
// connection sharing the Limits. The zero value is not useful: use NewLimits.
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: a "$<len>" header with a larger len
	// is a protocol error ("invalid bulk length").
	MaxBulkLen atomic.Int64
	// MaxQueryBuf is client-query-buffer-limit: when, after a read, the
	// bytes held for the pending request (all of it, arguments already
	// parsed included: docs/decisions/0005) and any read after it exceed
	// it, the reader fails with ErrQueryBufferLimit. It also caps the
	// allocation made for a big bulk.
	MaxQueryBuf atomic.Int64
}

// NewLimits returns Limits holding Redis's defaults: 512 MiB bulks and a
// 1 GiB query buffer.
func NewLimits() *Limits {
	l := new(Limits)
	l.MaxBulkLen.Store(DefaultMaxBulkLen)
	l.MaxQueryBuf.Store(DefaultMaxQueryBuf)
	return l
}

// ProtocolError reports malformed input. Msg is the text Redis puts after
// "-ERR ", for example "Protocol error: invalid multibulk length", and never
// contains CR or LF. The server should reply "-ERR "+Msg+"\r\n" and close
// the connection, as Redis does. Once a Reader has returned a ProtocolError
// it returns the same error on every later call.
type ProtocolError struct{ Msg string }

// Error returns Msg.
func (e *ProtocolError) Error() string { return e.Msg }

// ErrQueryBufferLimit is returned when the bytes held for the pending
// request exceed Limits.MaxQueryBuf (or 1 MiB for an unauthenticated
// client). Redis logs this and closes the connection without a reply. It is
// sticky like a ProtocolError.
var ErrQueryBufferLimit = errors.New("resp: client query buffer limit reached")

// The fixed protocol errors, allocated once.
var (
	errTooBigInline = &ProtocolError{"Protocol error: too big inline request"}
	errUnbalanced   = &ProtocolError{"Protocol error: unbalanced quotes in request"}
	errTooBigMbulk  = &ProtocolError{"Protocol error: too big mbulk count string"}
	errTooBigBulk   = &ProtocolError{"Protocol error: too big bulk count string"}
	errInvalidMbulk = &ProtocolError{"Protocol error: invalid multibulk length"}
	errUnauthMbulk  = &ProtocolError{"Protocol error: unauthenticated multibulk length"}
	errInvalidBulk  = &ProtocolError{"Protocol error: invalid bulk length"}
	errUnauthBulk   = &ProtocolError{"Protocol error: unauthenticated bulk length"}
)

const expectedDollarPrefix = "Protocol error: expected '$', got '"

// expectedDollar builds "Protocol error: expected '$', got '<c>'" the way
// addReplyErrorFormat does: the byte is copied raw, except CR and LF, which
// become spaces.
func expectedDollar(c byte) *ProtocolError {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{expectedDollarPrefix + string([]byte{c}) + "'"}
}
