// Package repl is Redis replication (decisions/0023), both sides. The
// master side hangs off the execution path as a propagation target
// (docs/ARCHITECTURE.md §8, decision 0037): a connection that sends SYNC or
// PSYNC gets a snapshot of the dataset and from then on the propagated
// stream, as Redis's replicationFeedSlaves encodes it (SELECT when the
// database changes, each command as a RESP array); the stream also goes to
// a backlog (repl-backlog-size), so that a PSYNC that names this server's
// history at an offset the backlog holds continues (+CONTINUE) with only
// the bytes it missed. On a replica the stream is its master's, passed on
// byte for byte (Proxy). The server answers SYNC and REPLCONF and keeps
// WAIT's blocked clients; Master keeps the replicas, the stream, the
// backlog and the acknowledgements, under the engine lock. MasterLink
// (replica.go) is the replica's connection to its master.
package repl

import (
	"github.com/hotkv/hotkv/internal/resp"
	"net"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/internal/command"
)

// Replica is a connection that became a replica.
type Replica interface {
	// Push queues bytes of the stream for it.
	Push(msg []byte)
	// RemoteAddr is its address (ROLE, INFO replication).
	RemoteAddr() net.Addr
}

// Target is a propagation target: the commands of each execution unit,
// then the unit's end (the server's PropagationTarget).
type Target interface {
	Propagate(db int, argv [][]byte)
	UnitDone()
}

// Host is what Master needs of the server.
type Host interface {
	// AddTarget and RemoveTarget subscribe the stream to the replicas'
	// propagation (command.PropRepl) and back.
	AddTarget(t Target)
	RemoveTarget(t Target)
	// PingPeriodMs is repl-ping-replica-period, in ms.
	PingPeriodMs() int64
	// BacklogSize is repl-backlog-size; BacklogTTLMs repl-backlog-ttl in
	// ms (0: kept for ever).
	BacklogSize() int64
	BacklogTTLMs() int64
}

// Link is the master's state of one replica.
type Link struct {
	r          Replica
	ListenPort int64 // REPLCONF listening-port
	ackOff     int64
	aofOff     int64 // the offset it acknowledged as fsynced to its AOF (REPLCONF ACK ... FACK)
	ackMs      int64 // when it last acknowledged (or attached), Unix ms
	preSync    bool  // attached with SYNC, not PSYNC (gets no REPLCONF GETACK)
	// State is INFO's state of a replica not yet online (Redis's
	// replstateToString): "wait_bgsave", "send_bulk_and_stream"; "" is
	// online. Only online replicas count as good ones and show in ROLE.
	State string
}

// AckOffset is the stream offset it acknowledged last.
func (l *Link) AckOffset() int64 { return l.ackOff }

// Master is the replication state of a master.
type Master struct {
	host     Host
	replicas []*Link
	feed     *feed
	offset   int64 // master_repl_offset: bytes of stream produced
	unitEnd  int64 // offset at the end of the last execution unit handed over (WAIT's c->woff)
	lastPing int64 // when the last PING went to the replicas (ms since procStart)
	backlog  *Backlog
	// proxy: the server is itself a replica; its stream is its master's,
	// passed on byte for byte (Proxy), and its own execution units feed no
	// stream (Redis's replicationFeedStreamFromMasterStream)
	proxy      bool
	aloneSince int64 // when the last replica went (ms since procStart), for repl-backlog-ttl
	backlogDB  int   // the database FeedBacklog selected last (-1: none)
}

// New returns a master without replicas.
func New(host Host) *Master { return &Master{host: host, backlogDB: -1} }

var procStart = time.Now()

// feed is the propagation target that encodes the stream once for every
// replica.
type feed struct {
	m     *Master
	seldb int // the database the stream last selected (-1: none yet)
	out   []byte
}

var wordSelect = []byte("SELECT")

func (f *feed) Propagate(db int, argv [][]byte) {
	if db >= 0 && db != f.seldb {
		var n [20]byte
		f.out = resp.AppendCommand(f.out, wordSelect, strconv.AppendInt(n[:0], int64(db), 10))
		f.seldb = db
	}
	f.out = resp.AppendCommand(f.out, argv...)
}

func (f *feed) UnitDone() {
	m := f.m
	if m.proxy {
		f.out = f.out[:0] // a replica's units: its master's stream carries them
		return
	}
	m.offset += int64(len(f.out))
	m.unitEnd = m.offset
	if m.backlog != nil {
		m.backlog.Append(f.out)
	}
	for _, l := range m.replicas {
		l.r.Push(f.out)
	}
	if cap(f.out) > 64<<10 {
		f.out = nil
	} else {
		f.out = f.out[:0]
	}
}

// Attach makes r a replica (after its snapshot was written): the stream
// follows from the next execution unit, starting with a SELECT. psync: it
// attached with PSYNC. nowMs counts as its first acknowledgement.
func (m *Master) Attach(r Replica, psync bool, listenPort, nowMs int64) *Link {
	l := &Link{r: r, ListenPort: listenPort, ackMs: nowMs, preSync: !psync}
	m.replicas = append(m.replicas, l)
	if m.backlog == nil {
		m.backlog = NewBacklog(int(m.host.BacklogSize()), m.offset)
	}
	m.startFeed()
	if m.feed != nil {
		m.feed.seldb = -1 // a new replica needs a SELECT before the next command
	}
	return l
}

// FeedBacklog appends argv, run in database db, to the backlog alone (a
// restarted master's deletions of keys that expired while it was down,
// before any replica attached), with a SELECT when the database differs
// from the last one fed here; the offset advances.
func (m *Master) FeedBacklog(db int, argv [][]byte) {
	if m.backlog == nil {
		return
	}
	var b []byte
	if db != m.backlogDB {
		var n [20]byte
		b = resp.AppendCommand(b, wordSelect, strconv.AppendInt(n[:0], int64(db), 10))
		m.backlogDB = db
	}
	b = resp.AppendCommand(b, argv...)
	m.backlog.Append(b)
	m.offset += int64(len(b))
	m.unitEnd = m.offset
	if m.feed != nil {
		m.feed.seldb = -1
	}
}

// ForceSelect makes the stream select its database again before the next
// command (Redis's slaveseldb = -1): where a replica's stream starts.
func (m *Master) ForceSelect() {
	if m.feed != nil {
		m.feed.seldb = -1
	}
}

// startFeed subscribes the stream to the propagation (not on a replica).
func (m *Master) startFeed() {
	if m.feed == nil && !m.proxy {
		m.feed = &feed{m: m, seldb: -1}
		m.host.AddTarget(m.feed)
		m.lastPing = time.Since(procStart).Milliseconds()
	}
}

// stopFeed unsubscribes it.
func (m *Master) stopFeed() {
	if m.feed != nil {
		m.host.RemoveTarget(m.feed)
		m.feed = nil
	}
}

// Partial is a PSYNC that can continue (masterTryPartialResynchronization's
// backlog check): the stream from off, the next byte the replica wants;
// false when the backlog does not hold it.
func (m *Master) Partial(off int64) ([]byte, bool) {
	if m.backlog == nil {
		return nil, false
	}
	return m.backlog.From(off)
}

// AttachPartial makes r a replica that continues at the end of data, the
// backlog's part it missed, which it gets first.
func (m *Master) AttachPartial(r Replica, data []byte, listenPort, nowMs int64) *Link {
	l := &Link{r: r, ListenPort: listenPort, ackMs: nowMs}
	m.replicas = append(m.replicas, l)
	if len(data) > 0 {
		r.Push(data)
	}
	m.startFeed()
	return l
}

// SetProxy makes the stream its master's (on: this server became a
// replica) or its own again (off: promoted, continuing the same history).
func (m *Master) SetProxy(on bool) {
	m.proxy = on
	if on {
		m.stopFeed()
	} else if m.backlog != nil || len(m.replicas) > 0 {
		m.startFeed()
	}
}

// Proxy passes on bytes of the master's stream, applied here: they join the
// backlog and go to this server's replicas, and advance the offset.
func (m *Master) Proxy(raw []byte) {
	m.offset += int64(len(raw))
	m.unitEnd = m.offset
	if m.backlog != nil {
		m.backlog.Append(raw)
	}
	for _, l := range m.replicas {
		l.r.Push(raw)
	}
}

// Feed sends argv to the replicas and the backlog as it is, with no SELECT
// (replicationFeedSlaves with dictid -1: DEBUG REPLICATE). Not on a replica.
func (m *Master) Feed(argv [][]byte) {
	if m.proxy || (m.backlog == nil && len(m.replicas) == 0) {
		return
	}
	b := resp.AppendCommand(nil, argv...)
	m.offset += int64(len(b))
	m.unitEnd = m.offset
	if m.backlog != nil {
		m.backlog.Append(b)
	}
	for _, l := range m.replicas {
		l.r.Push(b)
	}
}

// Has reports whether a replica is at host (its address) and port (its
// listening port): FAILOVER TO's check (findReplica).
func (m *Master) Has(host string, port int64) bool {
	for _, l := range m.replicas {
		if hostOf(l.r.RemoteAddr()) == host && l.ListenPort == port {
			return true
		}
	}
	return false
}

// CaughtUp finds an online replica that acknowledged the whole stream: the
// one at host and port, or any when host is "" (updateFailoverStatus).
func (m *Master) CaughtUp(host string, port int64) (string, int64, bool) {
	for _, l := range m.replicas {
		h := hostOf(l.r.RemoteAddr())
		if (host == "" || (h == host && l.ListenPort == port)) && l.State == "" && l.ackOff == m.offset {
			return h, l.ListenPort, true
		}
	}
	return "", 0, false
}

// Tail is the last n bytes of the backlog (a replica's critical log).
func (m *Master) Tail(n int) []byte {
	if m.backlog == nil {
		return nil
	}
	data, _ := m.backlog.From(max(m.backlog.First(), m.backlog.end-int64(n)+1))
	return data
}

// ResetBacklog starts the history again at offset off (a replica's full
// resynchronisation): an empty backlog there.
func (m *Master) ResetBacklog(off int64) {
	m.offset, m.unitEnd = off, off
	m.backlog = NewBacklog(int(m.host.BacklogSize()), off)
}

// RestoreHistory is a master's restart with a recorded history: the
// stream goes on from off, into a new backlog.
func (m *Master) RestoreHistory(off int64) {
	m.ResetBacklog(off)
	m.aloneSince = time.Since(procStart).Milliseconds()
	m.startFeed()
}

// StreamDB is the database the stream selected last (-1: none yet).
func (m *Master) StreamDB() int {
	if m.feed == nil {
		return -1
	}
	return m.feed.seldb
}

// ResizeBacklog follows CONFIG SET repl-backlog-size.
func (m *Master) ResizeBacklog(size int64) {
	if m.backlog != nil {
		m.backlog.Resize(int(size))
	}
}

// BacklogInfo is INFO's repl_backlog_*: active, size, first byte, histlen.
func (m *Master) BacklogInfo() (active bool, size, first, histlen int64) {
	if m.backlog == nil {
		return false, m.host.BacklogSize(), 0, 0
	}
	return true, int64(m.backlog.Size()), m.backlog.First(), int64(m.backlog.Histlen())
}

// Detach forgets a replica that disconnected.
func (m *Master) Detach(l *Link) {
	for i, x := range m.replicas {
		if x == l {
			m.replicas = append(m.replicas[:i], m.replicas[i+1:]...)
			break
		}
	}
	if len(m.replicas) == 0 {
		m.aloneSince = time.Since(procStart).Milliseconds()
		if m.backlog == nil {
			m.stopFeed()
		}
	}
}

// Ack records REPLCONF ACK off from l at nowMs.
func (m *Master) Ack(l *Link, off, nowMs int64) {
	if off > l.ackOff {
		l.ackOff = off
	}
	l.ackMs = nowMs
}

// AckAOF records the offset a replica acknowledged as fsynced to its AOF
// (REPLCONF ACK's FACK: Redis's repl_aof_off).
func (m *Master) AckAOF(l *Link, off int64) {
	if off > l.aofOff {
		l.aofOff = off
	}
}

// Cron sends PING to the replicas every repl-ping-replica-period (Redis's
// replicationCron).
func (m *Master) Cron() {
	if len(m.replicas) == 0 {
		// a master frees its backlog after repl-backlog-ttl without
		// replicas (a replica keeps it: it may be promoted)
		if ttl := m.host.BacklogTTLMs(); m.backlog != nil && !m.proxy && ttl > 0 &&
			time.Since(procStart).Milliseconds()-m.aloneSince > ttl {
			m.backlog = nil
			m.stopFeed()
		}
		return
	}
	if m.proxy || m.feed == nil {
		return // a replica passes its master's PINGs on
	}
	// the period is real time, as Redis counts its replication cron runs (not
	// the server clock, which tests fake)
	now := time.Since(procStart).Milliseconds()
	if now-m.lastPing < m.host.PingPeriodMs() {
		return
	}
	m.lastPing = now
	m.feed.Propagate(-1, [][]byte{[]byte("PING")})
	m.feed.UnitDone()
}

// Offset is master_repl_offset.
func (m *Master) Offset() int64 { return m.offset }

// CountAOF advances the offset by n commands the AOF got while no replica
// streams: Redis counts each propagated command as 1 then, to track the
// AOF's fsyncs and its files' offsets (replicationFeedSlaves without a
// backlog).
func (m *Master) CountAOF(n int) {
	if m.feed == nil && !m.proxy {
		m.offset += int64(n)
		m.unitEnd = m.offset
	}
}

// SetOffset is the offset an AOF's manifest restores after a load
// (updateReplOffsetAndResetEndOffset).
func (m *Master) SetOffset(off int64) { m.offset, m.unitEnd = off, off }

// UnitEnd is the stream offset at the end of the last execution unit handed
// to the replicas: what a WAIT of the unit's client waits for.
func (m *Master) UnitEnd() int64 { return m.unitEnd }

// Len is the number of replicas.
func (m *Master) Len() int { return len(m.replicas) }

// Acked is how many replicas acknowledged the stream up to off.
func (m *Master) Acked(off int64) int64 {
	n := int64(0)
	for _, l := range m.replicas {
		if l.ackOff >= off {
			n++
		}
	}
	return n
}

// AckedAOF is how many online replicas acknowledged the stream up to off as
// fsynced to their AOF (Redis's replicationCountAOFAcksByOffset).
func (m *Master) AckedAOF(off int64) int64 {
	n := int64(0)
	for _, l := range m.replicas {
		if l.State == "" && l.aofOff >= off {
			n++
		}
	}
	return n
}

// Good is how many replicas acknowledged (or attached) at most maxLag
// seconds before nowMs (Redis's good slaves).
func (m *Master) Good(nowMs, maxLag int64) int64 {
	now := nowMs / 1000
	good := int64(0)
	for _, l := range m.replicas {
		if l.State == "" && now-l.ackMs/1000 <= maxLag {
			good++
		}
	}
	return good
}

// RequestAcks sends REPLCONF GETACK * to the replicas that speak PSYNC.
func (m *Master) RequestAcks() {
	if m.feed == nil || m.proxy || len(m.replicas) == 0 {
		return
	}
	b := resp.AppendCommand(nil, []byte("REPLCONF"), []byte("GETACK"), []byte("*"))
	if m.backlog != nil {
		m.backlog.Append(b)
	}
	for _, l := range m.replicas {
		if !l.preSync {
			l.r.Push(b)
		}
	}
	m.offset += int64(len(b))
}

// Replicas lists the replicas for ROLE: address, listening port and
// acknowledged offset.
func (m *Master) Replicas() []command.ReplicaInfo {
	out := make([]command.ReplicaInfo, 0, len(m.replicas))
	for _, l := range m.replicas {
		if l.State != "" {
			continue // ROLE lists online replicas (Redis's roleCommand)
		}
		out = append(out, command.ReplicaInfo{IP: hostOf(l.r.RemoteAddr()), Port: l.ListenPort, Offset: l.ackOff})
	}
	return out
}

func hostOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// AppendInfo appends INFO replication's connected_slaves and slaveN lines.
func (m *Master) AppendInfo(b []byte, nowMs int64) []byte {
	b = append(b, "connected_slaves:"...)
	b = strconv.AppendInt(b, int64(len(m.replicas)), 10)
	b = append(b, "\r\n"...)
	for i, l := range m.replicas {
		b = append(b, "slave"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":ip="...)
		b = append(b, hostOf(l.r.RemoteAddr())...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, l.ListenPort, 10)
		b = append(b, ",state="...)
		if l.State == "" {
			b = append(b, "online"...)
		} else {
			b = append(b, l.State...)
		}
		b = append(b, ",offset="...)
		b = strconv.AppendInt(b, l.ackOff, 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, (nowMs-l.ackMs)/1000, 10)
		b = append(b, "\r\n"...)
	}
	return b
}
