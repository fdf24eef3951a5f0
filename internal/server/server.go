// Package server runs HotKV: the one execution path every command takes (a
// connection's batch, process, admit, call: session.go, dispatch.go,
// admit.go, call.go; Apply and the reply barrier), the clients and their
// registry, and the glue of the features that hang off the path (replicas,
// persistence, client-side caching, keyspace notifications: packages of
// their own) and of those bound to the client (Pub/Sub delivery, scripting
// runs, maxmemory). The network side is internal/server/network, to which
// the server is the Host and each client the Session of its connection.
// Where a command runs: call.go. docs/ARCHITECTURE.md §1, decision 0037.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/engine"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/locks"
	"github.com/hotkv/hotkv/internal/pubsub"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/aof"
	"github.com/hotkv/hotkv/internal/server/network"
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
	// ProbeSnapshots (tests): every execution unit runs under a snapshot
	// that checks each write path hands keys to it first
	// (keyspace.Keyspace.ProbeSnapshots).
	ProbeSnapshots bool
	// StrictSnapshots (tests): a key changed before a snapshot handed it
	// out panics (keyspace.Keyspace.PanicOnSnapshotGap) instead of only
	// failing the snapshot.
	StrictSnapshots bool
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
	hot           hotParams    // the parameters admission reads for every command (admit.go)
	obs           observe      // SLOWLOG, LATENCY, MONITOR (introspect.go); engine lock
	locks         *locks.Table // the lock view (locks.go); engine lock
	hk            hotkeysState // HOTKEYS (hotkeys.go); engine lock
	log           *slog.Logger
	clock         clock.Clock
	eng           *engine.Engine
	ks            *keyspace.Keyspace
	table         *command.Table
	limits        *resp.Limits
	net           *network.Net // listeners and connections (internal/server/network)
	tasks         loopTasks    // work posted to the event loops (looptask.go)
	pf            prefetchScratch

	startUs int64
	runID   string
	replID  string
	// replID2 and secondOffset: the history this server continues (a
	// former master's id, up to the offset), master_replid2 and
	// second_repl_offset
	replID2      string
	secondOffset int64
	rs           replicaState  // the replica side (replica.go)
	fack         fackState     // a replica's AOF-fsynced offset for REPLCONF ACK FACK (fack.go)
	fo           failoverState // FAILOVER (failover.go)
	replicaFlag  atomic.Bool   // a replica: read without the engine lock (expiry, admission)
	rdb          *persist.RDB  // snapshots (persist.go); engine lock
	aof          *aof.AOF      // the append-only file (aofglue.go); engine lock
	// aofWaiting: clients wait in WAITAOF (s.waiters), woken when the AOF fsyncs
	aofWaiting atomic.Bool
	aofWokeAt  atomic.Uint64 // the fsynced unit WAITAOF clients last ran again for

	mu      sync.Mutex // guards clients (taken after the engine lock, never before)
	clients map[int64]*client
	nextID  atomic.Int64

	pause    pauseState
	stats    stats
	cmdStats []cmdStat     // indexed by Spec.ID; guarded by the engine lock
	latency  []latencyHist // indexed by Spec.ID; guarded by the engine lock

	prop        propState                         // command propagation (propagate.go); engine lock
	repl        *repl.Master                      // replicas (repl.go); engine lock
	waiters     []*client                         // clients blocked in WAIT (repl.go); engine lock
	syncs       []*pendingSync                    // full syncs waiting for more replicas (syncdelay.go); engine lock
	snapshotFn  SnapshotFunc                      // SYNC's payload (snapshot.go); nil: internal/rdb
	loadCaller  *client                           // the client running DEBUG LOADAOF (engine lock)
	watchers    map[watchKey]map[*client]struct{} // guarded by the engine lock
	trk         *tracking.Tracker                 // client-side caching (tracking.go); engine lock
	cronSum     atomic.Int64                      // eventloop_duration_cron_sum: the cron's ticks, µs
	inst        instantaneous                     // guarded by the engine lock
	memPeak     uint64                            // guarded by the engine lock
	memPeakTime int64                             // Unix seconds

	latencyTracking atomic.Bool      // latency-tracking
	replPause       atomic.Uint32    // DEBUG REPL-PAUSE's points (rdbchannel.go)
	notifier        *notify.Notifier // keyspace notifications (notify.go)
	obufDirty       atomic.Bool
	obufLimit       atomic.Pointer[[3]config.OBufLimit] // client-output-buffer-limit (obufLimits)
	clientsMem      atomic.Int64                        // the evictable clients' published tot-mem (clientmem.go)
	evictedMem      atomic.Int64                        // tot-mem of the clients evicted and not yet closed (clientmem.go)
	errStats        map[string]int64
	errStatsOff     bool // past errStatsMax kinds, until CONFIG RESETSTAT
	// copyAvoid: clients' long bulk replies refer to the strings instead of
	// copying them (resp.Writer.BulkRef); DEBUG REPLY-COPY-AVOIDANCE sets it
	copyAvoid atomic.Bool
	shutdown  chan struct{}
	closeOnce sync.Once
	cancel    context.CancelFunc

	// blockOnPause: goroutine mode, where a paused client sleeps in process;
	// the event loops hold its command back instead.
	blockOnPause bool
	stopping     atomic.Bool // the server stops: a busy script is killed

	applier *client                 // the connection-less client of Apply (apply.go); engine lock
	migrate map[string]*migrateConn // MIGRATE's connections (migrate.go); engine lock
	// cur is the client whose command runs (Redis's server.current_client):
	// the commands it issues (EXEC's, its scripts') count in its tot-cmds.
	// Engine lock.
	cur *client
	acl *acl.ACL
	// startErr is a configuration error New found (a rename-command of an
	// unknown command): Run stops at once with it
	startErr  error
	metricsLn net.Listener // the metrics listener (metricsglue.go); nil when off
	aclSc     acl.Scratch  // the permission check's buffers (engine lock)
	barrier   barrierState // the reply barrier (barrier.go)

	flushFree  atomic.Bool  // a goroutine gives a big flush's memory back (flushmem.go)
	flushFrees atomic.Int64 // how many times it did (tests)
	// the keyspace's Freed at the last release by the cron, and its time
	// (releaseAfterFrees); engine lock
	freedAtRelease  int64
	freedReleaseMs  int64
	releaseMs       int64         // the last release by the cron, for any reason
	retainedCheckMs int64         // when the cron last read the free heap (flushmem.go)
	retained        retainedGauge // its reading (cron, engine lock)
	releaseDurMs    atomic.Int64  // how long the last release's collection took
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
	ks.ProbeSnapshots = opts.ProbeSnapshots
	ks.PanicOnSnapshotGap = opts.StrictSnapshots
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
		StreamIdmpDuration:     cfg.IntFunc("stream-idmp-duration"),
		StreamIdmpMaxSize:      cfg.IntFunc("stream-idmp-maxsize"),
	}
	s := &Server{
		cfg:          cfg,
		retained:     newRetainedGauge(),
		log:          lg,
		clock:        clk,
		ks:           ks,
		locks:        locks.New(int(cfg.Int("databases"))),
		eng:          engine.New(ks, clk, seed),
		table:        command.NewTable(),
		limits:       resp.NewLimits(),
		clients:      map[int64]*client{},
		errStats:     map[string]int64{},
		shutdown:     make(chan struct{}),
		runID:        randomHex(20),
		replID:       randomHex(20),
		replID2:      strings.Repeat("0", 40),
		secondOffset: -1,
	}
	s.watchers = map[watchKey]map[*client]struct{}{}
	for _, r := range cfg.Renames() { // the config file's rename-command lines
		if err := s.table.Rename(r[0], r[1]); err != nil && s.startErr == nil {
			s.startErr = fmt.Errorf("rename-command %s %q: %v", r[0], r[1], err)
		}
	}
	s.initACL()
	s.hk.rng = mrand.New(mrand.NewPCG(seed, seed^0x686f746b657973))
	s.trk = tracking.New((*trackingHost)(s), seed, cfg.IntFunc("tracking-table-max-keys"))
	s.scripts = newScripting(s)
	s.hub = pubsub.New[*client]()
	s.blocked = newBlocking()
	s.repl = repl.New((*replHost)(s))
	ks.Obs = s
	// CLIENT PAUSE (WRITE or ALL) suspends expiry, as Redis's
	// PAUSE_ACTION_EXPIRE; so does being a replica (its master expires keys)
	ks.ExpiryPaused = s.replicaExpiryPaused
	s.wireHotParams()
	s.wireMaxmemory()
	s.wireObserve()
	s.cfg.OnChange("repl-backlog-size", func(string) error {
		s.repl.ResizeBacklog(s.cfg.Int("repl-backlog-size"))
		return nil
	})
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
		Functions: libraries{s.scripts}, Dirty: &s.stats.dirty, RunSnapshot: s.runSnapshot, Forked: s.forked, Latency: s.latencyEvent, Repl: s.replInfo}, s.startUs/1e6)
	s.aof = s.newAOF()
	cfg.OnChange("appendonly", func(v string) error { return s.switchAOF(v == "yes") })
	cfg.OnChange("repl-timeout", func(string) error { // CONFIG SET, engine lock
		d := time.Duration(s.cfg.Int("repl-timeout")) * time.Second
		for _, l := range []*repl.MasterLink{s.rs.link, s.rs.rdbLink} {
			if l != nil {
				l.SetTimeout(d) // the main channel, and an RDB channel's handshake
			}
		}
		return nil
	})
	cfg.OnChange("aof-disable-auto-gc", func(string) error { s.aof.AutoGC(); return nil })
	ks.ProtectLocks = cfg.Bool("protect-locks-from-eviction")
	cfg.OnChange("protect-locks-from-eviction", func(v string) error { ks.ProtectLocks = v == "yes"; return nil })
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
	s.net = network.New(network.Deps{Host: (*netHost)(s), Config: cfg, Log: lg, Clock: clk, Limits: s.limits,
		Listener: opts.Listener, Goroutines: opts.GoroutinePerConn, BusyPoll: opts.BusyPoll})
	s.blockOnPause = s.net.Goroutines()
	s.aof.SetLoops(!s.net.Goroutines())
	s.copyAvoid.Store(true) // Redis 8.6's default
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr is the first listening address (after Listen), or nil when there is none.
func (s *Server) Addr() net.Addr { return s.net.Addr() }

// Listen opens the listeners for bind and port unless Options.Listener was
// given, and follows CONFIG SET port / bind.
func (s *Server) Listen() error {
	if err := s.net.Listen(); err != nil {
		return err
	}
	return s.listenMetrics()
}

// Run serves until ctx is cancelled or SHUTDOWN; it then closes every connection
// and returns. Listen must have succeeded.
func (s *Server) Run(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	s.log.Info("Server initialized")
	if s.startErr != nil {
		s.log.Warn(s.startErr.Error())
		return s.startErr
	}
	if err := s.loadACLAtStartup(); err != nil {
		s.log.Warn(err.Error())
		return err
	}
	// clients are served while the snapshot loads (they get LOADING), as
	// Redis's processEventsWhileBlocked serves them
	if err := s.loadAtStartup(s.net.Start); err != nil && !errors.Is(err, persist.ErrLoadStopped) {
		s.net.Stop()
		return err
	}
	s.eng.Lock()
	s.mem.startup = s.usedMemory()
	s.applyMaxmemory() // a maxmemory from the config file or the command line
	if host, port := s.cfg.ReplicaOf(); host != "" {
		s.setMaster(host, port) // replicaof in the config file
	}
	s.eng.Unlock()
	go s.eng.RunCron(ctx, func() int { return int(s.cfg.Int("hz")) }, s.cronTick)
	go s.idleReaper(ctx)
	s.serveMetrics(ctx)
	s.net.LogReady()
	select {
	case <-ctx.Done():
	case <-s.shutdown:
	}
	s.Close() // whatever stopped it: what waits on shutdown stops too (replies held by a barrier)
	s.eng.Lock()
	restoreMemoryLimit(&s.mem) // the process's Go memory limit, not the maxmemory value
	s.rdb.KillBG()             // a BGSAVE in progress is abandoned, as Redis kills its child
	if s.aof.Enabled() {
		s.aofOff()
		_ = s.aof.Shutdown() // what is pending is written and fsynced
	}
	for name := range s.migrate {
		s.closeMigrateConn(name)
	}

	s.stopLink() // a replica's link to its master
	s.eng.Unlock()
	s.stopping.Store(true) // a busy script is killed at its next check (scripting.interrupt)
	s.net.Stop()           // closes the listeners and every connection
	s.log.Warn("HotKV is now ready to exit, bye bye...")
	return nil
}

// idleReaper closes clients idle for longer than timeout (when timeout > 0),
// and wakes goroutine-mode clients idle for network.IdleReplyMs that hold a reply
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
			idle := now - cl.nc.LastActive()
			// as Redis's clientsCronHandleTimeout: no timeout for a
			// blocked client (its command has its own) or a subscriber
			subscriber := cl.push.counts[0].Load()+cl.push.counts[1].Load()+cl.push.counts[2].Load() > 0
			if limit > 0 && idle > limit*1000 && !cl.isBlocked.Load() && !subscriber {
				delete(s.clients, id)
				cl.kill()
				continue
			}
			// goroutine mode: an idle client's goroutine waits in a read,
			// so it is woken to give its buffers back (the event loops
			// sweep theirs)
			if idle >= network.IdleReplyMs && cl.mem.rbs.Load()+cl.mem.qbufFree.Load() > 0 {
				cl.nc.ShrinkWhenIdle()
			}
		}
		s.mu.Unlock()
	}
}

// Close stops the server as SHUTDOWN does.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.shutdown) })
}
