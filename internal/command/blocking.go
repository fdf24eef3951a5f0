package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// bzpopGeneric: BZPOPMIN|BZPOPMAX key [key ...] timeout.
func bzpopGeneric(c *Ctx, max bool) {
	timeout, ok := parseTimeout(c, c.Argv[len(c.Argv)-1])
	if !ok {
		return
	}
	keys := c.Argv[1 : len(c.Argv)-1]
	found, errored := firstZSet(c, keys)
	if errored {
		return
	}
	if found {
		zpopGeneric(c, keys, max, true, -1, false, true)
		return
	}
	if c.Block(keyspace.KindZSet, keys, timeout, false) {
		return
	}
	c.W.NullArray()
}

func bzpopminCmd(c *Ctx) { bzpopGeneric(c, false) }
func bzpopmaxCmd(c *Ctx) { bzpopGeneric(c, true) }

// bzmpopCmd: BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].
func bzmpopCmd(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Argv[1])
	if !ok {
		return
	}
	keys, max, count, ok := parseZmpop(c, 2)
	if !ok {
		return
	}
	found, errored := firstZSet(c, keys)
	if errored {
		return
	}
	if found {
		zpopGeneric(c, keys, max, true, count, true, true)
		return
	}
	if c.Block(keyspace.KindZSet, keys, timeout, false) {
		return
	}
	c.W.NullArray()
}

// firstZSet reports whether one of keys holds a sorted set (WRONGTYPE, replied,
// for a key of another type met first).
func firstZSet(c *Ctx, keys [][]byte) (found, errored bool) {
	for _, k := range keys {
		z, ok := lookupZSet(c, k, true)
		if !ok {
			return false, true
		}
		if z != nil {
			return true, false
		}
	}
	return false, false
}

// clientUnblock: CLIENT UNBLOCK client-id [TIMEOUT|ERROR].
func clientUnblock(c *Ctx) {
	id, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	withError := false
	if len(c.Argv) == 4 {
		switch {
		case eqFold(c.Argv[3], "timeout"):
		case eqFold(c.Argv[3], "error"):
			withError = true
		default:
			c.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(c.Argv) > 4 {
		c.Err(ErrSyntax)
		return
	}
	c.W.Int(int64(c.Srv.UnblockClient(id, withError)))
}

// bzmpopKeys: BZMPOP timeout numkeys key [key ...] ...
func bzmpopKeys(argv [][]byte) []int {
	if len(argv) < 3 {
		return nil
	}
	n, ok := resp.ParseInt(argv[2])
	if !ok || n < 1 || n > int64(len(argv)-3) {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 3 + i
	}
	return out
}
