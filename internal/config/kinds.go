package config

import (
	"strconv"
	"strings"
)

// This file implements the generic kinds (bool, integer, enum, string) as
// config.c's boolConfigSet/Get/Rewrite, numericConfig*, enumConfig* and
// stringConfig*/sdsConfig* do. KindSpecial parameters delegate to their
// *special (special.go).

// defaultValue returns d's default value.
func (d *paramDef) defaultValue() *value {
	switch d.kind {
	case KindBool:
		return boolValue(d.defN != 0)
	case KindInt:
		return &value{n: d.defN, s: d.formatInt(d.defN)}
	case KindEnum:
		return &value{n: d.defN, s: d.enumName(d.defN)}
	case KindString:
		if d.flags&fNullDefault != 0 {
			return &value{null: true}
		}
		return &value{s: d.defS}
	default:
		return d.sp.def()
	}
}

func boolValue(b bool) *value {
	if b {
		return &value{n: 1, s: "yes"}
	}
	return &value{n: 0, s: "no"}
}

// parse computes the value args give d, starting from cur. args holds one
// word except for fMulti parameters. It returns the new value, whether it
// differs from cur, or Redis's error text (without the "CONFIG SET failed"
// framing).
func (d *paramDef) parse(cur *value, args []string, ctx *setCtx) (*value, bool, string) {
	if d.kind == KindSpecial {
		return d.sp.set(cur, args, ctx)
	}
	if d.kind == KindString && d.flags&fMulti != 0 {
		// a multi-word string (shutdown-on-sig*): its words, checked by
		// its own validator, none included (a directive with no value)
		args = []string{strings.Join(args, " ")}
	}
	arg := args[0]
	switch d.kind {
	case KindBool:
		var yes bool
		switch a := cstr(arg); {
		case equalFoldASCII(a, "yes"):
			yes = true
		case equalFoldASCII(a, "no"):
		default:
			return nil, false, "argument must be 'yes' or 'no'"
		}
		n := int64(0)
		if yes {
			n = 1
		}
		if d.validN != nil {
			if e := d.validN(n); e != "" {
				return nil, false, e
			}
		}
		return boolValue(yes), n != cur.n, ""
	case KindInt:
		n, e := d.parseInt(arg)
		if e != "" {
			return nil, false, e
		}
		return &value{n: n, s: d.formatInt(n)}, n != cur.n, ""
	case KindEnum:
		a := cstr(arg)
		for _, en := range d.enum {
			if equalFoldASCII(a, en.name) {
				if d.validN != nil {
					if e := d.validN(en.val); e != "" {
						return nil, false, e
					}
				}
				return &value{n: en.val, s: d.enumName(en.val)}, en.val != cur.n, ""
			}
		}
		return nil, false, d.enumError()
	default: // KindString
		if d.flags&fBinary == 0 {
			arg = cstr(arg)
		}
		if d.validS != nil {
			if e := d.validS(arg); e != "" {
				return nil, false, e
			}
		}
		if d.normS != nil {
			arg = d.normS(arg)
		}
		nv := &value{s: arg}
		if d.flags&fNullable != 0 && arg == "" {
			nv.null = true
		}
		return nv, nv.null != cur.null || nv.s != cur.s, ""
	}
}

// parseInt is numericParseString, numericBoundaryCheck, the optional
// validator and (for hz) the clamp that Redis applies right after.
func (d *paramDef) parseInt(s string) (int64, string) {
	n, ok := int64(0), false
	if d.flags&fMemory != 0 {
		if u, good := memtoull(s); good {
			n, ok = int64(u), true // stored as a C long long, as Redis does
		}
	}
	if !ok && d.flags&fPercent != 0 && len(s) > 1 && s[len(s)-1] == '%' {
		if v, good := string2ll(s[:len(s)-1]); good && v >= 0 {
			n, ok = -v, true // percentages are stored negated
		}
	}
	if !ok && d.flags&fOctal != 0 {
		cs := cstr(s)
		if v, end, overflow := cStrtoll(cs, 8); !overflow && end == len(cs) {
			n, ok = v, true
		}
	}
	if !ok && d.flags&(fMemory|fPercent|fOctal) == 0 {
		n, ok = string2ll(s)
	}
	if !ok {
		switch {
		case d.flags&fMemory != 0 && d.flags&fPercent != 0:
			return 0, "argument must be a memory or percent value"
		case d.flags&fMemory != 0:
			return 0, "argument must be a memory value"
		case d.flags&fOctal != 0:
			return 0, "argument couldn't be parsed as an octal number"
		}
		return 0, "argument couldn't be parsed into an integer"
	}
	if e := d.checkBounds(n); e != "" {
		return 0, e
	}
	if d.validN != nil {
		if e := d.validN(n); e != "" {
			return 0, e
		}
	}
	if d.clamp != nil {
		n = d.clamp(n)
	}
	return n, ""
}

// checkBounds is numericBoundaryCheck, messages included.
func (d *paramDef) checkBounds(n int64) string {
	if d.flags&fUnsigned != 0 {
		u, lo, hi := uint64(n), uint64(d.lo), uint64(d.hi) // C casts
		if u > hi || u < lo {
			base := 10
			if d.flags&fOctal != 0 {
				base = 8
			}
			return "argument must be between " + strconv.FormatUint(lo, base) +
				" and " + strconv.FormatUint(hi, base) + " inclusive"
		}
		return ""
	}
	if d.flags&fPercent != 0 && n < 0 {
		if n < d.lo {
			return "percentage argument must be less or equal to " + strconv.FormatInt(-d.lo, 10)
		}
		return ""
	}
	if n > d.hi || n < d.lo {
		return "argument must be between " + strconv.FormatInt(d.lo, 10) +
			" and " + strconv.FormatInt(d.hi, 10) + " inclusive"
	}
	return ""
}

// formatInt is numericConfigGet: "N%" for a percentage, unsigned for memory
// values, base 8 for octal ones.
func (d *paramDef) formatInt(n int64) string {
	switch {
	case d.flags&fPercent != 0 && n < 0:
		return strconv.FormatInt(-n, 10) + "%"
	case d.flags&fMemory != 0:
		return strconv.FormatUint(uint64(n), 10) // ull2string
	case d.flags&fOctal != 0:
		return strconv.FormatUint(uint64(n), 8) // %llo
	}
	return strconv.FormatInt(n, 10)
}

// enumName is configEnumGetNameOrUnknown.
func (d *paramDef) enumName(v int64) string {
	for _, en := range d.enum {
		if en.val == v {
			return en.name
		}
	}
	return "unknown"
}

// enumError is enumConfigSet's message, cut to Redis's 255-byte buffer.
func (d *paramDef) enumError() string {
	names := make([]string, len(d.enum))
	for i, en := range d.enum {
		names[i] = en.name
	}
	msg := "argument(s) must be one of the following: " + strings.Join(names, ", ")
	if len(msg) > 255 {
		msg = msg[:255]
	}
	return msg
}

// rewrite writes d's line(s) for CONFIG REWRITE, as the kind's rewrite
// function in config.c does: a line is forced (appended when the file lacks
// it) when the value differs from the default.
func (d *paramDef) rewrite(v *value, st *rewriteState) {
	name := d.name
	switch d.kind {
	case KindBool, KindEnum:
		st.rewriteLine(name, name+" "+v.s, v.n != d.defN)
	case KindInt:
		var text string
		switch {
		case d.flags&fPercent != 0 && v.n < 0:
			text = strconv.FormatInt(-v.n, 10) + "%"
		case d.flags&fMemory != 0:
			text = formatMemory(uint64(v.n)) // see formatMemory
		default:
			text = d.formatInt(v.n)
		}
		st.rewriteLine(name, name+" "+text, v.n != d.defN)
	case KindString:
		if v.null {
			// A NULL string must be absent from the file to stay NULL.
			st.markProcessed(name)
			return
		}
		force := d.flags&fNullDefault != 0 || v.s != d.defS
		st.rewriteLine(name, name+" "+repr(v.s), force)
	default:
		d.sp.rewrite(name, v, st)
	}
}
