package command

import (
	"strings"

	"github.com/hotkv/hotkv/internal/acl"

	"github.com/hotkv/hotkv/internal/resp"
)

// Version is the Redis version HotKV reports (HELLO, INFO redis_version): the
// release whose semantics it follows. HotKV's own version is INFO hotkv_version.
const Version = "8.6.3"

// connectionCommands is redis.io's "connection" group.
func connectionCommands() []*Spec {
	return []*Spec{
		{Name: "auth", Arity: -2, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, Run: authCmd},
		{Name: "client", Arity: -2, Flags: KeepsCaching, Subs: clientSubcommands()},
		{Name: "echo", Arity: 2, Flags: Loading | Stale | Fast, Run: echoCmd},
		{Name: "hello", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, Run: helloCmd},
		{Name: "ping", Arity: -1, Flags: Fast | SubscribedOK | HealthCheck, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Run: pingCmd},
		{Name: "quit", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy | RunsInMulti | EndsMulti | SubscribedOK, Run: quitCmd},
		{Name: "reset", Arity: 1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy | RunsInMulti | EndsMulti | SubscribedOK, Run: resetCmd},
		{Name: "select", Arity: 2, Flags: Loading | Stale | Fast, Run: selectCmd},
	}
}

func pingCmd(c *Ctx) {
	if c.Client.Subscribed && c.Client.Proto == 2 {
		// RESP2 subscribed mode: PING answers in the shape of a message
		c.W.ArrayLen(2)
		c.W.BulkString("pong")
		if len(c.Argv) == 2 {
			c.W.Bulk(c.Argv[1])
		} else if len(c.Argv) == 1 {
			c.W.BulkString("")
		}
		if len(c.Argv) <= 2 {
			return
		}
	}
	switch len(c.Argv) {
	case 1:
		c.W.SimpleString("PONG")
	case 2:
		c.W.Bulk(c.Argv[1])
	default:
		c.Error(ErrArity("ping"))
	}
}

func echoCmd(c *Ctx) { c.W.Bulk(c.Argv[1]) }

func quitCmd(c *Ctx) {
	c.W.SimpleString("OK")
	c.Client.CloseAfterReply = true
}

func selectCmd(c *Ctx) {
	v, ok := resp.ParseInt(c.Argv[1])
	if !ok || v < -1<<31 || v >= 1<<31 {
		c.Err(ErrNotInt)
		return
	}
	if v < 0 || v >= int64(len(c.KS.DBs)) {
		c.Err(ErrDBIndex)
		return
	}
	c.Client.DB = int(v)
	c.DB = c.KS.DBs[v]
	c.W.SimpleString("OK")
}

// resetCmd is RESET: back to a fresh connection's state (database 0, RESP2, no
// name, default user when no password is required).
func resetCmd(c *Ctx) {
	cl := c.Client
	if cl.InMulti() {
		c.Srv.DiscardMulti(cl)
	}
	c.Srv.Unwatch(cl)
	c.Srv.PubSub().UnsubscribeAll(c)
	c.Srv.Tracking().Disable(cl)
	c.Srv.Monitor(cl, false)
	cl.DB = 0
	c.DB = c.KS.DBs[0]
	cl.Proto = 2
	c.W.Proto = 2
	cl.Name = ""
	cl.NoEvict, cl.NoTouch = false, false
	if cl.Reply != ReplySkipping { // a skip of RESET's own reply stands, as in Redis
		cl.Reply = ReplyOn
	}
	a := c.Srv.ACL()
	cl.User = a.Default
	cl.Authenticated = a.Default.NoPass() && a.Default.Enabled()
	c.W.SimpleString("RESET")
}

// checkAuth authenticates the client as user with pass (Redis's
// checkPasswordBasedAuth): on success the client runs as the user; a failure
// is logged (reason auth, the command's name as typed the object).
func checkAuth(c *Ctx, user string, pass []byte) bool {
	if u := c.Srv.ACL().Authenticate(user, pass); u != nil {
		c.Client.Authenticated = true
		c.Client.User = u
		return true
	}
	ctx := acl.CtxToplevel
	if c.Client.InMulti() {
		ctx = acl.CtxMulti
	}
	c.Srv.ACLDenied(c.Client, acl.DeniedAuth, ctx, string(c.Argv[0]), user)
	return false
}

func authCmd(c *Ctx) {
	if len(c.Argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	c.Redact(1) // the slow log and MONITOR never show a password
	user, pass := "default", c.Argv[1]
	if len(c.Argv) == 3 {
		user, pass = string(c.Argv[1]), c.Argv[2]
		c.Redact(2)
	} else if c.Srv.ACL().Default.NoPass() {
		c.Err(ErrAuthNoPass)
		return
	}
	if !checkAuth(c, user, pass) {
		c.Err(ErrWrongPass)
		return
	}
	c.W.SimpleString("OK")
}

// helloCmd: HELLO [protover [AUTH username password] [SETNAME clientname]].
func helloCmd(c *Ctx) {
	proto := c.Client.Proto
	if len(c.Argv) >= 2 {
		v, ok := resp.ParseInt(c.Argv[1])
		if !ok {
			c.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
	}
	var user string
	var pass, name []byte
	hasAuth, hasName := false, false
	for j := 2; j < len(c.Argv); j++ {
		more := len(c.Argv) - 1 - j
		switch {
		case eqFold(c.Argv[j], "auth") && more >= 2:
			c.Redact(j + 1)
			c.Redact(j + 2)
			hasAuth = true
			user, pass = string(c.Argv[j+1]), c.Argv[j+2]
			j += 2
		case eqFold(c.Argv[j], "setname") && more >= 1:
			hasName = true
			name = c.Argv[j+1]
			j++
		default:
			c.Error("ERR Syntax error in HELLO option '" + string(c.Argv[j]) + "'")
			return
		}
	}
	if hasAuth {
		if !checkAuth(c, user, pass) {
			c.Err(ErrWrongPass)
			return
		}
	}
	if !c.Client.Authenticated {
		c.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if hasName {
		if !validClientName(name) {
			c.Error("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.Client.Name = string(name)
	}
	c.Client.Proto = proto
	c.W.Proto = proto
	c.W.MapLen(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(Version)
	c.W.BulkString("proto")
	c.W.Int(int64(proto))
	c.W.BulkString("id")
	c.W.Int(c.Client.ID)
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString("master")
	c.W.BulkString("modules")
	c.W.ArrayLen(0)
}

// validClientName: printable ASCII without spaces (Redis's validateClientAttr).
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func clientSubcommands() []*Spec {
	adm := Admin | NoScript | Loading | Stale
	return []*Spec{
		{Name: "caching", Arity: 3, Flags: NoScript | Loading | Stale, Run: clientCaching},
		{Name: "getname", Arity: 2, Flags: NoScript | Loading | Stale, Run: clientGetname},
		{Name: "getredir", Arity: 2, Flags: NoScript | Loading | Stale, Run: clientGetredir},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: clientHelp},
		{Name: "id", Arity: 2, Flags: NoScript | Loading | Stale, Run: clientID},
		{Name: "info", Arity: 2, Flags: NoScript | Loading | Stale, Tips: []string{"nondeterministic_output"}, Run: clientInfo},
		{Name: "kill", Arity: -3, Flags: adm, Run: clientKill},
		{Name: "list", Arity: -2, Flags: adm, Tips: []string{"nondeterministic_output"}, Run: clientList},
		{Name: "no-evict", Arity: 3, Flags: adm, Run: clientNoEvict},
		{Name: "no-touch", Arity: 3, Flags: NoScript | Loading | Stale, Run: clientNoTouch},
		{Name: "pause", Arity: -3, Flags: adm, Run: clientPause},
		{Name: "reply", Arity: 3, Flags: NoScript | Loading | Stale, Run: clientReply},
		{Name: "setinfo", Arity: 4, Flags: NoScript | Loading | Stale, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: clientSetinfo},
		{Name: "setname", Arity: 3, Flags: NoScript | Loading | Stale, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: clientSetname},
		{Name: "unblock", Arity: -3, Flags: adm | NoScript | Loading | Stale, Run: clientUnblock},
		{Name: "tracking", Arity: -3, Flags: NoScript | Loading | Stale, Run: clientTracking},
		{Name: "trackinginfo", Arity: 2, Flags: NoScript | Loading | Stale, Run: clientTrackingInfo},
		{Name: "unpause", Arity: 2, Flags: adm, Run: clientUnpause},
	}
}

func clientID(c *Ctx) { c.W.Int(c.Client.ID) }

func clientGetname(c *Ctx) {
	if c.Client.Name == "" {
		c.W.Null()
		return
	}
	c.W.BulkString(c.Client.Name)
}

func clientSetname(c *Ctx) {
	if !validClientName(c.Argv[2]) {
		c.Error("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	c.Client.Name = string(c.Argv[2])
	c.W.SimpleString("OK")
}

func clientSetinfo(c *Ctx) {
	attr := c.Argv[2]
	var dst *string
	switch {
	case eqFold(attr, "lib-name"):
		dst = &c.Client.LibName
	case eqFold(attr, "lib-ver"):
		dst = &c.Client.LibVer
	default:
		c.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientName(c.Argv[3]) {
		c.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	*dst = string(c.Argv[3])
	c.W.SimpleString("OK")
}

func clientInfo(c *Ctx) {
	c.W.Verbatim("txt", string(c.Srv.ClientInfo(nil, c.Client)))
}

// clientList: CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]].
func clientList(c *Ctx) {
	typ := ""
	var ids []int64
	args := c.Argv[2:]
	switch {
	case len(args) == 0:
	case len(args) == 2 && eqFold(args[0], "type"):
		typ = strings.ToLower(string(args[1]))
		switch typ {
		case "normal", "master", "replica", "slave", "pubsub":
		default:
			c.Error("ERR Unknown client type '" + string(args[1]) + "'")
			return
		}
	case len(args) >= 2 && eqFold(args[0], "id"):
		for _, a := range args[1:] {
			v, ok := resp.ParseInt(a)
			if !ok || v <= 0 {
				c.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, v)
		}
	default:
		c.Err(ErrSyntax)
		return
	}
	c.W.Verbatim("txt", string(c.Srv.ClientList(nil, typ, ids)))
}

// clientKill: CLIENT KILL addr:port (old form: OK or "No such client") or the
// filter form (ID, TYPE, USER, ADDR, LADDR, SKIPME, MAXAGE) returning a count.
func clientKill(c *Ctx) {
	args := c.Argv[2:]
	if len(args) == 1 {
		n := c.Srv.KillClients(KillFilter{Addr: string(args[0])}, c.Client)
		if n == 0 {
			c.Error("ERR No such client")
			return
		}
		c.W.SimpleString("OK")
		return
	}
	if len(args)%2 != 0 {
		c.Err(ErrSyntax)
		return
	}
	f := KillFilter{SkipMe: true}
	for i := 0; i < len(args); i += 2 {
		k, v := args[i], args[i+1]
		switch {
		case eqFold(k, "id"):
			id, ok := resp.ParseInt(v)
			if !ok || id <= 0 {
				c.Error("ERR client-id should be greater than 0")
				return
			}
			f.ID = id
		case eqFold(k, "type"):
			f.Type = strings.ToLower(string(v))
			switch f.Type {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				c.Error("ERR Unknown client type '" + string(v) + "'")
				return
			}
		case eqFold(k, "addr"):
			f.Addr = string(v)
		case eqFold(k, "laddr"):
			f.LAddr = string(v)
		case eqFold(k, "user"):
			if c.Srv.ACL().User(string(v)) == nil {
				c.Error("ERR No such user '" + string(v) + "'")
				return
			}
			f.User = string(v)
		case eqFold(k, "skipme"):
			switch {
			case eqFold(v, "yes"):
				f.SkipMe = true
			case eqFold(v, "no"):
				f.SkipMe = false
			default:
				c.Err(ErrSyntax)
				return
			}
		case eqFold(k, "maxage"):
			age, ok := resp.ParseInt(v)
			if !ok {
				c.Error("ERR maxage is not an integer or out of range")
				return
			}
			if age <= 0 {
				c.Error("ERR maxage should be greater than 0")
				return
			}
			f.MaxAgeSec = age
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	c.W.Int(int64(c.Srv.KillClients(f, c.Client)))
}

func clientPause(c *Ctx) {
	ms, ok := resp.ParseInt(c.Argv[2])
	if !ok {
		c.Err(ErrTimeout)
		return
	}
	if ms < 0 {
		c.Error("ERR timeout is negative")
		return
	}
	writeOnly := false
	if len(c.Argv) == 4 {
		switch {
		case eqFold(c.Argv[3], "write"):
			writeOnly = true
		case eqFold(c.Argv[3], "all"):
		default:
			c.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(c.Argv) > 4 {
		c.Err(ErrSyntax)
		return
	}
	c.Srv.Pause(c.Now+ms, writeOnly)
	c.W.SimpleString("OK")
}

func clientUnpause(c *Ctx) {
	c.Srv.Unpause()
	c.W.SimpleString("OK")
}

func clientReply(c *Ctx) {
	switch {
	case eqFold(c.Argv[2], "on"):
		c.Client.Reply = ReplyOn
		c.W.SimpleString("OK")
	case eqFold(c.Argv[2], "off"):
		c.Client.Reply = ReplyOff
	case eqFold(c.Argv[2], "skip"):
		if c.Client.Reply != ReplyOff {
			c.Client.Reply = ReplySkip
		}
	default:
		c.Err(ErrSyntax)
	}
}

func onOff(c *Ctx, dst *bool) {
	switch {
	case eqFold(c.Argv[2], "on"):
		*dst = true
	case eqFold(c.Argv[2], "off"):
		*dst = false
	default:
		c.Err(ErrSyntax)
		return
	}
	c.W.SimpleString("OK")
}

func clientNoEvict(c *Ctx) { onOff(c, &c.Client.NoEvict) }
func clientNoTouch(c *Ctx) { onOff(c, &c.Client.NoTouch) }

func clientHelp(c *Ctx) {
	writeHelp(c, "CLIENT",
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"    * ID <client-id>",
		"      Kill connections by client id.",
		"    * MAXAGE <maxage>",
		"      Kill connections older than the specified age.",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
	)
}
