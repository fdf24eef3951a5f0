package cli

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// SplitArgs splits a command line into arguments exactly as Redis's
// sdssplitargs does: words separated by blanks, "double quotes" with \xHH,
// \n, \r, \t, \b, \a and \<char> escapes, 'single quotes' with \' only.
// A closing quote must be followed by a blank or the end of the line. It
// returns ok=false for unbalanced quotes (redis-cli: "Invalid argument(s)").
// The line ends at its first NUL byte, as a C string does.
func SplitArgs(line string) (args []string, ok bool) {
	p := []byte(line)
	if i := indexNUL(p); i >= 0 {
		p = p[:i]
	}
	at := func(i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	i := 0
	args = []string{}
	for {
		for i < len(p) && isSpace(p[i]) {
			i++
		}
		if i >= len(p) {
			return args, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(i)
			switch {
			case inq:
				if c == '\\' && at(i+1) == 'x' && isHex(at(i+2)) && isHex(at(i+3)) {
					cur = append(cur, hexVal(at(i+2))*16+hexVal(at(i+3)))
					i += 3
				} else if c == '\\' && at(i+1) != 0 {
					i++
					e := at(i)
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
				} else if c == '"' {
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				} else if c == 0 {
					return nil, false
				} else {
					cur = append(cur, c)
				}
			case insq:
				if c == '\\' && at(i+1) == '\'' {
					i++
					cur = append(cur, '\'')
				} else if c == '\'' {
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				} else if c == 0 {
					return nil, false
				} else {
					cur = append(cur, c)
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
					cur = append(cur, c)
				}
			}
			if at(i) != 0 {
				i++
			}
		}
		args = append(args, string(cur))
	}
}

func indexNUL(p []byte) int {
	for i, c := range p {
		if c == 0 {
			return i
		}
	}
	return -1
}
