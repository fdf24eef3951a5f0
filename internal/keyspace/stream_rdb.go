package keyspace

// Views and builders for the RDB codec (internal/rdb): a stream's nodes are
// Redis listpacks already, so they are written and read as they are.

// EachNode calls fn with each node's master ID and listpack, in ID order
// (fn must not keep or change lp).
func (s *Stream) EachNode(fn func(master StreamID, lp []byte)) {
	for _, n := range s.nodes {
		fn(n.master, n.lp)
	}
}

// StreamLoader builds a stream from RDB parts (rdbLoadObject). The caller
// validates each listpack (its structure and that it is not empty) first.
type StreamLoader struct {
	S *Stream
}

// NewStreamLoader starts an empty stream with lim's IDMP settings (the
// payload may replace them).
func NewStreamLoader(lim StreamLimits) *StreamLoader { return &StreamLoader{S: NewStream(lim)} }

// AddNode appends a node; false when its master ID does not follow the
// previous node's (a duplicate or out-of-order key).
func (l *StreamLoader) AddNode(master StreamID, lp []byte) bool {
	if n := len(l.S.nodes); n > 0 && l.S.nodes[n-1].master.Cmp(master) >= 0 {
		return false
	}
	l.S.nodes = append(l.S.nodes, &streamNode{master: master, lp: lp})
	return true
}

// SetLength sets the entry count read from the payload.
func (l *StreamLoader) SetLength(n uint64) { l.S.length = n }

// AddGroup adds a consumer group; nil when the name is taken.
func (l *StreamLoader) AddGroup(name []byte, last StreamID, entriesRead int64) *StreamCG {
	return l.S.CreateCG(name, last, entriesRead)
}

// AddConsumer adds a consumer with its times; nil when the name is taken.
func (l *StreamLoader) AddConsumer(cg *StreamCG, name []byte, seen, active int64) *StreamConsumer {
	c := cg.CreateConsumer(name, seen)
	if c != nil {
		c.ActiveTime = active
	}
	return c
}

// CountLive counts the live entries of the nodes (for a consistency check).
func (l *StreamLoader) CountLive() uint64 {
	var n uint64
	for _, nd := range l.S.nodes {
		c, _ := lpInt(nd.lp, lpHdrSize)
		n += uint64(c)
	}
	return n
}

// FirstLiveID is streamGetEdgeID(first, skip tombstones) of the loaded nodes.
func (l *StreamLoader) FirstLiveID() StreamID { return l.S.firstLiveID() }
