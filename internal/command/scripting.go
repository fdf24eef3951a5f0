package command

// The scripting group's containers. Lua scripts and functions land with the
// scripting issue; until then the script cache and the function libraries are
// always empty, and FLUSH (which clients and Redis's own test harness send
// before every run) empties them as Redis does.
func scriptingCommands() []*Spec {
	return []*Spec{
		{Name: "function", Arity: -2, Since: "7.0.0", Summary: "A container for function commands.", Subs: []*Spec{
			{Name: "flush", Arity: -2, Flags: Write | NoScript | MayReplicate, Since: "7.0.0", Summary: "Deletes all libraries and functions.", Run: functionFlush},
		}},
		{Name: "script", Arity: -2, Since: "2.6.0", Summary: "A container for Lua scripts management commands.", Subs: []*Spec{
			{Name: "flush", Arity: -2, Flags: NoScript | MayReplicate, Since: "2.6.0", Summary: "Removes all server-side Lua scripts from the script cache.", Run: scriptFlush},
		}},
	}
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
		c.W.SimpleString("OK")
	}
}

func functionFlush(c *Ctx) {
	if flushMode(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		c.W.SimpleString("OK")
	}
}
