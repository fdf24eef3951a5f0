package command

import (
	"math"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/resp"
)

// serverCommands is redis.io's "server" group (the part HotKV serves today).
func serverCommands() []*Spec {
	const adm = Admin | NoScript | Loading | Stale
	return []*Spec{
		{Name: "command", Arity: -1, Flags: Loading | Stale, Run: commandCmd, Tips: []string{"nondeterministic_output_order"}, Subs: commandSubcommands()},
		{Name: "config", Arity: -2, Subs: configSubcommands()},
		{Name: "dbsize", Arity: 1, Flags: ReadOnly | Fast, ACL: []string{"@keyspace", "@read", "@fast"}, Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}, Run: dbsizeCmd},
		{Name: "debug", Arity: -2, Flags: adm | Protected, Gate: debugGate, Run: debugCmd},
		{Name: "flushall", Arity: -1, Flags: Write, ACL: []string{"@keyspace", "@write", "@slow", "@dangerous"}, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Run: flushallCmd},
		{Name: "flushdb", Arity: -1, Flags: Write, ACL: []string{"@keyspace", "@write", "@slow", "@dangerous"}, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Run: flushdbCmd},
		{Name: "info", Arity: -1, Flags: Loading | Stale | ReportsMemory, ACL: []string{"@slow", "@dangerous"}, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}, Run: infoCmd},
		{Name: "module", Arity: -2, Subs: moduleSubcommands()},
		{Name: "lolwut", Arity: -1, Flags: ReadOnly | Fast, ACL: []string{"@read", "@fast"}, Run: lolwutCmd},
		{Name: "lastsave", Arity: 1, Flags: Loading | Stale | Fast, ACL: []string{"@admin", "@fast", "@dangerous"}, Tips: []string{"nondeterministic_output"}, Run: lastsaveCmd},
		// RESTORE as a cluster's migration sends it: the same command,
		// flagged asking (which a server that is not a cluster ignores)
		{Name: "restore-asking", Arity: -4, Flags: Write | DenyOOM | Asking, ACL: []string{"@keyspace", "@write", "@slow", "@dangerous"}, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "OW update", Run: restoreCmd},
		{Name: "shutdown", Arity: -1, Flags: adm | NoMulti | AllowBusy, Run: shutdownCmd},
		{Name: "swapdb", Arity: 3, Flags: Write | Fast, ACL: []string{"@keyspace", "@write", "@fast", "@dangerous"}, Run: swapdbCmd},
		{Name: "time", Arity: 1, Flags: Loading | Stale | Fast, Tips: []string{"nondeterministic_output"}, Run: timeCmd},
		{Name: "wait", Arity: 3, Flags: Blocking, ACL: []string{"@slow", "@blocking", "@connection"}, Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}, Run: waitCmd},
	}
}

func dbsizeCmd(c *Ctx) { c.W.Int(int64(c.DB.Len())) }

// flushArgs parses FLUSHALL/FLUSHDB's optional ASYNC|SYNC (both free the memory at
// once in HotKV: the old tables are left to the garbage collector).
func flushArgs(c *Ctx) bool {
	if len(c.Argv) > 2 || (len(c.Argv) == 2 && !eqFold(c.Argv[1], "async") && !eqFold(c.Argv[1], "sync")) {
		c.Err(ErrSyntax)
		return false
	}
	return true
}

// flushRepliesLast is flushCommandCommon's "blocking ASYNC": Redis 8 runs a
// synchronous FLUSHALL or FLUSHDB of a client that may block in the
// background and replies when it is done, so what the flush sent the client
// (its invalidation) comes before the +OK; inside MULTI or a script, or with
// ASYNC (lazyfree-lazy-user-flush yes without SYNC), the reply comes first.
func flushRepliesLast(c *Ctx) bool { return !flushAsync(c) && c.MayBlock() }

// flushAsync is getFlushCommandFlags' ASYNC for FLUSHALL and FLUSHDB: the
// argument, or with none lazyfree-lazy-user-flush.
func flushAsync(c *Ctx) bool { return flushAsyncAt(c, 1) }

// flushAsyncAt is flushAsync with the mode at argv[i] (2 for SCRIPT FLUSH
// and FUNCTION FLUSH).
func flushAsyncAt(c *Ctx, i int) bool {
	if len(c.Argv) > i {
		return eqFold(c.Argv[i], "async")
	}
	return configYes(c, "lazyfree-lazy-user-flush")
}

func flushallCmd(c *Ctx) {
	if !flushArgs(c) {
		return
	}
	c.ReplyLast = flushRepliesLast(c)
	if c.ReplyLast || flushAsync(c) {
		c.KS.Stats.LazyFreed += int64(c.KS.Keys()) // emptyDbAsync counts every key
	}
	c.Dirty += c.KS.Keys()
	c.KS.FlushAll()
	if c.Srv != nil && c.Srv.Persistence().FlushAllSave() {
		c.Dirty = 1 // the save reset the counter; FLUSHALL itself counts one
	}
	c.W.SimpleString("OK")
	// propagated even when there was nothing to flush (flushallCommand)
	c.ForcePropagation(PropAll)
}

func flushdbCmd(c *Ctx) {
	if !flushArgs(c) {
		return
	}
	c.ReplyLast = flushRepliesLast(c)
	if c.ReplyLast || flushAsync(c) {
		c.KS.Stats.LazyFreed += int64(c.DB.Len())
	}
	c.Dirty += c.DB.Len()
	c.DB.Flush()
	c.W.SimpleString("OK")
	c.ForcePropagation(PropAll)
}

func swapdbCmd(c *Ctx) {
	a, ok1 := resp.ParseInt(c.Argv[1])
	if !ok1 || a < -1<<31 || a >= 1<<31 {
		c.Error("ERR invalid first DB index")
		return
	}
	b, ok2 := resp.ParseInt(c.Argv[2])
	if !ok2 || b < -1<<31 || b >= 1<<31 {
		c.Error("ERR invalid second DB index")
		return
	}
	n := int64(len(c.KS.DBs))
	if a < 0 || a >= n || b < 0 || b >= n {
		c.Err(ErrDBIndex)
		return
	}
	if a != b {
		c.KS.Swap(int(a), int(b))
		c.Dirty++
	}
	c.W.SimpleString("OK")
}

func timeCmd(c *Ctx) {
	us := c.FrozenUs
	if us == 0 {
		us = c.Srv.NowUs()
	}
	var buf [20]byte
	c.W.ArrayLen(2)
	c.W.Bulk(appendUint(buf[:0], uint64(us/1e6)))
	c.W.Bulk(appendUint(buf[:0], uint64(us%1e6)))
}

func lastsaveCmd(c *Ctx) { c.W.Int(c.Srv.LastSave()) }

// waitTimeout parses WAIT's and WAITAOF's timeout (ms), replying the error
// of a bad one: as Redis's getTimeoutFromObjectOrReply, one whose deadline
// (now + timeout) would overflow is out of range.
func waitTimeout(c *Ctx, a []byte) (int64, bool) {
	t, ok := resp.ParseInt(a)
	if !ok {
		c.Err(ErrTimeout)
		return 0, false
	}
	if t < 0 {
		c.Error("ERR timeout is negative")
		return 0, false
	}
	if t > 0 && t > math.MaxInt64-c.Now {
		c.Error("ERR timeout is out of range")
		return 0, false
	}
	return t, true
}

// waitCmd: WAIT numreplicas timeout: the number of replicas that acknowledged
// the client's writes, blocking until numreplicas do or the timeout passes; with
// no replica attached it replies 0 at once (docs/decisions/0004-wait-without-replicas.md).
func waitCmd(c *Ctx) {
	if _, ok := resp.ParseInt(c.Argv[1]); !ok {
		c.Err(ErrNotInt)
		return
	}
	t, ok := waitTimeout(c, c.Argv[2])
	if !ok {
		return
	}
	if r := replication(c); r != nil && !c.Client.Script {
		n, _ := resp.ParseInt(c.Argv[1])
		r.Wait(c, n, t)
		return
	}
	c.W.Int(0)
}

func infoCmd(c *Ctx) {
	var secs []string
	for _, a := range c.Argv[1:] {
		secs = append(secs, strings.ToLower(string(a)))
	}
	c.W.Verbatim("txt", string(c.Srv.Info(nil, secs)))
}

// ShutdownFlags are SHUTDOWN's options (SHUTDOWN_NOSAVE, _SAVE, _NOW, _FORCE)
// and ABORT.
type ShutdownFlags struct {
	NoSave, Save, Now, Force, Abort bool
}

// shutdownCmd: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] (shutdownCommand).
func shutdownCmd(c *Ctx) {
	var f ShutdownFlags
	for _, a := range c.Argv[1:] {
		switch {
		case eqFold(a, "nosave"):
			f.NoSave = true
		case eqFold(a, "save"):
			f.Save = true
		case eqFold(a, "now"):
			f.Now = true
		case eqFold(a, "force"):
			f.Force = true
		case eqFold(a, "abort"):
			f.Abort = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if (f.Abort && (f.NoSave || f.Save || f.Now || f.Force)) || (f.NoSave && f.Save) {
		c.Err(ErrSyntax) // an illegal combination
		return
	}
	if err := c.Srv.Shutdown(f); err != nil {
		c.Error(err.Error())
		return
	}
	if f.Abort {
		c.W.SimpleString("OK")
	}
	// on success Redis closes the connection without a reply
}

func configSubcommands() []*Spec {
	adm := Admin | NoScript | Loading | Stale
	return []*Spec{
		{Name: "get", Arity: -3, Flags: adm, Run: configGet},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: configHelp},
		{Name: "resetstat", Arity: 2, Flags: adm, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: configResetstat},
		{Name: "rewrite", Arity: 2, Flags: adm, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: configRewrite},
		{Name: "set", Arity: -4, Flags: adm, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: configSet},
	}
}

func configGet(c *Ctx) {
	pats := make([]string, 0, len(c.Argv)-2)
	for _, a := range c.Argv[2:] {
		pats = append(pats, string(a))
	}
	pairs := c.Srv.ConfigGet(pats)
	c.W.MapLen(len(pairs))
	for _, p := range pairs {
		c.W.BulkString(p[0])
		c.W.BulkString(p[1])
	}
}

func configSet(c *Ctx) {
	args := c.Argv[2:]
	if len(args)%2 != 0 {
		c.Err(ErrSyntax)
		return
	}
	pairs := make([][2]string, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		pairs = append(pairs, [2]string{string(args[i]), string(args[i+1])})
		if c.Srv.ConfigSensitive(string(args[i])) {
			c.Redact(2 + i + 1) // a password never reaches the slow log or MONITOR
		}
	}
	if err := c.Srv.ConfigSet(c.Client, pairs); err != nil {
		c.Error(err.Error())
		return
	}
	c.W.SimpleString("OK")
}

func configResetstat(c *Ctx) {
	c.Srv.ResetStats()
	c.W.SimpleString("OK")
}

func configRewrite(c *Ctx) {
	if err := c.Srv.ConfigRewrite(); err != nil {
		c.Error(err.Error())
		return
	}
	c.W.SimpleString("OK")
}

func configHelp(c *Ctx) {
	writeHelp(c, "CONFIG",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	)
}

// sleepFor is DEBUG SLEEP's pause; a variable so tests can observe it.
var sleepFor = time.Sleep
