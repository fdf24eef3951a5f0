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

// psyncCmd: PSYNC replid offset. HotKV keeps no backlog, so every PSYNC is a
// full resynchronisation (+FULLRESYNC), as Redis answers an unknown replid.
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
