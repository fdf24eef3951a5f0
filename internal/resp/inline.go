package resp

// parseInline parses an inline request, following processInlineBuffer:
// the line ends at the first '\n' (searched like strchr, so a NUL byte
// before it hides it), a '\r' just before it is dropped, and the line is
// split like sdssplitargs. The arguments are unescaped in place, in the
// shared buffer, so the request costs no allocation.
func (r *Reader) parseInline() (done bool, err error) {
	data := r.buf[r.r:r.w]
	nl := r.findEOL(data, 0, '\n')
	if nl < 0 {
		if len(data) > inlineMax {
			return false, errTooBigInline
		}
		return false, nil
	}
	end := nl
	if end > 0 && data[end-1] == '\r' {
		end--
	}
	r.resetArgs(0)
	args, ok := splitArgs(data[:end], r.args)
	r.args = args
	if !ok {
		return false, errUnbalanced
	}
	r.p = nl + 1
	return true, nil
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool { return c == ' ' || c-'\t' <= '\r'-'\t' }

func isHex(c byte) bool {
	return c-'0' <= 9 || (c|0x20)-'a' <= 'f'-'a'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// splitArgs splits line into arguments exactly like Redis's sdssplitargs,
// appending their spans (offsets into line) to args. Arguments are
// separated by blanks; an argument may be, or contain, a "double quoted"
// part with the escapes \xHH \n \r \t \b \a and \<any>, or a 'single
// quoted' part where only \' is an escape. A closing quote must be followed
// by a blank or the end of the line. ok is false for an unterminated quote
// or a closing quote followed by something else.
//
// Unescaping is done in place: arguments are written back to back from the
// start of line, which never overtakes the reading position because every
// input byte yields at most one output byte. line must not contain NUL
// (the C code stops at one), which findEOL guarantees.
func splitArgs(line []byte, args []span) (_ []span, ok bool) {
	// at returns line[i], or 0 past the end as the C string would.
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	i, w := 0, 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		start := w
		inq, insq := false, false
		for done := false; !done; {
			if !inq && !insq {
				// Fast path: move a run of plain bytes at once.
				j := i
				for j < len(line) && plain[line[j]] {
					j++
				}
				if j > i {
					if w != i {
						copy(line[w:], line[i:j])
					}
					w += j - i
					i = j
				}
			}
			c := at(i)
			switch {
			case inq:
				switch {
				case c == '\\' && at(i+1) == 'x' && isHex(at(i+2)) && isHex(at(i+3)):
					line[w] = unhex(line[i+2])<<4 | unhex(line[i+3])
					w++
					i += 3
				case c == '\\' && at(i+1) != 0:
					i++
					line[w] = unescape(line[i])
					w++
				case c == '"':
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return args, false
					}
					done = true
				case c == 0:
					return args, false
				default:
					line[w] = c
					w++
				}
			case insq:
				switch {
				case c == '\\' && at(i+1) == '\'':
					i++
					line[w] = '\''
					w++
				case c == '\'':
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return args, false
					}
					done = true
				case c == 0:
					return args, false
				default:
					line[w] = c
					w++
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					line[w] = c
					w++
				}
			}
			if at(i) != 0 {
				i++
			}
		}
		args = append(args, span{off: start, n: w - start})
	}
}

// plain marks the bytes that stand for themselves outside quotes.
var plain = func() (t [256]bool) {
	for i := range t {
		t[i] = true
	}
	for _, c := range []byte{' ', '\n', '\r', '\t', 0, '"', '\''} {
		t[c] = false
	}
	return t
}()

// unescape maps the byte after a backslash inside double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// SplitArgs splits line into arguments exactly like Redis's sdssplitargs (the
// quoting of inline commands and of redis.conf lines). It works on a copy of
// line, which must not contain NUL; ok is false for unbalanced quotes.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	buf := append([]byte(nil), line...)
	spans, ok := splitArgs(buf, nil)
	if !ok {
		return nil, false
	}
	args = make([][]byte, len(spans))
	for i, sp := range spans {
		args[i] = buf[sp.off : sp.off+sp.n : sp.off+sp.n]
	}
	return args, true
}
