package cli

import (
	"bytes"
	"strconv"

	"github.com/hotkv/hotkv/internal/resp"
)

// Output modes, as redis-cli's OUTPUT_* values.
const (
	OutputStandard = iota // the terminal rendering: (integer) 1, "quoted", 1) ...
	OutputRaw             // the bytes themselves, one reply per line
	OutputCSV
)

// Repr appends s quoted and escaped as Redis's sdscatrepr does
// (resp.AppendRepr).
func Repr(dst, s []byte) []byte { return resp.AppendRepr(dst, s) }

// cstr is s up to its first NUL byte: redis-cli prints some fields with %s.
func cstr(s []byte) []byte {
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// FormatTTY appends r rendered as redis-cli renders replies on a terminal
// (cliFormatReplyTTY). prefix is the indentation of nested elements after
// the first line; callers pass "".
func FormatTTY(dst []byte, r *Reply, prefix string) []byte {
	switch r.Kind {
	case KindError:
		dst = append(dst, "(error) "...)
		dst = append(dst, cstr(r.Str)...)
		return append(dst, '\n')
	case KindStatus:
		dst = append(dst, cstr(r.Str)...)
		return append(dst, '\n')
	case KindInteger:
		dst = append(dst, "(integer) "...)
		dst = strconv.AppendInt(dst, r.Int, 10)
		return append(dst, '\n')
	case KindDouble:
		dst = append(dst, "(double) "...)
		dst = append(dst, cstr(r.Str)...)
		return append(dst, '\n')
	case KindBigNum:
		// redis-cli 7.x has no case for big numbers: it prints "Unknown reply
		// type: 13" and exits. HotKV's shell shows them in the style of
		// doubles instead (docs/decisions/0016-hotkv-cli.md).
		dst = append(dst, "(big number) "...)
		dst = append(dst, cstr(r.Str)...)
		return append(dst, '\n')
	case KindString:
		dst = Repr(dst, r.Str)
		return append(dst, '\n')
	case KindVerbatim:
		dst = append(dst, r.Str...)
		return append(dst, '\n')
	case KindNil:
		return append(dst, "(nil)\n"...)
	case KindBool:
		if r.Int != 0 {
			return append(dst, "(true)\n"...)
		}
		return append(dst, "(false)\n"...)
	case KindArray, KindMap, KindSet, KindPush:
		return formatAggregateTTY(dst, r, prefix)
	}
	return dst
}

func formatAggregateTTY(dst []byte, r *Reply, prefix string) []byte {
	if len(r.Elems) == 0 {
		switch r.Kind {
		case KindArray:
			return append(dst, "(empty array)\n"...)
		case KindMap:
			return append(dst, "(empty hash)\n"...)
		case KindSet:
			return append(dst, "(empty set)\n"...)
		default:
			return append(dst, "(empty push)\n"...)
		}
	}
	n := len(r.Elems)
	if r.Kind == KindMap {
		n /= 2
	}
	idxlen := len(strconv.Itoa(n))
	// Nested elements are indented by the parent's prefix plus idxlen+2 spaces.
	sub := prefix + spaces(idxlen+2)
	sep := byte(')')
	switch r.Kind {
	case KindSet:
		sep = '~'
	case KindMap:
		sep = '#'
	}
	for i := 0; i < len(r.Elems); i++ {
		human := i + 1
		if r.Kind == KindMap {
			human = i/2 + 1
		}
		// The first element goes on the line the parent already started.
		if i != 0 {
			dst = append(dst, prefix...)
		}
		num := strconv.Itoa(human)
		dst = append(dst, spaces(idxlen-len(num))...)
		dst = append(dst, num...)
		dst = append(dst, sep, ' ')
		dst = FormatTTY(dst, r.Elems[i], sub)
		if r.Kind == KindMap {
			i++
			dst = dst[:len(dst)-1] // the key's newline
			dst = append(dst, " => "...)
			if multilineTTY(r.Elems[i]) {
				dst = append(dst, '\n')
				dst = append(dst, sub...)
			}
			dst = FormatTTY(dst, r.Elems[i], sub)
		}
	}
	return dst
}

// multilineTTY reports whether FormatTTY renders r on more than one line
// (cliIsMultilineValueTTY): map values that are start on a new line.
func multilineTTY(r *Reply) bool {
	switch r.Kind {
	case KindArray, KindSet, KindPush:
		if len(r.Elems) == 0 {
			return false
		}
		if len(r.Elems) > 1 {
			return true
		}
		return multilineTTY(r.Elems[0])
	case KindMap:
		if len(r.Elems) == 0 {
			return false
		}
		if len(r.Elems) > 2 {
			return true
		}
		return multilineTTY(r.Elems[1])
	}
	return false
}

func spaces(n int) string {
	const s = "                                "
	if n <= len(s) {
		return s[:n]
	}
	return string(bytes.Repeat([]byte{' '}, n))
}

// FormatRaw appends r as redis-cli's --raw output does (cliFormatReplyRaw):
// strings unquoted, aggregates joined by mbDelim, map pairs as "key value".
func FormatRaw(dst []byte, r *Reply, mbDelim string) []byte {
	switch r.Kind {
	case KindNil:
	case KindError:
		dst = append(dst, r.Str...)
		dst = append(dst, '\n')
	case KindStatus, KindString, KindVerbatim, KindDouble, KindBigNum:
		dst = append(dst, r.Str...)
	case KindBool:
		if r.Int != 0 {
			dst = append(dst, "(true)"...)
		} else {
			dst = append(dst, "(false)"...)
		}
	case KindInteger:
		dst = strconv.AppendInt(dst, r.Int, 10)
	case KindArray, KindSet, KindPush:
		for i, e := range r.Elems {
			if i > 0 {
				dst = append(dst, mbDelim...)
			}
			dst = FormatRaw(dst, e, mbDelim)
		}
	case KindMap:
		for i := 0; i+1 < len(r.Elems); i += 2 {
			if i > 0 {
				dst = append(dst, mbDelim...)
			}
			dst = FormatRaw(dst, r.Elems[i], mbDelim)
			dst = append(dst, ' ')
			dst = FormatRaw(dst, r.Elems[i+1], mbDelim)
		}
	}
	return dst
}

// FormatCSV appends r as redis-cli's --csv output does (cliFormatReplyCSV).
func FormatCSV(dst []byte, r *Reply) []byte {
	switch r.Kind {
	case KindError:
		dst = append(dst, "ERROR,"...)
		dst = Repr(dst, cstr(r.Str))
	case KindStatus, KindString, KindVerbatim:
		dst = Repr(dst, r.Str)
	case KindInteger:
		dst = strconv.AppendInt(dst, r.Int, 10)
	case KindDouble, KindBigNum:
		dst = append(dst, cstr(r.Str)...)
	case KindNil:
		dst = append(dst, "NULL"...)
	case KindBool:
		if r.Int != 0 {
			dst = append(dst, "true"...)
		} else {
			dst = append(dst, "false"...)
		}
	case KindArray, KindSet, KindPush, KindMap:
		for i, e := range r.Elems {
			dst = FormatCSV(dst, e)
			if i != len(r.Elems)-1 {
				dst = append(dst, ',')
			}
		}
	}
	return dst
}

// FormatInvalidateTTY renders a RESP3 client-tracking invalidation push as
// redis-cli does on a terminal: -> invalidate: 'k1', 'k2'.
func FormatInvalidateTTY(dst []byte, r *Reply) []byte {
	dst = append(dst, "-> invalidate: "...)
	keys := r.Elems[1].Elems
	for i, k := range keys {
		dst = append(dst, '\'')
		dst = append(dst, cstr(k.Str)...)
		dst = append(dst, '\'')
		if i < len(keys)-1 {
			dst = append(dst, ", "...)
		}
	}
	return append(dst, '\n')
}

// isInvalidate reports whether r is a client-tracking invalidation push.
func isInvalidate(r *Reply) bool {
	return r.Kind == KindPush && len(r.Elems) == 2 && r.Elems[0].Kind == KindString &&
		bytes.HasPrefix(r.Elems[0].Str, []byte("invalidate")) && r.Elems[1].Kind == KindArray
}
