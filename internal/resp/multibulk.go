package resp

import (
	"bytes"
	"math"
)

// parseMultibulk continues parsing a "*<n>\r\n" request, following
// processMultibulkBuffer in Redis's networking.c step by step, including
// its leniencies: a header line ends at the first '\r' (the byte after it
// is skipped unchecked), and the two bytes after a bulk's payload are
// skipped unchecked. It reports done when the request is complete; a count
// <= 0 completes it with no arguments.
func (r *Reader) parseMultibulk() (done bool, err error) {
	if r.mbl == 0 {
		data := r.buf[r.r:r.w]
		n, hl := smallHeader(data, '*')
		if hl == 0 {
			nl := r.findEOL(data, 0, '\r')
			if nl < 0 {
				if len(data) > inlineMax {
					return false, errTooBigMbulk
				}
				return false, nil
			}
			if nl > len(data)-2 { // the byte after '\r' has not arrived
				return false, nil
			}
			var ok bool
			if n, ok = ParseInt(data[1:nl]); !ok || n > maxMultibulk {
				return false, errInvalidMbulk
			}
			hl = nl + 2
		}
		if n > unauthMaxArgs && r.unauth {
			return false, errUnauthMbulk
		}
		r.resetArgs(n)
		r.p = hl
		if n <= 0 {
			return true, nil
		}
		r.mbl, r.bulk = n, -1
	}
	for r.mbl > 0 {
		if r.big != nil {
			if int64(r.bigN)-2 < r.bulk {
				return false, nil
			}
			n := int(r.bulk)
			r.args = append(r.args, span{n: n, ext: r.big[:n:n]})
			r.extN += int64(len(r.big))
			r.big, r.bigN, r.hadBig = nil, 0, true
			r.bulk = -1
			r.mbl--
			continue
		}
		rest := r.buf[r.r+r.p : r.w]
		if r.bulk < 0 {
			n, hl := smallHeader(rest, '$')
			if hl == 0 {
				nl := r.findEOL(rest, r.p, '\r')
				if nl < 0 {
					if len(rest) > inlineMax {
						return false, errTooBigBulk
					}
					return false, nil
				}
				if nl > len(rest)-2 {
					return false, nil
				}
				if rest[0] != '$' {
					return false, expectedDollar(rest[0])
				}
				var ok bool
				if n, ok = ParseInt(rest[1:nl]); !ok || n < 0 {
					return false, errInvalidBulk
				}
				hl = nl + 2
			}
			if n > r.lim.MaxBulkLen.Load() {
				return false, errInvalidBulk
			}
			if n > unauthMaxBulk && r.unauth {
				return false, errUnauthBulk
			}
			r.p += hl
			r.bulk = n
			rest = rest[hl:]
			if int64(len(rest))-2 < n && n >= bigArg {
				return false, r.startBig(rest)
			}
		}
		if int64(len(rest))-2 < r.bulk {
			return false, nil
		}
		n := int(r.bulk)
		r.args = append(r.args, span{off: r.p, n: n})
		r.p += n + 2
		r.bulk = -1
		r.mbl--
	}
	return true, nil
}

// smallHeader reads the usual header line, the type byte (kind: '*' or '$'),
// one to three digits without a leading zero, then CRLF, at the start of b,
// without a scan for the line's end: it returns the number and the line's
// size, or hl 0 when b does not start with such a complete line (the general
// path decides then, and accepts the same line with the same number).
func smallHeader(b []byte, kind byte) (n int64, hl int) {
	if len(b) < 4 || b[0] != kind {
		return 0, 0
	}
	d := int64(b[1]) - '0'
	if d < 0 || d > 9 {
		return 0, 0
	}
	for i := 2; i < 5 && i+1 < len(b); i++ {
		c := b[i]
		if c == '\r' {
			if b[i+1] != '\n' || (d == 0 && i > 2) {
				return 0, 0
			}
			return d, i + 2
		}
		if c < '0' || c > '9' || d == 0 {
			return 0, 0
		}
		d = d*10 + int64(c-'0')
	}
	return 0, 0
}

// bigChunk is the first allocation for a big bulk: memory then doubles as data
// arrives, so a header that announces a large bulk reserves nothing it has not
// been sent (docs/decisions/0005).
const bigChunk = 1 << 20

// bigTarget is the size the pending big bulk's allocation must finally reach:
// the bulk and its CRLF, capped one byte past what the query buffer limit allows.
func (r *Reader) bigTarget() int64 { return min(bulkSize(r.bulk), r.bigRoom()) }

// startBig moves the part of a big bulk already buffered (rest, which ends
// the shared buffer) into an allocation of its own, into which fill then reads
// the remainder. Unlike Redis, which sizes its query buffer to the announced
// bulk at once, the allocation starts at max(2*len(rest), 1 MiB) and grows
// (growBig) as data arrives; the length has already been checked against
// MaxBulkLen.
func (r *Reader) startBig(rest []byte) error {
	target := r.bigTarget()
	if target <= int64(len(rest)) {
		return ErrQueryBufferLimit // only if the limit was lowered meanwhile
	}
	// +2: the CRLF, so that a bulk of up to bigChunk bytes takes one
	// allocation of its exact size
	size := min(target, max(2*int64(len(rest)), bigChunk)+2)
	r.big = make([]byte, size)
	r.bigN = copy(r.big, rest)
	r.w = r.r + r.p
	return nil
}

// growBig is called when big is full but the bulk is not: it doubles big, up to
// the bulk's size. If the query buffer limit dropped below what is already
// held, it grows by one byte so that fill reports the limit.
func (r *Reader) growBig() {
	target := r.bigTarget()
	size := int64(len(r.big)) + 1
	if target > int64(len(r.big)) {
		size = min(target, 2*int64(len(r.big))-2) // the payload doubles, then its CRLF
	}
	nb := make([]byte, size)
	copy(nb, r.big)
	r.big = nb
}

// bigRoom returns how large the pending big bulk's allocation may be: one
// byte more than the query buffer limit leaves beside the rest of the
// request (its headers and other arguments).
func (r *Reader) bigRoom() int64 {
	lim := min(r.lim.MaxQueryBuf.Load(), math.MaxInt64-1)
	return lim + 1 - int64(r.p) - r.extN
}

// bulkSize returns n+2, the bytes a bulk of length n occupies with its
// CRLF, saturating instead of overflowing.
func bulkSize(n int64) int64 {
	return min(n, math.MaxInt64-2) + 2
}

// findEOL returns the index in line of the first c, searched like strchr:
// a NUL byte before it hides it, and -1 means not found. at identifies the
// line (its offset from r) so that a partial line that grows by small
// reads is not rescanned from its start each time.
func (r *Reader) findEOL(line []byte, at int, c byte) int {
	if at != r.lineAt {
		r.lineAt, r.scan, r.nul = at, 0, false
	}
	if r.nul {
		return -1
	}
	// Header lines ("$3\r\n") are short: for them one plain pass beats
	// two IndexByte calls. Inline lines are longer.
	short := 0
	if c == '\r' {
		short = 32
	}
	tail := line[r.scan:]
	for i, b := range tail[:min(len(tail), short)] {
		switch b {
		case c:
			return r.scan + i
		case 0:
			r.nul = true
			return -1
		}
	}
	if len(tail) <= short {
		r.scan = len(line)
		return -1
	}
	r.scan += short
	tail = tail[short:]
	i := bytes.IndexByte(tail, c)
	if i < 0 {
		i = len(tail)
	}
	if bytes.IndexByte(tail[:i], 0) >= 0 {
		r.nul = true
		return -1
	}
	if i == len(tail) {
		r.scan = len(line)
		return -1
	}
	return r.scan + i
}
