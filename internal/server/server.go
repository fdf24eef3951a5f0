// Package server runs HotKV: its network side (listeners, epoll event loops or
// a goroutine per connection, buffers), the one execution path every command
// takes (process, admit, call: dispatch.go, admit.go, call.go; Apply and the
// reply barrier), and the features that hang off it (replicas, persistence,
// client-side caching, keyspace notifications, Pub/Sub delivery, scripting
// runs, maxmemory). Where a command runs: call.go. docs/ARCHITECTURE.md §1.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/engine"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/pubsub"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/notify"
	"github.com/hotkv/hotkv/internal/server/persist"
	"github.com/hotkv/hotkv/internal/server/repl"
	"github.com/hotkv/hotkv/internal/server/tracking"
)

// Options are the inputs that are not configuration parameters.
type Options struct {
	Clock  clock.Clock // nil: the live monotonic clock
	Seed   uint64      // 0: random
	Logger *slog.Logger
	// Listener, when set, is used instead of listening on bind:port (tests use :0).
	Listener net.Listener
	// GoroutinePerConn serves each connection on its own goroutine instead of
	// the epoll event loops (the portable path; tests use it to keep it working).
	GoroutinePerConn bool
	// BusyPoll is how long an event loop with nothing to do keeps polling
	// epoll before it sleeps (0: it sleeps at once). Polling spares the client
	// the wake-up of a sleeping server (docs/decisions/0029); it costs up to
	// that much CPU per idle spell, none once the loop sleeps. cmd/hotkv sets
	// 50 µs.
	BusyPoll time.Duration
}

// Server is one HotKV instance.
type Server struct {
	scripts *scripting // Lua scripting (scripting.go)
	hub     *pubsub.Hub[*client]
	blocked *blocking
	// maxmemory (maxmemory.go), under the engine lock
	mem           memAcct
	preCommandOOM bool
	cfg           *config.Config
	hot           hotParams // the parameters admission reads for every command (admit.go)
	log           *slog.Logger
	clock         clock.Clock
	eng           *engine.Engine
	ks            *keyspace.Keyspace
	table         *command.Table
	limits        *resp.Limits
	readBufs      resp.SharedPool // goroutine mode's read buffers

	lnMu    sync.Mutex // guards lns, bind, port
	lns     []net.Listener
	bind    string
	port    int64
	running bool
	startUs int64
	runID   string
	replID  string
	rdb     *persist.RDB // snapshots (persist.go); engine lock

	mu      sync.Mutex // guards clients (taken after the engine lock, never before)
	clients map[int64]*client
	nextID  atomic.Int64
	wg      sync.WaitGroup

	pause    pauseState
	stats    stats
	cmdStats []cmdStat     // indexed by Spec.ID; guarded by the engine lock
	latency  []latencyHist // indexed by Spec.ID; guarded by the engine lock

	prop        propState                         // command propagation (propagate.go); engine lock
	repl        *repl.Master                      // replicas (repl.go); engine lock
	waiters     []*client                         // clients blocked in WAIT (repl.go); engine lock
	snapshotFn  SnapshotFunc                      // SYNC's payload (snapshot.go); nil: internal/rdb
	watchers    map[watchKey]map[*client]struct{} // guarded by the engine lock
	trk         *tracking.Tracker                 // client-side caching (tracking.go); engine lock
	loopStats   loopStats
	inst        instantaneous // guarded by the engine lock
	memPeak     uint64        // guarded by the engine lock
	memPeakTime int64         // Unix seconds

	latencyTracking atomic.Bool      // latency-tracking
	notifier        *notify.Notifier // keyspace notifications (notify.go)
	obufDirty       atomic.Bool
	obufLimit       atomic.Pointer[[3]config.OBufLimit] // client-output-buffer-limit (obufLimits)
	clientsMem      atomic.Int64                        // the evictable clients' published tot-mem (clientmem.go)
	evictedMem      atomic.Int64                        // tot-mem of the clients evicted and not yet closed (clientmem.go)
	errStats        map[string]int64
	shutdown        chan struct{}
	closeOnce       sync.Once
	cancel          context.CancelFunc

	// blockOnPause: goroutine mode, where a paused client sleeps in process;
	// the event loops hold its command back instead.
	blockOnPause bool
	busyPoll     time.Duration // Options.BusyPoll
	loops        []*eventLoop
	// lockLoop is the event loop whose goroutine holds the engine lock to run
	// its clients' commands (serve), else nil: a message for one of that loop's
	// clients needs no wake-up, the loop serves its pushes at the end of the
	// cycle. Engine lock.
	lockLoop *eventLoop
	lnFDs    sync.Map // listener fds the loops accept on
	stopping atomic.Bool

	applier *client      // the connection-less client of Apply (apply.go); engine lock
	barrier barrierState // the reply barrier (barrier.go)

	flushFree  atomic.Bool  // a goroutine gives a big flush's memory back (flushmem.go)
	flushFrees atomic.Int64 // how many times it did (tests)
}

// New builds a server from cfg (already loaded) and opts.
func New(cfg *config.Config, opts Options) *Server {
	clk := opts.Clock
	if clk == nil {
		clk = clock.New()
	}
	seed := opts.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		for _, x := range b {
			seed = seed<<8 | uint64(x)
		}
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ks := keyspace.New(int(cfg.Int("databases")), seed)
	ks.Limits = &keyspace.EncodingLimits{
		HashMaxListpackEntries: cfg.IntFunc("hash-max-listpack-entries"),
		HashMaxListpackValue:   cfg.IntFunc("hash-max-listpack-value"),
		ListMaxListpackSize:    cfg.IntFunc("list-max-listpack-size"),
		SetMaxIntsetEntries:    cfg.IntFunc("set-max-intset-entries"),
		SetMaxListpackEntries:  cfg.IntFunc("set-max-listpack-entries"),
		SetMaxListpackValue:    cfg.IntFunc("set-max-listpack-value"),
		ZSetMaxListpackEntries: cfg.IntFunc("zset-max-listpack-entries"),
		ZSetMaxListpackValue:   cfg.IntFunc("zset-max-listpack-value"),
		HLLSparseMaxBytes:      cfg.IntFunc("hll-sparse-max-bytes"),
		StreamNodeMaxBytes:     cfg.IntFunc("stream-node-max-bytes"),
		StreamNodeMaxEntries:   cfg.IntFunc("stream-node-max-entries"),
	}
	s := &Server{
		cfg:      cfg,
		log:      lg,
		clock:    clk,
		ks:       ks,
		eng:      engine.New(ks, clk, seed),
		table:    command.NewTable(),
		limits:   resp.NewLimits(),
		clients:  map[int64]*client{},
		errStats: map[string]int64{},
		shutdown: make(chan struct{}),
		runID:    randomHex(20),
		replID:   randomHex(20),
	}
	s.watchers = map[watchKey]map[*client]struct{}{}
	s.trk = tracking.New((*trackingHost)(s), seed, cfg.IntFunc("tracking-table-max-keys"))
	s.scripts = newScripting(s)
	s.hub = pubsub.New[*client]()
	s.blocked = newBlocking()
	s.repl = repl.New((*replHost)(s))
	ks.Obs = s
	ks.ExpiryPaused = s.pauseActive // CLIENT PAUSE (WRITE or ALL) suspends expiry, as Redis's PAUSE_ACTION_EXPIRE
	s.wireHotParams()
	s.wireMaxmemory()
	s.notifier = notify.New(cfg, s.hub)
	s.notifier.Evicted = s.keyEvicted
	ks.Events = s.notifier
	s.cmdStats = make([]cmdStat, s.table.NumIDs())
	s.latency = make([]latencyHist, s.table.NumIDs())
	s.latencyTracking.Store(cfg.Bool("latency-tracking"))
	cfg.OnChange("latency-tracking", func(v string) error {
		s.latencyTracking.Store(v == "yes")
		return nil
	})
	limits := cfg.ClientOutputBufferLimits()
	s.obufLimit.Store(&limits)
	cfg.OnChange("client-output-buffer-limit", func(string) error {
		s.obufDirty.Store(true) // re-read after the hook: the config lock is held here
		return nil
	})
	s.startUs = clk.NowUs()
	s.rdb = persist.New(persist.Deps{Config: cfg, Log: lg, Clock: clk, KS: ks,
		Functions: libraries{s.scripts}, Dirty: &s.stats.dirty}, s.startUs/1e6)
	s.limits.MaxBulkLen.Store(cfg.Int("proto-max-bulk-len"))
	s.limits.MaxQueryBuf.Store(cfg.Int("client-query-buffer-limit"))
	cfg.OnChange("proto-max-bulk-len", func(string) error {
		s.limits.MaxBulkLen.Store(cfg.Int("proto-max-bulk-len"))
		return nil
	})
	cfg.OnChange("client-query-buffer-limit", func(string) error {
		s.limits.MaxQueryBuf.Store(cfg.Int("client-query-buffer-limit"))
		return nil
	})
	if opts.Listener != nil {
		s.lns = []net.Listener{opts.Listener}
	}
	// the event loops accept on a TCP listener's socket; anything else (a
	// wrapped listener in tests) is served by goroutines
	_, plainTCP := opts.Listener.(*net.TCPListener)
	s.blockOnPause = opts.GoroutinePerConn || !eventLoopSupported || (opts.Listener != nil && !plainTCP)
	s.busyPoll = opts.BusyPoll
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr is the first listening address (after Listen), or nil when there is none.
func (s *Server) Addr() net.Addr {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].Addr()
}

// listeners returns the current listeners.
func (s *Server) listeners() []net.Listener {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return append([]net.Listener(nil), s.lns...)
}

// Listen opens the listeners for bind and port unless a listener was given, and
// registers the hooks that rebind on CONFIG SET port / bind.
func (s *Server) Listen() error {
	s.bind, s.port = s.cfg.String("bind"), s.cfg.Int("port")
	if len(s.lns) == 0 {
		lns, err := listenAll(s.bind, s.port)
		if err != nil {
			return err
		}
		s.lns = lns
	}
	s.cfg.OnChange("port", func(v string) error {
		p, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		return s.rebind(s.bind, p)
	})
	s.cfg.OnChange("bind", func(v string) error { return s.rebind(v, s.port) })
	return nil
}

// listenAll opens one listener per bind address (Redis's "-addr" prefix marks an
// address whose failure is not fatal).
func listenAll(bind string, port int64) ([]net.Listener, error) {
	var lns []net.Listener
	ps := strconv.FormatInt(port, 10)
	for _, addr := range bindAddrs(bind) {
		optional := false
		if len(addr) > 0 && addr[0] == '-' {
			addr, optional = addr[1:], true
		}
		if addr == "*" {
			addr = ""
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, ps))
		if err != nil {
			if optional {
				continue
			}
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, errors.New("no address to listen on")
	}
	return lns, nil
}

// rebind moves the server to new listeners (CONFIG SET port/bind). Existing
// connections stay; on failure nothing changes and CONFIG SET reports Redis's error.
// It runs inside a config hook, so it must not read the configuration.
func (s *Server) rebind(bind string, port int64) error {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	// close first, as Redis's changeListener does, so that an overlapping address
	// (same port, another bind list) can be bound again
	for _, ln := range s.lns {
		_ = ln.Close()
	}
	lns, err := listenAll(bind, port)
	if err != nil {
		s.log.Warn("failed to bind", "bind", bind, "port", port, "err", err)
		if restored, rerr := listenAll(s.bind, s.port); rerr == nil {
			s.startListeners(restored)
		} else {
			s.log.Error("failed to restore the previous listeners", "err", rerr)
			s.lns = nil
		}
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	s.bind, s.port = bind, port
	s.startListeners(lns)
	return nil
}

// startListeners installs lns and, when the server runs, accepts on them. Call
// with lnMu held.
func (s *Server) startListeners(lns []net.Listener) {
	s.lns = lns
	if !s.running {
		return
	}
	for _, ln := range lns {
		if s.blockOnPause {
			go s.acceptLoop(ln)
		} else if err := s.watchListener(ln); err != nil {
			s.log.Error("cannot accept on the new listener", "err", err)
		}
	}
}

func bindAddrs(bind string) []string {
	var out []string
	for _, f := range splitFields(bind) {
		out = append(out, f)
	}
	if len(out) == 0 {
		out = []string{"*"}
	}
	return out
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func (s *Server) closeListeners() {
	s.lnMu.Lock()
	s.running = false
	lns := s.lns
	s.lnMu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// Run serves until ctx is cancelled or SHUTDOWN; it then closes every connection
// and returns. Listen must have succeeded.
func (s *Server) Run(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	if err := s.loadAtStartup(); err != nil {
		return err
	}
	s.eng.Lock()
	s.mem.startup = s.usedMemory()
	s.applyMaxmemory() // a maxmemory from the config file or the command line
	s.eng.Unlock()
	go s.eng.RunCron(ctx, func() int { return int(s.cfg.Int("hz")) }, s.cronTick)
	go s.idleReaper(ctx)
	s.lnMu.Lock()
	s.running = true
	var stopLoops func()
	if !s.blockOnPause {
		var err error
		if stopLoops, err = s.runLoops(int(s.cfg.Int("io-threads"))); err != nil {
			s.lnMu.Unlock()
			return err
		}
	}
	for _, ln := range s.lns {
		s.log.Info("ready to accept connections", "addr", ln.Addr().String())
		if s.blockOnPause {
			go s.acceptLoop(ln)
		}
	}
	s.lnMu.Unlock()
	select {
	case <-ctx.Done():
	case <-s.shutdown:
	}
	s.Close() // whatever stopped it: what waits on shutdown stops too (replies held by a barrier)
	s.log.Info("shutting down")
	s.eng.Lock()
	restoreMemoryLimit(&s.mem) // the process's Go memory limit, not the maxmemory value
	s.rdb.KillBG()             // a BGSAVE in progress is abandoned, as Redis kills its child

	s.eng.Unlock()
	s.stopping.Store(true) // a busy script is killed at its next check (scripting.interrupt)
	if stopLoops != nil {
		stopLoops() // closes the loops' connections
	}
	s.closeListeners()
	s.mu.Lock()
	for _, cl := range s.clients {
		cl.kill()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.log.Info("HotKV is now ready to exit, bye bye...")
	return nil
}

func (s *Server) acceptLoop(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return
		}
		s.stats.connectionsReceived.Add(1)
		s.mu.Lock()
		if int64(len(s.clients)) >= s.cfg.Int("maxclients") {
			s.mu.Unlock()
			s.stats.rejectedConnections.Add(1)
			_, _ = conn.Write([]byte("-ERR max number of clients reached\r\n"))
			_ = conn.Close()
			continue
		}
		cl := s.newClient(conn)
		s.clients[cl.ID] = cl
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(cl)
	}
}

// idleReaper closes clients idle for longer than timeout (when timeout > 0),
// and wakes goroutine-mode clients idle for idleReplyMs that hold a reply
// or read buffer, to give them back.
func (s *Server) idleReaper(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		limit := s.cfg.Int("timeout")
		now := s.clock.NowMs()
		s.mu.Lock()
		for id, cl := range s.clients {
			idle := now - cl.lastInteraction.Load()
			if limit > 0 && idle > limit*1000 {
				delete(s.clients, id)
				cl.kill()
				continue
			}
			// goroutine mode: an idle client's goroutine waits in a read,
			// so it is woken (a past read deadline, as for pushes) to give
			// its buffers back (dropIdleBuffers)
			if cl.conn != nil && idle >= idleReplyMs && cl.mem.rbs.Load()+cl.mem.qbufFree.Load() > 0 && !cl.idleShrink.Swap(true) {
				_ = cl.conn.SetReadDeadline(time.Unix(1, 0))
			}
		}
		s.mu.Unlock()
	}
}

// Close stops the server as SHUTDOWN does.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.shutdown) })
}
