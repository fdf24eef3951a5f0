package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/server/network"
	"github.com/hotkv/hotkv/internal/server/persist"
	"github.com/hotkv/hotkv/internal/server/repl"
)

// The replica side of replication (REPLICAOF, SLAVEOF; Redis's
// replicationSetMaster, syncWithMaster, readSyncBulkPayload and the master
// client): a goroutine of its own connects to the master, shakes hands,
// asks PSYNC, loads the snapshot the master sends (into a temporary file
// first, then under the engine lock, replacing the dataset), then applies
// the master's stream through Apply, a MULTI ... EXEC as one unit,
// counting the bytes (the replication offset), answering REPLCONF GETACK
// and acknowledging every second. A lost link is dialled again every
// second. While the server is a replica:
//   - clients' writes are refused with READONLY (replica-read-only yes),
//     and every command but the stale-allowed ones with MASTERDOWN while the
//     link is down and replica-serve-stale-data is no;
//   - keys expire only when the master says so (a DEL in the stream): lazy
//     expiry reports an expired key missing without deleting it and the
//     active cycle waits (the keyspace's ExpiryPaused), and the master's
//     commands run at a time before every deadline, so that they see what
//     the master saw (Redis's rule for its master client).

// replicaState is the replica side (engine lock, except the atomics).
type replicaState struct {
	host string // "" while the server is a master
	port int64
	gen  uint64 // each REPLICAOF starts a generation: an older link stops
	link *repl.MasterLink
	// rdbLink is the RDB channel while a full sync uses one, and fullSync
	// the main channel's stream held meanwhile (rdbchannel.go)
	rdbLink *repl.MasterLink
	// linkFeed is the payload of a full sync loading from its link
	// (loadFromLink: diskless), which a lost main channel aborts
	linkFeed     atomic.Pointer[payloadFeed]
	fullSync     atomic.Pointer[repl.StreamBuffer]
	fullSyncPeak atomic.Int64 // the most it held, since the start
	wg           sync.WaitGroup

	state      atomic.Value // ROLE's: "connect", "connecting", "handshake", "sync", "connected"
	offset     atomic.Int64 // slave_repl_offset: the stream applied
	readOffset atomic.Int64 // slave_read_repl_offset: the stream read
	lastIOUnix atomic.Int64
	downSince  atomic.Int64 // Unix s the link went down (0: never up)
	upSince    atomic.Int64
	attempts   atomic.Int64 // master_current_sync_attempts: connections since the link was last lost
	total      atomic.Int64 // master_total_sync_attempts: since REPLICAOF
	// disconnectStart is when the link was lost (Unix s; 0 while up), and
	// disconnectSum the seconds of the disconnections since ended
	// (total_disconnect_time_sec: Redis's repl_disconnect_start_time and
	// repl_total_disconnect_time)
	disconnectStart atomic.Int64
	disconnectSum   atomic.Int64
	up              atomic.Bool
	synced          atomic.Bool // a master's stream was followed (its offsets are known)
	// own are the keys with a TTL that clients wrote on this (writable)
	// replica, per database: the master does not know them, so the replica
	// expires them itself (Redis's slaveKeysWithExpire)
	own map[int]map[string]struct{}
	// db is the database the master's stream selected last: a partial
	// resync continues in it (the master sends no SELECT again), as Redis's
	// cached master client keeps its db. Engine lock.
	db int
}

// isReplica reports whether the server replicates a master.
func (s *Server) isReplica() bool { return s.rs.host != "" }

// replicaExpiryPaused is the keyspace's ExpiryPaused: CLIENT PAUSE, and a
// replica's rule that only the master expires keys.
func (s *Server) replicaExpiryPaused() bool { return s.replicaFlag.Load() || s.pauseActive() }

// ReplicaOf implements command.Replication (REPLICAOF, SLAVEOF). Engine lock.
func (s *Server) ReplicaOf(c *command.Ctx, host string, port int64) bool {
	rs := &s.rs
	who := ""
	if cl := s.clientOf(c.Client); cl != nil {
		who = cl.Addr
	}
	if port < 0 { // NO ONE
		if rs.host != "" {
			s.unsetMaster()
			s.log.Info(fmt.Sprintf("MASTER MODE enabled (user request from '%s')", who))
		}
		return false
	}
	if rs.host != "" && strings.EqualFold(rs.host, host) && rs.port == port {
		s.log.Info("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.")
		return true
	}
	s.setMaster(host, port)
	s.log.Info(fmt.Sprintf("REPLICAOF %s:%d enabled (user request from '%s')", host, port, who))
	return false
}

// ReplicaState implements command.Replication (ROLE).
func (s *Server) ReplicaState() (host string, port int64, state string, offset int64) {
	rs := &s.rs
	if rs.host == "" {
		return "", 0, "", 0
	}
	st, _ := rs.state.Load().(string)
	return rs.host, rs.port, st, rs.offset.Load()
}

// setMaster is replicationSetMaster: the old link (if any) goes and a new
// link starts. The replicas of this server stay: if the new master
// continues this server's history (a partial resync) they continue too;
// they are dropped when it does not (a full sync's new dataset, a new
// replication id: continueWithMaster), as Redis keeps them. Engine lock.
func (s *Server) setMaster(host string, port int64) {
	if s.rs.up.Load() {
		s.linkLost()
	}
	s.stopLink()
	s.disconnectAllBlocked() // clients blocked on a master, now a replica
	rs := &s.rs
	rs.host, rs.port = host, port
	s.cfg.SetReplicaOf(host, port)
	rs.synced.Store(false)
	s.replicaFlag.Store(true)
	s.repl.SetProxy(true)
	rs.state.Store("connect")
	rs.attempts.Store(0) // replicationSetMaster: the new master's count starts
	rs.total.Store(0)
	if rs.downSince.Load() == 0 {
		rs.downSince.Store(s.clock.NowUs() / 1e6)
	}
	rs.gen++
	gen := rs.gen
	rs.wg.Add(1)
	go s.replicaLoop(gen, host, int(port))
}

// unsetMaster is replicationUnsetMaster: the link goes, the server is a
// master again, keeping its data; its history continues under a new
// replication id (the old one as replid2, up to this offset).
func (s *Server) unsetMaster() {
	if s.rs.up.Load() {
		s.linkLost()
	}
	s.stopLink()
	rs := &s.rs
	rs.attempts.Store(0)
	rs.total.Store(0)
	rs.downSince.Store(0) // ready for when this server is a replica again
	rs.upSince.Store(0)
	rs.host, rs.port = "", 0
	s.cfg.SetReplicaOf("", 0)
	s.replicaFlag.Store(false)
	rs.up.Store(false)
	// the history goes on under a new id: replicas of the old master that
	// follow this one continue with PSYNC (PSYNC2)
	s.replID2, s.secondOffset = s.replID, s.repl.Offset()+1
	s.replID = randomHex(20)
	s.repl.SetProxy(false)
	s.dropReplicas()
}

// linkLost records that the link to the master went (Redis's
// replicationHandleMasterDisconnection, replicationAbortSyncTransfer): down
// since now, a new count of attempts if it was up, a disconnection that
// starts.
func (s *Server) linkLost() {
	rs := &s.rs
	now := s.clock.NowUs() / 1e6
	if rs.up.Swap(false) {
		rs.downSince.Store(now)
		rs.upSince.Store(0)
		rs.attempts.Store(0)
	}
	rs.disconnectStart.CompareAndSwap(0, now)
}

// stopLink ends the running link's generation and closes its connection;
// the goroutine exits at its next step. Engine lock.
func (s *Server) stopLink() {
	rs := &s.rs
	rs.gen++
	if rs.link != nil {
		_ = rs.link.Close()
		rs.link = nil
	}
	if rs.rdbLink != nil {
		_ = rs.rdbLink.Close()
		rs.rdbLink = nil
	}
}

// dropReplicas disconnects this server's own replicas (their history
// changes with the master's).
func (s *Server) dropReplicas() {
	s.mu.Lock()
	var reps []*client
	for _, cl := range s.clients {
		if cl.isReplica() {
			reps = append(reps, cl)
		}
	}
	s.mu.Unlock()
	for _, cl := range reps {
		cl.kill()
	}
}

// current reports whether gen is still the running generation (engine
// lock).
func (s *Server) current(gen uint64) bool { return s.rs.gen == gen }

// replicaLoop connects to the master again and again until its generation
// ends.
func (s *Server) replicaLoop(gen uint64, host string, port int) {
	defer s.rs.wg.Done()
	for {
		s.eng.Lock()
		ok := s.current(gen) && !s.stopping.Load()
		s.eng.Unlock()
		if !ok {
			return
		}
		began := time.Now()
		err := s.syncWithMaster(gen, host, port)
		phase, _ := s.rs.state.Load().(string)
		s.eng.Lock()
		ok = s.current(gen)
		if ok {
			s.rs.link = nil
			if s.rs.up.Load() || phase == "sync" {
				s.linkLost() // a transfer that failed counts as a disconnection too
			}
			s.rs.state.Store("connect")
		}
		s.eng.Unlock()
		if !ok {
			return
		}
		if err != nil {
			var ne net.Error
			switch timeout := errors.As(err, &ne) && ne.Timeout(); {
			case timeout && (phase == "connecting" || phase == "handshake"):
				s.log.Warn("Timeout connecting to the MASTER...") // replicationCron's words
			case timeout && phase == "sync":
				s.log.Warn("Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.")
			default:
				s.log.Warn("Connection with master lost or failed: " + err.Error())
			}
			if phase == "sync" && time.Since(began) >= 10*time.Millisecond {
				// a transfer that failed tries again at once, as Redis's
				// cancelReplicationHandshake(reconnect) does after a failed
				// load, not at the next replicationCron (an attempt that
				// fails within 10 ms waits: no spinning on a master that
				// fails every sync at once)
				s.log.Info(fmt.Sprintf("Reconnecting to MASTER %s:%d after failure", host, port))
				continue
			}
		}
		time.Sleep(time.Second)
	}
}

// syncWithMaster is one connection's life: handshake, sync, stream.
func (s *Server) syncWithMaster(gen uint64, host string, port int) error {
	rs := &s.rs
	timeout := time.Duration(s.cfg.Int("repl-timeout")) * time.Second
	rs.state.Store("connecting")
	rs.attempts.Add(1) // connectWithMaster counts every attempt
	rs.total.Add(1)
	s.log.Info(fmt.Sprintf("Connecting to MASTER %s:%d", host, port))
	tc, err := s.replicationTLS()
	if err != nil {
		return fmt.Errorf("Error condition on socket for SYNC: %w", err)
	}
	link, err := repl.Dial(host, port, timeout, tc)
	if err != nil {
		return fmt.Errorf("Error condition on socket for SYNC: %w", err)
	}
	defer link.Close()
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		return nil
	}
	rs.link = link
	s.eng.Unlock()
	s.log.Info("MASTER <-> REPLICA sync started")
	rs.state.Store("handshake")
	if _, err := link.Call("PING"); err != nil {
		// a master that wants AUTH answers -NOAUTH: the handshake goes on
		var re *repl.ReplyError
		if !errors.As(err, &re) || !(strings.HasPrefix(re.Msg, "NOAUTH") || strings.HasPrefix(re.Msg, "NOPERM") ||
			strings.HasPrefix(re.Msg, "ERR operation not permitted")) {
			return fmt.Errorf("Error reply to PING from master: '%v'", err)
		}
	}
	if pass := s.cfg.String("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := s.cfg.String("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := link.Call(args...); err != nil {
			return fmt.Errorf("Unable to AUTH to MASTER: %v", err)
		}
	}
	listen := s.cfg.Int("replica-announce-port")
	if listen == 0 {
		listen = s.listenPort()
	}
	if _, err := link.Call("REPLCONF", "listening-port", strconv.FormatInt(listen, 10)); err != nil {
		s.log.Info("(Non critical) Master does not understand REPLCONF listening-port: " + err.Error())
	}
	if ip := s.cfg.String("replica-announce-ip"); ip != "" {
		if _, err := link.Call("REPLCONF", "ip-address", ip); err != nil {
			s.log.Info("(Non critical) Master does not understand REPLCONF ip-address: " + err.Error())
		}
	}
	capa := []string{"REPLCONF", "capa", "eof", "capa", "psync2"}
	if s.cfg.Bool("repl-rdb-channel") {
		capa = append(capa, "capa", "rdb-channel-repl")
	}
	if _, err := link.Call(capa...); err != nil {
		s.log.Info("(Non critical) Master does not understand REPLCONF capa: " + err.Error())
	}
	// this server's own history (its id and offset: what it got from a
	// master before, or its own as a master) may continue
	s.eng.Lock()
	myID, myOff := s.replID, s.repl.Offset()
	var extra []string
	failingOver := s.fo.state == failoverInProgress
	if failingOver {
		extra = []string{"FAILOVER"} // the target promotes itself first
	}
	s.eng.Unlock()
	sy, err := link.Psync(myID, myOff+1, extra...)
	if failingOver {
		s.eng.Lock()
		if s.current(gen) {
			s.failoverPsyncDone(err)
		}
		s.eng.Unlock()
	}
	if err != nil {
		return err
	}
	if sy.RDBChannel {
		s.log.Info("PSYNC is not possible, initialize RDB channel.")
		return s.rdbChannelSync(gen, host, port, link, sy.MainID)
	}
	if !sy.Full {
		return s.continueWithMaster(gen, link, myID, myOff, sy)
	}
	s.log.Info(fmt.Sprintf("Full resync from master: %s:%d", sy.ReplID, sy.Offset))
	rs.state.Store("sync")
	if err := s.loadFromMaster(gen, link, sy.ReplID); err != nil {
		return err
	}
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		return nil
	}
	s.replID, s.replID2, s.secondOffset = sy.ReplID, strings.Repeat("0", 40), -1
	rs.db = 0 // the stream after a full sync starts with a SELECT
	s.repl.ResetBacklog(sy.Offset)
	s.dropReplicas() // a new dataset and history: they sync again (replicationAttachToNewMaster)
	s.linkUp(sy.Offset)
	s.eng.Unlock()
	s.log.Info("MASTER <-> REPLICA sync: Finished with success")
	return s.applyStream(gen, link, 0)
}

// linkUp marks the link connected with the stream at offset off (a full
// sync's start, or where a partial one continues). Engine lock.
func (s *Server) linkUp(off int64) {
	rs := &s.rs
	rs.offset.Store(off)
	s.fackLinkUp(off)
	rs.readOffset.Store(off)
	rs.up.Store(true)
	rs.downSince.Store(0)
	if d := rs.disconnectStart.Swap(0); d != 0 {
		rs.disconnectSum.Add(s.clock.NowUs()/1e6 - d)
	}
	rs.synced.Store(true)
	rs.upSince.Store(s.clock.NowUs() / 1e6)
	rs.state.Store("connected")
}

// continueWithMaster is +CONTINUE: the stream goes on from this server's
// offset, under the master's id (the old one becomes replid2 when it
// changed: the master is a promoted replica).
func (s *Server) continueWithMaster(gen uint64, link *repl.MasterLink, myID string, myOff int64, sy repl.Sync) error {
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		return nil
	}
	if sy.ReplID != myID {
		s.replID2, s.secondOffset = myID, myOff+1
		s.replID = sy.ReplID
		s.dropReplicas() // they follow the new id from a fresh PSYNC
	}
	s.linkUp(myOff)
	s.eng.Unlock()
	s.log.Info("Successful partial resynchronization with master.")
	s.log.Info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
	return s.applyStream(gen, link, 0)
}

// loadFromMaster receives the snapshot into a temporary file of dir
// (Redis's temp-<time>.<pid>.rdb), then loads it under the engine lock; or,
// with repl-diskless-load flushdb (on-empty-db on an empty
// dataset), loads it from the link as it comes, the engine lock held
// meanwhile.
func (s *Server) loadFromMaster(gen uint64, link *repl.MasterLink, masterID string) error {
	s.eng.Lock()
	mode := s.cfg.String("repl-diskless-load")
	diskless := mode == "flushdb" || mode == "swapdb" || (mode == "on-empty-db" && s.datasetEmpty())
	// swapdb with the history this replica already follows: its dataset
	// is an earlier point of the one arriving, served meanwhile (Redis's
	// async loading)
	async := mode == "swapdb" && masterID == s.replID
	s.eng.Unlock()
	if diskless {
		return s.loadFromLink(gen, link, mode == "swapdb", async)
	}
	path := filepath.Join(s.cfg.String("dir"), fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("Opening the temp file needed for MASTER <-> REPLICA synchronization: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := link.Payload(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("I/O error trying to sync with MASTER: %w", err)
	}
	s.rs.lastIOUnix.Store(time.Now().Unix())
	s.log.Info(fmt.Sprintf("MASTER <-> REPLICA sync: received %d bytes from master to disk", n))
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	s.eng.Lock()
	defer s.eng.Unlock()
	if !s.current(gen) {
		return nil
	}
	s.log.Info("MASTER <-> REPLICA sync: Flushing old data")
	s.log.Info("MASTER <-> REPLICA sync: Loading DB in memory")
	s.beginReplicaLoad(n)
	keys, err := s.rdb.LoadFromMaster(bufio.NewReaderSize(f, 1<<20), s.loadYield(gen))
	s.endReplicaLoad()
	if err != nil {
		return err
	}
	s.stats.dirty++
	s.log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d.", keys))
	return nil
}

// loadFromLink is the diskless load: the payload goes from the link to the
// loader as it arrives (payloadFeed); with swap (repl-diskless-load swapdb)
// the dataset is kept aside meanwhile and put back if the load fails
// (Redis's disklessLoadInitTempDb / disklessLoadDiscardTempDb). The server
// is loading from the start of the transfer (INFO loading:1, commands not
// allowed while loading get -LOADING): the load holds the engine lock but
// lends it while it waits for bytes, and every
// loading-process-events-interval-bytes. With async (swapdb, the same
// history) the current dataset is served while the payload arrives: it is
// read whole first, then loaded.
func (s *Server) loadFromLink(gen uint64, link *repl.MasterLink, swap, async bool) error {
	var feed *payloadFeed
	if async {
		feed = newPayloadFeed(nil) // read without the engine lock
	} else {
		feed = newPayloadFeed(s.eng.LendWhile)
	}
	s.rs.linkFeed.Store(feed)
	defer s.rs.linkFeed.Store(nil)
	var got atomic.Int64 // payload bytes handed to the loader
	payloadErr := make(chan error, 1)
	go func() {
		_, err := link.Payload(countingWriter{feed, &got})
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // a payload ends with its size or mark: the loader must not take EOF for its end
		}
		payloadErr <- err
		feed.End(err)
	}()
	s.eng.Lock()
	if !s.current(gen) {
		s.eng.Unlock()
		feed.Stop()
		return nil
	}
	var stash *keyspace.Stash
	var rd io.Reader = feed
	var size int64
	if async {
		// the old dataset stays served while the payload arrives; it is
		// kept aside only for the load itself, under the lock
		s.rdb.SetAsyncLoading(true)
		s.log.Info("MASTER <-> REPLICA sync: Loading DB in memory (async: the current dataset is served meanwhile)")
		s.eng.Unlock()
		chunks, n, rerr := readChunks(feed)
		s.eng.Lock()
		s.rdb.SetAsyncLoading(false)
		if rerr != nil {
			return s.failedLinkLoad(rerr, feed, payloadErr, &got, nil)
		}
		if !s.current(gen) {
			return s.failedLinkLoad(persist.ErrLoadStopped, feed, payloadErr, &got, nil)
		}
		rd, size = chunks, n
	} else {
		s.log.Info("MASTER <-> REPLICA sync: Loading DB in memory")
	}
	if swap {
		stash = s.ks.Stash()
	}
	s.beginReplicaLoad(size)
	keys, err := s.rdb.LoadFromMaster(rd, s.loadYield(gen))
	s.endReplicaLoad()
	if err != nil {
		return s.failedLinkLoad(err, feed, payloadErr, &got, stash)
	}
	s.eng.Unlock()
	feed.Drain() // what follows the RDB's end, up to the payload's: the link is then at the stream
	s.eng.Lock()
	if stash != nil {
		s.log.Info(fmt.Sprintf("Discarding the dataset kept aside: %d keys (repl-diskless-load swapdb)", stash.Keys()))
		if s.cfg.Bool("replica-lazy-flush") {
			s.ks.Stats.LazyFreed += int64(stash.Keys()) // freed as emptyData(EMPTYDB_ASYNC) would
		}
		s.mem.forceGC = true // its memory goes with the next collection
	}
	s.rs.lastIOUnix.Store(time.Now().Unix())
	s.stats.dirty++
	s.log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d.", keys))
	s.eng.Unlock()
	return nil
}

// failedLinkLoad ends a diskless load that failed with err: the link's
// goroutine is told to stop, a short read is logged as Redis's
// rdbReportReadError, and the dataset kept aside (stash) is put back.
// Engine lock held; released.
func (s *Server) failedLinkLoad(err error, feed *payloadFeed, payloadErr chan error, got *atomic.Int64, stash *keyspace.Stash) error {
	defer s.eng.Unlock()
	feed.Stop()
	// the link's failure reaches the loader after it is reported here; a
	// loader that failed on its own finds nothing
	select {
	case perr := <-payloadErr:
		if perr != nil {
			s.log.Warn(fmt.Sprintf("Internal error in RDB reading offset %d, function at rdb.c:0 -> Unexpected EOF reading RDB file", got.Load()))
		}
	default:
	}
	if stash != nil {
		s.log.Info("Restoring the backup of the dataset kept aside (repl-diskless-load swapdb)")
		s.ks.Unstash(stash)
		s.mem.forceGC = true
	}
	return fmt.Errorf("Failed trying to load the MASTER synchronization DB from socket: %w", err)
}

// readChunks reads r to its end (io.EOF) in pieces of up to 1 MiB (a
// payload's size is not known beforehand: one buffer grown by doubling
// copied it over and over), and returns them as one reader with their
// total size.
func readChunks(r io.Reader) (io.Reader, int64, error) {
	var parts []io.Reader
	var total int64
	for {
		buf := make([]byte, 1<<20)
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = r.Read(buf[n:])
			n += k
		}
		if n > 0 {
			parts = append(parts, bytes.NewReader(buf[:n]))
			total += int64(n)
		}
		if err == io.EOF {
			return io.MultiReader(parts...), total, nil
		}
		if err != nil {
			return nil, total, err
		}
	}
}

// beginReplicaLoad marks a full sync's load (INFO loading, -LOADING), of
// total bytes when known, and stops the AOF: it would hold the replaced
// dataset's history (Redis's readSyncBulkPayload stopAppendOnly). Engine
// lock.
func (s *Server) beginReplicaLoad(total int64) {
	s.fackLoaded() // a new dataset: what its AOF fsyncs is counted from the load
	if s.aof.Enabled() {
		s.aofOff()
		s.aof.Disable()
	}
	s.rdb.SetLoading(true, total)
}

// endReplicaLoad ends it: with appendonly yes (set before or during the
// load) the AOF starts again from the loaded dataset, with a rewrite
// (Redis's restartAOFAfterSYNC). Engine lock.
func (s *Server) endReplicaLoad() {
	s.rdb.SetLoading(false, 0)
	if s.cfg.Bool("appendonly") && !s.aof.Enabled() {
		if err := s.switchAOF(true); err != nil {
			s.log.Warn("Failed enabling the AOF after successful master synchronization! " + err.Error())
		}
	}
}

// loadYield is a replica load's yield: the engine lock lent to the clients
// (they get -LOADING but for what runs while loading), and the load stopped
// when the server shuts down or the link is replaced. Engine lock held.
func (s *Server) loadYield(gen uint64) func() error {
	return func() error {
		s.eng.Lend()
		select {
		case <-s.shutdown:
			return persist.ErrLoadStopped
		default:
		}
		if !s.current(gen) {
			return persist.ErrLoadStopped
		}
		if f := s.rs.linkFeed.Load(); f != nil && f.Aborted() {
			return errFeedAborted
		}
		return nil
	}
}

// datasetEmpty reports whether no database holds a key.
func (s *Server) datasetEmpty() bool {
	for _, db := range s.ks.DBs {
		if db.Len() != 0 {
			return false
		}
	}
	return true
}

// applyStream applies the master's stream until the link fails or the
// generation ends; it acknowledges every second meanwhile. Each command's
// bytes are passed on as they are applied (Master.Proxy: this server's
// backlog and replicas), so that its offset is the master's.
//
// held is the length of the stream an RDB channel sync held in memory, at
// the front of link's (logged once applied, as Redis's
// rdbChannelStreamReplDataToDb does).
func (s *Server) applyStream(gen uint64, link *repl.MasterLink, held int64) (err error) {
	total := held
	defer func() {
		if held > 0 { // the held stream was not all applied (rdbChannelStreamReplDataToDb)
			s.log.Info("Master client was freed while streaming accumulated replication data to db.")
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	ack := func(off int64) { _ = link.Ack(off, s.fackOffset(off)) }
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ack(s.rs.offset.Load())
			}
		}
	}()
	ack(s.rs.offset.Load())
	rs := &s.rs
	s.eng.Lock()
	db := rs.db
	s.eng.Unlock()
	var tx [][][]byte
	var raw []byte
	inTx := false
	for {
		argv, n, err := link.Next()
		if err != nil {
			return err
		}
		rs.lastIOUnix.Store(time.Now().Unix())
		// the commands already read apply under one hold of the engine lock
		// (at most streamBatch of them), as a client's pipeline does: the
		// master writes what a cycle of its event loop propagated at once
		s.eng.Lock()
		for batch := 1; ; batch++ {
			rs.readOffset.Add(int64(n))
			if held > 0 {
				if link.Closed() {
					s.eng.Unlock()
					return repl.ErrClosed // the master client went: the rest of the held stream with it
				}
				if held -= int64(n); held <= 0 {
					s.log.Info(fmt.Sprintf("MASTER <-> REPLICA sync: Successfully streamed replication buffer into the db (%d bytes in total)", total))
				}
				s.eng.Unlock()
				s.debugPause(pauseOnStreamingReplBuf)
				s.eng.Lock()
			}
			if !s.current(gen) {
				s.eng.Unlock()
				return nil
			}
			// the master's encoding is canonical: re-encoding gives its bytes
			raw = resp.AppendCommand(raw[:0], argv...)
			if len(raw) != n {
				s.eng.Unlock()
				return fmt.Errorf("a command of %d bytes in the master's stream re-encodes in %d", n, len(raw))
			}
			var unit [][][]byte
			getack := false
			switch {
			case len(argv) >= 2 && strings.EqualFold(string(argv[0]), "REPLCONF") && strings.EqualFold(string(argv[1]), "GETACK"):
				getack = true
			case len(argv) == 1 && strings.EqualFold(string(argv[0]), "PING"):
			case len(argv) == 1 && strings.EqualFold(string(argv[0]), "MULTI") && !inTx:
				inTx, tx = true, tx[:0]
			case len(argv) == 1 && strings.EqualFold(string(argv[0]), "EXEC") && inTx:
				inTx, unit = false, tx
			case inTx:
				tx = append(tx, copyArgv(argv))
			default:
				unit = append(tx[:0], argv)
			}
			if getack {
				// the offset before this command, as Redis's master
				// client's; sent without the engine lock
				off := rs.offset.Load()
				s.fackNote(off)
				s.repl.Proxy(raw)
				rs.offset.Store(s.repl.Offset())
				s.eng.Unlock()
				ack(off)
				break
			}
			if unit != nil {
				if rd := link.Reader(); len(unit) == 1 && (batch-1)%keyspace.PrefetchMax == 0 && rd != nil && rd.Buffered() > 0 {
					// the keys of the commands buffered behind it, loaded
					// into the caches together (as a client's pipeline)
					s.prefetchFrom(s.ks.DBs[db], rd, argv)
				}
				a := s.applyLocked(Unit{DB: db, Cmds: unit, NowMs: loadNowMs})
				db = a.DB
				rs.db = db
				if len(unit) == 1 && len(a.Replies) > 0 && a.Replies[0] == '-' {
					name := "<unknown>"
					if spec := s.specFor(unit[0]); spec != nil {
						name = spec.FullName()
					}
					s.masterCommandFailed(a.Replies, name)
				}
				s.applier.w.Reset()
				clear(unit)
				tx = unit[:0]
			}
			s.repl.Proxy(raw)
			rs.offset.Store(s.repl.Offset())
			var ok bool
			if held <= 0 && batch < streamBatch {
				argv, n, ok, err = link.TryNext()
			}
			if !ok || err != nil {
				s.fackNote(rs.offset.Load()) // once a batch: its units with its last offset
				s.eng.Unlock()
				if err != nil {
					return err
				}
				break
			}
		}
	}
}

// streamBatch bounds the commands of the master's stream a replica applies
// under one hold of the engine lock (its clients wait meanwhile).
const streamBatch = 256

// copyArgv copies a command the reader's buffer holds.
func copyArgv(argv [][]byte) [][]byte {
	out := make([][]byte, len(argv))
	for i, a := range argv {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// appendReplicaInfo is INFO replication's replica part (role:slave).
func (s *Server) appendReplicaInfo(b []byte) []byte {
	rs := &s.rs
	now := s.clock.NowUs() / 1e6
	up := rs.up.Load()
	b = kv(b, "master_host", rs.host)
	b = kvi(b, "master_port", rs.port)
	status, lastIO := "down", int64(-1)
	if up {
		status, lastIO = "up", now-rs.lastIOUnix.Load()
	}
	b = kv(b, "master_link_status", status)
	b = kvi(b, "master_last_io_seconds_ago", lastIO)
	st, _ := rs.state.Load().(string)
	sync := int64(0)
	if st == "sync" {
		sync = 1
	}
	b = kvi(b, "master_sync_in_progress", sync)
	// 1 until there is a master's stream to count (Redis: no master, no
	// cached master)
	read, applied := int64(1), int64(1)
	if rs.synced.Load() {
		read, applied = rs.readOffset.Load(), rs.offset.Load()
	}
	b = kvi(b, "slave_read_repl_offset", read)
	b = kvi(b, "slave_repl_offset", applied)
	size, peak := s.fullSyncBuffer()
	b = kvi(b, "replica_full_sync_buffer_size", size)
	b = kvi(b, "replica_full_sync_buffer_peak", peak)
	b = kvi(b, "master_current_sync_attempts", rs.attempts.Load())
	b = kvi(b, "master_total_sync_attempts", rs.total.Load())
	down := int64(0)
	if up {
		b = kvi(b, "master_link_up_since_seconds", now-rs.upSince.Load())
		b = kvi(b, "master_client_io_thread", 0)
	} else {
		since := int64(-1)
		if d := rs.downSince.Load(); d != 0 {
			since, down = now-d, now-d
		}
		b = kvi(b, "master_link_down_since_seconds", since)
	}
	b = kvi(b, "total_disconnect_time_sec", rs.disconnectSum.Load()+down)
	b = kvi(b, "slave_priority", s.cfg.Int("replica-priority"))
	ro := int64(0)
	if s.cfg.Bool("replica-read-only") {
		ro = 1
	}
	b = kvi(b, "slave_read_only", ro)
	ann := int64(0)
	if s.cfg.Bool("replica-announced") {
		ann = 1
	}
	return kvi(b, "replica_announced", ann)
}

// The refusals of a replica's clients (processCommand).
const (
	errReadOnlyReplica = "READONLY You can't write against a read only replica."
	errMasterDown      = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// replicaRefusal is the refusal of a client's command on a replica, or "".
func (s *Server) replicaRefusal(flags command.Flag) string {
	if !s.replicaFlag.Load() {
		return ""
	}
	if flags&command.Write != 0 && s.cfg.Bool("replica-read-only") {
		return errReadOnlyReplica
	}
	if !s.rs.up.Load() && flags&command.Stale == 0 && !s.cfg.Bool("replica-serve-stale-data") {
		return errMasterDown
	}
	return ""
}

// noteOwnKeys remembers the keys with a TTL that a client's write on a
// writable replica left (rememberSlaveKeyWithExpire). Engine lock.
func (s *Server) noteOwnKeys(c *command.Ctx, spec *command.Spec) {
	for _, i := range spec.KeyIndexes(c.Argv) {
		key := c.Argv[i]
		if e := c.DB.Peek(key); e == nil || c.DB.ExpireAt(e) == 0 {
			continue
		}
		if s.rs.own == nil {
			s.rs.own = map[int]map[string]struct{}{}
		}
		m := s.rs.own[c.DB.ID]
		if m == nil {
			m = map[string]struct{}{}
			s.rs.own[c.DB.ID] = m
		}
		m[string(key)] = struct{}{}
	}
}

// expireOwnKeys is expireSlaveKeys: the replica's own keys whose time came
// are deleted (the cron, engine lock).
func (s *Server) expireOwnKeys() {
	if len(s.rs.own) == 0 {
		return
	}
	s.eng.BeginAt(s.clock.NowMs())
	for db, keys := range s.rs.own {
		for k := range keys {
			if _, keep := s.ks.DBs[db].ExpireIfDue([]byte(k)); !keep {
				delete(keys, k)
			}
		}
		if len(keys) == 0 {
			delete(s.rs.own, db)
		}
	}
}

// DebugReplicate implements command.Replication (DEBUG REPLICATE).
func (s *Server) DebugReplicate(argv [][]byte) { s.repl.Feed(argv) }

// ChangeReplID implements command.Replication (DEBUG CHANGE-REPL-ID:
// changeReplicationId and clearReplicationId2).
func (s *Server) ChangeReplID() {
	s.replID = randomHex(20)
	s.replID2, s.secondOffset = strings.Repeat("0", 40), -1
}

// masterCommandFailed is what a replica does when a command of its master's
// stream fails (Redis's afterErrorReply for the master client): it logs it
// as critical with the end of the backlog, counts it in
// unexpected_error_replies, and stops the server when
// propagation-error-behavior says to panic (a read-only replica only).
func (s *Server) masterCommandFailed(reply []byte, cmd string) {
	msg := strings.TrimRight(strings.TrimPrefix(string(reply), "-"), "\r\n")
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	s.log.Warn(fmt.Sprintf("== CRITICAL == This replica is sending an error to its master: '%s' after processing the command '%s'", msg, cmd))
	if _, _, _, hist := s.repl.BacklogInfo(); hist > 0 {
		s.log.Warn(fmt.Sprintf("Latest backlog is: '%q'", s.repl.Tail(256)))
	}
	s.stats.unexpectedErrors++
	if b := s.cfg.String("propagation-error-behavior"); b != "ignore" && s.cfg.Bool("replica-read-only") {
		s.log.Error(fmt.Sprintf("This replica panicked sending an error to its master after processing the command '%s'", cmd))
		os.Exit(1)
	}
}

// listenPort is the TCP port clients reach this server on: the port
// parameter, or the listener's own port when the server was given one.
func (s *Server) listenPort() int64 {
	if s.cfg.Bool("tls-replication") && s.cfg.Int("tls-port") != 0 {
		return s.cfg.Int("tls-port") // the port its replicas reach it on (slaveGetPortStr)
	}
	for _, l := range s.net.Listeners() {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			return int64(a.Port)
		}
	}
	return s.cfg.Int("port")
}

// killMasterLink is CLIENT KILL's part for a replica's link to its master
// (Redis's master client, TYPE master): it closes it when the filter
// names it by address or type; the link reconnects, with a partial resync.
func (s *Server) killMasterLink(f command.KillFilter) bool {
	l := s.rs.link
	if l == nil || !s.isReplica() || (f.Addr == "" && f.Type == "" && f.LAddr == "") {
		return false
	}
	switch {
	case f.Addr != "" && f.Addr != l.RemoteAddr().String(),
		f.LAddr != "" && f.LAddr != l.LocalAddr().String(),
		f.Type != "" && normClientType(f.Type) != "master",
		f.ID != 0, f.User != "", f.MaxAgeSec != 0:
		return false
	}
	_ = l.Close()
	s.log.Info("Connection with master lost (CLIENT KILL).")
	return true
}

// replicationTLS is the TLS configuration of the link to the master with
// tls-replication yes (nil: a plain connection).
func (s *Server) replicationTLS() (*tls.Config, error) {
	s.eng.Lock()
	defer s.eng.Unlock()
	if !s.cfg.Bool("tls-replication") {
		return nil, nil
	}
	return network.ClientTLS(s.cfg)
}

// countingWriter counts what goes through it.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
