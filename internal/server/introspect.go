package server

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/introspect"
)

// The operator's view: the slow log, the latency monitor and MONITOR, fed
// by call (call.go) for every command it runs, as Redis's call() feeds
// them. Off costs a comparison each: slowUs is MaxInt64 while the slow log
// is off, thresholdMs 0 while the latency monitor is, and monitors empty.
// Commands applied without a client (the AOF at start-up, a replica's
// stream: fromApply) are not observed, as Redis skips its statistics while
// loading.

// observe is the state of SLOWLOG, LATENCY and MONITOR (engine lock).
type observe struct {
	slowlog     introspect.Slowlog
	latency     introspect.Latency
	slowUs      int64        // slowlog-log-slower-than; MaxInt64: off (negative, or slowlog-max-len 0)
	slowMax     int64        // slowlog-max-len
	thresholdMs atomic.Int64 // latency-monitor-threshold; 0: off (read by the AOF's writers too)
	monitors    []*client
	// what call tests for every command (refreshObserve keeps them true):
	every   bool  // MONITOR clients or a HOTKEYS session: observeBefore and observeAfter see every command
	floorUs int64 // the shortest run observeAfter sees: what the slow log or the latency monitor records (MaxInt64: neither is on), MinInt64 while every
}

// refreshObserve recomputes every and floorUs after a change to what they
// summarise: the parameters, the MONITOR clients, the HOTKEYS session.
func (s *Server) refreshObserve() {
	o := &s.obs
	o.every = len(o.monitors) > 0 || s.hk.on != nil
	o.floorUs = o.slowUs
	if t := o.thresholdMs.Load(); t > 0 {
		us := int64(math.MaxInt64)
		if t < math.MaxInt64/1000 {
			us = t * 1000
		}
		o.floorUs = min(o.floorUs, us)
	}
	if o.every {
		o.floorUs = math.MinInt64
	}
}

// observeBefore is call's step before the handler while something sees
// every command (obs.every): a HOTKEYS session's start (it returns the
// session and the reply's length), and MONITOR's line for a script, which
// shows before the commands it runs (evalCommand, fcallCommandGeneric).
func (s *Server) observeBefore(o origin, c *command.Ctx, spec *command.Spec) (hot *introspect.Hotkeys, hotOut int) {
	if hot = s.hk.on; hot != nil {
		hotOut = s.hotBegin(o, c)
	}
	if len(s.obs.monitors) > 0 && spec.Flags&(command.RunsCommands|command.SkipMonitor) == command.RunsCommands|command.SkipMonitor && o != fromApply {
		s.feedMonitors(o, c)
	}
	return hot, hotOut
}

// observeAfter is call's step after the handler for a command that some
// part of the operator's view records (call's one test, obs.floorUs): the
// latency monitor, MONITOR, HOTKEYS (hot: the session observeBefore began
// with) and the slow log (a parked command is logged when served).
func (s *Server) observeAfter(o origin, c *command.Ctx, spec *command.Spec, hot *introspect.Hotkeys, hotOut int, durUs int64) {
	if (s.obs.thresholdMs.Load() != 0 || len(s.obs.monitors) > 0) && o != fromApply {
		s.observeCall(o, c, spec, durUs)
	}
	if hot != nil && s.hk.on == hot {
		s.hotEnd(o, c, spec, hotOut, durUs)
	}
	if !c.Parked && durUs >= s.obs.slowUs && o != fromApply {
		s.logSlow(o, c, spec, durUs)
	}
}

// wireObserve follows the parameters; called by New.
func (s *Server) wireObserve() {
	load := func(string) error {
		o := &s.obs
		o.slowMax = s.cfg.Int("slowlog-max-len")
		o.slowUs = s.cfg.Int("slowlog-log-slower-than")
		if o.slowUs < 0 || o.slowMax == 0 {
			o.slowUs = math.MaxInt64
		}
		o.thresholdMs.Store(s.cfg.Int("latency-monitor-threshold"))
		s.refreshObserve()
		return nil
	}
	_ = load("")
	s.eng.LatencyEvent = s.latencyEvent
	for _, name := range []string{"slowlog-max-len", "slowlog-log-slower-than", "latency-monitor-threshold"} {
		s.cfg.OnChange(name, load)
	}
}

// latencyEvent records an event's duration (ms) when it reaches
// latency-monitor-threshold (Redis's latencyAddSampleIfNeeded). Any
// goroutine.
func (s *Server) latencyEvent(event string, ms int64) {
	if t := s.obs.thresholdMs.Load(); t != 0 && ms >= t {
		s.obs.latency.Add(event, ms, s.clock.NowUs()/1e6)
	}
}

// observeCall is call's part for a command that ran for durUs (parked
// included: MONITOR shows a blocking command when it first runs, and the
// latency monitor times every run).
func (s *Server) observeCall(o origin, c *command.Ctx, spec *command.Spec, durUs int64) {
	if s.obs.thresholdMs.Load() != 0 {
		ev := "command"
		if spec.Flags&command.Fast != 0 {
			ev = "fast-command"
		}
		s.latencyEvent(ev, durUs/1000)
		if o == fromBlocked { // the reply of a client unblocked (updateStatsOnUnblock)
			s.latencyEvent("command-unblocking", durUs/1000)
		}
	}
	if len(s.obs.monitors) > 0 && o != fromBlocked && spec.Flags&(command.SkipMonitor|command.Admin) == 0 {
		s.feedMonitors(o, c)
	}
}

// logSlow adds a command that took durUs to the slow log if it reached
// slowlog-log-slower-than (a blocked command when it is served).
func (s *Server) logSlow(o origin, c *command.Ctx, spec *command.Spec, durUs int64) {
	if spec.Flags&command.SkipSlowlog != 0 {
		return
	}
	e := introspect.SlowEntry{
		Time:  s.clock.NowUs() / 1e6,
		DurUs: durUs,
		Args:  introspect.NewSlowEntry(redacted(c)),
	}
	if o == fromScript {
		e.Peer = scriptPeer
	} else if cl := s.clientOf(c.Client); cl != nil {
		e.Peer, e.Client = cl.Addr, cl.Name
	}
	s.obs.slowlog.Push(e, s.obs.slowMax)
}

// scriptPeer is the address the slow log shows for a script's commands:
// Redis's script client has no connection, and an empty peer id.
const scriptPeer = ""

var redactedArg = []byte("(redacted)")

// redacted is c's arguments with those the command hid (Ctx.Redact)
// replaced by "(redacted)".
func redacted(c *command.Ctx) [][]byte {
	if len(c.Redacted) == 0 {
		return c.Argv
	}
	argv := append([][]byte(nil), c.Argv...)
	for _, i := range c.Redacted {
		if i < len(argv) {
			argv[i] = redactedArg
		}
	}
	return argv
}

// feedMonitors sends the command's line to every MONITOR client (Redis's
// replicationFeedMonitors).
func (s *Server) feedMonitors(o origin, c *command.Ctx) {
	who := ""
	switch cl := s.clientOf(c.Client); {
	case o == fromScript:
		who = "lua"
	case cl != nil && cl.unix:
		who = "unix:" + s.cfg.String("unixsocket")
	case cl != nil:
		who = cl.Addr
	default:
		return // no client: nothing Redis would show
	}
	line := introspect.MonitorLine(nil, s.clock.NowUs(), c.Client.DB, who, redacted(c))
	for _, m := range s.obs.monitors {
		m.pushMsg(line)
	}
}

// Monitor implements command.Server (MONITOR, and RESET's end of it). A
// replica does not become a monitor (Redis ignores MONITOR from a
// CLIENT_SLAVE).
func (s *Server) Monitor(c *command.Client, on bool) bool {
	cl := s.clientOf(c)
	if cl == nil {
		return false
	}
	if !on {
		return s.dropMonitor(cl)
	}
	if cl.monitor || cl.isReplica() {
		return false
	}
	cl.monitor = true
	s.obs.monitors = append(s.obs.monitors, cl)
	s.refreshObserve()
	return true
}

// dropMonitor removes cl from the MONITOR clients (closed, or RESET).
// Engine lock.
func (s *Server) dropMonitor(cl *client) bool {
	if !cl.monitor {
		return false
	}
	cl.monitor = false
	if i := slices.Index(s.obs.monitors, cl); i >= 0 {
		s.obs.monitors = slices.Delete(s.obs.monitors, i, i+1)
	}
	s.refreshObserve()
	return true
}

// Slowlog implements command.Server.
func (s *Server) Slowlog() *introspect.Slowlog { return &s.obs.slowlog }

// Latency implements command.Server.
func (s *Server) Latency() *introspect.Latency { return &s.obs.latency }

// LatencyDoctor implements command.Server.
func (s *Server) LatencyDoctor() string {
	return s.obs.latency.Doctor(introspect.DoctorInput{
		NowSec:        s.clock.NowUs() / 1e6,
		ThresholdMs:   s.obs.thresholdMs.Load(),
		SlowerThanUs:  s.cfg.Int("slowlog-log-slower-than"),
		SlowlogMaxLen: s.obs.slowMax,
		ForkRateGBs:   s.forkRate(),
		FsyncAlways:   s.cfg.String("appendfsync") == "always",
		Hz:            s.cfg.Int("hz"),
		AnonHugePages: anonHugePages(),
	})
}

// forkRate is Redis's stat_fork_rate: used memory over the last child
// process's start time, in GB/s (0 before any).
func (s *Server) forkRate() float64 {
	if s.stats.latestForkUs <= 0 {
		return 0
	}
	return float64(s.usedMemory()) * 1e6 / float64(s.stats.latestForkUs) / (1 << 30)
}

// LatencyHistogram implements command.Server.
func (s *Server) LatencyHistogram(spec *command.Spec) (int64, [][2]int64, bool) {
	if spec.ID < 0 || spec.ID >= len(s.latency) {
		return 0, nil, false
	}
	h := &s.latency[spec.ID]
	if h.counts == nil {
		return 0, nil, false
	}
	return int64(h.total), h.cdf(), true
}
