package server

import (
	"github.com/hotkv/hotkv/internal/command"
)

// Full syncs wait for more replicas, as Redis's diskless syncs do, and for
// the replicas' snapshot in progress, one at a time as Redis forks one
// child at a time (syncCommand's "BGSAVE for replication delayed"; the
// waiting syncs start as soon as it ends). With
// repl-diskless-sync yes and repl-diskless-sync-delay N > 0, a replica that
// needs a full sync waits (INFO: state=wait_bgsave; its PSYNC unanswered)
// until the oldest waiting one has waited N seconds, or until
// repl-diskless-sync-max-replicas of them wait; then the syncs of all the
// waiting replicas start at the same moment: each gets +FULLRESYNC with the
// same offset and the snapshot of that moment (Redis's syncCommand "Delay
// next BGSAVE for diskless SYNC", replicationCron's
// shouldStartChildForReplication). Redis sends one payload to them all;
// HotKV encodes one per replica, from the same moment.

// pendingSync is a full sync waiting to start.
type pendingSync struct {
	cl         *client
	rdbChannel bool // an RDB channel's PSYNC (else a SYNC or PSYNC on the replication link)
	psync      bool
	partial    bool         // the PSYNC asked to continue a history (counted when it starts)
	held       *heldReplica // the replica as attached (not for an RDB channel)
	sinceMs    int64
	newlineMs  int64 // when it was last sent a newline
}

// delaySync reports whether cl's full sync waits, and records it if so.
// Engine lock.
func (s *Server) delaySync(c *command.Ctx, cl *client, psync, rdbChannel bool) bool {
	busy := s.rdb.ReplSnapshots() > 0
	if !busy && (!s.cfg.Bool("repl-diskless-sync") || s.cfg.Int("repl-diskless-sync-delay") <= 0) {
		return false
	}
	p := &pendingSync{cl: cl, rdbChannel: rdbChannel, psync: psync, partial: psync && askedPartial(c), sinceMs: s.clock.NowMs()}
	p.newlineMs = p.sinceMs
	cl.Flags = "S"
	if rdbChannel {
		cl.rdbSlave = true
	} else {
		p.held = &heldReplica{cl: cl, holding: true, waiting: true}
		s.becomeReplica(cl, s.repl.Attach(p.held, psync, cl.pendingListenPort, s.clock.NowMs()))
		cl.replica.State = stateWaitBgsave
	}
	s.syncs = append(s.syncs, p)
	if busy {
		s.log.Info("Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC")
	} else {
		s.log.Info("Delay next BGSAVE for diskless SYNC")
	}
	if m := s.cfg.Int("repl-diskless-sync-max-replicas"); m > 0 && int64(len(s.syncs)) >= m {
		s.startDueSyncs(s.clock.NowMs())
	}
	return true
}

// startDueSyncs starts the waiting full syncs when their time came (the
// cron, and delaySync when enough replicas wait). Engine lock.
func (s *Server) startDueSyncs(nowMs int64) {
	if len(s.syncs) == 0 {
		return
	}
	live := s.syncs[:0]
	for _, p := range s.syncs {
		if !p.cl.killed() && s.clientLive(p.cl) {
			live = append(live, p)
		}
	}
	clear(s.syncs[len(live):])
	s.syncs = live
	if len(live) == 0 {
		s.syncs = nil
		return
	}
	// a newline a second keeps a waiting replica's link alive (its
	// repl-timeout), as Redis's replicationCron writes to pre-sync replicas
	for _, p := range live {
		if nowMs-p.newlineMs >= 1000 {
			p.newlineMs = nowMs
			p.cl.pushBulk([]byte{'\n'})
		}
	}
	m := s.cfg.Int("repl-diskless-sync-max-replicas")
	due := s.rdb.ReplSnapshots() == 0 && (!s.cfg.Bool("repl-diskless-sync") ||
		(m > 0 && int64(len(live)) >= m) ||
		nowMs-live[0].sinceMs >= s.cfg.Int("repl-diskless-sync-delay")*1000)
	if !due {
		return
	}
	s.syncs = nil
	for _, p := range live {
		if p.psync {
			p.cl.pushBulk([]byte("+" + s.fullResyncLine() + "\r\n"))
		}
		s.countFullSync(p.partial)
		if p.rdbChannel {
			s.startRDBChannel(p.cl)
			continue
		}
		p.held.waiting = false
		s.repl.ForceSelect() // the held stream starts with a SELECT
		s.snapshotForReplica(p.cl, p.held)
	}
}
