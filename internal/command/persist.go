package command

// RDB snapshot commands (Redis's rdb.c saveCommand, bgsaveCommand): the
// server does the work (internal/server/persist.go, decision 0027).

func persistCommands() []*Spec {
	return []*Spec{
		{Name: "bgsave", Arity: -1, Flags: Admin | NoScript | NoAsyncLoading, Run: bgsaveCmd},
		{Name: "save", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, Run: saveCmd},
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
