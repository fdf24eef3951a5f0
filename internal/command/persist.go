package command

import "github.com/hotkv/hotkv/internal/resp"

// RDB snapshot commands (Redis's rdb.c saveCommand, bgsaveCommand): the
// server does the work (internal/server/persist.go, decision 0027).

func persistCommands() []*Spec {
	return []*Spec{
		{Name: "bgsave", Arity: -1, Flags: Admin | NoScript | NoAsyncLoading, Run: bgsaveCmd},
		{Name: "save", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, Run: saveCmd},
		{Name: "bgrewriteaof", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading, Run: bgrewriteaofCmd},
		{Name: "waitaof", Arity: 4, Flags: Blocking, ACL: []string{"@slow", "@blocking", "@connection"}, Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}, Run: waitaofCmd},
	}
}

// saveCmd: SAVE.
func saveCmd(c *Ctx) {
	if errText := c.Srv.Persistence().Save(); errText != "" {
		c.Error(errText)
		return
	}
	c.W.SimpleString("OK")
}

// bgsaveCmd: BGSAVE [SCHEDULE].
func bgsaveCmd(c *Ctx) {
	schedule := false
	if len(c.Argv) > 1 {
		if len(c.Argv) != 2 || !eqFold(c.Argv[1], "schedule") {
			c.Err(ErrSyntax)
			return
		}
		schedule = true
	}
	// inside EXEC Redis schedules the save (server.in_exec); DenyBlocking is
	// set exactly while EXEC runs its queue (scripts cannot call BGSAVE)
	status, errText := c.Srv.Persistence().BGSave(schedule, c.Client.DenyBlocking)
	if errText != "" {
		c.Error(errText)
		return
	}
	c.W.SimpleString(status)
}

// AOF is what the append-only file commands need of the server
// (internal/server/aof, decision 0043).
type AOF interface {
	// BGRewriteAOF is BGREWRITEAOF: status is the +reply, errText the error.
	BGRewriteAOF() (status, errText string)
	// WaitAOF is WAITAOF once its arguments are valid: it replies, or
	// blocks the client until enough is fsynced or the timeout passes.
	WaitAOF(c *Ctx, numLocal, numReplicas, timeoutMs int64)
	// DebugLoadAOF is DEBUG LOADAOF: the pending appends are fsynced, the
	// dataset emptied and loaded again from the AOF. errText "" is OK.
	DebugLoadAOF(caller *Client) (errText string)
	// SetAOFFlushSleep is DEBUG AOF-FLUSH-SLEEP: each write to the AOF
	// sleeps us µs first.
	SetAOFFlushSleep(us int64)
}

func aofOf(c *Ctx) AOF {
	a, _ := c.Srv.(AOF)
	return a
}

// bgrewriteaofCmd: BGREWRITEAOF.
func bgrewriteaofCmd(c *Ctx) {
	a := aofOf(c)
	if a == nil {
		c.Error("ERR the append only file is not available")
		return
	}
	status, errText := a.BGRewriteAOF()
	if errText != "" {
		c.Error(errText)
		return
	}
	c.W.SimpleString(status)
}

// waitaofCmd: WAITAOF numlocal numreplicas timeout (waitaofCommand).
func waitaofCmd(c *Ctx) {
	numLocal, ok := resp.ParseInt(c.Argv[1])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if numLocal < 0 || numLocal > 1 {
		c.Error("ERR value is out of range, value must between 0 and 1")
		return
	}
	numReplicas, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if numReplicas < 0 {
		c.Error("ERR value is out of range, must be positive")
		return
	}
	t, ok := waitTimeout(c, c.Argv[3])
	if !ok {
		return
	}
	a := aofOf(c)
	if a == nil {
		c.Error("ERR the append only file is not available")
		return
	}
	a.WaitAOF(c, numLocal, numReplicas, t)
}
