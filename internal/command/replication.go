package command

import "github.com/hotkv/hotkv/internal/resp"

// The master side of replication (redis.io's "server" group): SYNC, PSYNC,
// REPLCONF, ROLE and WAIT. The mechanics are the server's (Replication); the
// specs follow Redis 8.4's src/commands/{sync,psync,replconf,role}.json.
func replicationCommands() []*Spec {
	return []*Spec{
		{Name: "sync", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, Run: syncCmd},
		{Name: "psync", Arity: -3, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, Run: psyncCmd},
		{Name: "replconf", Arity: -1, Flags: Admin | NoScript | Loading | Stale | AllowBusy, Run: replconfCmd},
		{Name: "role", Arity: 1, Flags: NoScript | Loading | Stale | Fast, ACL: []string{"@admin", "@fast", "@dangerous"}, Run: roleCmd},
		{Name: "failover", Arity: -1, Flags: Admin | NoScript | Stale, Run: failoverCmd},
		{Name: "replicaof", Arity: 3, Flags: NoAsyncLoading | Admin | NoScript | Stale, Run: replicaofCmd},
		{Name: "slaveof", Arity: 3, Flags: NoAsyncLoading | Admin | NoScript | Stale, Run: replicaofCmd},
	}
}

// ReplicaInfo is one attached replica as ROLE reports it.
type ReplicaInfo struct {
	IP     string
	Port   int64
	Offset int64
}

// Replication is the server's replication plumbing (implemented by
// internal/server; the handlers reach it through Ctx.Srv).
type Replication interface {
	// Sync turns the client into a replica: the snapshot, then the stream
	// (psync: preceded by +FULLRESYNC <replid> <offset>).
	Sync(c *Ctx, psync bool)
	// ReplConf is REPLCONF (it replies, or not, as Redis does).
	ReplConf(c *Ctx)
	// ReplicationOffset is master_repl_offset.
	ReplicationOffset() int64
	// Replicas lists the attached replicas.
	Replicas() []ReplicaInfo
	// Wait is WAIT once its arguments are valid.
	Wait(c *Ctx, numReplicas, timeoutMs int64)
	// ReplicaOf makes the server a replica of host:port (port < 0: REPLICAOF
	// NO ONE, a master again); already says it already was one of that
	// master. ReplicaState is ROLE's view of a replica: its master, the link's
	// state and the offset processed; host is "" on a master.
	ReplicaOf(c *Ctx, host string, port int64) (already bool)
	ReplicaState() (host string, port int64, state string, offset int64)
	// DebugReplicate sends argv to the replicas alone (DEBUG REPLICATE);
	// ChangeReplID draws a new replication id and forgets replid2 (DEBUG
	// CHANGE-REPL-ID).
	DebugReplicate(argv [][]byte)
	ChangeReplID()
	// ReplPause sets a point where replication stops the process (DEBUG
	// REPL-PAUSE: clear, after-fork, before-rdb-channel,
	// on-streaming-repl-buf); false for an unknown point.
	ReplPause(point string) bool
	// Failover starts FAILOVER (host "": any replica; timeoutMs 0: none)
	// and returns its refusal or ""; FailoverAbort ends one (false: none
	// runs); FailoverRunning reports one.
	Failover(c *Ctx, host string, port int64, force bool, timeoutMs int64) string
	FailoverAbort() bool
	FailoverRunning() bool
}

// failoverCmd is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]
// (failoverCommand).
func failoverCmd(c *Ctx) {
	r := replication(c)
	if r == nil {
		c.Error("ERR replication is not available")
		return
	}
	args := c.Argv
	if len(args) == 2 && eqFold(args[1], "abort") {
		if !r.FailoverAbort() {
			c.Error("ERR No failover in progress.")
			return
		}
		c.W.SimpleString("OK")
		return
	}
	var timeout, port int64
	var host string
	force := false
	for j := 1; j < len(args); j++ {
		switch {
		case eqFold(args[j], "timeout") && j+1 < len(args) && timeout == 0:
			n, ok := resp.ParseInt(args[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if n <= 0 {
				c.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case eqFold(args[j], "to") && j+2 < len(args) && host == "":
			n, ok := resp.ParseInt(args[j+2])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			host, port = string(args[j+1]), n
			j += 2
		case eqFold(args[j], "force") && !force:
			force = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if e := r.Failover(c, host, port, force, timeout); e != "" {
		c.Error(e)
		return
	}
	c.W.SimpleString("OK")
}

// replicaofCmd is REPLICAOF (and SLAVEOF) host port | NO ONE
// (replicaofCommand).
func replicaofCmd(c *Ctx) {
	r := replication(c)
	if r == nil {
		c.Error("ERR replication is not available")
		return
	}
	if r.FailoverRunning() {
		c.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if eqFold(c.Argv[1], "no") && eqFold(c.Argv[2], "one") {
		r.ReplicaOf(c, "", -1)
		c.W.SimpleString("OK")
		return
	}
	if c.Client.Flags == "S" { // a replica's own link cannot make its master a replica
		c.Error("ERR Command is not valid when client is a replica.")
		return
	}
	port, ok := resp.ParseInt(c.Argv[2])
	if !ok || port < 0 || port > 65535 {
		c.Error("ERR Invalid master port")
		return
	}
	if r.ReplicaOf(c, string(c.Argv[1]), port) {
		c.W.SimpleString("OK Already connected to specified master")
		return
	}
	c.W.SimpleString("OK")
}

func replication(c *Ctx) Replication {
	r, _ := c.Srv.(Replication)
	return r
}

func syncCmd(c *Ctx) {
	if r := replication(c); r != nil {
		r.Sync(c, false)
		return
	}
	c.Error("ERR replication is not available")
}

// psyncCmd: PSYNC replid offset: +CONTINUE and the missed bytes when the
// backlog holds that point of this server's history, else +FULLRESYNC.
func psyncCmd(c *Ctx) {
	if r := replication(c); r != nil {
		r.Sync(c, true)
		return
	}
	c.Error("ERR replication is not available")
}

func replconfCmd(c *Ctx) {
	if r := replication(c); r != nil {
		r.ReplConf(c)
		return
	}
	c.W.SimpleString("OK")
}

// roleCmd: ROLE on a master: "master", the replication offset, and the online
// replicas as [ip, port, acknowledged offset] (the last two as bulk strings,
// as Redis replies them).
func roleCmd(c *Ctx) {
	var off int64
	var reps []ReplicaInfo
	if r := replication(c); r != nil {
		if host, port, state, offset := r.ReplicaState(); host != "" {
			// a replica: its master, the link's state, the offset processed
			c.W.ArrayLen(5)
			c.W.BulkString("slave")
			c.W.BulkString(host)
			c.W.Int(port)
			c.W.BulkString(state)
			c.W.Int(offset)
			return
		}
		off, reps = r.ReplicationOffset(), r.Replicas()
	}
	c.W.ArrayLen(3)
	c.W.BulkString("master")
	c.W.Int(off)
	c.W.ArrayLen(len(reps))
	var buf [20]byte
	for _, rp := range reps {
		c.W.ArrayLen(3)
		c.W.BulkString(rp.IP)
		c.W.Bulk(resp.AppendInt(buf[:0], rp.Port))
		c.W.Bulk(resp.AppendInt(buf[:0], rp.Offset))
	}
}
