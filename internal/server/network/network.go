// Package network is HotKV's network side: the listeners (bind, port and
// their CONFIG SET), accepting connections, and serving them, either on the
// epoll event loops (Linux, io-threads of them) or a goroutine per connection;
// each connection's reader, the writing of its reply buffer, and the buffers
// an idle connection gives back. It runs no command: a connection's commands
// go to its Session, the server's client, in batches (Session.Run), and what
// the network needs of the server is its Host. It never imports
// internal/server (docs/decisions/0037); docs/ARCHITECTURE.md §1 tells the
// path of a request.
package network

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/resp"
)

// Host is what the network side needs of the server.
type Host interface {
	// Open registers a new connection c and returns its session and the
	// reply buffer the session writes into, or the error reply that refuses
	// it (maxclients, protected mode): the network then writes it and
	// closes the socket. Any goroutine.
	Open(c *Conn) (Session, *resp.Writer, []byte)
	// Released counts n bytes of connection buffers given back as freed in
	// used_memory at once (Redis's used_memory drops when it frees them).
	Released(n int64)
	// PauseRemainingMs is how long CLIENT PAUSE still holds commands back
	// (0: no pause): a loop with held commands wakes up for its end.
	PauseRemainingMs() int64
	// CycleStart, CycleEnd and CycleDone frame each event-loop cycle, on
	// the loop's goroutine: CycleStart before it runs commands, CycleEnd
	// after them and before their replies are written (Redis's beforeSleep:
	// the AOF's fsync under appendfsync always), CycleDone when the cycle
	// runs no more commands (before the loop waits for events). raw: the
	// loop keeps its P in its waits, so CycleEnd may block the same way.
	CycleStart()
	CycleEnd(raw bool)
	CycleDone()
}

// Session is the server's side of one connection: the client its commands
// run as. Its owner (the connection's event loop or goroutine) calls it; Run
// and Resume take the engine lock themselves, the others need none unless
// they say so.
type Session interface {
	// Run runs argv and then the commands complete behind it in the
	// connection's reader (after those in *pending, goroutine mode; nil on
	// an event loop) under one hold of the engine lock, and reports how the
	// batch ended.
	Run(argv [][]byte, pending *[][][]byte) Ran
	// Busy answers argv and the commands complete behind it while a script
	// is busy and lent the engine lock to its own loop (Conn.PollWhileBusy):
	// the lock is held.
	Busy(argv [][]byte) Ran
	// Resume runs the command CLIENT PAUSE held back (Ran.Held) if the pause
	// no longer holds it; false when it still does.
	Resume(argv [][]byte) bool
	// Held tells the session whether CLIENT PAUSE holds its next command
	// back (blocked_clients counts it).
	Held(on bool)
	// Blocked reports whether a blocking command parks the session.
	Blocked() bool
	// Closing reports whether the session is to be closed once its output
	// is written, though it ran no command (a blocked command ended with
	// an error that closes the client: Redis's CLOSE_AFTER_REPLY).
	Closing() bool
	// BeforeWrite moves the queued messages into the reply buffer and says
	// whether the buffer may be written: WriteHold while the reply barrier
	// holds it (wait: block until released instead, goroutine mode),
	// WriteDrop when the connection must be closed (over the output buffer
	// limit, or the server stops while it waits). sent is how many bytes
	// of the buffer were written already.
	BeforeWrite(sent int, wait bool) Gate
	// AfterWrite is told that the whole reply buffer was written.
	AfterWrite()
	// Publish publishes the session's memory figures (client eviction may
	// disconnect clients); evictionOnly: only when client eviction is on.
	Publish(evictionOnly bool)
	// Closed releases the session: the connection is gone. It leaves the
	// server's registry before the network closes the socket.
	Closed()
}

// Ran is how a batch of commands ended (Session.Run).
type Ran struct {
	Cmds int64 // commands run
	Us   int64 // µs they took
	Stop Stop
	// Held is the command CLIENT PAUSE holds back (Stop == StopHeld); the
	// connection keeps it and calls Resume later.
	Held [][]byte
	// Close: the connection closes once its replies are written (QUIT,
	// CLIENT KILL of itself, killed).
	Close bool
	// Err is the reader's error that ended the batch: a protocol error, the
	// query buffer limit, the connection's end.
	Err error
	// Barrier: the replies wait on the reply barrier (the AOF is on). An
	// event loop writes them at the end of its cycle, after the other
	// connections' batches, so that one write of the AOF serves them all,
	// as Redis's beforeSleep writes the AOF once before every reply.
	Barrier bool
}

// Stop says why a batch ended.
type Stop uint8

const (
	// StopRead: nothing complete is left to read (or Ran.Err).
	StopRead Stop = iota
	// StopHeld: CLIENT PAUSE holds the next command back (Ran.Held).
	StopHeld
	// StopBlocked: a blocking command parked the client; its input waits.
	StopBlocked
	// StopFull: the batch reached its bound; the rest waits its turn.
	StopFull
)

// Gate is BeforeWrite's answer.
type Gate uint8

const (
	// WriteNow: write the buffer.
	WriteNow Gate = iota
	// WriteHold: the reply barrier holds the buffer; Conn.Wake comes when
	// it is released.
	WriteHold
	// WriteDrop: close the connection without writing.
	WriteDrop
)

// Deps is what a Net is built from.
type Deps struct {
	Host   Host
	Config *config.Config // bind, port, tcp-keepalive, io-threads
	Log    *slog.Logger
	Clock  clock.Clock
	Limits *resp.Limits // the request parser's limits, shared by every reader
	// Listener, when set, is used instead of listening on bind:port.
	Listener net.Listener
	// Goroutines serves each connection on its own goroutine instead of the
	// event loops.
	Goroutines bool
	// BusyPoll is how long an idle event loop polls before it sleeps
	// (docs/decisions/0029).
	BusyPoll time.Duration
}

// Net is the network side of one server.
type Net struct {
	host     Host
	cfg      *config.Config
	log      *slog.Logger
	clock    clock.Clock
	limits   *resp.Limits
	busyPoll time.Duration
	// goroutines: every connection on its own goroutine (Deps.Goroutines,
	// no epoll, or a listener that is not plain TCP)
	goroutines bool
	readBufs   resp.SharedPool // goroutine mode's read buffers

	lnMu    sync.Mutex        // guards lns, tlsLns, bind, port, tlsPort, running
	lns     []net.Listener    // TCP
	unix    *net.UnixListener // unixsocket, or nil
	bind    string
	port    int64
	running bool

	tlsLns    []net.Listener // tls-port (tls.go)
	tlsPort   int64
	adoptNext atomic.Int64               // the loop the next TLS connection goes to, round robin
	tlsConf   atomic.Pointer[tls.Config] // what new TLS connections use

	loops    []*eventLoop
	wakeMu   sync.RWMutex // guards wakeFD against the loops' stop
	wakeFD   int          // the first loop's eventfd (Wake); -1 when none runs
	lnFDs    sync.Map     // listener fds the loops accept on
	stopLoop func()
	stopping atomic.Bool
	stopOnce sync.Once

	goMu    sync.Mutex // guards goConns
	goConns map[*Conn]struct{}
	wg      sync.WaitGroup // goroutine mode's connections

	Stats Stats
}

// Stats are the network's counters (INFO stats).
type Stats struct {
	ConnectionsReceived      atomic.Int64
	RejectedConnections      atomic.Int64
	NetInput, NetOutput      atomic.Int64 // bytes
	Reads, Writes            atomic.Int64 // total_reads_processed, total_writes_processed
	QueryBufLimitDisconnects atomic.Int64
	Loop                     LoopStats
}

// Reset zeroes the counters (CONFIG RESETSTAT).
func (st *Stats) Reset() {
	for _, a := range []*atomic.Int64{&st.ConnectionsReceived, &st.RejectedConnections, &st.NetInput,
		&st.NetOutput, &st.Reads, &st.Writes, &st.QueryBufLimitDisconnects,
		&st.Loop.Cycles, &st.Loop.DurSum, &st.Loop.CmdSum, &st.Loop.DurMax, &st.Loop.CmdPerCycleMax} {
		a.Store(0)
	}
}

// LoopStats are the event loops' counters (INFO stats eventloop_*, INFO debug).
type LoopStats struct {
	Cycles, DurSum, CmdSum, DurMax, CmdPerCycleMax atomic.Int64
}

// Cycle records one event-loop iteration that took dur µs, cmdDur of them
// running cmds commands.
func (ls *LoopStats) Cycle(dur, cmdDur, cmds int64) {
	ls.Cycles.Add(1)
	ls.DurSum.Add(dur)
	ls.CmdSum.Add(cmdDur)
	storeMax(&ls.DurMax, dur)
	storeMax(&ls.CmdPerCycleMax, cmds)
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// New builds the network side; Listen opens its listeners, Start serves them.
func New(d Deps) *Net {
	n := &Net{host: d.Host, cfg: d.Config, log: d.Log, clock: d.Clock, limits: d.Limits,
		busyPoll: d.BusyPoll, goConns: map[*Conn]struct{}{}, wakeFD: -1}
	if d.Listener != nil {
		n.lns = []net.Listener{d.Listener}
	}
	// the event loops accept on a TCP listener's socket; anything else (a
	// wrapped listener in tests) is served by goroutines
	_, plainTCP := d.Listener.(*net.TCPListener)
	n.goroutines = d.Goroutines || !eventLoopSupported || (d.Listener != nil && !plainTCP)
	return n
}

// Goroutines reports whether each connection runs on its own goroutine
// (where a command CLIENT PAUSE holds back sleeps in Run) rather than on an
// event loop (where Run hands it back: StopHeld).
func (n *Net) Goroutines() bool { return n.goroutines }

// Addr is the first listening address (after Listen), or nil when there is none.
func (n *Net) Addr() net.Addr {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	switch {
	case len(n.lns) > 0:
		return n.lns[0].Addr()
	case len(n.tlsLns) > 0:
		return n.tlsLns[0].Addr()
	case n.unix != nil:
		return n.unix.Addr()
	}
	return nil
}

// Listen opens the listeners for bind and port unless a listener was given, and
// registers the hooks that rebind on CONFIG SET port / bind.
func (n *Net) Listen() error {
	n.bind, n.port, n.tlsPort = n.cfg.String("bind"), n.cfg.Int("port"), n.cfg.Int("tls-port")
	if n.tlsWanted() {
		if err := n.configureTLS(); err != nil {
			return errors.New("Failed to configure TLS. Check logs for more info.")
		}
	}
	if len(n.lns) == 0 {
		if n.port == 0 && n.tlsPort == 0 && n.cfg.String("unixsocket") == "" {
			return errors.New("Configured to not listen anywhere, exiting.")
		}
		lns, err := listenAll(n.bind, n.port)
		if err != nil {
			return err
		}
		n.lns = lns
	}
	if n.tlsPort != 0 {
		lns, err := listenAll(n.bind, n.tlsPort)
		if err != nil {
			for _, l := range n.lns {
				_ = l.Close()
			}
			n.lns = nil
			return err
		}
		n.tlsLns = lns
	}
	n.watchTLSParams()
	if path := n.cfg.String("unixsocket"); path != "" {
		ln, err := listenUnix(path, uint32(n.cfg.Int("unixsocketperm")))
		if err != nil {
			for _, l := range n.lns {
				_ = l.Close()
			}
			n.lns = nil
			return err
		}
		n.unix = ln
	}
	n.cfg.OnChange("port", func(v string) error {
		p, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		return n.rebind(n.bind, p)
	})
	n.cfg.OnChange("bind", func(v string) error { return n.rebind(v, n.port) })
	return nil
}

// listenAll opens one listener per bind address (Redis's "-addr" prefix marks an
// address whose failure is not fatal); port 0 is no listener, as in Redis.
func listenAll(bind string, port int64) ([]net.Listener, error) {
	if port == 0 {
		return nil, nil
	}
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

// listenUnix listens on the Unix socket path, replacing a stale socket file
// as Redis does, with the permissions perm when it is not 0 (unixsocketperm).
// Closing the listener removes the file.
func listenUnix(path string, perm uint32) (*net.UnixListener, error) {
	_ = os.Remove(path) // Redis unlinks first: a socket file left by a crash
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			_ = ln.Close()
			return nil, &net.OpError{Op: "chmod", Net: "unix", Addr: ln.Addr(), Err: err}
		}
	}
	return ln, nil
}

// rebind moves the server to new listeners (CONFIG SET port/bind). Existing
// connections stay; on failure nothing changes and CONFIG SET reports Redis's error.
// It runs inside a config hook, so it must not read the configuration.
func (n *Net) rebind(bind string, port int64) error {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	// close first, as Redis's changeListener does, so that an overlapping address
	// (same port, another bind list) can be bound again
	for _, ln := range n.lns {
		_ = ln.Close()
	}
	lns, err := listenAll(bind, port)
	if err != nil {
		n.log.Warn("failed to bind", "bind", bind, "port", port, "err", err)
		if restored, rerr := listenAll(n.bind, n.port); rerr == nil {
			n.startListeners(restored)
		} else {
			n.log.Error("failed to restore the previous listeners", "err", rerr)
			n.lns = nil
		}
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	n.bind, n.port = bind, port
	n.startListeners(lns)
	return nil
}

// startListeners installs lns and, when the server runs, accepts on them. Call
// with lnMu held.
func (n *Net) startListeners(lns []net.Listener) {
	n.lns = lns
	if !n.running {
		return
	}
	for _, ln := range lns {
		if n.goroutines {
			go n.acceptLoop(ln)
		} else if err := n.watchListener(ln); err != nil {
			n.log.Error("cannot accept on the new listener", "err", err)
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

// Start accepts and serves connections on the listeners (Listen must have
// succeeded) until Stop.
func (n *Net) Start() error {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	n.running = true
	if !n.goroutines {
		stop, err := n.runLoops(int(n.cfg.Int("io-threads")))
		if err != nil {
			return err
		}
		n.stopLoop = stop
	}
	if n.unix != nil {
		if n.goroutines {
			go n.acceptLoop(n.unix)
		} else if err := n.watchListener(n.unix); err != nil {
			return err
		}
	}
	for _, ln := range n.lns {
		if n.goroutines {
			go n.acceptLoop(ln)
		}
	}
	for _, ln := range n.tlsLns {
		go n.acceptTLS(ln)
	}
	return nil
}

// LogReady logs Redis's "Ready to accept connections" line of each kind of
// listener (tcp, unix): the server calls it once the data is loaded.
func (n *Net) LogReady() {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	if len(n.lns) > 0 {
		n.log.Info("Ready to accept connections tcp")
	}
	if len(n.tlsLns) > 0 {
		n.log.Info("Ready to accept connections tls")
	}
	if n.unix != nil {
		n.log.Info("Ready to accept connections unix")
	}
}

// Stop closes the listeners and every connection (each session is told:
// Closed) and returns once none is left. Later calls do nothing.
func (n *Net) Stop() { n.stopOnce.Do(n.stop) }

func (n *Net) stop() {
	n.goMu.Lock()
	n.stopping.Store(true) // no goroutine-mode connection is added from now on
	n.goMu.Unlock()
	if n.stopLoop != nil {
		n.stopLoop() // closes the loops' connections
	}
	n.lnMu.Lock()
	n.running = false
	lns := append(append([]net.Listener(nil), n.lns...), n.tlsLns...)
	n.lnMu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
	if n.unix != nil {
		n.log.Info("Removing the unix socket file.")
		_ = n.unix.Close() // removes the file
	}
	n.goMu.Lock()
	for c := range n.goConns {
		c.Kill()
	}
	n.goMu.Unlock()
	n.wg.Wait()
}

// acceptLoop accepts connections on ln for goroutine mode.
func (n *Net) acceptLoop(ln net.Listener) {
	n.acceptEach(ln, func(conn net.Conn) bool { return n.serveAccepted(n.NewConn(conn), conn) })
}

// acceptEach accepts on ln until it is closed (or handle returns false),
// counting each connection and handing it to handle; a timeout (too many
// open files) is waited out.
func (n *Net) acceptEach(ln net.Listener, handle func(net.Conn) bool) {
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
		n.Stats.ConnectionsReceived.Add(1)
		if !handle(conn) {
			return
		}
	}
}

// serveAccepted registers a goroutine-mode connection with the host and
// serves it on a goroutine of its own, or writes the host's refusal and
// closes it; false when the network is stopping.
func (n *Net) serveAccepted(c *Conn, conn net.Conn) bool {
	// counted before Stop can wait, or closed: Stop has begun
	n.goMu.Lock()
	if n.stopping.Load() {
		n.goMu.Unlock()
		_ = conn.Close()
		return false
	}
	n.wg.Add(1)
	n.goConns[c] = struct{}{}
	n.goMu.Unlock()
	if refusal := n.open(c); refusal != nil {
		n.goMu.Lock()
		delete(n.goConns, c)
		n.goMu.Unlock()
		n.wg.Done()
		n.Stats.RejectedConnections.Add(1)
		_, _ = conn.Write(refusal)
		_ = conn.Close()
		return true
	}
	go n.serve(c)
	return true
}

// open asks the host for c's session; a refusal is the reply to write
// before closing.
func (n *Net) open(c *Conn) []byte {
	sess, w, refusal := n.host.Open(c)
	if refusal != nil {
		return refusal
	}
	c.sess, c.w = sess, w
	return nil
}

// Listeners returns the current listeners, TCP first, then the Unix socket
// (INFO's listener lines).
func (n *Net) Listeners() []net.Listener {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	lns := append([]net.Listener(nil), n.lns...)
	if n.unix != nil {
		lns = append(lns, n.unix)
	}
	return lns
}

// TLSListeners returns the tls-port listeners (INFO's listener2 line).
func (n *Net) TLSListeners() []net.Listener {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	return append([]net.Listener(nil), n.tlsLns...)
}
