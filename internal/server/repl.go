package server

import (
	"bytes"
	"net"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// The master side of Redis replication (decisions/0023): a connection that sends
// SYNC (or PSYNC, always answered +FULLRESYNC) gets a snapshot of the dataset as
// "$<len>\r\n<rdb>" and from then on the propagated stream, as Redis's
// replicationFeedSlaves encodes it (SELECT when the database changes, each
// command as a RESP array). There is no backlog: a replica that disconnects
// resynchronises in full. Everything here runs under the engine lock.

// replicaState is what a replica connection adds to a client.
type replicaState struct {
	listenPort int64
	ackOff     int64
	ackMs      int64 // when it last acknowledged (or attached), Unix ms
	preSync    bool  // attached with SYNC, not PSYNC (gets no REPLCONF GETACK)
}

// replState is the server's replication state.
type replState struct {
	replicas []*client
	feed     *replFeed
	offset   int64 // master_repl_offset: bytes of stream produced
	unitEnd  int64 // offset at the end of the last execution unit handed over (WAIT's c->woff)
	lastPing int64 // when the last PING went to the replicas (ms since procStart)
	waiters  []*client
}

var procStart = time.Now()

// replFeed is the PropagationTarget that encodes the stream once for every
// replica.
type replFeed struct {
	s     *Server
	seldb int // the database the stream last selected (-1: none yet)
	out   []byte
}

var wordSelect = []byte("SELECT")

func (f *replFeed) Propagate(db int, argv [][]byte) {
	if db >= 0 && db != f.seldb {
		var n [20]byte
		f.out = appendCommand(f.out, wordSelect, strconv.AppendInt(n[:0], int64(db), 10))
		f.seldb = db
	}
	f.out = appendCommand(f.out, argv...)
}

func (f *replFeed) UnitDone() {
	r := &f.s.repl
	r.offset += int64(len(f.out))
	r.unitEnd = r.offset
	for _, cl := range r.replicas {
		cl.pushMsg(f.out)
	}
	if cap(f.out) > 64<<10 {
		f.out = nil
	} else {
		f.out = f.out[:0]
	}
}

// appendCommand encodes argv as a RESP array of bulk strings.
func appendCommand(b []byte, argv ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(argv)), 10)
	b = append(b, '\r', '\n')
	for _, a := range argv {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

var _ command.Replication = (*Server)(nil)

// Sync implements SYNC and PSYNC (Redis's syncCommand): the snapshot, then the
// stream. psync selects the +FULLRESYNC preamble.
func (s *Server) Sync(c *command.Ctx, psync bool) {
	cl := s.clientOf(c.Client)
	if cl == nil || cl.replica != nil {
		return // a replica sending SYNC again is ignored, as in Redis
	}
	var rdb bytes.Buffer
	if err := s.snapshot(&rdb); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	if psync {
		c.W.SimpleString("FULLRESYNC " + s.replID + " " + strconv.FormatInt(s.repl.offset, 10))
	}
	b := c.W.Buf
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(rdb.Len()), 10)
	b = append(b, '\r', '\n')
	b = append(b, rdb.Bytes()...) // no trailing CRLF: the stream follows
	c.W.Buf = b
	cl.replica = &replicaState{ackMs: s.clock.NowMs(), preSync: !psync, listenPort: cl.pendingListenPort}
	cl.Flags = "S"
	r := &s.repl
	r.replicas = append(r.replicas, cl)
	if r.feed == nil {
		r.feed = &replFeed{s: s}
		s.AddPropagationTarget(r.feed, command.PropRepl)
		r.lastPing = time.Since(procStart).Milliseconds()
	}
	r.feed.seldb = -1 // a new replica needs a SELECT before the next command
	s.log.Info("replica attached", "client", cl.Addr)
}

// ReplConf implements REPLCONF (Redis's replconfCommand, master side).
func (s *Server) ReplConf(c *command.Ctx) {
	if len(c.Argv)%2 == 0 {
		c.Err(command.ErrSyntax)
		return
	}
	cl := s.clientOf(c.Client)
	for i := 1; i < len(c.Argv); i += 2 {
		opt, val := string(bytes.ToLower(c.Argv[i])), c.Argv[i+1]
		switch opt {
		case "listening-port":
			p, ok := resp.ParseInt(val)
			if !ok {
				c.Err(command.ErrNotInt)
				return
			}
			if cl != nil {
				cl.pendingListenPort = p
				if cl.replica != nil {
					cl.replica.listenPort = p
				}
			}
		case "ip-address", "capa", "rdb-only", "rdb-filter-only", "rdb-channel":
		case "ack", "fack":
			// only a replica acknowledges; ACK gets no reply
			if cl != nil && cl.replica != nil && opt == "ack" {
				if off, ok := resp.ParseInt(val); ok && off > cl.replica.ackOff {
					cl.replica.ackOff = off
				}
				cl.replica.ackMs = s.clock.NowMs()
				s.wakeWaiters()
			}
			return
		case "getack":
			return // only a replica answers GETACK; a master ignores it
		default:
			c.Error("ERR Unrecognized REPLCONF option: " + string(c.Argv[i]))
			return
		}
	}
	c.W.SimpleString("OK")
}

// dropReplica forgets a replica that disconnected. Engine lock held.
func (s *Server) dropReplica(cl *client) {
	if cl.replica == nil {
		return
	}
	r := &s.repl
	for i, x := range r.replicas {
		if x == cl {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	if len(r.replicas) == 0 && r.feed != nil {
		s.RemovePropagationTarget(r.feed)
		r.feed = nil
	}
	s.log.Info("connection with replica lost", "client", cl.Addr)
	s.wakeWaiters()
}

// replCron sends PING to the replicas every repl-ping-replica-period seconds
// (Redis's replicationCron). Engine lock held.
func (s *Server) replCron() {
	r := &s.repl
	if len(r.replicas) == 0 {
		return
	}
	// the period is real time, as Redis counts its replication cron runs (not
	// the server clock, which tests fake)
	now := time.Since(procStart).Milliseconds()
	if now-r.lastPing < s.cfg.Int("repl-ping-replica-period")*1000 {
		return
	}
	r.lastPing = now
	r.feed.Propagate(-1, [][]byte{[]byte("PING")})
	r.feed.UnitDone()
}

// ReplicationOffset is master_repl_offset.
func (s *Server) ReplicationOffset() int64 { return s.repl.offset }

// Replicas lists the attached replicas for ROLE: address, listening port and
// acknowledged offset.
func (s *Server) Replicas() []command.ReplicaInfo {
	out := make([]command.ReplicaInfo, 0, len(s.repl.replicas))
	for _, cl := range s.repl.replicas {
		out = append(out, command.ReplicaInfo{IP: hostOf(cl.raddr), Port: cl.replica.listenPort, Offset: cl.replica.ackOff})
	}
	return out
}

func hostOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// infoReplicas appends INFO replication's connected_slaves and slaveN lines.
func (s *Server) infoReplicas(b []byte) []byte {
	b = kv(b, "connected_slaves", strconv.Itoa(len(s.repl.replicas)))
	now := s.clock.NowMs()
	for i, cl := range s.repl.replicas {
		rs := cl.replica
		b = append(b, "slave"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":ip="...)
		b = append(b, hostOf(cl.raddr)...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, rs.listenPort, 10)
		b = append(b, ",state=online,offset="...)
		b = strconv.AppendInt(b, rs.ackOff, 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, (now-rs.ackMs)/1000, 10)
		b = append(b, "\r\n"...)
	}
	return b
}

// Wait implements WAIT numreplicas timeout (Redis's waitCommand): the number of
// replicas that acknowledged the stream up to now. With too few, the client
// blocks until enough acknowledge or the timeout passes; with no replica at
// all it replies 0 at once (decisions/0004).
func (s *Server) Wait(c *command.Ctx, numReplicas, timeoutMs int64) {
	cl := s.clientOf(c.Client)
	if cl == nil {
		c.W.Int(0)
		return
	}
	acked := s.ackedReplicas(cl.woff)
	if acked >= numReplicas || len(s.repl.replicas) == 0 || c.NoBlock {
		c.W.Int(acked)
		return
	}
	deadline := int64(0)
	if timeoutMs > 0 {
		deadline = c.Now + timeoutMs
	}
	if !c.Block(keyspace.KindNone, nil, deadline, false) {
		c.W.Int(acked)
		return
	}
	if !containsClient(s.repl.waiters, cl) {
		s.repl.waiters = append(s.repl.waiters, cl)
		s.requestAcks()
	}
}

func containsClient(cs []*client, cl *client) bool {
	for _, x := range cs {
		if x == cl {
			return true
		}
	}
	return false
}

func (s *Server) ackedReplicas(off int64) int64 {
	n := int64(0)
	for _, cl := range s.repl.replicas {
		if cl.replica.ackOff >= off {
			n++
		}
	}
	return n
}

// requestAcks sends REPLCONF GETACK * to the replicas that speak PSYNC.
func (s *Server) requestAcks() {
	r := &s.repl
	if r.feed == nil {
		return
	}
	var b []byte
	b = appendCommand(b, []byte("REPLCONF"), []byte("GETACK"), []byte("*"))
	for _, cl := range r.replicas {
		if !cl.replica.preSync {
			cl.pushMsg(b)
		}
	}
	r.offset += int64(len(b))
}

// wakeWaiters runs the WAIT commands again after an acknowledgement (or a
// replica leaving): each replies when it has enough, else waits on.
func (s *Server) wakeWaiters() {
	ws := s.repl.waiters
	if len(ws) == 0 {
		return
	}
	s.repl.waiters = nil
	for _, cl := range ws {
		if !cl.block.on {
			continue
		}
		if !s.rerunBlocked(cl, false) {
			s.repl.waiters = append(s.repl.waiters, cl)
		}
	}
}

// dropWaiter forgets a WAIT client that left or was released.
func (s *Server) dropWaiter(cl *client) {
	for i, x := range s.repl.waiters {
		if x == cl {
			s.repl.waiters = append(s.repl.waiters[:i], s.repl.waiters[i+1:]...)
			return
		}
	}
}
