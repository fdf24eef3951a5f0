package command

// transactionCommands is redis.io's "transactions" group. Queuing is policy: a
// command sent inside MULTI is admitted and queued by the server's admission
// gate (RunsInMulti marks the commands that run at once instead); the handlers
// here manage the state, and EXEC runs the queue through the server.
func transactionCommands() []*Spec {
	f := NoScript | Loading | Stale
	return []*Spec{
		{Name: "discard", Arity: 1, Flags: f | Fast | AllowBusy | RunsInMulti | EndsMulti, Run: discardCmd},
		{Name: "exec", Arity: 1, Flags: f | SkipSlowlog | RunsInMulti | EndsMulti | RunsCommands, Run: execCmd},
		{Name: "multi", Arity: 1, Flags: f | Fast | AllowBusy | RunsInMulti, Run: multiCmd},
		{Name: "unwatch", Arity: 1, Flags: f | Fast | AllowBusy, Run: unwatchCmd},
		{Name: "watch", Arity: -2, Flags: f | Fast | AllowBusy | RunsInMulti, FirstKey: 1, LastKey: -1, Step: 1, KeyFlags: "RO", Run: watchCmd},
	}
}

// InMulti reports whether the client is inside MULTI.
func (c *Client) InMulti() bool { return c.Multi >= 0 }

func multiCmd(c *Ctx) {
	if c.Client.InMulti() {
		c.Error("ERR MULTI calls can not be nested")
		return
	}
	c.Client.Multi = 0
	c.W.SimpleString("OK")
}

func discardCmd(c *Ctx) {
	if !c.Client.InMulti() {
		c.Error("ERR DISCARD without MULTI")
		return
	}
	c.Srv.DiscardMulti(c.Client)
	c.Srv.Unwatch(c.Client)
	c.W.SimpleString("OK")
}

func execCmd(c *Ctx) {
	if !c.Client.InMulti() {
		c.Error("ERR EXEC without MULTI")
		return
	}
	c.Srv.Exec(c)
}

func watchCmd(c *Ctx) {
	if c.Client.InMulti() {
		c.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	c.Srv.Watch(c.Client, c.DB, c.Argv[1:])
	c.W.SimpleString("OK")
}

func unwatchCmd(c *Ctx) {
	c.Srv.Unwatch(c.Client)
	c.W.SimpleString("OK")
}
