package server

import (
	"math/rand/v2"
	"syscall"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/introspect"
)

// HOTKEYS (Redis 8.6): while a session runs, call (call.go) hands every
// command that names keys to hotBegin and hotEnd, which charge the keys with
// the command's time and network bytes, as Redis's call() feeds its
// hotkeyStats. With no session running it costs nothing beyond call's own test
// (observe.every).
//
// What counts, as in Redis: a unit's outermost command (a client's, a blocked
// client's when it is served, an applied one), each command of an EXEC, and
// the commands a script runs only inside an EXEC (a script outside one is
// charged whole, for its own keys). A client command's bytes are its request
// and its reply; an EXEC's commands, like Redis's per-command counters, each
// count EXEC's request and the replies so far; a script's commands their
// replies.

// hotkeysState is the HOTKEYS session and what call needs to feed it (engine
// lock).
type hotkeysState struct {
	sess *introspect.Hotkeys // running or stopped; nil: none
	on   *introspect.Hotkeys // sess while it runs, else nil: call's one test
	// the unit's outermost command: its request's size and its writer's
	// length when it began
	topIn  int64
	topOut int
	inExec bool // a command of an EXEC runs (its scripts' commands count)
	rng    *rand.Rand
	keys   [][]byte // scratch
}

// Hotkeys implements command.Server.
func (s *Server) Hotkeys() *introspect.Hotkeys { return s.hk.sess }

// HotkeysStart implements command.Server: a new session, replacing a
// stopped one.
func (s *Server) HotkeysStart(cfg introspect.HotkeysConfig) {
	h := introspect.NewHotkeys(cfg, s.clock.NowUs()/1000, s.hk.rng.Float64)
	h.StartUserUs, h.StartSysUs = processCPUUs()
	s.hk.sess, s.hk.on = h, h
	s.hk.topOut = -1 // not known until the next outermost command begins
	s.refreshObserve()
}

// HotkeysStop implements command.Server.
func (s *Server) HotkeysStop() {
	if h := s.hk.on; h != nil {
		h.Stop(s.clock.NowUs() / 1000)
		s.hk.on = nil
		s.refreshObserve()
	}
}

// HotkeysReset implements command.Server.
func (s *Server) HotkeysReset() {
	s.hk.sess, s.hk.on = nil, nil
	s.refreshObserve()
}

// HotkeysCPUMs implements command.Server.
func (s *Server) HotkeysCPUMs() (user, sys int64) {
	h := s.hk.sess
	if h == nil {
		return 0, 0
	}
	u, sy := processCPUUs()
	return (u - h.StartUserUs) / 1000, (sy - h.StartSysUs) / 1000
}

// processCPUUs is the user and system CPU time the process has used, in µs.
func processCPUUs() (user, sys int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec), ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}

// hotkeysCron stops a session whose DURATION has passed (serverCron's
// check).
func (s *Server) hotkeysCron(nowMs int64) {
	if h := s.hk.on; h != nil && h.Expired(nowMs) {
		h.Stop(nowMs)
		s.hk.on = nil
		s.refreshObserve()
	}
}

// hotBegin is call's start while a session runs: it returns the length of
// c's reply writer, and notes where an outermost command begins.
func (s *Server) hotBegin(o origin, c *command.Ctx) int {
	out := c.W.Len()
	switch o {
	case fromExec:
		s.hk.inExec = true
	case fromClient, fromBlocked, fromApply:
		s.hk.inExec, s.hk.topOut, s.hk.topIn = false, out, 0
		if o == fromClient && s.cur != nil {
			s.hk.topIn = int64(s.cur.nc.Reader().LastLen())
		}
	}
	return out
}

// hotEnd charges the keys of the command c ran for spec, which took durUs
// and began with its writer at outMark.
func (s *Server) hotEnd(o origin, c *command.Ctx, spec *command.Spec, outMark int, durUs int64) {
	h := s.hk.on
	if c.Parked || (o == fromScript && !s.hk.inExec) {
		return // a parked command counts when served; a script's, inside EXEC only
	}
	idx := spec.KeyIndexes(c.Argv)
	if len(idx) == 0 {
		return
	}
	var net int64
	switch {
	case (o == fromClient || o == fromExec) && s.hk.topOut >= 0:
		net = s.hk.topIn + int64(c.W.Len()-s.hk.topOut)
	case o == fromBusy && s.cur != nil:
		net = int64(s.cur.nc.Reader().LastLen() + c.W.Len() - outMark)
	default:
		net = int64(c.W.Len() - outMark)
	}
	keys := s.hk.keys[:0]
	for _, i := range idx {
		keys = append(keys, c.Argv[i])
	}
	sampled := h.Sampled()
	t0 := s.clock.NowUs()
	h.Note(keys, durUs, net, sampled)
	if sampled {
		h.TrackUs += s.clock.NowUs() - t0
	}
	clear(keys)
	s.hk.keys = keys[:0]
}

// infoHotkeys is INFO's Hotkeys section: empty without a session.
// hotkeys-cmd-cpu-time is the ms spent updating the top-K structures; Redis
// adds up each update's whole ms (so it stays 0), HotKV the µs (see
// docs/observability.md).
func (s *Server) infoHotkeys(b []byte) []byte {
	h := s.hk.sess
	if h == nil {
		return b
	}
	active := int64(0)
	if h.Active {
		active = 1
	}
	b = kvi(b, "hotkeys-tracking-active", active)
	return kvi(b, "hotkeys-cmd-cpu-time", h.TrackUs/1000)
}
