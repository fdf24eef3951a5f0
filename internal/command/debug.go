package command

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// debugCmd serves the DEBUG subcommands that Redis's own test suite and operators
// use and that make sense without persistence. Anything else is an error naming it.
func debugCmd(c *Ctx) {
	sub := strings.ToLower(string(c.Argv[1]))
	args := c.Argv[2:]
	switch sub {
	case "help":
		writeHelp(c, "DEBUG",
			"CHANGE-REPL-ID",
			"    Change the replication IDs of the instance.",
			"DIGEST",
			"    Output a hex signature representing the current DB content.",
			"DIGEST-VALUE <key> [<key> ...]",
			"    Output a hex signature of the values of all the specified keys.",
			"ERROR <string>",
			"    Return a Redis protocol error with <string> as message. Useful for clients",
			"    unit tests to simulate Redis errors.",
			"OBJECT <key>",
			"    Show low level info about the <key> and associated value.",
			"PROTOCOL <type>",
			"    Reply with a test value of the specified type. <type> can be: string,",
			"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
			"    true, false.",
			"RELOAD [option ...]",
			"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
			"    * MERGE: conflicting keys will be loaded from RDB.",
			"    * NOFLUSH: the existing database will not be removed before load, but",
			"      conflicting keys will generate an exception and kill the server.",
			"    * NOSAVE: the database will be loaded from an existing RDB file.",
			"    Examples:",
			"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
			"      the database.",
			"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
			"      existing RDB file.",
			"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
			"      file to the database.",
			"REPL-PAUSE <clear|after-fork|before-rdb-channel|on-streaming-repl-buf>",
			"    Pause the server's main process during various replication steps.",
			"SET-ACTIVE-EXPIRE <0|1>",
			"    Setting it to 0 disables expiring keys in background when they are not",
			"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
			"    default.",
			"SET-SKIP-CHECKSUM-VALIDATION <0|1>",
			"    Enables or disables checksum checks for RDB files and RESTORE's payload.",
			"SET-DISABLE-DENY-SCRIPTS <0|1>",
			"    Setting it to 1 allows lua scripts to run commands that are denied",
			"    in scripts (noscript), for tests.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
			"LOG <message>",
			"    Write <message> to the server log.",
			"POPULATE <count> [<prefix>] [<size>]",
			"    Create <count> string keys named key:<num>. If <prefix> is specified then",
			"    it is used instead of the 'key' prefix. These are not propagated to",
			"    replicas.",
			"REPLY-COPY-AVOIDANCE <0|1>",
			"    Enable/disable reply copy avoidance optimization.",
		)
	case "set-active-expire":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		c.Srv.SetActiveExpire(string(args[0]) != "0")
		c.W.SimpleString("OK")
	case "set-disable-deny-scripts":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		c.Srv.SetDisableDenyScripts(string(args[0]) != "0")
		c.W.SimpleString("OK")
	case "sleep":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		f, _ := strconv.ParseFloat(string(args[0]), 64) // strtod: junk is 0
		if f < 0 {
			f = 0
		}
		sleepFor(time.Duration(f * float64(time.Second)))
		c.W.SimpleString("OK")
	case "digest":
		if len(args) != 0 {
			debugUnknown(c)
			return
		}
		debugDigest(c)
	case "error":
		// the string as the whole error line, its code included (no "ERR "
		// added), newlines turned to spaces; written as Redis writes it
		// (addReplySds): not counted in errorstats
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		line := append([]byte{'-'}, args[0]...)
		for i, b := range line {
			if b == '\r' || b == '\n' {
				line[i] = ' '
			}
		}
		c.W.Buf = append(append(c.W.Buf, line...), '\r', '\n')
	case "digest-value":
		debugDigestValue(c, args)
	case "aof-flush-sleep":
		a := aofOf(c)
		if a == nil || len(args) != 1 {
			debugUnknown(c)
			return
		}
		a.SetAOFFlushSleep(int64(atoi(args[0])))
		c.W.SimpleString("OK")
	case "loadaof":
		a := aofOf(c)
		if a == nil {
			c.Error("ERR the append only file is not available")
			return
		}
		if errText := a.DebugLoadAOF(c.Client); errText != "" {
			c.Error(errText)
			return
		}
		c.W.SimpleString("OK")
	case "reload":
		save, flush, merge := true, true, false
		for _, a := range args {
			switch {
			case eqFold(a, "merge"):
				merge = true
			case eqFold(a, "noflush"):
				flush = false
			case eqFold(a, "nosave"):
				save = false
			default:
				c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
				return
			}
		}
		if errText := c.Srv.Persistence().DebugReload(save, flush, merge); errText != "" {
			c.Error(errText)
			return
		}
		c.W.SimpleString("OK")
	case "set-skip-checksum-validation":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		c.Srv.Persistence().SetSkipChecksum(atoi(args[0]) != 0)
		c.W.SimpleString("OK")
	case "log":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		c.Srv.Warn("DEBUG LOG: " + string(args[0]))
		c.W.SimpleString("OK")
	case "populate":
		if len(args) < 1 || len(args) > 3 {
			debugUnknown(c)
			return
		}
		debugPopulate(c, args)
	case "reply-copy-avoidance":
		// a long string reply refers to the value instead of copying it
		// (resp.Writer.BulkRef); off, every reply is copied and counts in
		// the client's output buffer
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		c.Srv.SetCopyAvoidance(atoi(args[0]) != 0)
		c.W.SimpleString("OK")
	case "repl-pause":
		r := replication(c)
		if len(args) != 1 || r == nil || !r.ReplPause(strings.ToLower(string(args[0]))) {
			debugUnknown(c)
			return
		}
		c.W.SimpleString("OK")
	case "change-repl-id":
		if r := replication(c); r != nil {
			r.ChangeReplID()
		}
		c.W.SimpleString("OK")
	case "replicate":
		if len(args) < 1 {
			debugUnknown(c)
			return
		}
		if r := replication(c); r != nil {
			r.DebugReplicate(args)
		}
		c.W.SimpleString("OK")
	case "object":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		e := c.DB.Peek(args[0]) // as Redis: an expired key not yet deleted is still there
		if e == nil {
			c.Err(ErrNoSuchKey)
			return
		}
		c.W.SimpleString("Value at:0x0 refcount:1 encoding:" + e.EncodingName() +
			" serializedlength:" + strconv.Itoa(len(e.Bytes())+1) +
			" lru:" + strconv.FormatUint(uint64(e.Access()), 10) +
			" lru_seconds_idle:" + strconv.FormatInt(c.KS.IdleSeconds(e), 10) + debugObjectExtra(c, e))
	case "listpack":
		// DEBUG LISTPACK key: Redis dumps the listpack to its stdout; HotKV's
		// compact encodings have no listpack to dump, so only the checks remain
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		e := c.DB.Lookup(args[0])
		switch {
		case e == nil:
			c.Err(ErrNoSuchKey)
		case e.EncodingName() != "listpack" && e.EncodingName() != "listpackex":
			c.Error("ERR Not a listpack encoded object.")
		default:
			c.W.SimpleString("Listpack structure printed on stdout")
		}
	case "quicklist-packed-threshold":
		// the size from which a list element gets a plain quicklist node (a
		// test-suite knob; 0 restores the default)
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		sz, ok := memToUll(args[0])
		if !ok || sz > 1<<32-1<<20 {
			c.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		c.KS.ListPackedThreshold = sz
		c.W.SimpleString("OK")
	case "protocol":
		if len(args) != 1 {
			debugUnknown(c)
			return
		}
		debugProtocol(c, strings.ToLower(string(args[0])))
	default:
		debugUnknown(c)
	}
}

// debugProtocol replies with one value of each RESP3 type, as DEBUG PROTOCOL does
// (protocol.tcl uses it to check the RESP3 encoder).
func debugProtocol(c *Ctx, typ string) {
	w := c.W
	switch typ {
	case "string":
		w.BulkString("Hello World")
	case "integer":
		w.Int(12345)
	case "double":
		w.Double(3.141)
	case "bignum":
		w.BigNumber("1234567999999999999999999999999999999")
	case "null":
		w.Null()
	case "array":
		w.ArrayLen(3)
		for i := int64(0); i < 3; i++ {
			w.Int(i)
		}
	case "set":
		w.SetLen(3)
		for i := int64(0); i < 3; i++ {
			w.Int(i)
		}
	case "map":
		w.MapLen(3)
		for i := int64(0); i < 3; i++ {
			w.Int(i)
			w.Bool(i == 1)
		}
	case "attrib":
		if c.Client.Proto >= 3 {
			w.AttributeLen(1)
			w.BulkString("key-popularity")
			w.ArrayLen(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case "push":
		if c.Client.Proto < 3 {
			c.Error("ERR RESP2 is not supported by this command")
			return
		}
		// the push goes after the reply: Redis 7.2+ holds the pushes meant
		// for the running client until its command's reply (pending_push_messages)
		w.BulkString("Some real reply following the push reply")
		w.PushLen(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
	case "true":
		w.Bool(true)
	case "false":
		w.Bool(false)
	case "verbatim":
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		c.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// debugObjectExtra is the quicklist part of DEBUG OBJECT (debug.c): nodes,
// average elements per node, the fill, whether list-compress-depth is set (read
// live; Redis keeps the depth the quicklist was created with) and the sum of the
// nodes' sizes.
func debugObjectExtra(c *Ctx, e *keyspace.Entry) string {
	l, ok := e.Obj().(*keyspace.List)
	if !ok || !l.Quicklist() {
		return ""
	}
	nodes, size := l.NodeStats()
	compressed := "0"
	if c.Srv != nil {
		if kv := c.Srv.ConfigGet([]string{"list-compress-depth"}); len(kv) == 1 && kv[0][1] != "0" {
			compressed = "1"
		}
	}
	avg := 0.0
	if nodes > 0 {
		avg = float64(l.Len()) / float64(nodes)
	}
	return " ql_nodes:" + strconv.Itoa(nodes) +
		" ql_avg_node:" + strconv.FormatFloat(avg, 'f', 2, 64) +
		" ql_listpack_max:" + strconv.Itoa(l.Fill()) +
		" ql_compressed:" + compressed +
		" ql_uncompressed_size:" + strconv.Itoa(size)
}

// memToUll is Redis's memtoull: digits and an optional unit (b, k, kb, m, mb,
// g, gb in any case; k, m, g are powers of 1000, kb, mb, gb of 1024).
func memToUll(b []byte) (uint64, bool) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	mul := uint64(0)
	switch u := strings.ToLower(string(b[i:])); u {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i == 0 {
		return 0, true // strtoull of no digits: 0
	}
	v, err := strconv.ParseUint(string(b[:i]), 10, 64)
	if err != nil || v > math.MaxUint64/mul {
		return 0, false
	}
	return v * mul, true
}

// debugUnknown is Redis's reply for an unknown DEBUG subcommand or a wrong count.
func debugUnknown(c *Ctx) {
	c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try DEBUG HELP.")
}

// positiveArg parses a non-negative integer argument as Redis's
// getPositiveLongFromObjectOrReply without a message of its own: anything
// else is "out of range, must be positive".
func positiveArg(c *Ctx, a []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(a), 10, 64)
	if err != nil || n < 0 {
		c.Error("ERR value is out of range, must be positive")
		return 0, false
	}
	return n, true
}

// debugPopulate is DEBUG POPULATE count [prefix] [size]: string keys
// <prefix>:<j> (key:<j> by default) holding value:<j>, padded with zero bytes
// or cut to size when size is given; existing keys are left alone. As in
// Redis, nothing is propagated or notified (watchers and tracking still see
// the keys change) and the dirty counter does not move.
func debugPopulate(c *Ctx, args [][]byte) {
	keys, ok := positiveArg(c, args[0])
	if !ok {
		return
	}
	if c.Srv.Persistence().Loading() {
		c.Error("LOADING Redis is loading the dataset in memory")
		return
	}
	if keys > 1<<31 { // Redis's dictTryExpand fails long before
		c.Error("ERR OOM in dictTryExpand")
		return
	}
	c.DB.Expand(int(keys), 0)
	size := int64(0)
	if len(args) == 3 {
		if size, ok = positiveArg(c, args[2]); !ok {
			return
		}
	}
	prefix := "key"
	if len(args) >= 2 {
		prefix = string(args[1])
		if i := strings.IndexByte(prefix, 0); i >= 0 {
			prefix = prefix[:i] // a C string in Redis
		}
	}
	var kb, vb []byte
	for j := int64(0); j < keys; j++ {
		kb = strconv.AppendInt(append(append(kb[:0], prefix...), ':'), j, 10)
		if len(kb) > 127 { // snprintf into 128 bytes
			kb = kb[:127]
		}
		if c.DB.LookupWrite(kb) != nil {
			continue
		}
		vb = strconv.AppendInt(append(vb[:0], "value:"...), j, 10)
		val := vb
		if size > 0 {
			val = make([]byte, size)
			copy(val, vb)
		}
		c.DB.SetString(kb, val, false)
	}
	c.W.SimpleString("OK")
}
