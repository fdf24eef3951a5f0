package command

import (
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// Consumer groups (XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM) and XINFO.

func xgroupSubcommands() []*Spec {
	const w, d = Write, DenyOOM
	return []*Spec{
		{Name: "create", Arity: -5, Flags: w | d, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW insert", Run: xgroupCmd},
		{Name: "createconsumer", Arity: 5, Flags: w | d, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW insert", Run: xgroupCmd},
		{Name: "delconsumer", Arity: 5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW delete", Run: xgroupCmd},
		{Name: "destroy", Arity: 4, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW delete", Run: xgroupCmd},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: xgroupHelp},
		{Name: "setid", Arity: -5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW update", Run: xgroupCmd},
	}
}

func xinfoSubcommands() []*Spec {
	const r = ReadOnly
	return []*Spec{
		{Name: "consumers", Arity: 4, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: xinfoCmd},
		{Name: "groups", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO access", Run: xinfoCmd},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: xinfoHelp},
		{Name: "stream", Arity: -3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO access", Run: xinfoCmd},
	}
}

func xgroupHelp(c *Ctx) {
	writeHelp(c, "XGROUP",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.")
}

func xinfoHelp(c *Ctx) {
	writeHelp(c, "XINFO",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.")
}

func subcommandSyntaxError(c *Ctx, cmd string) {
	c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try " + cmd + " HELP.")
}

func errNoGroupForKey(group, key []byte) string {
	return "NOGROUP No such consumer group '" + sanitize(group) + "' for key name '" + sanitize(key) + "'"
}

func errNoKeyOrGroup(key, group []byte) string {
	return "NOGROUP No such key '" + sanitize(key) + "' or consumer group '" + sanitize(group) + "'"
}

// lookupStreamGroup finds the consumer group of the stream at key for
// XPENDING, XCLAIM and XAUTOCLAIM: WRONGTYPE for another type, NOGROUP (no
// such key or group) when either is missing; ok false when it replied.
func lookupStreamGroup(c *Ctx, key, group []byte) (*keyspace.Stream, *keyspace.StreamCG, bool) {
	s, ok := lookupStream(c, key, false)
	if s != nil && c.Spec.Flags&Write != 0 {
		// XCLAIM and XAUTOCLAIM change the group without signalling a
		// modification (as Redis): snapshots take the stream first
		c.DB.Changing(key)
	}
	if !ok {
		return nil, nil, false
	}
	var cg *keyspace.StreamCG
	if s != nil {
		cg = s.LookupCG(group)
	}
	if cg == nil {
		c.Error(errNoKeyOrGroup(key, group))
		return nil, nil, false
	}
	return s, cg, true
}

// xgroupCmd is xgroupCommand for CREATE, SETID, DESTROY, CREATECONSUMER and
// DELCONSUMER.
func xgroupCmd(c *Ctx) {
	argv := c.Argv
	opt := argv[1]
	create, setid := eqFold(opt, "create"), eqFold(opt, "setid")
	mkstream := false
	entriesRead := int64(-1)
	for i := 5; i < len(argv); {
		switch {
		case create && eqFold(argv[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && eqFold(argv[i], "entriesread") && i+1 < len(argv):
			v, ok := resp.ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 && v != -1 {
				c.Error("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = v
			i += 2
		default:
			subcommandSyntaxError(c, "XGROUP")
			return
		}
	}
	key, grp := argv[2], argv[3]
	s, ok := lookupStream(c, key, true)
	if !ok {
		return
	}
	var cg *keyspace.StreamCG
	if !mkstream {
		if s == nil {
			c.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		if cg = s.LookupCG(grp); cg == nil && (setid || eqFold(opt, "createconsumer") || eqFold(opt, "delconsumer")) {
			c.Error(errNoGroupForKey(grp, key))
			return
		}
	}
	switch {
	case create && len(argv) >= 5 && len(argv) <= 8:
		var id keyspace.StreamID
		if string(argv[4]) == "$" {
			if s != nil {
				id = s.LastID
			}
		} else if id, ok = streamIDArg(c, argv[4], true); !ok {
			return
		}
		if s == nil {
			s = keyspace.NewStream(c.KS.Limits.StreamLimits())
			c.DB.SetObject(key, keyspace.KindStream, s)
			c.DB.Touch(key)
		}
		if entriesRead > int64(s.EntriesAdded) {
			entriesRead = int64(s.EntriesAdded) // a group cannot have read more than was added
		}
		if s.CreateCG(grp, id, entriesRead) == nil {
			c.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
		c.W.SimpleString("OK")
		c.Dirty++
		c.Notify('t', "xgroup-create", key)
	case setid && (len(argv) == 5 || len(argv) == 7):
		var id keyspace.StreamID
		if string(argv[4]) == "$" {
			id = s.LastID
		} else if id, ok = streamIDArg(c, argv[4], false); !ok {
			return
		}
		if entriesRead > int64(s.EntriesAdded) {
			entriesRead = int64(s.EntriesAdded)
		}
		cg.LastID = id
		cg.EntriesRead = entriesRead
		c.W.SimpleString("OK")
		c.Dirty++
		c.Notify('t', "xgroup-setid", key)
	case eqFold(opt, "destroy") && len(argv) == 4:
		if cg == nil {
			c.W.Int(0)
			return
		}
		s.DestroyCG(grp)
		c.W.Int(1)
		c.Dirty++
		c.Notify('t', "xgroup-destroy", key)
		c.Srv.SignalKeyReady(c.DB.ID, key) // XREADGROUP clients fail with NOGROUP
	case eqFold(opt, "createconsumer") && len(argv) == 5:
		if cg.CreateConsumer(argv[4], c.Now) == nil {
			c.W.Int(0)
			return
		}
		c.Dirty++
		c.Notify('t', "xgroup-createconsumer", key)
		c.W.Int(1)
	case eqFold(opt, "delconsumer") && len(argv) == 5:
		var pending int64
		if cons := cg.LookupConsumer(argv[4]); cons != nil {
			pending = int64(cons.PEL.Len())
			cg.DeleteConsumer(cons)
			c.Dirty++
			c.Notify('t', "xgroup-delconsumer", key)
		}
		c.W.Int(pending)
	default:
		subcommandSyntaxError(c, "XGROUP")
	}
}

// xackCmd: XACK key group id [id ...]
func xackCmd(c *Ctx) {
	s, ok := lookupStream(c, c.Argv[1], false)
	if s != nil {
		c.DB.Changing(c.Argv[1]) // the PEL changes: snapshots take the stream first
	}
	if !ok {
		return
	}
	var cg *keyspace.StreamCG
	if s != nil {
		cg = s.LookupCG(c.Argv[2])
	}
	if cg == nil {
		c.W.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(c.Argv)-3)
	for _, a := range c.Argv[3:] {
		id, ok := streamIDArg(c, a, true)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := 0
	for _, id := range ids {
		if cg.Ack(id) {
			n++
			c.Dirty++
		}
	}
	c.W.Int(int64(n))
}

// xpendingCmd: XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
func xpendingCmd(c *Ctx) {
	argv := c.Argv
	justinfo := len(argv) == 3
	if len(argv) != 3 && (len(argv) < 6 || len(argv) > 9) {
		c.Err(ErrSyntax)
		return
	}
	var start, end keyspace.StreamID
	var count, minidle int64
	var consumerName []byte
	if len(argv) >= 6 {
		si := 3
		if eqFold(argv[3], "idle") {
			v, ok := resp.ParseInt(argv[4])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			minidle = v
			if len(argv) < 8 {
				c.Err(ErrSyntax)
				return
			}
			si += 2
		}
		v, ok := resp.ParseInt(argv[si+2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(v, 0)
		if start, ok = intervalID(c, argv[si], 0, true); !ok {
			return
		}
		if end, ok = intervalID(c, argv[si+1], math.MaxUint64, false); !ok {
			return
		}
		if si+3 < len(argv) {
			consumerName = argv[si+3]
		}
	}
	_, cg, ok := lookupStreamGroup(c, argv[1], argv[2])
	if !ok {
		return
	}
	if justinfo {
		c.W.ArrayLen(4)
		c.W.Int(int64(cg.PEL.Len()))
		if cg.PEL.Len() == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		replyStreamID(c, cg.PEL.First())
		replyStreamID(c, cg.PEL.Last())
		n := 0
		for _, cons := range cg.Consumers() {
			if cons.PEL.Len() > 0 {
				n++
			}
		}
		c.W.ArrayLen(n)
		for _, cons := range cg.Consumers() {
			if cons.PEL.Len() == 0 {
				continue
			}
			c.W.ArrayLen(2)
			c.W.BulkString(cons.Name)
			c.W.BulkInt(int64(cons.PEL.Len()))
		}
		return
	}
	pel := &cg.PEL
	if consumerName != nil {
		cons := cg.LookupConsumer(consumerName)
		if cons == nil {
			c.W.ArrayLen(0)
			return
		}
		pel = &cons.PEL
	}
	d := deferLen(c)
	n := 0
	pel.Ascend(start, func(nack *keyspace.StreamNACK) bool {
		if count == 0 || nack.ID.Cmp(end) > 0 {
			return false
		}
		if minidle != 0 && c.Now-nack.DeliveryTime < minidle {
			return true
		}
		n++
		count--
		c.W.ArrayLen(4)
		replyStreamID(c, nack.ID)
		c.W.BulkString(nack.Consumer.Name)
		c.W.Int(max(c.Now-nack.DeliveryTime, 0))
		c.W.Int(nack.DeliveryCount)
		return true
	})
	d.set(c, '*', n)
}

// claimTo moves nack to consumer (claiming it).
func claimTo(nack *keyspace.StreamNACK, consumer *keyspace.StreamConsumer) {
	if nack.Consumer != consumer {
		if nack.Consumer != nil {
			nack.Consumer.PEL.Remove(nack.ID)
		}
		consumer.PEL.Insert(nack)
		nack.Consumer = consumer
	}
}

// xclaimCmd: XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
// [TIME unix-time-ms] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
func xclaimCmd(c *Ctx) {
	argv := c.Argv
	s, cg, ok := lookupStreamGroup(c, argv[1], argv[2])
	if !ok {
		return
	}
	minidle, ok := resp.ParseInt(argv[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minidle = max(minidle, 0)
	var ids []keyspace.StreamID
	j := 5
	for ; j < len(argv); j++ {
		id, _, ok := parseStreamID(argv[j], 0, true, false)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.Now
	retry := int64(-1)
	delivery := int64(-1)
	force, justid := false, false
	var lastID keyspace.StreamID
	for ; j < len(argv); j++ {
		more := len(argv) - 1 - j
		o := argv[j]
		switch {
		case eqFold(o, "force"):
			force = true
		case eqFold(o, "justid"):
			justid = true
		case eqFold(o, "idle") && more > 0:
			j++
			v, ok := resp.ParseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = now - v
		case eqFold(o, "time") && more > 0:
			j++
			v, ok := resp.ParseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = v
		case eqFold(o, "retrycount") && more > 0:
			j++
			v, ok := resp.ParseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = v
		case eqFold(o, "lastid") && more > 0:
			j++
			if lastID, ok = streamIDArg(c, argv[j], true); !ok {
				return
			}
		default:
			c.Error("ERR Unrecognized XCLAIM option '" + sanitize(o) + "'")
			return
		}
	}
	propLast := false
	if lastID.Cmp(cg.LastID) > 0 {
		cg.LastID = lastID
		propLast = true
	}
	if delivery != -1 {
		if delivery < 0 || delivery > now {
			delivery = now
		}
	} else {
		delivery = now
	}
	consumer := cg.LookupConsumer(argv[3])
	if consumer == nil {
		consumer = cg.CreateConsumer(argv[3], now)
		c.Dirty++
		c.Notify('t', "xgroup-createconsumer", argv[1])
	}
	consumer.SeenTime = now
	d := deferLen(c)
	n := 0
	var sc streamScratch
	for _, id := range ids {
		nack := cg.PEL.Find(id)
		e, exists := s.Get(id)
		if !exists {
			if nack != nil {
				propLast = false
				c.Dirty++
				cg.Ack(id)
			}
			continue
		}
		if force && nack == nil {
			nack = &keyspace.StreamNACK{ID: id, DeliveryCount: 1}
			cg.Deliver(nack, now)
			cg.PEL.Insert(nack)
		}
		if nack == nil {
			continue
		}
		if nack.Consumer != nil && minidle != 0 && now-nack.DeliveryTime < minidle {
			continue
		}
		if nack.Consumer != consumer && nack.Consumer != nil {
			nack.Consumer.PEL.Remove(id)
		}
		cg.Deliver(nack, delivery)
		if retry >= 0 {
			nack.DeliveryCount = retry
		} else if !justid {
			nack.DeliveryCount++
		}
		if nack.Consumer != consumer {
			consumer.PEL.Insert(nack)
			nack.Consumer = consumer
		}
		if justid {
			replyStreamID(c, id)
		} else {
			replyEntry(c, e, &sc)
		}
		n++
		consumer.ActiveTime = now
		propLast = false
		c.Dirty++
	}
	if propLast {
		c.Dirty++
	}
	d.set(c, '*', n)
}

// xautoclaimCmd: XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func xautoclaimCmd(c *Ctx) {
	argv := c.Argv
	minidle, ok := resp.ParseInt(argv[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minidle = max(minidle, 0)
	start, ok := intervalID(c, argv[5], 0, true)
	if !ok {
		return
	}
	count := int64(100)
	justid := false
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case eqFold(argv[j], "count") && more > 0:
			v, ok := resp.ParseInt(argv[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case eqFold(argv[j], "justid"):
			justid = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	s, cg, ok := lookupStreamGroup(c, argv[1], argv[2])
	if !ok {
		return
	}
	now := c.Now
	consumer := cg.LookupConsumer(argv[3])
	if consumer == nil {
		consumer = cg.CreateConsumer(argv[3], now)
		c.Dirty++
		c.Notify('t', "xgroup-createconsumer", argv[1])
	}
	consumer.SeenTime = now
	attempts := count * 10
	c.W.ArrayLen(3)
	// collect first (claiming changes the PEL being walked)
	var todo []*keyspace.StreamNACK
	var deleted []keyspace.StreamID
	next := keyspace.StreamID{}
	cur := start
	for attempts > 0 && count > 0 {
		var nack *keyspace.StreamNACK
		cg.PEL.Ascend(cur, func(n *keyspace.StreamNACK) bool { nack = n; return false })
		if nack == nil {
			break
		}
		attempts--
		id := nack.ID
		cur, _ = id.Incr()
		if !s.Exists(id) {
			c.Dirty++
			cg.Ack(id)
			deleted = append(deleted, id)
			count--
			continue
		}
		if minidle != 0 && now-nack.DeliveryTime < minidle {
			continue
		}
		claimTo(nack, consumer)
		cg.Deliver(nack, now)
		if !justid {
			nack.DeliveryCount++
		}
		todo = append(todo, nack)
		count--
		consumer.ActiveTime = now
		c.Dirty++
		if cur.IsZero() {
			break
		}
	}
	// the cursor: the next pending entry
	var after *keyspace.StreamNACK
	if !(cur.IsZero() && len(todo)+len(deleted) > 0) {
		cg.PEL.Ascend(cur, func(n *keyspace.StreamNACK) bool { after = n; return false })
	}
	if after != nil {
		next = after.ID
	}
	replyStreamID(c, next)
	c.W.ArrayLen(len(todo))
	var sc streamScratch
	for _, nack := range todo {
		if justid {
			replyStreamID(c, nack.ID)
		} else if e, ok := s.Get(nack.ID); ok {
			replyEntry(c, e, &sc)
		}
	}
	c.W.ArrayLen(len(deleted))
	for _, id := range deleted {
		replyStreamID(c, id)
	}
}

// xinfoCmd is XINFO CONSUMERS, GROUPS and STREAM.
func xinfoCmd(c *Ctx) {
	argv := c.Argv
	key := argv[2]
	e, ok := lookupKind(c, key, keyspace.KindStream, false)
	if !ok {
		return
	}
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	s := e.Obj().(*keyspace.Stream)
	switch {
	case eqFold(argv[1], "consumers") && len(argv) == 4:
		cg := s.LookupCG(argv[3])
		if cg == nil {
			c.Error(errNoGroupForKey(argv[3], key))
			return
		}
		c.W.ArrayLen(len(cg.Consumers()))
		for _, cons := range cg.Consumers() {
			inactive := cons.ActiveTime
			if inactive != -1 {
				inactive = c.Now - cons.ActiveTime
			}
			idle := max(c.Now-cons.SeenTime, 0)
			c.W.MapLen(4)
			c.W.BulkString("name")
			c.W.BulkString(cons.Name)
			c.W.BulkString("pending")
			c.W.Int(int64(cons.PEL.Len()))
			c.W.BulkString("idle")
			c.W.Int(idle)
			c.W.BulkString("inactive")
			c.W.Int(inactive)
		}
	case eqFold(argv[1], "groups") && len(argv) == 3:
		c.W.ArrayLen(len(s.Groups()))
		for _, cg := range s.Groups() {
			c.W.MapLen(6)
			c.W.BulkString("name")
			c.W.BulkString(cg.Name)
			c.W.BulkString("consumers")
			c.W.Int(int64(len(cg.Consumers())))
			c.W.BulkString("pending")
			c.W.Int(int64(cg.PEL.Len()))
			c.W.BulkString("last-delivered-id")
			replyStreamID(c, cg.LastID)
			c.W.BulkString("entries-read")
			replyEntriesRead(c, cg)
			c.W.BulkString("lag")
			replyLag(c, s, cg)
		}
	case eqFold(argv[1], "stream"):
		xinfoStream(c, s)
	default:
		subcommandSyntaxError(c, "XINFO")
	}
}

func replyEntriesRead(c *Ctx, cg *keyspace.StreamCG) {
	if cg.EntriesRead != -1 {
		c.W.Int(cg.EntriesRead)
	} else {
		c.W.Null()
	}
}

func replyLag(c *Ctx, s *keyspace.Stream, cg *keyspace.StreamCG) {
	if lag, ok := s.Lag(cg); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

// xinfoStream: XINFO STREAM key [FULL [COUNT count]]
func xinfoStream(c *Ctx, s *keyspace.Stream) {
	opts := c.Argv[3:]
	full := len(opts) > 0
	count := int64(10)
	if full {
		if len(opts) != 1 && len(opts) != 3 || !eqFold(opts[0], "full") {
			subcommandSyntaxError(c, "XINFO")
			return
		}
		if len(opts) == 3 {
			if !eqFold(opts[1], "count") {
				subcommandSyntaxError(c, "XINFO")
				return
			}
			v, ok := resp.ParseInt(opts[2])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
	}
	if full {
		c.W.MapLen(15)
	} else {
		c.W.MapLen(16)
	}
	c.W.BulkString("length")
	c.W.Int(int64(s.Len()))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(s.NodeCount()))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(int64(s.RaxNodes()))
	c.W.BulkString("last-generated-id")
	replyStreamID(c, s.LastID)
	c.W.BulkString("max-deleted-entry-id")
	replyStreamID(c, s.MaxDeletedID)
	c.W.BulkString("entries-added")
	c.W.Int(int64(s.EntriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	replyStreamID(c, s.FirstID)
	c.W.BulkString("idmp-duration")
	c.W.Int(int64(s.IdmpDuration))
	c.W.BulkString("idmp-maxsize")
	c.W.Int(int64(s.IdmpMaxSize))
	c.W.BulkString("pids-tracked")
	c.W.Int(int64(s.IdmpProducers()))
	c.W.BulkString("iids-tracked")
	c.W.Int(int64(s.IdmpTracked()))
	c.W.BulkString("iids-added")
	c.W.Int(int64(s.IidsAdded))
	c.W.BulkString("iids-duplicates")
	c.W.Int(int64(s.IidsDuplicates))
	var sc streamScratch
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(len(s.Groups())))
		for _, rev := range []bool{false, true} {
			if rev {
				c.W.BulkString("last-entry")
			} else {
				c.W.BulkString("first-entry")
			}
			emitted := false
			s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, rev, func(e *keyspace.StreamEntry) bool {
				replyEntry(c, e, &sc)
				emitted = true
				return false
			})
			if !emitted {
				c.W.Null()
			}
		}
		return
	}
	c.W.BulkString("entries")
	replyRange(c, s, keyspace.StreamID{}, keyspace.MaxStreamID, count, false)
	c.W.BulkString("groups")
	c.W.ArrayLen(len(s.Groups()))
	for _, cg := range s.Groups() {
		c.W.MapLen(7)
		c.W.BulkString("name")
		c.W.BulkString(cg.Name)
		c.W.BulkString("last-delivered-id")
		replyStreamID(c, cg.LastID)
		c.W.BulkString("entries-read")
		replyEntriesRead(c, cg)
		c.W.BulkString("lag")
		replyLag(c, s, cg)
		c.W.BulkString("pel-count")
		c.W.Int(int64(cg.PEL.Len()))
		c.W.BulkString("pending")
		d := deferLen(c)
		n := int64(0)
		cg.PEL.Ascend(keyspace.StreamID{}, func(nack *keyspace.StreamNACK) bool {
			if count != 0 && n >= count {
				return false
			}
			c.W.ArrayLen(4)
			replyStreamID(c, nack.ID)
			c.W.BulkString(nack.Consumer.Name)
			c.W.Int(nack.DeliveryTime)
			c.W.Int(nack.DeliveryCount)
			n++
			return true
		})
		d.set(c, '*', int(n))
		c.W.BulkString("consumers")
		c.W.ArrayLen(len(cg.Consumers()))
		for _, cons := range cg.Consumers() {
			c.W.MapLen(5)
			c.W.BulkString("name")
			c.W.BulkString(cons.Name)
			c.W.BulkString("seen-time")
			c.W.Int(cons.SeenTime)
			c.W.BulkString("active-time")
			c.W.Int(cons.ActiveTime)
			c.W.BulkString("pel-count")
			c.W.Int(int64(cons.PEL.Len()))
			c.W.BulkString("pending")
			d := deferLen(c)
			n := int64(0)
			cons.PEL.Ascend(keyspace.StreamID{}, func(nack *keyspace.StreamNACK) bool {
				if count != 0 && n >= count {
					return false
				}
				c.W.ArrayLen(3)
				replyStreamID(c, nack.ID)
				c.W.Int(nack.DeliveryTime)
				c.W.Int(nack.DeliveryCount)
				n++
				return true
			})
			d.set(c, '*', int(n))
		}
	}
}

// parseDeleteArgs is streamParseAckDelArgsOrReply: [KEEPREF|DELREF|ACKED]
// IDS numids id... from argv[from]; it returns the policy and where the IDs
// are. The IDs themselves are parsed after the key and group are looked up
// (parseDeleteIDs), as Redis does.
func parseDeleteArgs(c *Ctx, from int) (policy, start, num int, ok bool) {
	argv := c.Argv
	policySet := false
	start = -1
	for j := from; j < len(argv); {
		if p, isP := parsePolicy(argv[j]); isP && !policySet {
			policy, policySet = p, true
			j++
			continue
		}
		if eqFold(argv[j], "ids") && j+1 < len(argv) {
			n, ok := resp.ParseInt(argv[j+1])
			if !ok || n <= 0 {
				c.Error("ERR Number of IDs must be a positive integer")
				return 0, 0, 0, false
			}
			if n > int64(len(argv)-j-2) {
				c.Error("ERR The `numids` parameter must match the number of arguments")
				return 0, 0, 0, false
			}
			start, num = j+2, int(n)
			j += 2 + num
			continue
		}
		c.Err(ErrSyntax)
		return 0, 0, 0, false
	}
	if start < 0 {
		c.Error("ERR IDS option is required")
		return 0, 0, 0, false
	}
	return policy, start, num, true
}

// parseDeleteIDs parses the num strict IDs at argv[start] (all or nothing).
func parseDeleteIDs(c *Ctx, start, num int) ([]keyspace.StreamID, bool) {
	ids := make([]keyspace.StreamID, num)
	for i := range ids {
		id, ok := streamIDArg(c, c.Argv[start+i], true)
		if !ok {
			return nil, false
		}
		ids[i] = id
	}
	return ids, true
}

// Per-ID results of XDELEX and XACKDEL.
const (
	delNoID       = -1 // no such entry (XDELEX), not pending in the group (XACKDEL)
	delDeleted    = 1  // deleted (XACKDEL: acknowledged and deleted)
	delReferenced = 2  // kept: a group still needs it (ACKED)
)

// xdelexCmd: XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id [id ...] (8.2)
func xdelexCmd(c *Ctx) {
	key := c.Argv[1]
	s, ok := lookupStream(c, key, true)
	if !ok {
		return
	}
	policy, start, num, ok := parseDeleteArgs(c, 2)
	if !ok {
		return
	}
	if s == nil {
		c.W.ArrayLen(num)
		for range num {
			c.W.Int(delNoID)
		}
		return
	}
	ids, ok := parseDeleteIDs(c, start, num)
	if !ok {
		return
	}
	c.W.ArrayLen(len(ids))
	deleted, changed := 0, false
	for _, id := range ids {
		res := delNoID
		can := true
		switch policy {
		case keyspace.DeleteAcked:
			can = !s.EntryReferenced(id)
		case keyspace.DeleteDelRef:
			if s.CleanupEntryRefs(id) {
				changed = true
				c.Dirty++
			}
		}
		if !can {
			res = delReferenced
		} else if s.DeleteOne(id) {
			res = delDeleted
			deleted++
		}
		c.W.Int(int64(res))
	}
	if deleted > 0 {
		c.Notify('t', "xdel", key)
		c.Dirty += deleted
	}
	if deleted > 0 || changed {
		c.DB.Touch(key)
	}
}

// xackdelCmd: XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id [id ...] (8.2)
func xackdelCmd(c *Ctx) {
	key := c.Argv[1]
	s, ok := lookupStream(c, key, true)
	if !ok {
		return
	}
	policy, start, num, ok := parseDeleteArgs(c, 3)
	if !ok {
		return
	}
	var cg *keyspace.StreamCG
	if s != nil {
		cg = s.LookupCG(c.Argv[2])
	}
	if cg == nil {
		c.W.ArrayLen(num)
		for range num {
			c.W.Int(delNoID)
		}
		return
	}
	ids, ok := parseDeleteIDs(c, start, num)
	if !ok {
		return
	}
	c.W.ArrayLen(len(ids))
	deleted := 0
	for _, id := range ids {
		res := delNoID
		if cg.Ack(id) {
			c.Dirty++
			switch {
			case policy == keyspace.DeleteAcked && s.EntryReferenced(id):
				res = delReferenced
			default:
				if policy == keyspace.DeleteDelRef {
					s.CleanupEntryRefs(id)
				}
				if s.DeleteOne(id) {
					deleted++
				}
				res = delDeleted
			}
		}
		c.W.Int(int64(res))
	}
	if deleted > 0 {
		c.DB.Touch(key)
		c.Notify('t', "xdel", key)
		c.Dirty += deleted
	}
}
