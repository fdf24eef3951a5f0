package server

import (
	"fmt"
	"strings"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/server/repl"
)

// FAILOVER (Redis's failoverCommand, updateFailoverStatus): a master hands
// its role to a replica without losing a write. It holds clients' writes
// back, waits (the cron) until a replica (the one named, or any) has
// acknowledged the whole stream, then becomes a replica of it with PSYNC
// ... FAILOVER, which makes the replica promote itself (keeping this
// server's history as its replid2) and answer +CONTINUE. TIMEOUT aborts a
// failover whose replica never catches up, or with FORCE fails over
// anyway; FAILOVER ABORT ends it.

// The failover states (INFO's master_failover_state).
const (
	noFailover         = "no-failover"
	failoverWaitSync   = "waiting-for-sync"
	failoverInProgress = "failover-in-progress"
)

// failoverState is a coordinated failover (engine lock).
type failoverState struct {
	state string // "" is noFailover
	endMs int64  // the TIMEOUT's end (0: none)
	force bool
	host  string // the target ("": any replica that catches up)
	port  int64
}

func (f *failoverState) String() string {
	if f.state == "" {
		return noFailover
	}
	return f.state
}

// Failover implements command.Replication: FAILOVER [TO host port [FORCE]]
// [TIMEOUT ms], its arguments parsed; it returns the refusal, or "".
func (s *Server) Failover(c *command.Ctx, host string, port int64, force bool, timeoutMs int64) string {
	f := &s.fo
	switch {
	case f.state != "":
		return "ERR FAILOVER already in progress."
	case s.isReplica():
		return "ERR FAILOVER is not valid when server is a replica."
	case s.repl.Len() == 0:
		return "ERR FAILOVER requires connected replicas."
	case force && (timeoutMs == 0 || host == ""):
		return "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	}
	if host != "" {
		if !s.repl.Has(host, port) {
			return "ERR FAILOVER target HOST and PORT is not a replica."
		}
		s.log.Info(fmt.Sprintf("FAILOVER requested to %s:%d.", host, port))
	} else {
		s.log.Info("FAILOVER requested to any replica.")
	}
	*f = failoverState{state: failoverWaitSync, force: force, host: host, port: port}
	if timeoutMs > 0 {
		f.endMs = c.Now + timeoutMs
	}
	s.pauseForFailover(true)
	return ""
}

// FailoverAbort implements command.Replication (FAILOVER ABORT); false when
// no failover runs.
func (s *Server) FailoverAbort() bool {
	if s.fo.state == "" {
		return false
	}
	s.abortFailover("Failover manually aborted")
	return true
}

// FailoverRunning implements command.Replication.
func (s *Server) FailoverRunning() bool { return s.fo.state != "" }

// abortFailover ends a failover that did not happen (abortFailover).
func (s *Server) abortFailover(why string) {
	f := &s.fo
	if f.state == "" {
		return
	}
	if f.host != "" {
		s.log.Info(fmt.Sprintf("FAILOVER to %s:%d aborted: %s", f.host, f.port, why))
	} else {
		s.log.Info("FAILOVER to any replica aborted: " + why)
	}
	if f.state == failoverInProgress {
		s.unsetMaster()
	}
	s.clearFailover()
}

// clearFailover is clearFailoverState: writes go again.
func (s *Server) clearFailover() {
	s.fo = failoverState{}
	s.pauseForFailover(false)
}

// failoverCron is updateFailoverStatus (the cron, engine lock).
func (s *Server) failoverCron(nowMs int64) {
	f := &s.fo
	if f.state != failoverWaitSync {
		return
	}
	if f.endMs != 0 && f.endMs <= nowMs {
		if f.force {
			s.log.Info(fmt.Sprintf("FAILOVER to %s:%d time out exceeded, failing over.", f.host, f.port))
			s.startFailover()
			return
		}
		s.abortFailover("Replica never caught up before timeout")
		return
	}
	host, port, ok := s.repl.CaughtUp(f.host, f.port)
	if !ok {
		return
	}
	f.host, f.port = host, port
	s.log.Info(fmt.Sprintf("Failover target %s:%d is synced, failing over.", host, port))
	s.startFailover()
}

// startFailover makes this server a replica of the target, whose PSYNC
// carries FAILOVER.
func (s *Server) startFailover() {
	s.fo.state = failoverInProgress
	s.setMaster(s.fo.host, s.fo.port)
}

// psyncFailover is the target's side of PSYNC replid offset FAILOVER
// (syncCommand): a replica whose id the old master names promotes itself
// before the PSYNC is answered; "" or the refusal.
func (s *Server) psyncFailover(c *command.Ctx) string {
	s.log.Info(fmt.Sprintf("Failover request received for replid %s.", c.Argv[1]))
	if !s.isReplica() {
		return "ERR PSYNC FAILOVER can't be sent to a master."
	}
	if !strings.EqualFold(string(c.Argv[1]), s.replID) {
		return "ERR PSYNC FAILOVER replid must match my replid."
	}
	s.unsetMaster()
	who := ""
	if cl := s.clientOf(c.Client); cl != nil {
		who = cl.Addr
	}
	s.log.Info(fmt.Sprintf("MASTER MODE enabled (failover request from '%s')", who))
	return ""
}

// failoverPsyncDone is the old master's end of a failover: its PSYNC to the
// new master was answered (sync), or refused (err).
func (s *Server) failoverPsyncDone(err error) {
	if s.fo.state != failoverInProgress {
		return
	}
	if _, refused := err.(*repl.ReplyError); refused || err != nil {
		s.abortFailover("Failover target rejected psync request")
		return
	}
	s.clearFailover()
}
