package resp

import (
	"errors"
	"io"
	"unsafe"
)

const (
	// defaultBufSize is the size of the buffer every Reader starts with
	// and returns to after a command that needed a larger one.
	defaultBufSize = 32 << 10
	// minRead is PROTO_IOBUF_LEN: every read into the shared buffer is
	// offered at least this much room.
	minRead = 16 << 10
	// maxEmptyReads is how many (0, nil) reads in a row end a read with
	// io.ErrNoProgress, as in bufio.
	maxEmptyReads = 100
	// argvKeep is the argv capacity a Reader keeps after a larger command,
	// as Redis keeps argv_len up to 1024.
	argvKeep = 1024
)

// span locates one parsed argument: buf[r+off : r+off+n] of the shared
// buffer, or ext when the argument was read into its own allocation.
type span struct {
	off, n int
	ext    []byte
}

// Reader parses client requests from a connection the way Redis's
// processInputBuffer does: multibulk ("*<n>\r\n$<len>\r\n...") and inline
// requests, with Redis's error texts and limits. It owns its input buffer,
// so a request split across reads is assembled incrementally and a partial
// request stays buffered between calls.
//
// Memory: the buffer starts at 32 KiB and reads offer it at least 16 KiB.
// It grows only when one request does not fit, and returns to its original
// size at the next request boundary. A bulk argument of at least 32 KiB
// that has not fully arrived is read into an allocation of exactly its size
// (once its length has been checked against MaxBulkLen), as Redis does.
// Arrays are never sized from a claimed count. In steady state, with
// requests that fit the buffer, a command costs no allocation. With a
// BufferPool (SetPool), the 32 KiB buffer is borrowed at a read and given
// back by Release once every request in it has been returned.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	rd  io.Reader
	lim *Limits

	buf   []byte // buf[r:w]: bytes read and not yet returned in a command
	small []byte // the defaultBufSize buffer; buf is small or a larger one
	r, w  int

	// The request being parsed, as Redis keeps it in the client:
	// mbl is multibulklen, bulk is bulklen, p is qb_pos relative to r.
	mbl  int64
	bulk int64
	p    int
	args []span
	big  []byte // a big bulk's payload and CRLF, read straight from rd
	// lastExt: the request finish returned last has an argument of its own
	// allocation (OwnedArgs)
	lastExt bool
	bigN    int   // bytes of big filled
	extN    int64 // bytes of the request's completed big arguments
	hadBig  bool  // args holds an ext slice
	argv    [][]byte

	// Line-terminator search state, so a long partial line is not rescanned.
	lineAt int  // line start (relative to r) the state belongs to, or -1
	scan   int  // bytes of that line known to hold no terminator nor NUL
	nul    bool // a NUL precedes any terminator: strchr never finds one

	pool   BufferPool  // lends small; nil: small is the Reader's own, for life
	waiter ReadyWaiter // rd, when it can wait for input without a buffer

	unauth bool
	last   int   // the bytes of the last request returned (LastLen)
	err    error // sticky: *ProtocolError or ErrQueryBufferLimit
	rerr   error // error that came with data from rd, returned by next fill
}

// NewReader returns a Reader reading requests from rd under the limits lim,
// which may be shared by many Readers; nil means NewLimits().
func NewReader(rd io.Reader, lim *Limits) *Reader {
	if lim == nil {
		lim = NewLimits()
	}
	return &Reader{rd: rd, lim: lim, bulk: -1, lineAt: -1}
}

// Reset discards all state, including a sticky error, and makes the
// Reader read from rd, keeping its default-size buffer for reuse and its
// pool (SetPool).
func (r *Reader) Reset(rd io.Reader) {
	clear(r.argv[:cap(r.argv)])
	clear(r.args[:cap(r.args)])
	*r = Reader{rd: rd, lim: r.lim, buf: r.small, small: r.small, pool: r.pool,
		args: r.args[:0], argv: r.argv[:0], bulk: -1, lineAt: -1}
	if r.pool != nil {
		r.SetPool(r.pool) // rd may wait differently
	}
}

// ReadyWaiter is implemented by a source that can wait until it has input
// (or fails) without a buffer to read into: a Reader with a BufferPool that
// gave its buffer back waits that way, so that a connection blocked in a
// read holds no buffer. A source without it (a non-blocking socket read by
// an event loop, which reads only once the socket is ready) is read
// straight into a buffer from the pool.
type ReadyWaiter interface {
	WaitReady() error
}

// SetPool makes the Reader take its buffer from p when it needs one and
// give it back in Release, instead of keeping one for life. A buffer the
// Reader already holds is kept until the next Release.
func (r *Reader) SetPool(p BufferPool) {
	r.pool = p
	r.waiter, _ = r.rd.(ReadyWaiter)
}

// Release gives the Reader's buffer back to its pool when it holds nothing:
// no buffered input and no partial request (Redis's resetReusableQueryBuf).
// It reports whether the Reader now holds no buffer. After it, the argv of
// the last command is invalid, as after the next read.
func (r *Reader) Release() bool {
	if r.buf == nil {
		return true
	}
	// a partly read request keeps its bytes from r.r on (a big bulk's header
	// too), so r.r == r.w means nothing is held for one
	if r.pool == nil || r.r != r.w || r.err != nil {
		return false
	}
	clear(r.argv[:cap(r.argv)])
	if r.hadBig {
		clear(r.args)
		r.hadBig = false
	}
	r.pool.Put(r.small)
	r.buf, r.small, r.r, r.w = nil, nil, 0, 0
	return true
}

// SetUnauthenticated(true) applies the limits Redis puts on a client that
// has not authenticated while a password is required: a count above 10 is
// "Protocol error: unauthenticated multibulk length", a bulk above 16384
// bytes "Protocol error: unauthenticated bulk length", and more than 1 MiB
// buffered for one request ErrQueryBufferLimit.
func (r *Reader) SetUnauthenticated(on bool) { r.unauth = on }

// Buffered returns how many bytes the Reader holds that have been read from
// rd but not yet returned as part of a command: the rest of a pipeline, or
// a partially received request.
func (r *Reader) Buffered() int { return r.w - r.r + r.bigN }

// LastLen is the size in bytes of the request last returned: while it
// runs, Redis's query buffer still holds it (CLIENT LIST's qbuf of the
// client that asks).
func (r *Reader) LastLen() int { return r.last }

// Mem is the bytes of memory the Reader holds: its buffers (the small one, a
// larger one, a big bulk's) and the request's completed big arguments.
func (r *Reader) Mem() int64 {
	n := int64(cap(r.small) + cap(r.big))
	if cap(r.buf) > 0 && (cap(r.small) == 0 || &r.buf[:1][0] != &r.small[:1][0]) {
		n += int64(cap(r.buf))
	}
	return n + r.extN
}

// ReadCommand returns the next non-empty command, reading from rd as
// needed. Empty requests (`*0`, `*-1`, blank inline lines) are skipped.
//
// argv and its elements alias the Reader's memory and are valid only until
// the next call of ReadCommand, TryCommand or Reset: copy what must outlive
// it. Elements have their capacity clipped, so appending to one copies.
//
// Errors: a *ProtocolError or ErrQueryBufferLimit, after which the Reader
// is unusable; io.EOF when rd ends between commands and
// io.ErrUnexpectedEOF when it ends inside one; any other error from rd,
// which leaves the Reader's state intact so a later call may retry.
func (r *Reader) ReadCommand() (argv [][]byte, err error) {
	for {
		argv, ok, err := r.TryCommand()
		if ok || err != nil {
			return argv, err
		}
		if err := r.fill(); err != nil {
			if err == io.EOF && r.Buffered() > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// TryCommand is ReadCommand without reading: it parses the next non-empty
// command from bytes already buffered. ok is false, with a nil error, when
// no complete command is buffered; a partial one stays buffered. argv
// follows ReadCommand's rules.
func (r *Reader) TryCommand() (argv [][]byte, ok bool, err error) {
	for r.err == nil {
		var done bool
		if r.mbl > 0 {
			done, r.err = r.parseMultibulk()
		} else {
			r.atBoundary()
			if r.r == r.w {
				return nil, false, nil
			}
			if r.buf[r.r] == '*' {
				done, r.err = r.parseMultibulk()
			} else {
				done, r.err = r.parseInline()
			}
		}
		if !done || r.err != nil {
			break
		}
		if argv = r.finish(); len(argv) > 0 {
			return argv, true, nil
		}
	}
	return nil, false, r.err
}

// finish consumes the request just parsed and returns its arguments.
func (r *Reader) finish() [][]byte {
	argv := r.argv[:0]
	for _, s := range r.args {
		if s.ext != nil {
			argv = append(argv, s.ext)
		} else {
			i, j := r.r+s.off, r.r+s.off+s.n
			argv = append(argv, r.buf[i:j:j])
		}
	}
	r.argv = argv
	r.lastExt = r.extN > 0
	r.r += r.p
	r.last = r.p + int(r.extN)
	r.p, r.mbl, r.bulk, r.lineAt, r.extN = 0, 0, -1, -1, 0
	return argv
}

// atBoundary runs between requests: it releases memory a large request
// needed and forgets the previous request's arguments.
func (r *Reader) atBoundary() {
	if len(r.buf) > defaultBufSize && r.w-r.r <= defaultBufSize-minRead {
		n := copy(r.small, r.buf[r.r:r.w])
		r.buf, r.r, r.w = r.small, 0, n
		clear(r.argv[:cap(r.argv)]) // they point into the old buffer
	}
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
}

// resetArgs prepares args for a request announcing n arguments (0 when
// unknown), dropping arrays a much larger request left behind.
func (r *Reader) resetArgs(n int64) {
	if c := cap(r.args); c > argvKeep && int64(c) > 2*n {
		r.args, r.argv = nil, nil
		return
	}
	if r.hadBig { // let the GC have the big arguments
		clear(r.args)
		clear(r.argv[:cap(r.argv)])
		r.hadBig = false
	}
	r.args = r.args[:0]
}

// errBadCount mirrors bufio's check of a misbehaving io.Reader.
var errBadCount = errors.New("resp: io.Reader returned an invalid count from Read")

// fill reads once from rd: into the pending big bulk if there is one, else
// into the shared buffer, offering it at least minRead bytes of room. Then,
// like readQueryFromClient, it enforces the query buffer limit.
func (r *Reader) fill() error {
	if err := r.rerr; err != nil {
		r.rerr = nil
		return err
	}
	if r.buf == nil && r.waiter != nil {
		if err := r.waiter.WaitReady(); err != nil {
			return err
		}
	}
	var dst []byte
	if r.big != nil {
		if r.bigN == len(r.big) {
			r.growBig()
		}
		dst = r.big[r.bigN:]
	} else {
		r.makeRoom()
		dst = r.buf[r.w:]
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(dst)
		if n < 0 || n > len(dst) {
			return errBadCount
		}
		if r.big != nil {
			r.bigN += n
		} else {
			r.w += n
		}
		if n > 0 {
			if r.overLimit() {
				r.err = ErrQueryBufferLimit
				return r.err
			}
			r.rerr = err
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// overLimit reports whether the bytes held for the pending request (and any
// read after it) are over the query buffer limit.
//
// Unlike Redis, which counts only the not-yet-parsed bytes (parsed arguments
// move into argv objects there), HotKV counts the whole pending command,
// parsed arguments included, big ones too: otherwise a client could hold up
// to INT_MAX arguments in memory with a tiny query buffer
// (docs/decisions/0005).
func (r *Reader) overLimit() bool {
	qb := int64(r.w-r.r) + int64(r.bigN) + r.extN
	return qb > r.lim.MaxQueryBuf.Load() || r.unauth && qb > unauthMaxQueryBuf
}

// makeRoom ensures len(buf)-w >= minRead, by moving the unconsumed bytes to
// the front or by moving them into a larger buffer.
func (r *Reader) makeRoom() {
	if r.buf == nil {
		if r.pool != nil {
			r.small = r.pool.Get()
		} else {
			r.small = make([]byte, defaultBufSize)
		}
		r.buf = r.small
	}
	if len(r.buf)-r.w >= minRead {
		return
	}
	used := r.w - r.r
	if len(r.buf)-used < minRead {
		n := max(2*len(r.buf), used+minRead)
		nb := make([]byte, n)
		copy(nb, r.buf[r.r:r.w])
		r.buf = nb
	} else {
		copy(r.buf, r.buf[r.r:r.w])
	}
	r.r, r.w = 0, used
}

// OwnedArgs reports which of argv's arguments (bit i for argv[i], the first
// 64) the reader read into allocations of their own (big bulks that had not
// fully arrived): it never reuses those, so a command may keep one (the
// keyspace takes a big SET value over instead of copying it). argv must be
// the request the reader returned last; anything else (a copy, a request
// parsed before it) gets 0.
func (r *Reader) OwnedArgs(argv [][]byte) uint64 {
	if !r.lastExt {
		return 0
	}
	var mask uint64
	for i, s := range r.args {
		if i >= 64 || i >= len(argv) {
			break
		}
		if s.ext != nil && len(argv[i]) > 0 && unsafe.SliceData(argv[i]) == unsafe.SliceData(s.ext) {
			mask |= 1 << i
		}
	}
	return mask
}
