package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// listCommands is the part of redis.io's "list" group served so far (the rest
// lands with the data-types work).
func listCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "lindex", Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Since: "1.0.0", Summary: "Returns an element from a list by its index.", Run: lindexCmd},
		{Name: "llen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Since: "1.0.0", Summary: "Returns the length of a list.", Run: llenCmd},
		{Name: "lpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Since: "1.0.0", Summary: "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", Run: lpopCmd},
		{Name: "lpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Since: "1.0.0", Summary: "Prepends one or more elements to a list. Creates the key if it doesn't exist.", Run: lpushCmd},
		{Name: "lrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Since: "1.0.0", Summary: "Returns a range of elements from a list.", Run: lrangeCmd},
		{Name: "rpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW access delete", Since: "1.0.0", Summary: "Returns and removes the last elements of the list. Deletes the list if the last element was popped.", Run: rpopCmd},
		{Name: "rpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Since: "1.0.0", Summary: "Appends one or more elements to a list. Creates the key if it doesn't exist.", Run: rpushCmd},
	}
}

// lookupKind returns the entry of key if it holds kind; nil with no reply when
// missing; nil after WRONGTYPE otherwise.
func lookupKind(c *Ctx, key []byte, kind keyspace.Kind, write bool) (*keyspace.Entry, bool) {
	var e *keyspace.Entry
	if write {
		e = c.DB.LookupWrite(key)
	} else {
		e = c.DB.LookupRead(key, c.Client.NoTouch)
	}
	if e != nil && e.Kind != kind {
		c.Err(ErrWrongType)
		return nil, false
	}
	return e, true
}

func lpushCmd(c *Ctx) { pushGeneric(c, true) }
func rpushCmd(c *Ctx) { pushGeneric(c, false) }

func pushGeneric(c *Ctx, front bool) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		e = c.DB.SetObject(c.Argv[1], keyspace.KindList, &keyspace.List{})
	}
	l := e.Obj.(*keyspace.List)
	for _, v := range c.Argv[2:] {
		if front {
			l.PushFront(v)
		} else {
			l.PushBack(v)
		}
	}
	c.DB.Touch(c.Argv[1])
	c.Dirty += len(c.Argv) - 2
	c.W.Int(int64(l.Len()))
}

func lpopCmd(c *Ctx) { popGeneric(c, true) }
func rpopCmd(c *Ctx) { popGeneric(c, false) }

func popGeneric(c *Ctx, front bool) {
	if len(c.Argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	count, hasCount := int64(1), len(c.Argv) == 3
	if hasCount {
		v, ok := resp.ParseInt(c.Argv[2])
		if !ok || v < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		count = v
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, true)
	if !ok {
		return
	}
	if e == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	l := e.Obj.(*keyspace.List)
	pop := func() []byte {
		if front {
			return l.PopFront()
		}
		return l.PopBack()
	}
	if !hasCount {
		c.W.Bulk(pop())
	} else {
		n := min(count, int64(l.Len()))
		c.W.ArrayLen(int(n))
		for i := int64(0); i < n; i++ {
			c.W.Bulk(pop())
		}
		if n == 0 {
			return
		}
	}
	c.Dirty++
	if l.Len() == 0 {
		c.DB.Delete(c.Argv[1])
	} else {
		c.DB.Touch(c.Argv[1])
	}
}

func llenCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.Obj.(*keyspace.List).Len()))
}

func lindexCmd(c *Ctx) {
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	i, iok := resp.ParseInt(c.Argv[2])
	if !iok {
		c.Err(ErrNotInt)
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	l := e.Obj.(*keyspace.List)
	n := int64(l.Len())
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		c.W.Null()
		return
	}
	c.W.Bulk(l.Index(int(i)))
}

func lrangeCmd(c *Ctx) {
	start, ok1 := resp.ParseInt(c.Argv[2])
	end, ok2 := resp.ParseInt(c.Argv[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	e, ok := lookupKind(c, c.Argv[1], keyspace.KindList, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.ArrayLen(0)
		return
	}
	l := e.Obj.(*keyspace.List)
	n := int64(l.Len())
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		c.W.ArrayLen(0)
		return
	}
	if end >= n {
		end = n - 1
	}
	c.W.ArrayLen(int(end - start + 1))
	for i := start; i <= end; i++ {
		c.W.Bulk(l.Index(int(i)))
	}
}
