package command

import "strconv"

// Err is a typed error inside HotKV; Text gives Redis's exact reply text, from the
// one table below (docs/ARCHITECTURE.md §5).
type Err uint8

// The common errors. Errors that embed a name are built by the helpers below.
const (
	ErrSyntax Err = iota + 1
	ErrWrongType
	ErrNotInt
	ErrNotFloat
	ErrOverflow
	ErrNoSuchKey
	ErrDBIndex
	ErrInvalidDBIndex
	ErrDigestLen
	ErrDelexType
	ErrDelexCond
	ErrNumkeys
	ErrKVPairs
	ErrStringTooLong
	ErrNXXXGTLT
	ErrGTLT
	ErrSameObject
	ErrNaNInf
	ErrIncrFloatNaN
	ErrNoAuth
	ErrAuthNoPass
	ErrWrongPass
	ErrOffsetRange
	ErrCursor
	ErrTimeout
	ErrSameDB
)

var errText = [...]string{
	ErrSyntax:         "ERR syntax error",
	ErrWrongType:      "WRONGTYPE Operation against a key holding the wrong kind of value",
	ErrNotInt:         "ERR value is not an integer or out of range",
	ErrNotFloat:       "ERR value is not a valid float",
	ErrOverflow:       "ERR increment or decrement would overflow",
	ErrNoSuchKey:      "ERR no such key",
	ErrDBIndex:        "ERR DB index is out of range",
	ErrInvalidDBIndex: "ERR invalid DB index",
	ErrDigestLen:      "ERR must be exactly 16 hexadecimal characters",
	ErrDelexType:      "ERR Key should be of string type if conditions are specified",
	ErrDelexCond:      "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE",
	ErrNumkeys:        "ERR invalid numkeys value",
	ErrKVPairs:        "ERR wrong number of key-value pairs",
	ErrStringTooLong:  "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
	ErrNXXXGTLT:       "ERR NX and XX, GT or LT options at the same time are not compatible",
	ErrGTLT:           "ERR GT and LT options at the same time are not compatible",
	ErrSameObject:     "ERR source and destination objects are the same",
	ErrNaNInf:         "ERR increment would produce NaN or Infinity",
	ErrIncrFloatNaN:   "ERR value is NaN or Infinity",
	ErrNoAuth:         "NOAUTH Authentication required.",
	ErrAuthNoPass:     "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
	ErrWrongPass:      "WRONGPASS invalid username-password pair or user is disabled.",
	ErrOffsetRange:    "ERR offset is out of range",
	ErrCursor:         "ERR invalid cursor",
	ErrTimeout:        "ERR timeout is not an integer or out of range",
	ErrSameDB:         "ERR source and destination objects are the same",
}

// Text is Redis's reply text for e, without the leading '-'.
func (e Err) Text() string { return errText[e] }

// ErrArity is the wrong-number-of-arguments error; name is Spec.FullName().
func ErrArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// ErrInvalidExpire is "invalid expire time in '<cmd>' command".
func ErrInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// ErrUnknownSubcommand is the reply for an unknown subcommand of a container.
func ErrUnknownSubcommand(sub []byte, container string) string {
	return "ERR unknown subcommand '" + truncArg(sub) + "'. Try " + upper(container) + " HELP."
}

// ErrUnknownCommand is Redis's unknown-command reply: the name, then up to ~128
// characters of the arguments, each quoted and followed by a space.
func ErrUnknownCommand(argv [][]byte) string {
	b := make([]byte, 0, 64)
	b = append(b, "ERR unknown command '"...)
	b = append(b, truncArg(argv[0])...)
	b = append(b, "', with args beginning with: "...)
	if len(argv) == 1 {
		b = b[:len(b)-len(", with args beginning with: ")]
		return string(b)
	}
	// Redis: for each arg while the accumulated args are < 128 bytes: "'%.*s' " (128-len)
	args := make([]byte, 0, 128)
	for _, a := range argv[1:] {
		if len(args) >= 128 {
			break
		}
		room := 128 - len(args)
		if len(a) > room {
			a = a[:room]
		}
		args = append(args, '\'')
		args = append(args, a...)
		args = append(args, '\'', ' ')
	}
	b = append(b, args...)
	return sanitize(b)
}

// truncArg cuts a name to 128 bytes the way Redis's "%.128s" does.
func truncArg(a []byte) string {
	if len(a) > 128 {
		a = a[:128]
	}
	return string(a)
}

// sanitize replaces CR and LF with spaces so the error stays one RESP line.
func sanitize(b []byte) string {
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
