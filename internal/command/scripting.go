package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// The scripting group: EVAL and its variants, SCRIPT, and (with the functions
// work) FUNCTION and FCALL. Argument checks live here; the interpreter, the
// script cache and busy-script handling belong to the server (Scripting).

// Scripting is the server's Lua engine. Calls happen under the engine's
// serialisation point, on the calling client's goroutine.
type Scripting interface {
	// Eval runs a script given by body (EVAL) or by sha (EVALSHA, body nil)
	// and appends its reply to c.W; ro is the *_RO variant.
	Eval(c *Ctx, body, sha []byte, keys, args [][]byte, ro bool)
	// Load compiles body into the cache and returns its SHA1, or the error text.
	Load(body []byte) (sha string, errText string)
	// Exists reports whether a script with this SHA1 is cached.
	Exists(sha []byte) bool
	// Flush empties the script cache and returns how many scripts it held.
	Flush() int
	// Kill is SCRIPT KILL (eval) or FUNCTION KILL: it appends the reply.
	Kill(c *Ctx, eval bool)

	// FCall runs the function called name (FCALL, FCALL_RO).
	FCall(c *Ctx, name []byte, keys, args [][]byte, ro bool)
	// FunctionLoad, FunctionDelete, FunctionFlush, FunctionDump and
	// FunctionRestore manage the libraries; errors are reply texts.
	FunctionLoad(code []byte, replace bool) (name string, errText string)
	FunctionDelete(name []byte) bool
	FunctionFlush() int // returns how many functions there were
	FunctionDump() []byte
	FunctionRestore(payload []byte, policy string) (errText string)
	// FunctionList appends FUNCTION LIST's reply for the libraries whose name
	// matches pattern (all when pattern is nil).
	FunctionList(c *Ctx, pattern []byte, withCode bool)
	// FunctionStats appends FUNCTION STATS's reply.
	FunctionStats(c *Ctx)
}

func scriptingCommands() []*Spec {
	const evalFlags = NoScript | SkipMonitor | MayReplicate | Stale | NoMandatoryKeys | RunsCommands
	evalKeys := []KeySpec{{Flags: "RW access update", Begin: 2, Step: 1, Keynum: true,
		Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"}}
	evalROKeys := []KeySpec{{Flags: "RO access", Begin: 2, Step: 1, Keynum: true,
		Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"}}
	shaKeys := []KeySpec{{Flags: "RW access update", Begin: 2, Step: 1, Keynum: true}}
	shaROKeys := []KeySpec{{Flags: "RO access", Begin: 2, Step: 1, Keynum: true}}
	allNodes := []string{"request_policy:all_nodes", "response_policy:all_succeeded"}
	allShards := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	return []*Spec{
		{Name: "eval", Arity: -3, Flags: evalFlags, ScriptArg: ScriptBody, Keys: evalKeys, KeysFn: evalKeysFn, Run: evalCmd},
		{Name: "evalsha", Arity: -3, Flags: evalFlags, ScriptArg: ScriptSHA, Keys: shaKeys, KeysFn: evalKeysFn, Run: evalshaCmd},
		{Name: "eval_ro", Arity: -3, Flags: NoScript | SkipMonitor | Stale | ReadOnly | NoMandatoryKeys | RunsCommands, ScriptArg: ScriptBody, Keys: evalROKeys, KeysFn: evalKeysFn, Run: evalROCmd},
		{Name: "evalsha_ro", Arity: -3, Flags: NoScript | SkipMonitor | Stale | ReadOnly | NoMandatoryKeys | RunsCommands, ScriptArg: ScriptSHA, Keys: shaROKeys, KeysFn: evalKeysFn, Run: evalshaROCmd},
		{Name: "fcall", Arity: -3, Flags: evalFlags, ScriptArg: ScriptFunction, Keys: evalKeys, KeysFn: evalKeysFn, Run: fcallCmd},
		{Name: "fcall_ro", Arity: -3, Flags: NoScript | SkipMonitor | Stale | ReadOnly | NoMandatoryKeys | RunsCommands, ScriptArg: ScriptFunction, Keys: evalROKeys, KeysFn: evalKeysFn, Run: fcallROCmd},
		{Name: "function", Arity: -2, Subs: []*Spec{
			{Name: "delete", Arity: 3, Flags: Write | NoScript, Tips: allShards, Run: functionDelete},
			{Name: "dump", Arity: 2, Flags: NoScript, Run: functionDump},
			{Name: "flush", Arity: -2, Flags: Write | NoScript, Tips: allShards, Run: functionFlush},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: functionHelp},
			{Name: "kill", Arity: 2, Flags: NoScript | AllowBusy, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}, Run: functionKill},
			{Name: "list", Arity: -2, Flags: NoScript, Tips: []string{"nondeterministic_output_order"}, Run: functionList},
			{Name: "load", Arity: -3, Flags: Write | DenyOOM | NoScript, Tips: allShards, Run: functionLoad},
			{Name: "restore", Arity: -3, Flags: Write | DenyOOM | NoScript, Tips: allShards, Run: functionRestore},
			{Name: "stats", Arity: 2, Flags: NoScript | AllowBusy, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}, Run: functionStats},
		}},
		{Name: "script", Arity: -2, Subs: []*Spec{
			{Name: "debug", Arity: 3, Flags: NoScript, Run: scriptDebug},
			{Name: "exists", Arity: -3, Flags: NoScript, Tips: []string{"request_policy:all_shards", "response_policy:agg_logical_and"}, Run: scriptExists},
			{Name: "flush", Arity: -2, Flags: NoScript, Tips: allNodes, Run: scriptFlush},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: scriptHelp},
			{Name: "kill", Arity: 2, Flags: NoScript | AllowBusy, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}, Run: scriptKill},
			{Name: "load", Arity: 3, Flags: NoScript | Stale, Tips: allNodes, Run: scriptLoad},
		}},
	}
}

// evalKeysFn: EVAL script numkeys key [key ...] arg [arg ...].
func evalKeysFn(argv [][]byte) []int {
	if len(argv) < 3 {
		return nil
	}
	n, ok := resp.ParseInt(argv[2])
	if !ok || n < 0 || n > int64(len(argv)-3) {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 3 + i
	}
	return out
}

// evalArgs checks numkeys as evalGenericCommand does and splits keys and args.
func evalArgs(c *Ctx) (keys, args [][]byte, ok bool) {
	n, isInt := resp.ParseInt(c.Argv[2])
	switch {
	case !isInt:
		c.Err(ErrNotInt)
	case n > int64(len(c.Argv)-3):
		c.Error("ERR Number of keys can't be greater than number of args")
	case n < 0:
		c.Error("ERR Number of keys can't be negative")
	default:
		return c.Argv[3 : 3+n], c.Argv[3+n:], true
	}
	return nil, nil, false
}

func evalCmd(c *Ctx)   { evalGeneric(c, false, false) }
func evalROCmd(c *Ctx) { evalGeneric(c, false, true) }
func evalshaCmd(c *Ctx) {
	evalGeneric(c, true, false)
}
func evalshaROCmd(c *Ctx) { evalGeneric(c, true, true) }

const errNoScript = "NOSCRIPT No matching script. Please use EVAL."

func evalGeneric(c *Ctx, bySHA, ro bool) {
	keys, args, ok := evalArgs(c)
	if !ok {
		return
	}
	if bySHA {
		if len(c.Argv[1]) != 40 {
			c.Error(errNoScript)
			return
		}
		c.Srv.Scripts().Eval(c, nil, c.Argv[1], keys, args, ro)
		return
	}
	c.Srv.Scripts().Eval(c, c.Argv[1], nil, keys, args, ro)
}

func scriptLoad(c *Ctx) {
	sha, errText := c.Srv.Scripts().Load(c.Argv[2])
	if errText != "" {
		c.Error(errText)
		return
	}
	c.W.BulkString(sha)
}

func scriptExists(c *Ctx) {
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, sha := range c.Argv[2:] {
		if c.Srv.Scripts().Exists(sha) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func scriptKill(c *Ctx) { c.Srv.Scripts().Kill(c, true) }

// scriptDebug: the Lua debugger (LDB) is not available; SCRIPT DEBUG NO is
// accepted so that clients that reset it work.
func scriptDebug(c *Ctx) {
	switch {
	case eqFold(c.Argv[2], "no"):
		c.W.SimpleString("OK")
	case eqFold(c.Argv[2], "yes"), eqFold(c.Argv[2], "sync"):
		c.Error("ERR SCRIPT DEBUG is not supported by this server")
	default:
		c.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func scriptHelp(c *Ctx) {
	writeHelp(c, "SCRIPT",
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	)
}

// flushMode accepts the optional ASYNC|SYNC argument of SCRIPT/FUNCTION FLUSH.
func flushMode(c *Ctx, errMsg string) bool {
	switch {
	case len(c.Argv) == 2:
		return true
	case len(c.Argv) == 3 && (eqFold(c.Argv[2], "async") || eqFold(c.Argv[2], "sync")):
		return true
	}
	c.Error(errMsg)
	return false
}

func scriptFlush(c *Ctx) {
	if flushMode(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option") {
		// freeLuaScriptsAsync: more than LAZYFREE_THRESHOLD scripts are
		// freed in the background and counted in lazyfreed_objects
		if n := c.Srv.Scripts().Flush(); n > keyspace.LazyFreeThreshold && flushAsyncAt(c, 2) {
			c.KS.Stats.LazyFreed += int64(n)
		}
		c.W.SimpleString("OK")
	}
}

func functionFlush(c *Ctx) {
	if len(c.Argv) > 3 {
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try FUNCTION HELP.")
		return
	}
	if flushMode(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		// freeFunctionsAsync: the functions and the engine (one)
		if n := c.Srv.Scripts().FunctionFlush(); n > keyspace.LazyFreeThreshold && flushAsyncAt(c, 2) {
			c.KS.Stats.LazyFreed += int64(n) + 1
		}
		c.Dirty++
		c.W.SimpleString("OK")
	}
}

func fcallCmd(c *Ctx)   { fcallGeneric(c, false) }
func fcallROCmd(c *Ctx) { fcallGeneric(c, true) }

// fcallGeneric: FCALL function numkeys [key ...] [arg ...] (fcallCommandGeneric).
func fcallGeneric(c *Ctx, ro bool) {
	n, isInt := resp.ParseInt(c.Argv[2])
	switch {
	case !isInt:
		c.Error("ERR Bad number of keys provided")
	case n > int64(len(c.Argv)-3):
		c.Error("ERR Number of keys can't be greater than number of args")
	case n < 0:
		c.Error("ERR Number of keys can't be negative")
	default:
		c.Srv.Scripts().FCall(c, c.Argv[1], c.Argv[3:3+n], c.Argv[3+n:], ro)
	}
}

// functionLoad: FUNCTION LOAD [REPLACE] code.
func functionLoad(c *Ctx) {
	replace := false
	i := 2
	for ; i < len(c.Argv)-1; i++ {
		if !eqFold(c.Argv[i], "replace") {
			c.Error("ERR Unknown option given: " + string(c.Argv[i]))
			return
		}
		replace = true
	}
	if i != len(c.Argv)-1 {
		c.Error("ERR Function code is missing")
		return
	}
	name, errText := c.Srv.Scripts().FunctionLoad(c.Argv[i], replace)
	if errText != "" {
		c.Error(errText)
		return
	}
	c.Dirty++
	c.W.BulkString(name)
}

func functionDelete(c *Ctx) {
	if !c.Srv.Scripts().FunctionDelete(c.Argv[2]) {
		c.Error("ERR Library not found")
		return
	}
	c.Dirty++
	c.W.SimpleString("OK")
}

func functionDump(c *Ctx) { c.W.Bulk(c.Srv.Scripts().FunctionDump()) }

// functionRestore: FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func functionRestore(c *Ctx) {
	if len(c.Argv) > 4 {
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try FUNCTION HELP.")
		return
	}
	policy := "append"
	if len(c.Argv) == 4 {
		switch {
		case eqFold(c.Argv[3], "flush"):
			policy = "flush"
		case eqFold(c.Argv[3], "append"):
		case eqFold(c.Argv[3], "replace"):
			policy = "replace"
		default:
			c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	if errText := c.Srv.Scripts().FunctionRestore(c.Argv[2], policy); errText != "" {
		c.Error(errText)
		return
	}
	c.Dirty++
	c.W.SimpleString("OK")
}

// functionList: FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionList(c *Ctx) {
	var pattern []byte
	withCode := false
	for i := 2; i < len(c.Argv); i++ {
		switch {
		case eqFold(c.Argv[i], "withcode") && !withCode:
			withCode = true
		case eqFold(c.Argv[i], "libraryname") && pattern == nil:
			if i+1 >= len(c.Argv) {
				c.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern = c.Argv[i]
		default:
			c.Error("ERR Unknown argument " + string(c.Argv[i]))
			return
		}
	}
	c.Srv.Scripts().FunctionList(c, pattern, withCode)
}

func functionStats(c *Ctx) { c.Srv.Scripts().FunctionStats(c) }
func functionKill(c *Ctx)  { c.Srv.Scripts().Kill(c, false) }

func functionHelp(c *Ctx) {
	writeHelp(c, "FUNCTION",
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	)
}
