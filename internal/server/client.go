package server

import (
	"net"
	"strconv"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/network"
	"github.com/hotkv/hotkv/internal/server/repl"
)

// client is what a connection's commands run as: the state commands see
// (command.Client), its reply buffer, its transaction, blocked command,
// subscriptions and published memory figures. Its connection (nc: socket,
// reader, writes) is the network side's; the client is that connection's
// network.Session (session.go).
type client struct {
	command.Client
	nc          *network.Conn // nil for the connection-less client of Apply
	raddr       net.Addr
	unix        bool  // connected on the Unix socket (CLIENT LIST flag U)
	clockUs     int64 // the server clock when the next command of the batch starts
	softSinceMs int64 // when the pending output first exceeded the soft limit
	obufOver    bool  // the output went over its limit in a batch: the next write drops the client
	srv         *Server
	push        pushState    // Pub/Sub messages and invalidations (pubsub.go)
	block       blockedState // a parked blocking command (blocking.go)
	isBlocked   atomic.Bool  // block.on, for the owner and CLIENT LIST
	// closeAfterBlocked: closed once its blocked command's reply is out (a
	// master turned replica: disconnectAllBlocked); for the owner
	closeAfterBlocked atomic.Bool
	pauseCounted      bool  // counted in blocked_clients while CLIENT PAUSE holds it (notePaused)
	pushSoftSince     int64 // when queued messages first exceeded the soft limit
	multi             multiState
	w                 resp.Writer
	ctx               command.Ctx
	lastCmd           atomic.Pointer[command.Spec] // read by CLIENT LIST
	mem               clientMem                    // published memory figures (clientmem.go)
	pushed            bool                         // the reply buffer holds out-of-band messages (resetReplyBuf)
	monitor           bool                         // a MONITOR client (introspect.go); engine lock
	cmds              int64                        // commands received (those refused and queued too)
	cmdsDone          int64                        // commands run on its behalf (CLIENT LIST tot-cmds); engine lock
	// replication (repl.go): set once the connection sent SYNC/PSYNC
	replica           *repl.Link
	pendingListenPort int64 // REPLCONF listening-port before SYNC
	capaPsync2        bool  // REPLCONF capa psync2: +CONTINUE names the replication id
	capaEOF           bool  // REPLCONF capa eof: takes an EOF-marked snapshot, streamed
	// bulkOut marks a connection whose output is a replica's stream or
	// snapshot: its output buffers are kept between writes (drainPush,
	// resetReplyBuf). Set under the engine lock, read by the owner.
	bulkOut atomic.Bool
	// REPLCONF rdb-only 1: SYNC sends the snapshot, then closes (no stream)
	rdbOnly bool
	// rdb channel replication (repl.go): capaRDBChannel is REPLCONF capa
	// rdb-channel-repl, accepted; a main channel waiting for its snapshot
	// keeps mainCh; a replica's RDB channel has rdbChannel and the id of
	// its main channel (REPLCONF rdb-channel 1, main-ch-client-id)
	capaRDBChannel bool
	mainCh         *mainChannel
	rdbChannel     bool
	rdbSlave       bool // an RDB channel that asked for its snapshot: a replica's connection, not fed the stream
	mainChID       int64
	// REPLCONF rdb-filter-only: filtered is set, and the snapshot holds no
	// keys, the function libraries only when filterFunctions
	filtered, filterFunctions bool
	woff                      int64  // the stream offset a WAIT waits for
	wseq                      uint64 // the unit of its last write, which WAITAOF waits for
	// replySeq is the unit the client's output waits for when a reply
	// barrier is set (barrier.go); 0: none
	replySeq atomic.Uint64
}

// maxBatch bounds how many pipelined commands one connection runs per hold of the
// engine lock, and maxReplyBatch how many reply bytes it buffers before flushing
// (goroutine mode), so one client's deep pipeline cannot starve the others or
// grow memory unbounded.
const (
	maxBatch      = 1024
	maxReplyBatch = 64 << 10
	// maxLoopReplyBatch bounds the output (not counting references to
	// values) one connection's batch builds on an event loop before the
	// loop serves the others
	maxLoopReplyBatch = 1 << 20
)

// Open implements network.Host: it builds the client of a new connection and
// registers it, unless maxclients connections are open already.
func (h *netHost) Open(nc *network.Conn) (network.Session, *resp.Writer, []byte) {
	s := (*Server)(h)
	if s.protectedModeRefuses(nc) {
		return nil, nil, errProtectedMode
	}
	cl := s.initClient(nc)
	s.mu.Lock()
	if int64(len(s.clients)) >= s.cfg.Int("maxclients") {
		s.mu.Unlock()
		return nil, nil, errMaxClients
	}
	s.clients[cl.ID] = cl
	s.mu.Unlock()
	cl.w.TakeRefs(&s.copyAvoid) // its replies are written with Segment
	if cn := nc.PeerCN(); cn != "" && s.cfg.String("tls-auth-clients-user") == "CN" {
		s.certUser(cl, cn)
	}
	return cl, &cl.w, nil
}

// certUser is tls-auth-clients-user CN: a TLS client whose verified
// certificate names an enabled ACL user in its Common Name starts
// authenticated as that user; otherwise it stays the default user and the
// attempt is logged (reason tls-cert).
func (s *Server) certUser(cl *client, cn string) {
	s.eng.Lock()
	defer s.eng.Unlock()
	if u := s.acl.User(cn); u != nil && u.Enabled() {
		cl.User, cl.Authenticated = u, true
		cl.nc.Reader().SetUnauthenticated(false)
		s.log.Debug("TLS: Auto-authenticated client as " + u.Name)
		return
	}
	s.ACLDenied(&cl.Client, acl.DeniedTLSCert, acl.CtxToplevel, "", cn)
}

var errMaxClients = []byte("-ERR max number of clients reached\r\n")

// initClient builds the client of connection nc.
func (s *Server) initClient(nc *network.Conn) *client {
	cl := &client{nc: nc, raddr: nc.RemoteAddr(), srv: s}
	cl.ID = s.nextID.Add(1)
	cl.Addr = nc.RemoteAddr().String()
	cl.LAddr = nc.LocalAddr().String()
	if ua, ok := nc.LocalAddr().(*net.UnixAddr); ok {
		// a Unix socket client: Redis names both ends by the socket's path
		cl.unix = true
		cl.Addr = ua.Name + ":0"
		cl.LAddr = cl.Addr
	}
	cl.Proto = 2
	cl.User = s.acl.Default
	cl.Authenticated = s.acl.DefaultOpen() // any goroutine: the default user's flags are read atomically
	cl.Multi = -1
	cl.CreatedMs = s.clock.NowMs()
	nc.Touch(cl.CreatedMs)
	nc.Reader().SetUnauthenticated(!cl.Authenticated)
	cl.w.Proto = 2
	cl.ctx = command.Ctx{W: &cl.w, Client: &cl.Client, KS: s.ks, Srv: s, Rand: s.eng.Rand, Locks: s.lockView()}
	return cl
}

// newClient builds and registers the client of conn without serving it, in
// goroutine mode (tests and benchmarks run its commands themselves).
func (s *Server) newClient(conn net.Conn) *client {
	cl := s.initClient(s.net.NewConn(conn))
	s.mu.Lock()
	s.clients[cl.ID] = cl
	s.mu.Unlock()
	return cl
}

// kill disconnects the client from any goroutine: the connection's owner (its
// goroutine or event loop) sees the socket fail and closes it. Call it with
// Server.mu held and only for a client still in Server.clients (the event loop
// closes a socket only after taking it out of the registry).
func (cl *client) kill() {
	if cl.nc != nil {
		cl.nc.Kill()
	}
}

// killed reports whether kill was called.
func (cl *client) killed() bool { return cl.nc != nil && cl.nc.Killed() }

// wakeForPush tells the owner of cl that output waits.
func (cl *client) wakeForPush() {
	if cl.nc != nil {
		cl.nc.Wake()
	}
}

// resetReplyBuf empties the reply buffer once all of it was written. It is
// kept for the next replies up to 1 MiB: a client that asks for big replies
// (LRANGE of hundreds of elements, pipelines) usually asks again, and growing
// a fresh buffer for every batch cost LRANGE_600 -P 16 its p99 (38 ms against
// 10). A buffer that held out-of-band messages (drainPush) and grew past
// Redis's 16 KiB reply chunk is given back: the client did not ask for them,
// and a burst must not stay live. Kept, it counted in used_memory: after an
// eviction, 10 tracking clients held about 100 KB each of invalidations
// already sent, and the next eviction pass took keys for them, which sent
// more (Redis's #8069 feedback loop).
func (cl *client) resetReplyBuf() {
	pushed := cl.pushed
	cl.pushed = false
	cl.w.Reset() // the references too: the bytes they referred to were written
	if cl.bulkOut.Load() {
		// a replica's: the stream goes on (drainPush swaps it with the
		// queued bytes' buffer)
		if cap(cl.w.Buf) > bulkKeep {
			cl.w.Buf = nil
		}
		return
	}
	if c := cap(cl.w.Buf); c > 1<<20 || (pushed && c > replyChunk) {
		cl.w.Buf = nil
	}
}

// bulkKeep is the most a replica's connection keeps of each of its two
// output buffers between writes: a streamed snapshot's window (sinkWindow)
// and some.
const bulkKeep = 2 * sinkWindow

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// isReplica reports whether cl is a replica's connection: one fed the
// stream, or an RDB channel (Redis's CLIENT_SLAVE). Engine lock.
func (cl *client) isReplica() bool { return cl.replica != nil || cl.rdbSlave }
