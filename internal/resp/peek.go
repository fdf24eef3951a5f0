package resp

// Peeked is what PeekArgs reports of a request: argv[1] (the first key of
// most commands), argv[2] (nil if absent) and the last argument.
type Peeked struct{ Arg1, Arg2, Last []byte }

// PeekArgs appends to dst the arguments of each complete multibulk request
// buffered after the last one returned, up to max requests, and returns dst.
// It changes nothing: it is a look-ahead for prefetching, and stops at the
// first request that is inline, incomplete, has fewer than two arguments or
// does not parse (TryCommand will report any error). The slices alias the
// buffer and follow argv's validity.
func (r *Reader) PeekArgs(dst []Peeked, max int) []Peeked {
	if r.mbl != 0 || r.big != nil || r.err != nil {
		return dst
	}
	b := r.buf[r.r:r.w]
	for i := 0; i < max; i++ {
		n, rest, ok := peekHeader(b, '*')
		if !ok || n < 2 {
			break
		}
		var p Peeked
		for a := int64(0); a < n; a++ {
			l, after, ok := peekHeader(rest, '$')
			if !ok || l < 0 || int64(len(after)) < l+2 {
				return dst
			}
			switch a {
			case 1:
				p.Arg1 = after[:l:l]
			case 2:
				p.Arg2 = after[:l:l]
			}
			p.Last = after[:l:l]
			rest = after[l+2:]
		}
		dst = append(dst, p)
		b = rest
	}
	return dst
}

// peekHeader parses the header line "<kind><digits>\r\n" at the start of b.
func peekHeader(b []byte, kind byte) (n int64, rest []byte, ok bool) {
	if n, hl := smallHeader(b, kind); hl > 0 {
		return n, b[hl:], true
	}
	if len(b) == 0 || b[0] != kind {
		return 0, nil, false
	}
	return peekLen(b[1:])
}

// peekLen parses "<digits>\r\n" at the start of b.
func peekLen(b []byte) (n int64, rest []byte, ok bool) {
	for i := 0; i < len(b) && i < 20; i++ {
		if b[i] == '\r' {
			if i+1 >= len(b) {
				return 0, nil, false
			}
			n, ok = ParseInt(b[:i])
			return n, b[i+2:], ok
		}
	}
	return 0, nil, false
}
