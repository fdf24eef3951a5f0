package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// bitmapCommands is the part of redis.io's "bitmap" group served so far: the bit
// accessors on strings (the rest lands with the data-types work).
func bitmapCommands() []*Spec {
	return []*Spec{
		{Name: "getbit", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Since: "2.2.0", Summary: "Returns a bit value by offset.", Run: getbitCmd},
		{Name: "setbit", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access update", Since: "2.2.0", Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", Run: setbitCmd},
	}
}

// parseBitOffset is Redis's getBitOffsetFromArgument for plain offsets: a
// non-negative integer whose byte lies within proto-max-bulk-len.
func parseBitOffset(c *Ctx, b []byte) (int64, bool) {
	v, ok := resp.ParseInt(b)
	if !ok || v < 0 || v>>3 >= c.Srv.ProtoMaxBulkLen() {
		c.Error("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return v, true
}

// setbitCmd: SETBIT key offset 0|1; replies with the previous bit. Bit 0 is the
// most significant bit of the first byte; the string grows with zero bytes.
func setbitCmd(c *Ctx) {
	off, ok := parseBitOffset(c, c.Argv[2])
	if !ok {
		return
	}
	arg := c.Argv[3]
	if len(arg) != 1 || (arg[0] != '0' && arg[0] != '1') {
		c.Error("ERR bit is not an integer or out of range")
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindString, true)
	if !ok {
		return
	}
	// dirty: the string was created or grew (lookupStringForBitCommand)
	dirty := e == nil
	if e == nil {
		e = c.DB.SetString(key, nil, false)
	}
	byteIdx := int(off >> 3)
	if byteIdx >= len(e.Str) {
		grown := make([]byte, byteIdx+1, max(byteIdx+1, 2*len(e.Str)))
		copy(grown, e.Str)
		e.Str = grown
		dirty = true
	}
	mask := byte(1) << (7 - uint(off&7))
	old := int64(0)
	if e.Str[byteIdx]&mask != 0 {
		old = 1
	}
	e.Enc = keyspace.EncRaw
	// a bit set to the value it has changes nothing: no signal, no event
	// (Redis 7.0+ setbitCommand)
	if on := int64(arg[0] - '0'); dirty || old != on {
		if on == 1 {
			e.Str[byteIdx] |= mask
		} else {
			e.Str[byteIdx] &^= mask
		}
		c.DB.Touch(key)
		c.Notify('$', "setbit", key)
		c.Dirty++
	}
	c.W.Int(old)
}

func getbitCmd(c *Ctx) {
	off, ok := parseBitOffset(c, c.Argv[2])
	if !ok {
		return
	}
	e, wt := lookupString(c, c.Argv[1])
	if wt {
		return
	}
	byteIdx := off >> 3
	if e == nil || byteIdx >= int64(len(e.Str)) {
		c.W.Int(0)
		return
	}
	if e.Str[byteIdx]&(1<<(7-uint(off&7))) != 0 {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}
