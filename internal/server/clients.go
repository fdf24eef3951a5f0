package server

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
)

// pauseState is the pause of clients, read lock-free on every command: the
// effective deadline and mode of CLIENT PAUSE's and FAILOVER's (which holds
// writes back until it ends), as Redis's pause purposes combine.
type pauseState struct {
	untilMs   atomic.Int64 // 0: no pause
	writeOnly atomic.Bool
	mu        sync.Mutex // serialises PAUSE, UNPAUSE and FAILOVER's pause
	// CLIENT PAUSE's own deadline and mode; failover: FAILOVER's
	clientUntil     int64
	clientWriteOnly bool
	failover        bool
}

// combinePause sets the effective pause from its purposes (mu held).
func (s *Server) combinePause() {
	p := &s.pause
	until, wo := p.clientUntil, p.clientWriteOnly
	if until != 0 && s.clock.NowMs() >= until {
		until = 0
	}
	if p.failover {
		if until == 0 {
			wo = true // FAILOVER holds writes only
		}
		until = math.MaxInt64
	}
	p.writeOnly.Store(wo)
	p.untilMs.Store(until)
}

// pauseForFailover holds clients' writes back while a FAILOVER runs (on), or
// lets them go (off).
func (s *Server) pauseForFailover(on bool) {
	s.pause.mu.Lock()
	defer s.pause.mu.Unlock()
	s.pause.failover = on
	s.combinePause()
}

// pausedFor reports whether CLIENT PAUSE currently holds back cl's command
// spec (nil: an unknown command, never held). EXEC is judged by the commands
// it queued; a replica's commands are never held.
func (s *Server) pausedFor(cl *client, spec *command.Spec, argv [][]byte) bool {
	until := s.pause.untilMs.Load()
	if until == 0 || spec == nil || s.clock.NowMs() >= until || cl.replica != nil {
		return false
	}
	flags := s.effectiveFlags(cl, spec, argv)
	if flags&command.AllowBusy != 0 && flags&command.Write == 0 {
		return false
	}
	if s.pause.writeOnly.Load() {
		return flags&(command.Write|command.MayReplicate) != 0
	}
	return true
}

// pauseActive is the cheap check before pausedFor: is any pause in force?
func (s *Server) pauseActive() bool {
	until := s.pause.untilMs.Load()
	return until != 0 && s.clock.NowMs() < until
}

// Pause implements CLIENT PAUSE: a later pause can only extend the deadline, and
// ALL wins over WRITE, as in Redis.
func (s *Server) Pause(untilMs int64, writeOnly bool) {
	s.pause.mu.Lock()
	defer s.pause.mu.Unlock()
	p := &s.pause
	if p.clientUntil == 0 || s.clock.NowMs() >= p.clientUntil {
		p.clientWriteOnly, p.clientUntil = writeOnly, untilMs
	} else {
		p.clientWriteOnly = p.clientWriteOnly && writeOnly
		p.clientUntil = max(p.clientUntil, untilMs)
	}
	s.combinePause()
}

// Unpause implements CLIENT UNPAUSE.
func (s *Server) Unpause() {
	s.pause.mu.Lock()
	s.pause.clientUntil = 0
	s.combinePause()
	s.pause.mu.Unlock()
}

func (s *Server) sortedClients() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, cl := range s.clients {
		out = append(out, cl)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ClientList implements CLIENT LIST's lines.
func (s *Server) ClientList(dst []byte, typ string, ids []int64) []byte {
	for _, cl := range s.sortedClients() {
		if typ != "" && normClientType(typ) != clientType(cl) {
			continue
		}
		if ids != nil && !containsID(ids, cl.ID) {
			continue
		}
		dst = s.appendClientLine(dst, cl)
		dst = append(dst, '\n')
	}
	return dst
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// ClientInfo implements CLIENT INFO.
func (s *Server) ClientInfo(dst []byte, c *command.Client) []byte {
	s.mu.Lock()
	cl := s.clients[c.ID]
	s.mu.Unlock()
	if cl == nil {
		return dst
	}
	return append(s.appendClientLine(dst, cl), '\n')
}

// appendClientLine formats one client as Redis 8's CLIENT LIST does. Fields owned
// by the client's goroutine are read racily only where they are atomics.
func (s *Server) appendClientLine(b []byte, cl *client) []byte {
	now := s.clock.NowMs()
	cmd := "NULL"
	if sp := cl.lastCmd.Load(); sp != nil {
		cmd = sp.FullName()
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.ID, 10)
	b = append(b, " addr="...)
	b = append(b, cl.Addr...)
	b = append(b, " laddr="...)
	b = append(b, cl.LAddr...)
	b = append(b, " fd=8 name="...)
	b = append(b, cl.Name...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, (now-cl.CreatedMs)/1000, 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, (now-cl.nc.LastActive())/1000, 10)
	b = append(b, " flags="...)
	b = appendClientFlags(b, cl)
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(cl.DB), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(cl.push.counts[0].Load()), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(cl.push.counts[1].Load()), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(cl.push.counts[2].Load()), 10)
	b = append(b, " multi="...)
	b = strconv.AppendInt(b, int64(cl.Multi), 10)
	b = append(b, " watch="...)
	b = strconv.AppendInt(b, int64(len(cl.multi.watched)), 10)
	m := &cl.mem
	qbuf := m.qbuf.Load()
	if cl == s.cur && cl.nc != nil {
		// the client asking: its request is still in its query buffer
		rd := cl.nc.Reader()
		qbuf = int64(rd.Buffered() + rd.LastLen())
	}
	b = append(b, " qbuf="...)
	b = strconv.AppendInt(b, qbuf, 10)
	b = append(b, " qbuf-free="...)
	b = strconv.AppendInt(b, m.qbufFree.Load(), 10)
	b = append(b, " argv-mem=0 multi-mem="...) // argv: the running command's arguments alias the query buffer
	b = strconv.AppendInt(b, m.multi.Load(), 10)
	rbs := m.rbs.Load()
	b = append(b, " rbs="...)
	b = strconv.AppendInt(b, rbs, 10)
	b = append(b, " rbp="...)
	b = strconv.AppendInt(b, rbs, 10)
	b = append(b, " obl="...)
	b = strconv.AppendInt(b, m.obl.Load(), 10)
	b = append(b, " oll="...)
	b = strconv.AppendInt(b, m.oll.Load(), 10)
	b = append(b, " omem="...)
	b = strconv.AppendInt(b, m.omem.Load(), 10)
	b = append(b, " tot-mem="...)
	b = strconv.AppendInt(b, max(m.tot.Load(), clientStructBytes), 10)
	b = append(b, " events=r cmd="...)
	b = append(b, cmd...)
	b = append(b, " user="...)
	b = append(b, userName(cl.User)...)
	b = append(b, " redir="...)
	b = append(b, command.TrackingRedirField(&cl.Tracking)...)
	b = append(b, " resp="...)
	b = strconv.AppendInt(b, int64(cl.Proto), 10)
	b = append(b, " lib-name="...)
	b = append(b, cl.LibName...)
	b = append(b, " lib-ver="...)
	b = append(b, cl.LibVer...)
	b = append(b, " io-thread=0 tot-net-in="...)
	b = strconv.AppendInt(b, cl.nc.NetIn(), 10)
	b = append(b, " tot-net-out="...)
	b = strconv.AppendInt(b, cl.nc.NetOut(), 10)
	b = append(b, " tot-cmds="...)
	b = strconv.AppendInt(b, cl.cmdsDone, 10)
	return b
}

// clientType is the CLIENT LIST / CLIENT KILL TYPE class of cl (Redis's
// getClientType, "slave" being "replica"): pubsub counts as normal here, as
// HotKV's CLIENT LIST has always matched it.
func clientType(cl *client) string {
	if cl.isReplica() {
		return "replica"
	}
	return "normal"
}

func normClientType(t string) string {
	if t == "slave" {
		return "replica"
	}
	return t
}

// appendClientFlags appends CLIENT LIST's flags in Redis's order (the ones
// HotKV has): P pub/sub, x MULTI, t R B tracking (on, broken redirection,
// BCAST), d a watched key changed, U a Unix socket client, e no-evict, T no-touch; N for none.
func appendClientFlags(b []byte, cl *client) []byte {
	n := len(b)
	if cl.monitor {
		b = append(b, 'O')
	} else if cl.isReplica() {
		b = append(b, 'S')
	}
	if cl.subscriptions() > 0 {
		b = append(b, 'P')
	}
	if cl.Multi >= 0 {
		b = append(b, 'x')
	}
	if cl.isBlocked.Load() {
		b = append(b, 'b')
	}
	b = command.TrackingFlagChars(b, &cl.Tracking)
	if cl.multi.touched {
		b = append(b, 'd')
	}
	if cl.unix {
		b = append(b, 'U')
	}
	if cl.NoEvict {
		b = append(b, 'e')
	}
	if cl.NoTouch {
		b = append(b, 'T')
	}
	if cl.rdbChannel {
		b = append(b, 'C')
	}
	if len(b) == n {
		b = append(b, 'N')
	}
	return b
}

// KillClients implements CLIENT KILL.
func (s *Server) KillClients(f command.KillFilter, self *command.Client) int {
	now := s.clock.NowMs()
	n := 0
	if s.killMasterLink(f) {
		n++
	}
	for _, cl := range s.sortedClients() {
		switch {
		case f.Addr != "" && cl.Addr != f.Addr,
			f.LAddr != "" && cl.LAddr != f.LAddr,
			f.ID != 0 && cl.ID != f.ID,
			f.User != "" && (cl.User == nil || cl.User.Name != f.User),
			f.Type != "" && normClientType(f.Type) != clientType(cl),
			f.MaxAgeSec != 0 && (now-cl.CreatedMs)/1000 < f.MaxAgeSec:
			continue
		}
		if cl.ID == self.ID {
			if f.SkipMe {
				continue
			}
			self.CloseAfterReply = true // closed after its reply, as Redis does
			n++
			continue
		}
		// kill only a client still registered, under the registry lock: its owner
		// cannot have closed (and the kernel reused) its fd meanwhile
		s.mu.Lock()
		_, live := s.clients[cl.ID]
		if live {
			delete(s.clients, cl.ID) // gone for CLIENT LIST and INFO at once, as in Redis
			cl.kill()
		}
		s.mu.Unlock()
		if live {
			n++
		}
	}
	return n
}

// pauseRemainingMs is how long the current pause lasts (0: none).
func (s *Server) pauseRemainingMs() int64 {
	until := s.pause.untilMs.Load()
	if until == 0 {
		return 0
	}
	return max(until-s.clock.NowMs(), 0)
}

// obufLimits is client-output-buffer-limit (normal, replica, pubsub), read
// again only after CONFIG SET changed it.
func (s *Server) obufLimits() *[3]config.OBufLimit {
	if s.obufDirty.Swap(false) {
		limits := s.cfg.ClientOutputBufferLimits()
		s.obufLimit.Store(&limits)
	}
	return s.obufLimit.Load()
}

// overOutputLimit applies client-output-buffer-limit (normal class) to the
// pending reply bytes of cl: over the hard limit, or over the soft limit for
// longer than its seconds, the client is disconnected as in Redis. It reports
// whether cl must be closed.
func (s *Server) overOutputLimit(cl *client, pending int) bool {
	if cl.isReplica() {
		// the snapshot is not output in Redis's sense; the stream is limited
		// in the push buffer, with the replica class (pushOverLimit)
		return false
	}
	if pending > unauthOutputMax && !cl.Authenticated && s.acl.RequireAuth() {
		// an unauthenticated client that does not read its replies (Redis:
		// over 1024 bytes beyond the 16 KiB reply buffer)
		s.stats.obufLimitDisconnects.Add(1)
		s.logOutputLimit(cl)
		return true
	}
	lim := &s.obufLimits()[0]
	if cl.subscriptions() > 0 { // the pubsub class
		lim = &s.obufLimits()[2]
	}
	if lim.Hard == 0 && lim.Soft == 0 {
		return false
	}
	return s.overLimit(cl, lim, uint64(pending), &cl.softSinceMs)
}

// logOutputLimit logs a client closed for its output, in Redis's words
// (checkClientOutputBufferLimits' caller).
func (s *Server) logOutputLimit(cl *client) {
	s.log.Warn(fmt.Sprintf("Client id=%d addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.", cl.ID, cl.Addr))
}

// unauthOutputMax is the output an unauthenticated client may leave unread:
// Redis's 16 KiB reply buffer, then 1024 bytes (checkClientOutputBufferLimits).
const unauthOutputMax = 16*1024 + 1024

// overLimit is Redis's checkClientOutputBufferLimits for n bytes of cl's
// against lim: over the hard limit, or over the soft limit for longer than its
// seconds. since is when the soft limit was passed (0: it is not). A client
// over the limit is counted and logged; the caller closes it.
func (s *Server) overLimit(cl *client, lim *config.OBufLimit, n uint64, since *int64) bool {
	over := lim.Hard > 0 && n > lim.Hard
	if !over && lim.Soft > 0 && n > lim.Soft {
		now := s.clock.NowMs()
		if *since == 0 {
			*since = now
		}
		over = now-*since > lim.SoftSeconds*1000
	} else if n <= lim.Soft {
		*since = 0
	}
	if over {
		s.stats.obufLimitDisconnects.Add(1)
		s.logOutputLimit(cl)
	}
	return over
}
