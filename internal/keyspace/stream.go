package keyspace

import (
	"math"
	"sort"
	"strconv"
)

// StreamID is a stream entry ID, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is UINT64_MAX-UINT64_MAX ("+").
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp is streamCompareID.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms > b.Ms:
		return 1
	case a.Ms < b.Ms:
		return -1
	case a.Seq > b.Seq:
		return 1
	case a.Seq < b.Seq:
		return -1
	}
	return 0
}

// IsZero reports 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr is streamIncrID: the successor, false (and 0-0) past the maximum.
func (a StreamID) Incr() (StreamID, bool) {
	if a.Seq == math.MaxUint64 {
		if a.Ms == math.MaxUint64 {
			return StreamID{}, false
		}
		return StreamID{a.Ms + 1, 0}, true
	}
	return StreamID{a.Ms, a.Seq + 1}, true
}

// Decr is streamDecrID: the predecessor, false (and the maximum) below 0-0.
func (a StreamID) Decr() (StreamID, bool) {
	if a.Seq == 0 {
		if a.Ms == 0 {
			return MaxStreamID, false
		}
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return StreamID{a.Ms, a.Seq - 1}, true
}

// Append appends "<ms>-<seq>".
func (a StreamID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

func (a StreamID) String() string { return string(a.Append(nil)) }

// Stream entry flags (t_stream.c).
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// streamNode is one node: the master ID (the radix tree key in Redis) and
// its listpack (see stream_lp.go):
//
//	count deleted num-fields field... 0            (master entry)
//	flags ms-diff seq-diff [num-fields field...] value... lp-count   (each entry)
type streamNode struct {
	master StreamID
	lp     []byte
}

// Stream is a Redis stream: nodes ordered by master ID, and consumer groups.
// Methods never reply; callers hold the engine lock.
type Stream struct {
	nodes        []*streamNode
	length       uint64
	LastID       StreamID // last-generated-id
	FirstID      StreamID // recorded-first-entry-id
	MaxDeletedID StreamID // max-deleted-entry-id
	EntriesAdded uint64
	groups       []*StreamCG // by name

	// IDMP (stream_idmp.go): the settings, the records by producer, and the
	// lifetime counters XINFO STREAM reports.
	IdmpDuration   uint64 // seconds a record is kept (idmp-duration)
	IdmpMaxSize    uint64 // records kept per producer (idmp-maxsize)
	idmp           map[string]*idmpProducer
	IidsAdded      uint64
	IidsDuplicates uint64
}

// NewStream returns an empty stream with lim's IDMP settings (a stream takes
// stream-idmp-duration and -maxsize when it is created).
func NewStream(lim StreamLimits) *Stream {
	return &Stream{IdmpDuration: lim.IdmpDuration, IdmpMaxSize: lim.IdmpMaxSize}
}

// Len is the number of entries.
func (s *Stream) Len() uint64 { return s.length }

// Encoding is OBJECT ENCODING's name.
func (s *Stream) Encoding() string { return "stream" }

// NodeCount is the number of nodes (XINFO radix-tree-keys).
func (s *Stream) NodeCount() int { return len(s.nodes) }

// RaxNodes is the node count of the radix tree Redis would hold for the
// node keys (XINFO radix-tree-nodes), computed for the compressed trie of the
// 16-byte big-endian master IDs as raxInsert builds it: the root, every
// branching point, every key, and every child of a branching point.
func (s *Stream) RaxNodes() int {
	if len(s.nodes) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.nodes))
	for i, n := range s.nodes {
		keys[i] = encodeID(n.master)
	}
	count := 0
	var walk func(lo, hi, depth int, parentBranches bool)
	walk = func(lo, hi, depth int, parentBranches bool) {
		branches := false
		if depth < 16 {
			for i := lo + 1; i < hi; i++ {
				if keys[i][depth] != keys[lo][depth] {
					branches = true
					break
				}
			}
		}
		if depth == 0 || depth == 16 || branches || parentBranches {
			count++
		}
		if depth == 16 {
			return
		}
		for i := lo; i < hi; {
			j := i + 1
			for j < hi && keys[j][depth] == keys[i][depth] {
				j++
			}
			walk(i, j, depth+1, branches)
			i = j
		}
	}
	walk(0, len(keys), 0, false)
	return count
}

func encodeID(id StreamID) [16]byte {
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(id.Ms >> (56 - 8*i))
		b[8+i] = byte(id.Seq >> (56 - 8*i))
	}
	return b
}

// nodeHeader parses a node's master entry: live and deleted counts, the
// number of master fields, the offset of the first master field and of the
// first entry.
func (n *streamNode) header() (count, deleted int64, nMaster int, masterOff, first int) {
	p := lpHdrSize
	count, p = lpInt(n.lp, p)
	deleted, p = lpInt(n.lp, p)
	var nm int64
	nm, p = lpInt(n.lp, p)
	masterOff = p
	for i := int64(0); i < nm; i++ {
		p = lpSkip(n.lp, p)
	}
	p = lpSkip(n.lp, p) // the zero terminator
	return count, deleted, int(nm), masterOff, p
}

// streamEntry is a parsed entry of a node.
type streamEntry struct {
	flagsOff int
	flags    int64
	id       StreamID
	nfields  int
	dataOff  int // first field (or value when same-fields)
	end      int // after lp-count
}

func (n *streamNode) entryAt(p, nMaster int) streamEntry {
	e := streamEntry{flagsOff: p}
	e.flags, p = lpInt(n.lp, p)
	var dms, dseq int64
	dms, p = lpInt(n.lp, p)
	dseq, p = lpInt(n.lp, p)
	e.id = StreamID{n.master.Ms + uint64(dms), n.master.Seq + uint64(dseq)}
	skip := nMaster
	if e.flags&streamFlagSameFields != 0 {
		e.nfields = nMaster
	} else {
		var nf int64
		nf, p = lpInt(n.lp, p)
		e.nfields = int(nf)
		skip = 2 * e.nfields
	}
	e.dataOff = p
	for i := 0; i < skip; i++ {
		p = lpSkip(n.lp, p)
	}
	e.end = lpSkip(n.lp, p)
	return e
}

// lastEntry returns the last entry of a node (live or not), false if none.
func (n *streamNode) lastEntry(nMaster int) (streamEntry, bool) {
	end := len(n.lp) - 1
	// read the lp-count of the last element, then walk back
	p := lpPrev(n.lp, end)
	cnt, _ := lpInt(n.lp, p)
	if cnt == 0 {
		return streamEntry{}, false
	}
	for ; cnt > 0; cnt-- {
		p = lpPrev(n.lp, p)
	}
	return n.entryAt(p, nMaster), true
}

// lpPrev returns the offset of the element before the one at p.
func lpPrev(lp []byte, p int) int {
	q := p - 1
	l := int(lp[q] & 127)
	shift := 7
	for lp[q]&128 != 0 {
		q--
		l |= int(lp[q]&127) << shift
		shift += 7
	}
	return q - l
}

// StreamEntry is an entry met by an iteration; valid until the stream changes.
type StreamEntry struct {
	ID   StreamID
	node *streamNode
	e    streamEntry
	mOff int
}

// NumFields is the number of field-value pairs.
func (e *StreamEntry) NumFields() int { return e.e.nfields }

// Fields calls fn with each field and value; integer-encoded elements are
// formatted into scratch (returned, for reuse). The slices are valid during fn.
func (e *StreamEntry) Fields(scratch []byte, fn func(f, v []byte)) []byte {
	lp := e.node.lp
	p := e.e.dataOff
	m := e.mOff
	same := e.e.flags&streamFlagSameFields != 0
	var f, v []byte
	for i := 0; i < e.e.nfields; i++ {
		scratch = scratch[:0]
		if same {
			f, m, scratch = lpStrBytes(lp, m, scratch)
		} else {
			f, p, scratch = lpStrBytes(lp, p, scratch)
		}
		v, p, scratch = lpStrBytes(lp, p, scratch)
		fn(f, v)
	}
	return scratch
}

// findNode returns the index of the last node whose master ID <= id, or -1.
func (s *Stream) findNode(id StreamID) int {
	i := sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].master.Cmp(id) > 0 })
	return i - 1
}

// Range calls fn for the live entries with start <= ID <= end, in ID order
// (reverse order when rev), until fn returns false.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(e *StreamEntry) bool) {
	if start.Cmp(end) > 0 || len(s.nodes) == 0 {
		return
	}
	var ent StreamEntry
	if !rev {
		i := 0
		if !start.IsZero() {
			i = max(s.findNode(start), 0)
		}
		for ; i < len(s.nodes); i++ {
			n := s.nodes[i]
			_, _, nm, mOff, p := n.header()
			for p < len(n.lp)-1 {
				e := n.entryAt(p, nm)
				p = e.end
				if e.flags&streamFlagDeleted != 0 || e.id.Cmp(start) < 0 {
					continue
				}
				if e.id.Cmp(end) > 0 {
					return
				}
				ent = StreamEntry{ID: e.id, node: n, e: e, mOff: mOff}
				if !fn(&ent) {
					return
				}
			}
		}
		return
	}
	i := len(s.nodes) - 1
	if end != MaxStreamID {
		i = s.findNode(end)
		if i < 0 {
			return
		}
	}
	var offs []int
	for ; i >= 0; i-- {
		n := s.nodes[i]
		_, _, nm, mOff, p := n.header()
		offs = offs[:0]
		for p < len(n.lp)-1 {
			offs = append(offs, p)
			e := n.entryAt(p, nm)
			p = e.end
		}
		for j := len(offs) - 1; j >= 0; j-- {
			e := n.entryAt(offs[j], nm)
			if e.flags&streamFlagDeleted != 0 || e.id.Cmp(end) > 0 {
				continue
			}
			if e.id.Cmp(start) < 0 {
				return
			}
			ent = StreamEntry{ID: e.id, node: n, e: e, mOff: mOff}
			if !fn(&ent) {
				return
			}
		}
	}
}

// Get returns the live entry id, if any.
func (s *Stream) Get(id StreamID) (*StreamEntry, bool) {
	var out *StreamEntry
	s.Range(id, id, false, func(e *StreamEntry) bool {
		c := *e
		out = &c
		return false
	})
	return out, out != nil
}

// Exists reports whether id is a live entry (streamEntryExists).
func (s *Stream) Exists(id StreamID) bool {
	_, ok := s.Get(id)
	return ok
}

// LastValidID is the ID of the last live entry (streamLastValidID); false
// when empty.
func (s *Stream) LastValidID() (StreamID, bool) {
	var id StreamID
	found := false
	s.Range(StreamID{}, MaxStreamID, true, func(e *StreamEntry) bool {
		id, found = e.ID, true
		return false
	})
	return id, found
}

// edgeID is streamGetEdgeID with tombstones skipped: the first (or last) live
// ID, or max (min) when empty.
func (s *Stream) firstLiveID() StreamID {
	id := MaxStreamID
	s.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
		id = e.ID
		return false
	})
	return id
}

// FirstEntryID is streamGetEdgeID(first, tombstones included): the first ID
// in the first node, dead or alive, or the maximum ID when there is none.
func (s *Stream) FirstEntryID() StreamID {
	for _, n := range s.nodes {
		_, _, nm, _, p := n.header()
		if p < len(n.lp)-1 {
			return n.entryAt(p, nm).id
		}
	}
	return MaxStreamID
}

// StreamLimits are the node limits (stream-node-max-bytes, -entries) and the
// IDMP settings of new streams (stream-idmp-duration, -maxsize).
type StreamLimits struct {
	MaxBytes     int64
	MaxEntries   int64
	IdmpDuration uint64
	IdmpMaxSize  uint64
}

// DefaultStreamLimits are Redis's defaults.
var DefaultStreamLimits = StreamLimits{MaxBytes: 4096, MaxEntries: 100, IdmpDuration: 100, IdmpMaxSize: 100}

// StreamLimits returns the live limits.
func (l *EncodingLimits) StreamLimits() StreamLimits {
	if l == nil || l.StreamNodeMaxBytes == nil {
		return DefaultStreamLimits
	}
	lim := StreamLimits{MaxBytes: l.StreamNodeMaxBytes(), MaxEntries: l.StreamNodeMaxEntries(),
		IdmpDuration: DefaultStreamLimits.IdmpDuration, IdmpMaxSize: DefaultStreamLimits.IdmpMaxSize}
	if l.StreamIdmpDuration != nil {
		lim.IdmpDuration, lim.IdmpMaxSize = uint64(l.StreamIdmpDuration()), uint64(l.StreamIdmpMaxSize())
	}
	return lim
}

// streamListpackMaxSize is STREAM_LISTPACK_MAX_SIZE.
const streamListpackMaxSize = 1 << 30

// Append adds an entry with ID id (already checked to be > LastID) and the
// field-value pairs fv (streamAppendItem). false when the elements are too
// large to be stored ("Elements are too large to be stored").
func (s *Stream) Append(id StreamID, fv [][]byte, lim StreamLimits) bool {
	tot := 0
	for _, a := range fv {
		tot += len(a)
	}
	if tot > streamListpackMaxSize {
		return false
	}
	numfields := len(fv) / 2
	var n *streamNode
	if len(s.nodes) > 0 {
		n = s.nodes[len(s.nodes)-1]
		maxBytes := lim.MaxBytes
		if maxBytes == 0 || maxBytes > streamListpackMaxSize {
			maxBytes = streamListpackMaxSize
		}
		newNode := false
		if int64(len(n.lp)+tot) >= maxBytes {
			newNode = true
		} else if lim.MaxEntries != 0 {
			c, p := lpInt(n.lp, lpHdrSize)
			d, _ := lpInt(n.lp, p)
			if c+d >= lim.MaxEntries {
				newNode = true
			}
		}
		if newNode {
			if cap(n.lp) > len(n.lp) {
				n.lp = append([]byte(nil), n.lp...) // shrink to fit
			}
			n = nil
		}
	}
	flags := int64(0)
	if n == nil {
		n = &streamNode{master: id}
		capHint := 4096
		if lim.MaxBytes > 0 && lim.MaxBytes < int64(capHint) {
			capHint = int(lim.MaxBytes)
		}
		capHint = min(capHint, 64+tot*2+numfields*8)
		lp := lpNew(capHint)
		enc := lpEncInt(nil, 1)
		enc = lpEncInt(enc, 0)
		enc = lpEncInt(enc, int64(numfields))
		for i := 0; i < numfields; i++ {
			enc = lpEncStr(enc, fv[2*i])
		}
		enc = lpEncInt(enc, 0)
		n.lp = lpAppendRaw(lp, enc, 3+numfields+1)
		s.nodes = append(s.nodes, n)
		flags = streamFlagSameFields
	} else {
		count, _ := lpInt(n.lp, lpHdrSize)
		n.lp = lpReplaceInt(n.lp, lpHdrSize, count+1)
		p := lpSkip(n.lp, lpHdrSize)
		p = lpSkip(n.lp, p)
		var nm int64
		nm, p = lpInt(n.lp, p)
		if int(nm) == numfields {
			i := 0
			var scratch [24]byte
			for ; i < numfields; i++ {
				var f []byte
				f, p, _ = lpStrBytes(n.lp, p, scratch[:0])
				if string(f) != string(fv[2*i]) {
					break
				}
			}
			if i == numfields {
				flags = streamFlagSameFields
			}
		}
	}
	enc := make([]byte, 0, 16+tot+len(fv)*4)
	enc = lpEncInt(enc, flags)
	enc = lpEncInt(enc, int64(id.Ms-n.master.Ms))
	enc = lpEncInt(enc, int64(id.Seq-n.master.Seq))
	elems := 3
	if flags&streamFlagSameFields == 0 {
		enc = lpEncInt(enc, int64(numfields))
		elems++
	}
	for i := 0; i < numfields; i++ {
		if flags&streamFlagSameFields == 0 {
			enc = lpEncStr(enc, fv[2*i])
			elems++
		}
		enc = lpEncStr(enc, fv[2*i+1])
		elems++
	}
	lpCount := int64(numfields + 3)
	if flags&streamFlagSameFields == 0 {
		lpCount += int64(numfields + 1)
	}
	enc = lpEncInt(enc, lpCount)
	elems++
	n.lp = lpAppendRaw(n.lp, enc, elems)
	s.length++
	s.EntriesAdded++
	s.LastID = id
	if s.length == 1 {
		s.FirstID = id
	}
	return true
}

// deleteAt marks the entry e of node i deleted, removing the node when it was
// its last live entry. length is updated.
func (s *Stream) deleteAt(i int, e streamEntry) {
	n := s.nodes[i]
	n.lp[e.flagsOff] = byte(e.flags | streamFlagDeleted) // 0..3: one byte in place
	count, p := lpInt(n.lp, lpHdrSize)
	if count == 1 {
		s.nodes = append(s.nodes[:i], s.nodes[i+1:]...)
	} else {
		n.lp = lpReplaceInt(n.lp, lpHdrSize, count-1)
		p = lpSkip(n.lp, lpHdrSize)
		d, _ := lpInt(n.lp, p)
		n.lp = lpReplaceInt(n.lp, p, d+1)
	}
	s.length--
}

// deleteItem is streamDeleteItem.
func (s *Stream) deleteItem(id StreamID) bool {
	i := s.findNode(id)
	if i < 0 {
		return false
	}
	n := s.nodes[i]
	_, _, nm, _, p := n.header()
	for p < len(n.lp)-1 {
		e := n.entryAt(p, nm)
		p = e.end
		c := e.id.Cmp(id)
		if c > 0 {
			return false
		}
		if c == 0 {
			if e.flags&streamFlagDeleted != 0 {
				return false
			}
			s.deleteAt(i, e)
			return true
		}
	}
	return false
}

// Delete removes the entries ids (XDEL) and returns how many existed; it keeps
// first/max-deleted IDs as Redis does.
func (s *Stream) Delete(ids []StreamID) int {
	deleted := 0
	firstEntry := false
	for _, id := range ids {
		if s.deleteItem(id) {
			if id.Cmp(s.FirstID) == 0 {
				firstEntry = true
			}
			if id.Cmp(s.MaxDeletedID) > 0 {
				s.MaxDeletedID = id
			}
			deleted++
		}
	}
	if deleted > 0 {
		if s.length == 0 {
			s.FirstID = StreamID{}
		} else if firstEntry {
			s.FirstID = s.firstLiveID()
		}
	}
	return deleted
}

// Trim strategies.
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// Deletion policies of XADD/XTRIM trimming, XDELEX and XACKDEL (Redis 8.2).
const (
	DeleteKeepRef = iota // KEEPREF: pending references stay
	DeleteDelRef         // DELREF: deleted entries leave every PEL
	DeleteAcked          // ACKED: only entries no group still needs go
)

// TrimArgs are XADD/XTRIM's trimming options (streamAddTrimArgs).
type TrimArgs struct {
	Strategy int
	Approx   bool
	Limit    int64
	MaxLen   int64
	MinID    StreamID
	Policy   int // DeleteKeepRef, DeleteDelRef or DeleteAcked
}

// Trim is streamTrim (Redis 8.6): it returns the number of entries removed.
// A node whose entries are all past the threshold goes whole with KEEPREF;
// with ACKED or DELREF its entries are visited one by one (ACKED keeps those
// a group still needs, DELREF takes the trimmed ones out of every PEL) and
// the node goes if all of them went, and the trim moves on to the next
// node. In approximate mode KEEPREF stops at the first node it cannot remove
// whole; otherwise the trim marks entries deleted inside the first node that
// is not entirely past the threshold, and stops there.
func (s *Stream) Trim(a *TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	var deleted int64
	for i := 0; i < len(s.nodes); {
		if a.Strategy == TrimMaxLen && int64(s.length) <= a.MaxLen {
			break
		}
		n := s.nodes[i]
		entries, _ := lpInt(n.lp, lpHdrSize)
		if a.Limit != 0 && deleted+entries > a.Limit {
			break
		}
		var eligible bool
		_, _, nm, _, first := n.header()
		if a.Strategy == TrimMaxLen {
			eligible = int64(s.length)-entries >= a.MaxLen
		} else {
			last := StreamID{}
			if e, ok := n.lastEntry(nm); ok {
				last = e.id
			}
			eligible = last.Cmp(a.MinID) < 0
		}
		if eligible && a.Policy == DeleteKeepRef {
			s.removeNode(i)
			s.length -= uint64(entries)
			deleted += entries
			continue
		}
		if a.Approx && a.Policy == DeleteKeepRef {
			break
		}
		var fromLP int64
		for p := first; p < len(n.lp)-1; {
			e := n.entryAt(p, nm)
			var stop bool
			if a.Strategy == TrimMaxLen {
				stop = int64(s.length) <= a.MaxLen
			} else {
				stop = e.id.Cmp(a.MinID) >= 0
			}
			if stop {
				break
			}
			p = e.end
			if e.flags&streamFlagDeleted != 0 {
				continue
			}
			switch a.Policy {
			case DeleteAcked:
				if s.EntryReferenced(e.id) {
					continue // still needed by a group: it stays
				}
			case DeleteDelRef:
				s.CleanupEntryRefs(e.id)
			}
			n.lp[e.flagsOff] = byte(e.flags | streamFlagDeleted)
			fromLP++
			s.length--
		}
		deleted += fromLP
		if eligible && fromLP == entries {
			s.removeNode(i) // every entry of the node went: the node goes
			continue
		}
		q := lpHdrSize
		n.lp = lpReplaceInt(n.lp, q, entries-fromLP)
		q = lpSkip(n.lp, q)
		md, _ := lpInt(n.lp, q)
		n.lp = lpReplaceInt(n.lp, q, md+fromLP)
		i++
		if !eligible {
			break // enough was deleted in this node
		}
	}
	if s.length == 0 {
		s.FirstID = StreamID{}
	} else if deleted > 0 {
		s.FirstID = s.firstLiveID()
	}
	return deleted
}

// removeNode drops node i.
func (s *Stream) removeNode(i int) {
	copy(s.nodes[i:], s.nodes[i+1:])
	s.nodes[len(s.nodes)-1] = nil
	s.nodes = s.nodes[:len(s.nodes)-1]
}

// RangeHasTombstones is streamRangeHasTombstones.
func (s *Stream) RangeHasTombstones(start, end StreamID) bool {
	if s.length == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	return start.Cmp(s.MaxDeletedID) <= 0 && s.MaxDeletedID.Cmp(end) <= 0
}

// EstimateDistanceFromFirstEverEntry is streamEstimateDistanceFromFirstEverEntry;
// -1 is SCG_INVALID_ENTRIES_READ.
func (s *Stream) EstimateDistanceFromFirstEverEntry(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	if !id.IsZero() && id.Cmp(s.MaxDeletedID) < 0 {
		return -1
	}
	cmpLast := id.Cmp(s.LastID)
	if cmpLast == 0 {
		return int64(s.EntriesAdded)
	} else if cmpLast > 0 {
		return -1
	}
	cmpFirst := id.Cmp(s.FirstID)
	cmpXdel := s.MaxDeletedID.Cmp(s.FirstID)
	if s.MaxDeletedID.IsZero() || cmpXdel < 0 {
		if cmpFirst < 0 {
			return int64(s.EntriesAdded - s.length)
		} else if cmpFirst == 0 {
			return int64(s.EntriesAdded - s.length + 1)
		}
	}
	return -1
}

// Lag is streamReplyWithCGLag's value; false for a null reply.
func (s *Stream) Lag(cg *StreamCG) (int64, bool) {
	switch {
	case s.EntriesAdded == 0:
		return 0, true
	case s.length == 0:
		return 0, true
	case cg.LastID.Cmp(s.FirstID) < 0 && s.MaxDeletedID.Cmp(s.FirstID) < 0:
		return int64(s.length), true
	case cg.EntriesRead != -1 && !s.RangeHasTombstones(cg.LastID, MaxStreamID):
		return int64(s.EntriesAdded) - cg.EntriesRead, true
	}
	if er := s.EstimateDistanceFromFirstEverEntry(cg.LastID); er != -1 {
		return int64(s.EntriesAdded) - er, true
	}
	return 0, false
}
