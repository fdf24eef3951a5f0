package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/server/repl"
)

// The replica side of rdb channel replication (Redis 8's repl-rdb-channel,
// replication.c's rdbChannel*; decision 0052). The master answered the main
// channel's PSYNC with +RDBCHANNELSYNC <id>: a second connection, the RDB
// channel, asks for the snapshot (REPLCONF capa eof rdb-only 1 rdb-channel 1
// main-ch-client-id <id> listening-port <port>, then PSYNC ? -1) and gets
// +FULLRESYNC and the payload, while the main channel's stream, which
// starts where the snapshot ends, is read into memory (up to
// replica-full-sync-buffer-limit, else client-output-buffer-limit replica's
// hard limit; past it the master holds the rest). Once the snapshot is
// loaded the replica is connected at the FULLRESYNC offset, acknowledges it
// on the main channel, and applies the held stream and then the live one.

// rdbChannelSync is syncWithMaster's full sync over an RDB channel.
func (s *Server) rdbChannelSync(gen uint64, host string, port int, link *repl.MasterLink, mainID string) error {
	rs := &s.rs
	tc, err := s.replicationTLS()
	if err != nil {
		return fmt.Errorf("Error condition on socket for rdb channel replication: %w", err)
	}
	rdb, err := repl.Dial(host, port, link.Timeout(), tc)
	if err != nil {
		return fmt.Errorf("Error condition on socket for rdb channel replication: %w", err)
	}
	defer rdb.Close()
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		return nil
	}
	rs.rdbLink = rdb
	listen := s.cfg.Int("replica-announce-port")
	if listen == 0 {
		listen = s.listenPort()
	}
	ip := s.cfg.String("replica-announce-ip")
	pass, user := s.cfg.String("masterauth"), s.cfg.String("masteruser")
	s.eng.Unlock()
	defer func() {
		s.eng.Lock()
		if rs.rdbLink == rdb {
			rs.rdbLink = nil
		}
		s.eng.Unlock()
	}()
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := rdb.Call(args...); err != nil {
			return fmt.Errorf("rdb channel sync failed with error: Unable to AUTH to master: %v", err)
		}
	}
	args := []string{"REPLCONF", "capa", "eof", "rdb-only", "1", "rdb-channel", "1",
		"main-ch-client-id", mainID, "listening-port", strconv.FormatInt(listen, 10)}
	if ip != "" {
		args = append(args, "ip-address", ip)
	}
	if _, err := rdb.Call(args...); err != nil {
		return fmt.Errorf("rdb channel sync failed with error: Master replied error to replconf: %v", err)
	}
	s.debugPause(pauseBeforeRDBChannel)
	sy, err := rdb.Psync("?", -1)
	if err != nil {
		return fmt.Errorf("rdb channel sync failed with error: %w", err)
	}
	if !sy.Full {
		return fmt.Errorf("rdb channel sync failed with error: Received unexpected psync reply")
	}
	s.log.Info(fmt.Sprintf("Full resync from master: %s:%d", sy.ReplID, sy.Offset))
	s.log.Info("Starting to receive RDB and replication stream in parallel.")
	rs.state.Store("sync")
	buf := link.BufferStream(s.fullSyncBufferLimit(), func(limit int64) {
		s.log.Info(fmt.Sprintf("Replication buffer limit has been reached (%d bytes), stopped buffering replication stream. "+
			"Further accumulation may occur on master side.", limit))
	}, func(error) { s.mainChannelLost(rdb) })
	rs.fullSync.Store(buf)
	stopAlive := make(chan struct{})
	go func() { // the replica's keep-alive on the main channel while it loads
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopAlive:
				return
			case <-t.C:
				_ = link.SendNewline()
			}
		}
	}()
	err = s.loadFromMaster(gen, rdb, sy.ReplID)
	close(stopAlive)
	held, mainErr := buf.Stop()
	_, peak := buf.Size()
	rs.fullSyncPeak.Store(max(rs.fullSyncPeak.Load(), peak))
	rs.fullSync.Store(nil)
	if err != nil {
		return err
	}
	_ = rdb.Close() // the replica closes its RDB channel (readSyncBulkPayload)
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		return nil
	}
	s.replID, s.replID2, s.secondOffset = sy.ReplID, strings.Repeat("0", 40), -1
	rs.db = 0 // the main channel's stream starts with a SELECT
	s.repl.ResetBacklog(sy.Offset)
	s.dropReplicas() // a new dataset and history: they sync again (replicationAttachToNewMaster)
	s.linkUp(sy.Offset)
	s.eng.Unlock()
	s.log.Info("MASTER <-> REPLICA sync: Finished with success")
	if mainErr != nil {
		s.log.Info("Main channel error while reading from master: " + mainErr.Error())
	}
	_ = link.Ack(sy.Offset, -1)
	s.log.Info(fmt.Sprintf("MASTER <-> REPLICA sync: Starting to stream replication buffer into the db (%d bytes).", held))
	if held == 0 {
		s.log.Info("MASTER <-> REPLICA sync: Successfully streamed replication buffer into the db (0 bytes in total)")
	}
	return s.applyStream(gen, link, held)
}

// mainChannelLost is rdbChannelAbort for a main channel that fails while
// its RDB channel's snapshot downloads or loads (called from the main
// channel's reading goroutine). A load from a file goes on, and the replica
// then tries PSYNC from the snapshot's offset and what the main channel
// held; a load from the link is aborted (its next read fails), as is a
// download: the replica syncs again.
func (s *Server) mainChannelLost(rdb *repl.MasterLink) {
	feed := s.rs.linkFeed.Load()
	if s.rdb.Loading() || s.rdb.AsyncLoading() {
		s.log.Info("Aborting rdb channel sync while loading the RDB.")
		if feed == nil {
			s.log.Info("After loading RDB, replica will try psync with master.")
			return
		}
	}
	if feed != nil {
		feed.Abort()
	}
	_ = rdb.Close()
}

// fullSyncBufferLimit is replica-full-sync-buffer-limit, or when 0 the hard
// limit of client-output-buffer-limit replica (0: none).
func (s *Server) fullSyncBufferLimit() int64 {
	if n := s.cfg.Int("replica-full-sync-buffer-limit"); n > 0 {
		return n
	}
	return s.replicaHardLimit()
}

// replicaHardLimit is client-output-buffer-limit replica's hard limit.
func (s *Server) replicaHardLimit() int64 {
	return int64(s.obufLimits()[1].Hard)
}

// fullSyncBuffer is the stream held in memory now during an RDB channel
// sync, and the most held since the start (INFO's
// replica_full_sync_buffer_size and _peak). Any goroutine.
func (s *Server) fullSyncBuffer() (size, peak int64) {
	peak = s.rs.fullSyncPeak.Load()
	if b := s.rs.fullSync.Load(); b != nil {
		var p int64
		size, p = b.Size()
		peak = max(peak, p)
	}
	return size, peak
}

// DEBUG REPL-PAUSE's points (Redis's REPL_DEBUG_*): where replication
// stops the process with SIGSTOP, for a test to look at it and resume it
// with SIGCONT.
const (
	pauseAfterFork = 1 << iota
	pauseBeforeRDBChannel
	pauseOnStreamingReplBuf
)

// ReplPause implements command.Replication.
func (s *Server) ReplPause(point string) bool {
	switch point {
	case "clear":
		s.replPause.Store(0)
	case "after-fork":
		s.replPause.Or(pauseAfterFork)
	case "before-rdb-channel":
		s.replPause.Or(pauseBeforeRDBChannel)
	case "on-streaming-repl-buf":
		s.replPause.Or(pauseOnStreamingReplBuf)
	default:
		return false
	}
	return true
}

// debugPause stops the process at a point DEBUG REPL-PAUSE set (Redis's
// debugPauseProcess). Any goroutine.
func (s *Server) debugPause(point uint32) {
	if s.replPause.Load()&point == 0 {
		return
	}
	s.log.Info("Process is about to stop.")
	stopSelf()
	s.log.Info("Process has been continued.")
}
