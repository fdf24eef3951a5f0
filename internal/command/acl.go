package command

import (
	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/resp"
)

// aclCommands is ACL (redis.io's "server" group): the users and their
// permissions live in internal/acl; these handlers parse and reply.
func aclCommands() []*Spec {
	return []*Spec{{Name: "acl", Arity: -2, Subs: aclSubcommands()}}
}

func aclSubcommands() []*Spec {
	adm := Admin | NoScript | Loading | Stale
	all := []string{"request_policy:all_nodes", "response_policy:all_succeeded"}
	return []*Spec{
		{Name: "cat", Arity: -2, Flags: NoScript | Loading | Stale, Run: aclCat},
		{Name: "deluser", Arity: -3, Flags: adm, Tips: all, Run: aclDeluser},
		{Name: "dryrun", Arity: -4, Flags: adm, Run: aclDryrun},
		{Name: "genpass", Arity: -2, Flags: NoScript | Loading | Stale, Run: aclGenpass},
		{Name: "getuser", Arity: 3, Flags: adm, Run: aclGetuser},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: aclHelp},
		{Name: "list", Arity: 2, Flags: adm, Run: aclList},
		{Name: "load", Arity: 2, Flags: adm, Run: aclLoad},
		{Name: "log", Arity: -2, Flags: adm, Run: aclLog},
		{Name: "save", Arity: 2, Flags: adm, Tips: all, Run: aclSave},
		{Name: "setuser", Arity: -3, Flags: adm, Tips: all, Run: aclSetuser},
		{Name: "users", Arity: 2, Flags: adm, Run: aclUsers},
		{Name: "whoami", Arity: 2, Flags: NoScript | Loading | Stale, Run: aclWhoami},
	}
}

func aclSetuser(c *Ctx) {
	redactFrom(c, 2) // nothing about the user reaches the slow log or MONITOR
	name := string(c.Argv[2])
	rules := make([]string, len(c.Argv)-3)
	for i, a := range c.Argv[3:] {
		rules[i] = string(a)
	}
	if err := c.Srv.ACL().SetUser(name, rules); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	c.W.SimpleString("OK")
}

func aclDeluser(c *Ctx) {
	redactFrom(c, 2)
	names := make([]string, len(c.Argv)-2)
	for i, a := range c.Argv[2:] {
		if string(a) == "default" {
			c.Error("ERR The 'default' user cannot be removed")
			return
		}
		names[i] = string(a)
	}
	c.W.Int(int64(c.Srv.ACL().DelUser(names)))
}

func aclGetuser(c *Ctx) {
	c.Redact(2)
	u := c.Srv.ACL().User(string(c.Argv[2]))
	if u == nil {
		c.W.Null()
		return
	}
	c.W.MapLen(6)
	c.W.BulkString("flags")
	flags := u.Flags()
	c.W.SetLen(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("passwords")
	c.W.ArrayLen(len(u.Passwords()))
	for _, p := range u.Passwords() {
		c.W.BulkString(p)
	}
	describeSelector(c, u.Root())
	c.W.BulkString("selectors")
	c.W.ArrayLen(len(u.Selectors()))
	for _, s := range u.Selectors() {
		c.W.MapLen(3)
		describeSelector(c, s)
	}
}

func describeSelector(c *Ctx, s *acl.Selector) {
	c.W.BulkString("commands")
	c.W.BulkString(s.CommandsDescription())
	c.W.BulkString("keys")
	c.W.BulkString(s.KeysDescription())
	c.W.BulkString("channels")
	c.W.BulkString(s.ChannelsDescription())
}

func aclList(c *Ctx) {
	users := c.Srv.ACL().Users()
	c.W.ArrayLen(len(users))
	for _, u := range users {
		c.W.BulkString("user " + u.Name + " " + u.Describe())
	}
}

func aclUsers(c *Ctx) {
	users := c.Srv.ACL().Users()
	c.W.ArrayLen(len(users))
	for _, u := range users {
		c.W.BulkString(u.Name)
	}
}

func aclWhoami(c *Ctx) {
	if c.Client.User == nil {
		c.W.Null()
		return
	}
	c.W.BulkString(c.Client.User.Name)
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclLoad(c *Ctx) {
	path := c.Srv.ACLFile()
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	if err := c.Srv.ACL().LoadFile(path); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	c.W.SimpleString("OK")
}

func aclSave(c *Ctx) {
	path := c.Srv.ACLFile()
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	if err := c.Srv.ACL().SaveFile(path, c.Srv.RandomHex(16)); err != nil {
		c.Srv.Warn(err.Error())
		c.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.W.SimpleString("OK")
}

func aclCat(c *Ctx) {
	if len(c.Argv) > 3 {
		c.Error(subSyntaxErr(c))
		return
	}
	if len(c.Argv) == 2 {
		cats := acl.Categories()
		c.W.ArrayLen(len(cats))
		for _, n := range cats {
			c.W.BulkString(n)
		}
		return
	}
	flag := acl.CategoryFlag(string(c.Argv[2]))
	if flag == 0 {
		arg := c.Argv[2]
		if len(arg) > 128 {
			arg = arg[:128]
		}
		c.Error("ERR Unknown category '" + string(arg) + "'")
		return
	}
	names := c.Srv.ACL().Commands().InCategory(flag)
	c.W.ArrayLen(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

func aclGenpass(c *Ctx) {
	if len(c.Argv) > 3 {
		c.Error(subSyntaxErr(c))
		return
	}
	bits := int64(256)
	if len(c.Argv) == 3 {
		v, ok := resp.ParseInt(c.Argv[2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		bits = v
	}
	if bits <= 0 || bits > 4096 {
		c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	c.W.BulkString(c.Srv.RandomHex(int((bits + 3) / 4)))
}

func aclLog(c *Ctx) {
	if len(c.Argv) > 3 {
		c.Error(subSyntaxErr(c))
		return
	}
	a := c.Srv.ACL()
	count := int64(10)
	if len(c.Argv) == 3 {
		if eqFold(c.Argv[2], "reset") {
			a.Log.Reset()
			c.W.SimpleString("OK")
			return
		}
		v, ok := resp.ParseInt(c.Argv[2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(v, 0)
	}
	entries := a.Log.Entries
	if count < int64(len(entries)) {
		entries = entries[:count]
	}
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		c.W.MapLen(10)
		c.W.BulkString("count")
		c.W.Int(e.Count)
		c.W.BulkString("reason")
		c.W.BulkString(e.ReasonName())
		c.W.BulkString("context")
		c.W.BulkString(e.ContextName())
		c.W.BulkString("object")
		c.W.BulkString(e.Object)
		c.W.BulkString("username")
		c.W.BulkString(e.Username)
		c.W.BulkString("age-seconds")
		c.W.Double(float64(c.Now-e.Ctime) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.ClientInfo)
		c.W.BulkString("entry-id")
		c.W.Int(e.EntryID)
		c.W.BulkString("timestamp-created")
		c.W.Int(e.Created)
		c.W.BulkString("timestamp-last-updated")
		c.W.Int(e.Ctime)
	}
}

func aclDryrun(c *Ctx) {
	a := c.Srv.ACL()
	u := a.User(string(c.Argv[2]))
	if u == nil {
		c.Error("ERR User '" + string(c.Argv[2]) + "' not found")
		return
	}
	argv := c.Argv[3:]
	spec := c.Srv.Table().Lookup(argv[0])
	if spec != nil && len(spec.Subs) > 0 {
		if len(argv) < 2 {
			spec = nil
		} else {
			spec = spec.Sub(argv[1])
		}
	}
	if spec == nil {
		c.Error("ERR Command '" + string(argv[0]) + "' not found")
		return
	}
	if !CheckArity(spec.Arity, len(argv)) {
		c.Error("ERR wrong number of arguments for '" + spec.FullName() + "' command")
		return
	}
	cmd := a.Commands().ByID(spec.ID)
	var sc acl.Scratch
	if r, pos := u.Check(cmd, argv, &sc); r != acl.OK {
		c.W.BulkString(acl.ErrorMessage(r, u, cmd, argv[pos], true))
		return
	}
	c.W.SimpleString("OK")
}

func aclHelp(c *Ctx) {
	writeHelp(c, "ACL",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	)
}

// subSyntaxErr is addReplySubcommandSyntaxError's text.
func subSyntaxErr(c *Ctx) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try ACL HELP."
}

// redactFrom hides the arguments from i on (Ctx.Redact).
func redactFrom(c *Ctx, i int) {
	for ; i < len(c.Argv); i++ {
		c.Redact(i)
	}
}
