package server

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/persist"
	"github.com/hotkv/hotkv/internal/server/repl"
)

// The master side of replication is internal/server/repl; this file answers
// SYNC, PSYNC, REPLCONF and WAIT with it, and keeps WAIT's blocked clients.
// Everything here runs under the engine lock.

// replHost is the server as repl.Host.
type replHost Server

func (h *replHost) AddTarget(t repl.Target) {
	(*Server)(h).AddPropagationTarget(t, command.PropRepl)
}

func (h *replHost) RemoveTarget(t repl.Target) { (*Server)(h).RemovePropagationTarget(t) }

func (h *replHost) PingPeriodMs() int64 { return h.cfg.Int("repl-ping-replica-period") * 1000 }

func (h *replHost) BacklogSize() int64 { return h.cfg.Int("repl-backlog-size") }

func (h *replHost) BacklogTTLMs() int64 { return h.cfg.Int("repl-backlog-ttl") * 1000 }

// RemoteAddr implements repl.Replica.
func (cl *client) RemoteAddr() net.Addr { return cl.raddr }

var _ command.Replication = (*Server)(nil)

// Sync implements SYNC and PSYNC (Redis's syncCommand): the snapshot, then the
// stream. psync selects the +FULLRESYNC preamble. A replica's snapshot is
// encoded in the background (syncInBackground); REPLCONF rdb-only and
// rdb-filter-only syncs (redis-cli --rdb, --functions-rdb) and a test's
// SetSnapshot writer still encode it here, under the lock.
func (s *Server) Sync(c *command.Ctx, psync bool) {
	cl := s.clientOf(c.Client)
	if cl == nil || cl.isReplica() {
		return // a replica sending SYNC again is ignored, as in Redis
	}
	if psync && len(c.Argv) > 3 && strings.EqualFold(string(c.Argv[3]), "failover") {
		if e := s.psyncFailover(c); e != "" {
			c.Error(e)
			return
		}
	}
	if psync && len(c.Argv) > 2 {
		if _, ok := resp.ParseInt(c.Argv[2]); !ok {
			s.log.Warn(fmt.Sprintf("Replica %s asks for synchronization but with a wrong offset", replicaName(cl)))
			c.Err(command.ErrNotInt)
			return
		}
	}
	if psync && !cl.filtered && !cl.rdbOnly && s.partialResync(c, cl) {
		return
	}
	if psync && cl.capaRDBChannel && !cl.filtered && !cl.rdbOnly {
		s.awaitRDBChannel(c, cl)
		return
	}
	if psync && cl.rdbChannel && cl.rdbOnly && !cl.filtered && s.snapshotFn == nil {
		s.syncRDBChannel(c, cl)
		return
	}
	if !cl.filtered && !cl.rdbOnly && s.snapshotFn == nil {
		s.syncInBackground(c, cl, psync)
		return
	}
	var rdb bytes.Buffer
	write := s.snapshot
	if cl.filtered {
		write = func(w io.Writer) error { return s.rdb.WriteFiltered(w, cl.filterFunctions) }
	}
	if err := write(&rdb); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	s.fullResync(c, psync)
	b := c.W.Buf
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(rdb.Len()), 10)
	b = append(b, '\r', '\n')
	b = append(b, rdb.Bytes()...) // no trailing CRLF: the stream follows
	c.W.Buf = b
	if cl.rdbOnly {
		// redis-cli --rdb and --functions-rdb: the snapshot alone, then the
		// connection closes (Redis frees an rdb-only replica after its RDB)
		c.Client.CloseAfterReply = true
		return
	}
	s.becomeReplica(cl, s.repl.Attach(cl, psync, cl.pendingListenPort, s.clock.NowMs()))
	cl.Flags = "S"
	s.log.Info("replica attached", "client", cl.Addr)
}

// partialResync is masterTryPartialResynchronization: PSYNC replid offset
// continues when replid is this server's history (its id, or the id it
// continues up to second_repl_offset) and the backlog holds offset: the
// replica gets +CONTINUE and the bytes it missed, no snapshot.
func (s *Server) partialResync(c *command.Ctx, cl *client) bool {
	if len(c.Argv) < 3 {
		return false
	}
	id := string(c.Argv[1])
	off, ok := resp.ParseInt(c.Argv[2])
	if !ok || (id != s.replID && (id != s.replID2 || off > s.secondOffset)) {
		switch {
		case id == "?":
		case id != s.replID && id != s.replID2:
			s.log.Info(fmt.Sprintf("Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '%s', my replication IDs are '%s' and '%s')", id, s.replID, s.replID2))
		default:
			s.log.Info(fmt.Sprintf("Partial resynchronization not accepted: Requested offset for second ID was %d, but I can reply up to %d", off, s.secondOffset))
		}
		return false
	}
	data, ok := s.repl.Partial(off)
	if !ok {
		s.log.Info(fmt.Sprintf("Unable to partial resync with replica %s for lack of backlog (Replica request was: %d).", cl.Addr, off))
		return false
	}
	if cl.capaPsync2 {
		c.W.SimpleString("CONTINUE " + s.replID)
	} else {
		c.W.SimpleString("CONTINUE")
	}
	s.becomeReplica(cl, s.repl.AttachPartial(cl, data, cl.pendingListenPort, s.clock.NowMs()))
	cl.Flags = "S"
	s.stats.syncPartialOK++
	s.log.Info(fmt.Sprintf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", cl.Addr, len(data), off))
	return true
}

// fullResync answers a full synchronisation: +FULLRESYNC for PSYNC (a
// partial resync asked for is refused and counted: HotKV has no backlog),
// and counts it in sync_full.
func (s *Server) fullResync(c *command.Ctx, psync bool) {
	if psync {
		c.W.SimpleString(s.fullResyncLine())
	}
	s.countFullSync(psync && askedPartial(c))
}

// becomeReplica makes cl a replica with its link l (every attach path),
// its connection marked as a replica link: its stream is written in bigger
// pieces while the event loop is busy (network.Conn.SetCoalesce).
func (s *Server) becomeReplica(cl *client, l *repl.Link) {
	cl.replica = l
	cl.bulkOut.Store(true)
	if cl.nc != nil {
		cl.nc.SetCoalesce(true)
	}
}

// countFullSync counts a full sync that starts (sync_full), and a partial
// one it replaces (sync_partial_err).
func (s *Server) countFullSync(askedPartial bool) {
	if askedPartial {
		s.stats.syncPartialErr++
	}
	s.stats.syncFull++
}

// fullResyncLine is +FULLRESYNC's text: the history's id and the offset the
// stream continues from.
func (s *Server) fullResyncLine() string {
	return "FULLRESYNC " + s.replID + " " + strconv.FormatInt(s.repl.Offset(), 10)
}

// askedPartial reports whether a PSYNC asked to continue a history (not
// PSYNC ? -1).
func askedPartial(c *command.Ctx) bool {
	return len(c.Argv) > 1 && len(c.Argv[1]) > 0 && c.Argv[1][0] != '?'
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
					cl.replica.ListenPort = p
				}
			}
		case "rdb-only":
			v, ok := resp.ParseInt(val)
			if !ok {
				c.Err(command.ErrNotInt)
				return
			}
			if v < 0 || v > 1 { // getRangeLongFromObjectOrReply's words
				c.Error("ERR value is out of range, value must between 0 and 1")
				return
			}
			if cl != nil {
				cl.rdbOnly = v == 1
			}
		case "rdb-filter-only":
			functions, errText := parseRDBFilters(val)
			if errText != "" {
				c.Error(errText)
				return
			}
			if cl != nil {
				cl.filtered, cl.filterFunctions = true, functions
			}
		case "capa":
			switch {
			case cl == nil:
			case bytes.EqualFold(val, []byte("psync2")):
				cl.capaPsync2 = true
			case bytes.EqualFold(val, []byte("eof")):
				cl.capaEOF = true
			case bytes.EqualFold(val, []byte("rdb-channel-repl")):
				// accepted only while this master syncs by socket with a
				// channel for the snapshot (replconfCommand)
				cl.capaRDBChannel = s.cfg.Bool("repl-rdb-channel") && s.cfg.Bool("repl-diskless-sync")
			}
		case "rdb-channel":
			v, ok := resp.ParseInt(val)
			if !ok {
				c.Err(command.ErrNotInt)
				return
			}
			if v < 0 || v > 1 {
				c.Error("ERR value is out of range, value must between 0 and 1")
				return
			}
			if cl != nil {
				cl.rdbChannel = v == 1
			}
		case "main-ch-client-id":
			id, ok := resp.ParseInt(val)
			if !ok {
				c.Err(command.ErrNotInt)
				return
			}
			if s.waitingMainChannel(id) == nil {
				c.Error("ERR Unrecognized RDB client id: " + strconv.FormatInt(id, 10))
				return
			}
			if cl != nil {
				cl.mainChID = id
			}
		case "ip-address":
		case "ack", "fack":
			// only a replica acknowledges; ACK gets no reply. ACK off FACK
			// aof: aof is the offset fsynced to its AOF (replconfCommand)
			if cl != nil && cl.replica != nil && opt == "ack" {
				off, _ := resp.ParseInt(val)
				s.repl.Ack(cl.replica, off, s.clock.NowMs())
				if i+3 < len(c.Argv) && bytes.EqualFold(c.Argv[i+2], []byte("fack")) {
					if aof, ok := resp.ParseInt(c.Argv[i+3]); ok {
						s.repl.AckAOF(cl.replica, aof)
					}
				}
				if cl.replica.State == stateSendBulkAndStream {
					s.replicaOnline(cl) // its snapshot is loaded (replconfCommand)
				}
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

// parseRDBFilters reads REPLCONF rdb-filter-only's include filters, a
// space-separated list (sdssplitargs): "" includes nothing, "functions" the
// function libraries. errText is Redis's error.
func parseRDBFilters(val []byte) (functions bool, errText string) {
	filters, ok := resp.SplitArgs(val)
	if !ok {
		return false, "ERR Missing rdb-filter-only values"
	}
	for _, f := range filters {
		if !bytes.EqualFold(f, []byte("functions")) {
			return false, "ERR Unsupported rdb-filter-only option: " + string(f)
		}
		functions = true
	}
	return functions, ""
}

// dropReplica forgets a replica that disconnected. Engine lock held.
func (s *Server) dropReplica(cl *client) {
	if cl.replica == nil {
		return
	}
	s.repl.Detach(cl.replica)
	s.log.Info("connection with replica lost", "client", cl.Addr)
	s.wakeWaiters()
}

// ReplicationOffset is master_repl_offset.
func (s *Server) ReplicationOffset() int64 { return s.repl.Offset() }

// Replicas lists the attached replicas for ROLE.
func (s *Server) Replicas() []command.ReplicaInfo { return s.repl.Replicas() }

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
	acked := s.repl.Acked(cl.woff)
	if acked >= numReplicas || s.repl.Len() == 0 || c.NoBlock {
		c.W.Int(acked)
		return
	}
	if !s.blockForAcks(c, cl, timeoutMs, true) {
		c.W.Int(acked)
	}
}

// blockForAcks blocks cl, running WAIT or WAITAOF, until wakeWaiters finds
// what it waits for or timeoutMs passes (0: no timeout), and reports
// whether it could block. askReplicas: the replicas are asked for
// acknowledgements, once, when the client starts to wait (Redis's
// replicationRequestAckFromSlaves); asked again on every rerun, the GETACK
// would land in the output of the replica whose ACK ran it, which reads as a
// reply to its REPLCONF (the replica is dropped), and each ACK would draw
// another GETACK. Engine lock held.
func (s *Server) blockForAcks(c *command.Ctx, cl *client, timeoutMs int64, askReplicas bool) bool {
	deadline := int64(0)
	if timeoutMs > 0 {
		deadline = c.Now + timeoutMs
	}
	rerun := cl.block.on // run again by wakeWaiters, which keeps it waiting
	if !c.Block(keyspace.KindNone, nil, deadline, false) {
		return false
	}
	if !rerun {
		s.waiters = append(s.waiters, cl)
		if askReplicas {
			s.repl.RequestAcks()
		}
	}
	return true
}

// wakeWaiters runs the WAIT commands again after an acknowledgement (or a
// replica leaving): each replies when it has enough, else waits on.
func (s *Server) wakeWaiters() {
	ws := s.waiters
	if len(ws) == 0 {
		return
	}
	s.waiters = nil
	for _, cl := range ws {
		if !cl.block.on {
			continue
		}
		if !s.rerunBlocked(cl, false) {
			s.waiters = append(s.waiters, cl)
		}
	}
	s.aofWaiting.Store(len(s.waiters) > 0)
}

// dropWaiter forgets a WAIT client that left or was released.
func (s *Server) dropWaiter(cl *client) {
	for i, x := range s.waiters {
		if x == cl {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return
		}
	}
}

// heldReplica is a replica whose snapshot is still being encoded: its
// stream is held back until the payload is sent, as Redis keeps it in the
// replica's output buffer while the BGSAVE for it runs (and limits it as
// such: client-output-buffer-limit replica). While its sync waits for more
// replicas (waiting: repl-diskless-sync-delay) it gets nothing: its
// snapshot will hold everything before. Engine lock.
type heldReplica struct {
	cl      *client
	holding bool
	waiting bool
	held    []byte
}

// Push implements repl.Replica.
func (h *heldReplica) Push(msg []byte) {
	if h.waiting {
		return
	}
	if !h.holding {
		h.cl.pushMsg(msg)
		return
	}
	h.held = append(h.held, msg...)
	if h.cl.srv.pushOverLimit(h.cl, len(h.held)) {
		h.cl.kill()
	}
}

// RemoteAddr implements repl.Replica.
func (h *heldReplica) RemoteAddr() net.Addr { return h.cl.raddr }

// syncInBackground is Sync for a replica: +FULLRESYNC now, the replica
// attached now (the stream from this moment is held for it), and the
// snapshot of this moment (keyspace.Snapshot) encoded by a goroutine a
// step at a time; the payload and the held stream follow when it is done.
func (s *Server) syncInBackground(c *command.Ctx, cl *client, psync bool) {
	if s.delaySync(c, cl, psync, false) {
		return
	}
	s.fullResync(c, psync)
	h := &heldReplica{cl: cl, holding: true}
	s.becomeReplica(cl, s.repl.Attach(h, psync, cl.pendingListenPort, s.clock.NowMs()))
	cl.Flags = "S"
	s.snapshotForReplica(cl, h)
}

// snapshotForReplica starts the snapshot of this moment for a replica
// attached with h (holding its stream) and sends it, then the held stream.
// With repl-diskless-sync and a replica that takes EOF-marked payloads
// (REPLCONF capa eof: every Redis since 2.8.18, and HotKV) the snapshot
// goes out as it is encoded (replicaSink), as Redis's socket target
// streams its child's output; otherwise it is encoded whole first, for its
// length ($<len>), as Redis writes a file first.
func (s *Server) snapshotForReplica(cl *client, h *heldReplica) {
	st := s.rdb.SyncStream()
	s.log.Info("replica attached, snapshot in the background", "client", cl.Addr)
	streamed := s.cfg.Bool("repl-diskless-sync") && cl.capaEOF
	if streamed {
		s.log.Info("Starting BGSAVE for SYNC with target: replicas sockets")
	}
	s.debugPause(pauseAfterFork)
	keyDelay := s.cfg.Int("rdb-key-save-delay")
	s.rdb.ReplSnapshot(true)
	var payload bytes.Buffer
	var out io.Writer = &payload
	var sink *replicaSink
	if streamed {
		sink = s.newReplicaSink(cl)
		out = sink
	}
	go func() {
		maxKeys, pause := s.replicaSnapshotPause(cl, keyDelay)
		err := s.runSnapshot(st, out, maxKeys, pause)
		s.eng.Lock()
		defer s.eng.Unlock()
		s.rdb.ReplSnapshot(false)
		defer s.startDueSyncs(s.clock.NowMs()) // the syncs that waited for this one
		if err != nil {
			st.Close()
			if !cl.killed() {
				s.log.Warn("snapshot for a replica failed: " + err.Error())
				cl.kill()
			}
			return
		}
		if cl.killed() {
			return
		}
		if streamed {
			sink.end()
		} else {
			// the payload as a bulk string without its CRLF (the stream follows)
			cl.pushBulk([]byte("$" + strconv.Itoa(payload.Len()) + "\r\n"))
			cl.pushBulk(payload.Bytes())
		}
		// then the stream held since the snapshot's start
		cl.pushBulk(h.held)
		h.holding, h.held = false, nil
		if cl.replica != nil && cl.replica.State == stateWaitBgsave {
			s.replicaOnline(cl) // a delayed sync's wait is over
		}
	}()
}

// sinkWindow is how many bytes of a streamed snapshot may wait in a
// replica's output, not yet written to its socket: the snapshot's encoding
// waits beyond it (Redis's child waits on its pipe the same way), so a
// slow replica costs the primary this much memory, not the whole payload.
// The sink queues at most sinkPiece at a time.
const (
	sinkWindow = 256 << 10
	sinkPiece  = 64 << 10
)

// replicaSink is runSnapshot's output for a snapshot streamed to a
// replica: each write is queued on the replica's connection (pushBulk,
// under the engine lock) once fewer than sinkWindow bytes queued before it
// wait to be written (the connection's tot-net-out tells what was). The
// payload is EOF-marked: its first line ($EOF:<mark>) goes with the first
// write, from the snapshot's goroutine, after the reply of the command that
// started it; end queues the mark.
type replicaSink struct {
	s      *Server
	cl     *client
	mark   []byte
	head   []byte // nil once queued
	queued int64  // bytes queued by the sink
	base   int64  // the connection's bytes written when the sink began
}

// newReplicaSink starts a sink for cl. Engine lock.
func (s *Server) newReplicaSink(cl *client) *replicaSink {
	mark := eofMark()
	k := &replicaSink{s: s, cl: cl, mark: []byte(mark), head: []byte("$EOF:" + mark + "\r\n")}
	cl.bulkOut.Store(true)
	if cl.nc != nil {
		k.base = cl.nc.NetOut()
	}
	return k
}

// push queues p after the head. Engine lock.
func (k *replicaSink) push(p []byte) {
	if k.head != nil {
		k.cl.pushBulk(k.head)
		k.queued += int64(len(k.head))
		k.head = nil
	}
	k.cl.pushBulk(p)
	k.queued += int64(len(p))
}

// end queues the payload's end mark (after the head, for an empty one).
// Engine lock.
func (k *replicaSink) end() { k.push(k.mark) }

// Write implements io.Writer; it fails once the replica is gone.
func (k *replicaSink) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		for k.cl.nc != nil && k.queued-(k.cl.nc.NetOut()-k.base) > sinkWindow {
			if k.cl.killed() || !k.s.clientLive(k.cl) {
				return done, errSnapshotStopped
			}
			time.Sleep(100 * time.Microsecond)
		}
		piece := p[done:min(done+sinkPiece, len(p))]
		k.s.eng.Lock()
		if k.cl.killed() {
			k.s.eng.Unlock()
			return done, errSnapshotStopped
		}
		k.push(piece)
		k.s.eng.Unlock()
		done += len(piece)
	}
	return len(p), nil
}

// Rdb channel replication (Redis 8's repl-rdb-channel; decision 0052). A
// replica that announced REPLCONF capa rdb-channel-repl and cannot continue
// is told +RDBCHANNELSYNC <its client id> on its main channel, which then
// waits (INFO: wait_bgsave) and is fed nothing. The replica opens a second
// connection, its RDB channel (REPLCONF rdb-only 1 rdb-channel 1
// main-ch-client-id <id>), and sends PSYNC ? -1 there: it gets +FULLRESYNC
// and the snapshot of that moment, EOF-marked, while from the same moment
// the main channel gets the stream (send_bulk_and_stream). The main channel
// is online when the replica acknowledges the loaded snapshot (REPLCONF ACK)
// or when the payload is all queued, whichever comes first.

// INFO's states of a main channel before it is online.
const (
	stateWaitBgsave        = "wait_bgsave"
	stateSendBulkAndStream = "send_bulk_and_stream"
)

// mainChannel is a replica's main channel under rdb channel replication:
// it gets nothing until its RDB channel's snapshot begins (live), then the
// stream as it is produced.
type mainChannel struct {
	cl   *client
	live bool
}

// Push implements repl.Replica.
func (m *mainChannel) Push(msg []byte) {
	if m.live {
		m.cl.pushMsg(msg)
	}
}

// RemoteAddr implements repl.Replica.
func (m *mainChannel) RemoteAddr() net.Addr { return m.cl.raddr }

// awaitRDBChannel answers a main channel's PSYNC that cannot continue
// (syncCommand's rdb channel branch): +RDBCHANNELSYNC with its client id.
// No full sync is counted here: its RDB channel's PSYNC counts it.
func (s *Server) awaitRDBChannel(c *command.Ctx, cl *client) {
	if askedPartial(c) {
		s.stats.syncPartialErr++
	}
	cl.mainCh = &mainChannel{cl: cl}
	s.becomeReplica(cl, s.repl.Attach(cl.mainCh, true, cl.pendingListenPort, s.clock.NowMs()))
	cl.replica.State = stateWaitBgsave
	cl.Flags = "S"
	s.log.Info(fmt.Sprintf("Replica %s is capable of rdb channel synchronization, and partial sync isn't possible. "+
		"Full sync will continue with dedicated rdb channel.", replicaName(cl)))
	c.W.SimpleString("RDBCHANNELSYNC " + strconv.FormatInt(cl.ID, 10))
}

// syncRDBChannel is an RDB channel's PSYNC: +FULLRESYNC now, the snapshot of
// this moment encoded in the background and sent EOF-marked; its main
// channel gets the stream from this moment on. The RDB channel itself never
// gets the stream; the replica closes it once the snapshot is loaded.
func (s *Server) syncRDBChannel(c *command.Ctx, cl *client) {
	if s.delaySync(c, cl, true, true) {
		return
	}
	s.fullResync(c, true)
	s.startRDBChannel(cl)
}

// startRDBChannel starts an RDB channel's snapshot and its main channel's
// stream, at this moment.
func (s *Server) startRDBChannel(cl *client) {
	main := s.waitingMainChannel(cl.mainChID)
	if main != nil && main.killed() {
		main = nil
	}
	st := s.rdb.SyncStream()
	if !cl.rdbSlave { // a delayed sync set them on its own goroutine (the connection's owner reads rdbSlave)
		cl.Flags, cl.rdbSlave = "S", true
	}
	if main != nil {
		main.mainCh.live = true
		main.replica.State = stateSendBulkAndStream
		s.repl.ForceSelect() // the main channel's stream starts with a SELECT
		s.log.Info("Starting to deliver RDB and replication stream to replica: " + replicaName(main))
	} else {
		s.log.Warn(fmt.Sprintf("Starting to deliver RDB to replica %s but it has no associated main channel", replicaName(cl)))
	}
	s.log.Info("Starting BGSAVE for SYNC with target: replicas sockets (rdb-channel)")
	s.debugPause(pauseAfterFork)
	keyDelay := s.cfg.Int("rdb-key-save-delay")
	s.rdb.ReplSnapshot(true)
	sink := s.newReplicaSink(cl)
	go func() {
		maxKeys, pause := s.replicaSnapshotPause(cl, keyDelay)
		err := s.runSnapshot(st, sink, maxKeys, pause)
		s.eng.Lock()
		defer s.eng.Unlock()
		s.rdb.ReplSnapshot(false)
		defer s.startDueSyncs(s.clock.NowMs()) // the syncs that waited for this one
		if err != nil || cl.killed() || !s.clientLive(cl) {
			// the RDB channel is gone or the snapshot failed: the main
			// channel goes too, and the replica starts again
			if err != nil {
				st.Close()
			}
			s.log.Warn("Background transfer error")
			if !cl.killed() {
				cl.kill()
			}
			if main != nil && !main.killed() {
				main.kill()
			}
			return
		}
		sink.end()
		s.log.Info(fmt.Sprintf("Streamed RDB transfer with replica %s succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming", replicaName(cl)))
		if main != nil && main.replica != nil && main.replica.State == stateSendBulkAndStream {
			s.replicaOnline(main)
		}
	}()
}

// replicaOnline puts a main channel online (replicaPutOnline).
func (s *Server) replicaOnline(cl *client) {
	cl.replica.State = ""
	s.log.Info("Synchronization with replica " + replicaName(cl) + " succeeded")
}

// replicaName is Redis's replicationGetSlaveName: ip:listening-port.
func replicaName(cl *client) string {
	host := cl.Addr
	if h, _, err := net.SplitHostPort(cl.Addr); err == nil {
		host = h
	}
	return net.JoinHostPort(host, strconv.FormatInt(cl.pendingListenPort, 10))
}

// eofMark is a diskless payload's end mark: 40 random hex characters.
func eofMark() string {
	const hexd = "0123456789abcdef"
	var b [40]byte
	for i := range b {
		b[i] = hexd[rand.IntN(16)]
	}
	return string(b[:])
}

// replicaSnapshotPause is runSnapshot's pause for a replica's snapshot: it
// stops once cl is gone, and with rdb-key-save-delay (µs per key; negative:
// one µs with a chance of 1 in -delay per key, as Redis's child sleeps) it
// hands out one key a step and sleeps for it.
func (s *Server) replicaSnapshotPause(cl *client, keyDelay int64) (maxKeys int, pause func(keys int) bool) {
	gone := func() bool { return cl.killed() || !s.clientLive(cl) } // killed, or closed by its peer
	if keyDelay == 0 {
		return 0, func(int) bool { return !gone() }
	}
	return 1, func(keys int) bool {
		time.Sleep(persist.KeyDelayFor(keys, keyDelay))
		return !gone()
	}
}

// waitingMainChannel is the client with id when it is a main channel
// waiting for its RDB channel (+RDBCHANNELSYNC sent, no snapshot begun).
func (s *Server) waitingMainChannel(id int64) *client {
	s.mu.Lock()
	cl := s.clients[id]
	s.mu.Unlock()
	if cl == nil || cl.mainCh == nil || cl.mainCh.live {
		return nil
	}
	return cl
}

// clientLive reports whether cl is still registered (not closed).
func (s *Server) clientLive(cl *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[cl.ID] == cl
}
