package command

import "github.com/hotkv/hotkv/internal/keyspace"

// hashCommands is the part of redis.io's "hash" group served so far (the rest
// lands with the data-types work).
func hashCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "hdel", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Since: "2.0.0", Summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", Run: hdelCmd},
		{Name: "hexists", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Since: "2.0.0", Summary: "Determines whether a field exists in a hash.", Run: hexistsCmd},
		{Name: "hget", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Since: "2.0.0", Summary: "Returns the value of a field in a hash.", Run: hgetCmd},
		{Name: "hgetall", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Since: "2.0.0", Summary: "Returns all fields and values in a hash.", Run: hgetallCmd},
		{Name: "hlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Since: "2.0.0", Summary: "Returns the number of fields in a hash.", Run: hlenCmd},
		{Name: "hset", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Since: "2.0.0", Summary: "Creates or modifies the value of a field in a hash.", Run: hsetCmd},
	}
}

func hsetCmd(c *Ctx) {
	if len(c.Argv)%2 != 0 {
		c.Error(ErrArity("hset"))
		return
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, true)
	if !ok {
		return
	}
	if e == nil {
		e = c.DB.SetObject(c.Argv[1], keyspace.KindHash, keyspace.NewHash())
	}
	h := e.Obj.(*keyspace.Hash)
	added := 0
	for i := 2; i < len(c.Argv); i += 2 {
		if h.Set(c.Argv[i], c.Argv[i+1]) {
			added++
		}
	}
	c.DB.Touch(c.Argv[1])
	c.Dirty += (len(c.Argv) - 2) / 2
	c.W.Int(int64(added))
}

func hgetCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	v, found := e.Obj.(*keyspace.Hash).Get(c.Argv[2])
	if !found {
		c.W.Null()
		return
	}
	c.W.Bulk(v)
}

func hexistsCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	if _, found := e.Obj.(*keyspace.Hash).Get(c.Argv[2]); found {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func hlenCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.Obj.(*keyspace.Hash).Len()))
}

func hgetallCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.MapLen(0)
		return
	}
	h := e.Obj.(*keyspace.Hash)
	c.W.MapLen(h.Len())
	h.Range(func(f string, v []byte) {
		c.W.BulkString(f)
		c.W.Bulk(v)
	})
}

func hdelCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindHash, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	h := e.Obj.(*keyspace.Hash)
	n := 0
	for _, f := range c.Argv[2:] {
		if h.Del(f) {
			n++
		}
	}
	if n > 0 {
		c.Dirty += n
		if h.Len() == 0 {
			c.DB.Delete(c.Argv[1])
		} else {
			c.DB.Touch(c.Argv[1])
		}
	}
	c.W.Int(int64(n))
}
