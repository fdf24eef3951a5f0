package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb"
	"github.com/hotkv/hotkv/internal/resp"
)

// DUMP and RESTORE (Redis's cluster.c): a value in Redis's RDB serialisation
// (internal/rdb), byte-compatible with Redis's payloads.

// Persistence is the RDB machinery the server provides (DUMP's compression,
// RESTORE's checksum switch, DEBUG RELOAD, SAVE).
type Persistence interface {
	// RDBCompression is rdbcompression.
	RDBCompression() bool
	// SkipChecksum is DEBUG SET-SKIP-CHECKSUM-VALIDATION's state.
	SkipChecksum() bool
	SetSkipChecksum(on bool)
	// DebugReload is DEBUG RELOAD: unless !save, write the dataset to the
	// RDB file (dir/dbfilename); unless !flush, empty the databases and the
	// function libraries; then load the file (merge: its keys and libraries
	// replace existing ones). errText is the error reply, "" on success.
	DebugReload(save, flush, merge bool) (errText string)
	// Save is SAVE: errText is the error reply, "" for +OK.
	Save() (errText string)
	// BGSave is BGSAVE [SCHEDULE]; inExec: called inside EXEC. status is the
	// status reply, errText the error reply.
	BGSave(schedule, inExec bool) (status, errText string)
	// Loading reports whether the snapshot is loading at start-up.
	Loading() bool
	// FlushAllSave is FLUSHALL's persistence part: kill a BGSAVE in progress
	// and, with save points configured, save the empty dataset (saved).
	FlushAllSave() (saved bool)
}

func serializeCommands() []*Spec {
	return []*Spec{
		{Name: "dump", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: []string{"nondeterministic_output"}, Run: dumpCmd},
		{Name: "restore", Arity: -4, Flags: Write | DenyOOM, ACL: []string{"@keyspace", "@write", "@slow", "@dangerous"}, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "OW update", Run: restoreCmd},
	}
}

// dumpCmd: DUMP key.
func dumpCmd(c *Ctx) {
	e := c.DB.LookupRead(c.Argv[1], c.Client.NoTouch)
	if e == nil {
		c.W.Null()
		return
	}
	c.W.Bulk(rdb.Dump(e, c.Srv.Persistence().RDBCompression()))
}

var wAbsTTL = []byte("ABSTTL")

// restoreCmd: RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency], checked in Redis's order: options,
// an existing key (BUSYKEY), the TTL, the payload's footer, its contents.
func restoreCmd(c *Ctx) {
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(c.Argv); j++ {
		more := len(c.Argv) - j - 1
		switch a := c.Argv[j]; {
		case eqFold(a, "replace"):
			replace = true
		case eqFold(a, "absttl"):
			absTTL = true
		case eqFold(a, "idletime") && more >= 1 && freq == -1:
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				c.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case eqFold(a, "freq") && more >= 1 && idle == -1:
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 || v > 255 {
				c.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	key := c.Argv[1]
	old := c.DB.LookupWrite(key)
	if old != nil && !replace {
		c.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if ttl < 0 {
		c.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	p := c.Argv[3]
	per := c.Srv.Persistence()
	if rdb.VerifyPayload(p, per.SkipChecksum()) != nil {
		c.Error("ERR DUMP payload version or checksum are wrong")
		return
	}
	v, err := rdb.DecodePayload(p, c.KS)
	if err != nil {
		c.Error("ERR Bad data format")
		return
	}
	var oldKind keyspace.Kind
	deleted := false
	if replace && old != nil {
		oldKind = old.Kind
		deleted = c.DB.Delete(key)
	}
	if ttl != 0 && !absTTL {
		ttl += c.Now
	}
	if ttl != 0 && ttl <= c.Now {
		// checkAlreadyExpired: the key is not created (a replaced one is
		// gone); Redis counts it as an expired key
		c.KS.Stats.ExpiredKeys++
		if deleted {
			c.Notify('g', "del", key)
			c.Dirty++
			propagateDel(c, key, configYes(c, "lazyfree-lazy-server-del"))
		}
		c.W.SimpleString("OK")
		return
	}
	if c.Prop != nil && ttl != 0 && !absTTL {
		// a relative TTL is propagated as an absolute one (restoreCommand:
		// argv[2] rewritten, ABSTTL appended)
		var buf [8][]byte
		argv := append(buf[:0], c.Argv...)
		argv[2] = c.PropInt(ttl)
		argv = append(argv, wAbsTTL)
		c.PropagateAs(argv...)
	}
	ent := v.Entry()
	ent.SetAccess(c.KS.NewAccess())
	e := c.DB.Insert(key, ent, ttl)
	switch lfu := c.Srv.LFU(); { // objectSetLRUOrLFU
	case lfu && freq >= 0:
		c.KS.SetFreq(e, freq)
	case !lfu && idle >= 0:
		c.KS.SetIdle(e, idle)
	}
	c.Notify('g', "restore", key)
	if deleted {
		c.Notify('o', "overwritten", key)
		if oldKind != v.Kind {
			c.Notify('c', "type_changed", key)
		}
	}
	c.Dirty++
	c.W.SimpleString("OK")
}

// atoi is C's atoi: optional blanks and sign, then digits up to the first
// other byte; no digits is 0.
func atoi(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var v int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}
