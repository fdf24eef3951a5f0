package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/resp"
)

// setFlags are the options of SET, GETEX and MSETEX (Redis's OBJ_* flags).
type setFlags uint16

const (
	optNX setFlags = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT
	optIFEQ
	optIFNE
	optIFDEQ
	optIFDNE
)

const optExpire = optEX | optPX | optEXAT | optPXAT
const optCond = optIFEQ | optIFNE | optIFDEQ | optIFDNE

// cmdKind selects which options parseSetOpts accepts.
type cmdKind uint8

const (
	kindSet cmdKind = iota
	kindGetex
	kindMsetex
)

// setOpts is the parsed option list. expireArg aliases argv.
type setOpts struct {
	flags     setFlags
	expireArg []byte
	condArg   []byte
}

// parseSetOpts parses options left to right exactly as Redis's
// parseExtendedStringArgumentsOrReply does: a keyword is accepted unless a
// conflicting flag is already set, so the order matters (IFEQ a NX is accepted,
// NX IFEQ a is not); a repeated keyword of the same kind is accepted and the last
// value wins. It is pure. ok=false means "ERR syntax error".
func parseSetOpts(args [][]byte, kind cmdKind) (o setOpts, ok bool) {
	for j := 0; j < len(args); j++ {
		a := args[j]
		hasNext := j+1 < len(args)
		f := o.flags
		switch {
		case eqFold(a, "nx") && f&optXX == 0 && kind != kindGetex:
			o.flags |= optNX
		case eqFold(a, "xx") && f&optNX == 0 && kind != kindGetex:
			o.flags |= optXX
		case eqFold(a, "get") && kind == kindSet:
			o.flags |= optGet
		case eqFold(a, "keepttl") && f&(optPersist|optExpire) == 0 && kind != kindGetex:
			o.flags |= optKeepTTL
		case eqFold(a, "persist") && kind == kindGetex && f&(optExpire|optKeepTTL) == 0:
			o.flags |= optPersist
		case eqFold(a, "ex") && hasNext && f&(optKeepTTL|optPersist|optExpire&^optEX) == 0:
			o.flags |= optEX
			o.expireArg = args[j+1]
			j++
		case eqFold(a, "px") && hasNext && f&(optKeepTTL|optPersist|optExpire&^optPX) == 0:
			o.flags |= optPX
			o.expireArg = args[j+1]
			j++
		case eqFold(a, "exat") && hasNext && f&(optKeepTTL|optPersist|optExpire&^optEXAT) == 0:
			o.flags |= optEXAT
			o.expireArg = args[j+1]
			j++
		case eqFold(a, "pxat") && hasNext && f&(optKeepTTL|optPersist|optExpire&^optPXAT) == 0:
			o.flags |= optPXAT
			o.expireArg = args[j+1]
			j++
		case kind == kindSet && hasNext && f&(optNX|optXX) == 0 && condFlag(a) != 0 &&
			f&(optCond&^condFlag(a)) == 0:
			o.flags |= condFlag(a)
			o.condArg = args[j+1]
			j++
		default:
			return o, false
		}
	}
	return o, true
}

func condFlag(a []byte) setFlags {
	switch {
	case eqFold(a, "ifeq"):
		return optIFEQ
	case eqFold(a, "ifne"):
		return optIFNE
	case eqFold(a, "ifdeq"):
		return optIFDEQ
	case eqFold(a, "ifdne"):
		return optIFDNE
	}
	return 0
}

// expireAt turns the parsed expire option into an absolute deadline (Unix ms), as
// Redis's getExpireMillisecondsOrReply does. errMsg is the error reply text when it
// fails; at is 0 when no expire option was given.
func (o *setOpts) expireAt(now int64, cmd string) (at int64, errMsg string) {
	if o.flags&optExpire == 0 {
		return 0, ""
	}
	return expireArgToAbs(o.expireArg, o.flags&(optEX|optEXAT) != 0, o.flags&(optEXAT|optPXAT) != 0, now, cmd)
}

// expireArgToAbs validates a TTL argument: an integer > 0 that, converted to ms and
// made absolute, does not overflow.
func expireArgToAbs(arg []byte, seconds, absolute bool, now int64, cmd string) (int64, string) {
	v, ok := resp.ParseInt(arg)
	if !ok {
		return 0, ErrNotInt.Text()
	}
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		return 0, ErrInvalidExpire(cmd)
	}
	if seconds {
		v *= 1000
	}
	if !absolute {
		if v > math.MaxInt64-now {
			return 0, ErrInvalidExpire(cmd)
		}
		v += now
	}
	return v, ""
}

// eqFold compares a with the lower-case ASCII word w, ignoring a's case.
func eqFold(a []byte, w string) bool {
	if len(a) != len(w) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}
