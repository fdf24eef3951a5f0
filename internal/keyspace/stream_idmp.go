package keyspace

import (
	"slices"
	"unsafe"
)

// IDMP: Redis 8.6's idempotent producers (t_stream.c, "IDMP functions").
//
// A stream remembers, per producer ID (pid), the idempotency IDs (iid) that
// XADD IDMP / IDMPAUTO appended (or XIDMPRECORD attached) and the entry ID
// each one produced, so that a retried XADD answers the first ID instead of
// appending again. Contracts, as Redis:
//   - each producer keeps at most IdmpMaxSize records: recording one more
//     forgets that producer's oldest (insertion order);
//   - a record whose entry ID's time is IdmpDuration seconds old or more is
//     forgotten: the DB's registry (DB.ActiveExpireIdmp, once a second) drops
//     records from the front of each producer's insertion order while they
//     are that old, and a producer left without records;
//   - IidsAdded and IidsDuplicates count for the stream's lifetime (they
//     survive eviction, expiry and IdmpConfigure);
//   - a stream copied (COPY, RESTORE of a DUMP) keeps all of it.

// IDMP bounds (CONFIG_STREAM_IDMP_*), for XCFGSET, the configs and RDB.
const (
	IdmpMinDuration = 1
	IdmpMaxDuration = 86400
	IdmpMinMaxSize  = 1
	IdmpMaxMaxSize  = 10000
)

type idmpRec struct {
	iid string
	id  StreamID
}

// idmpProducer is one pid's records: a map by iid and the insertion order
// (fifo[head:], oldest first).
type idmpProducer struct {
	byIID map[string]StreamID
	fifo  []idmpRec
	head  int
}

func newIdmpProducer() *idmpProducer { return &idmpProducer{byIID: map[string]StreamID{}} }

func (p *idmpProducer) add(iid string, id StreamID) {
	p.byIID[iid] = id
	p.fifo = append(p.fifo, idmpRec{iid, id})
}

// popFront forgets the oldest record.
func (p *idmpProducer) popFront() {
	r := p.fifo[p.head]
	delete(p.byIID, r.iid)
	p.fifo[p.head] = idmpRec{}
	p.head++
	if p.head == len(p.fifo) {
		p.fifo, p.head = p.fifo[:0], 0
	} else if p.head >= 32 && p.head*2 >= len(p.fifo) {
		n := copy(p.fifo, p.fifo[p.head:])
		clear(p.fifo[n:])
		p.fifo, p.head = p.fifo[:n], 0
	}
}

func (p *idmpProducer) empty() bool { return p.head == len(p.fifo) }

// IdmpLookup returns the entry ID recorded for iid by producer pid.
func (s *Stream) IdmpLookup(pid, iid []byte) (StreamID, bool) {
	p := s.idmp[string(pid)]
	if p == nil {
		return StreamID{}, false
	}
	id, ok := p.byIID[string(iid)]
	return id, ok
}

// IdmpRecord records that producer pid's iid produced entry id (iid must not
// be recorded yet: IdmpLookup first), counts it in IidsAdded, and forgets the
// producer's oldest record when it then holds more than IdmpMaxSize
// (idmpInsertEntry).
func (s *Stream) IdmpRecord(pid, iid []byte, id StreamID) {
	if s.idmp == nil {
		s.idmp = map[string]*idmpProducer{}
	}
	p := s.idmp[string(pid)]
	if p == nil {
		p = newIdmpProducer()
		s.idmp[string(pid)] = p
	}
	p.add(string(iid), id)
	s.IidsAdded++
	if uint64(len(p.byIID)) > s.IdmpMaxSize {
		p.popFront()
	}
}

// IdmpConfigure is XCFGSET's change: a setting given (not 0) that differs
// from the stream's replaces it and forgets every record. It reports whether
// anything changed.
func (s *Stream) IdmpConfigure(duration, maxSize uint64) bool {
	changed := false
	if duration != 0 && duration != s.IdmpDuration {
		s.IdmpDuration, changed = duration, true
	}
	if maxSize != 0 && maxSize != s.IdmpMaxSize {
		s.IdmpMaxSize, changed = maxSize, true
	}
	if changed {
		s.idmp = nil
	}
	return changed
}

// IdmpProducers is the number of producers with records (XINFO pids-tracked).
func (s *Stream) IdmpProducers() int { return len(s.idmp) }

// IdmpTracked is the number of records over all producers (iids-tracked).
func (s *Stream) IdmpTracked() int {
	n := 0
	for _, p := range s.idmp {
		n += len(p.byIID)
	}
	return n
}

// IdmpExpire forgets the records IdmpDuration seconds old at nowMs, from the
// front of each producer's insertion order, and the producers left empty
// (handleExpiredIdmpEntries). It reports whether any record is left.
func (s *Stream) IdmpExpire(nowMs int64) bool {
	limit := nowMs - int64(s.IdmpDuration)*1000
	for pid, p := range s.idmp {
		for !p.empty() && limit >= 0 && p.fifo[p.head].id.Ms <= uint64(limit) {
			p.popFront()
		}
		if p.empty() {
			delete(s.idmp, pid)
		}
	}
	if len(s.idmp) == 0 {
		s.idmp = nil
		return false
	}
	return true
}

// EachIdmpProducer calls fn for each producer in pid byte order (the order of
// Redis's radix tree, hence of its RDB), with a function that lists its
// records oldest first.
func (s *Stream) EachIdmpProducer(fn func(pid string, n int, records func(func(iid string, id StreamID)))) {
	pids := make([]string, 0, len(s.idmp))
	for pid := range s.idmp {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		p := s.idmp[pid]
		fn(pid, len(p.byIID), func(yield func(iid string, id StreamID)) {
			for _, r := range p.fifo[p.head:] {
				yield(r.iid, r.id)
			}
		})
	}
}

func (s *Stream) cloneIdmp() map[string]*idmpProducer {
	if s.idmp == nil {
		return nil
	}
	m := make(map[string]*idmpProducer, len(s.idmp))
	for pid, p := range s.idmp {
		np := &idmpProducer{byIID: make(map[string]StreamID, len(p.byIID)), fifo: slices.Clone(p.fifo[p.head:])}
		for _, r := range np.fifo {
			np.byIID[r.iid] = r.id
		}
		m[pid] = np
	}
	return m
}

// idmpUsage estimates the bytes of the IDMP records (objectComputeSize
// counts Redis's through the stream's alloc_size).
func (s *Stream) idmpUsage() int64 {
	var n int64
	rec := int64(unsafe.Sizeof(idmpRec{}))
	for pid, p := range s.idmp {
		n += allocSize(int64(len(pid))) + allocSize(int64(unsafe.Sizeof(*p)))
		n += allocSize(int64(cap(p.fifo)) * rec)
		for iid := range p.byIID {
			// the string once, and a map slot (key header, ID, overhead)
			n += allocSize(int64(len(iid))) + 48
		}
	}
	return n
}

// AddIdmpProducer starts producer pid of a stream being loaded; false when
// it was already added (a corrupt payload).
func (l *StreamLoader) AddIdmpProducer(pid []byte) bool {
	if l.S.idmp == nil {
		l.S.idmp = map[string]*idmpProducer{}
	}
	if _, dup := l.S.idmp[string(pid)]; dup {
		return false
	}
	l.S.idmp[string(pid)] = newIdmpProducer()
	return true
}

// AddIdmpRecord appends a record to producer pid (added first); a duplicate
// iid is skipped, as rdbLoadStreamIdmpEntries does.
func (l *StreamLoader) AddIdmpRecord(pid, iid []byte, id StreamID) {
	p := l.S.idmp[string(pid)]
	if _, dup := p.byIID[string(iid)]; !dup {
		p.add(string(iid), id)
	}
}

// ---- the DB's registry of streams with records ----

// idmpTrack files the stream s (stored in db) in the registry when it holds
// records.
func (db *DB) idmpTrack(s *Stream) {
	if s.idmp == nil {
		return
	}
	if db.idmp == nil {
		db.idmp = map[*Stream]struct{}{}
	}
	db.idmp[s] = struct{}{}
}

// IdmpChanged files the stream s stored at some key of db in the registry
// that expires IDMP records, if it has records (XADD IDMP, XIDMPRECORD
// call it after recording).
func (db *DB) IdmpChanged(s *Stream) { db.idmpTrack(s) }

// ActiveExpireIdmp forgets the IDMP records that are due in every stream of
// db that has some (Redis's handleExpiredIdmpEntries: a stream left without
// records leaves the registry). It changes no key and reports nothing. It
// waits while a snapshot runs (the registry knows streams, not their keys,
// so it cannot hand a stream to the snapshot before changing it).
func (db *DB) ActiveExpireIdmp() {
	if db.ks.snaps != nil && db.ks.Snapshotting() {
		return
	}
	for s := range db.idmp {
		if !s.IdmpExpire(db.ks.now) {
			delete(db.idmp, s)
		}
	}
}

// IdmpStreams is the number of streams in the registry.
func (db *DB) IdmpStreams() int { return len(db.idmp) }
