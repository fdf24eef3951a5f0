package keyspace

import (
	"cmp"
	"slices"
	"sort"
)

// StreamNACK is a pending entry: delivered to Consumer, not yet acknowledged.
// The group's PEL and its consumer's PEL share it.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64 // Unix ms of the last delivery (set it with StreamCG.Deliver)
	DeliveryCount int64
	Consumer      *StreamConsumer
	// order ranks entries delivered at the same time in the group's time
	// order (TimeOrder): the later Deliver comes after; 0 (loaded, copied)
	// comes first, by ID
	order uint64
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name       string
	SeenTime   int64 // last interaction
	ActiveTime int64 // last successful interaction; -1 never
	PEL        PEL
}

// StreamCG is a consumer group.
type StreamCG struct {
	Name        string
	LastID      StreamID
	EntriesRead int64 // -1: SCG_INVALID_ENTRIES_READ
	PEL         PEL
	consumers   []*StreamConsumer // by name
	delivers    uint64            // Deliver calls, for StreamNACK.order
}

// Deliver sets n's delivery time to at and moves it last among the entries
// delivered at that time (Redis 8.6's pelListUpdate / pelListInsertAtTail:
// the group's pending entries are kept in delivery time order for
// XREADGROUP CLAIM). Every change of a delivery time goes through it.
func (cg *StreamCG) Deliver(n *StreamNACK, at int64) {
	cg.delivers++
	n.DeliveryTime, n.order = at, cg.delivers
}

// TimeOrder returns the group's pending entries oldest delivery first (ties:
// the earlier Deliver first; loaded or copied entries first, by ID), Redis's
// pel_time list.
func (cg *StreamCG) TimeOrder() []*StreamNACK {
	out := make([]*StreamNACK, 0, cg.PEL.Len())
	cg.PEL.Ascend(StreamID{}, func(n *StreamNACK) bool {
		out = append(out, n)
		return true
	})
	slices.SortStableFunc(out, func(a, b *StreamNACK) int {
		if a.DeliveryTime != b.DeliveryTime {
			return cmp.Compare(a.DeliveryTime, b.DeliveryTime)
		}
		return cmp.Compare(a.order, b.order)
	})
	return out
}

// PEL is a pending entries list ordered by ID: sorted chunks of bounded size,
// so that inserts and removals anywhere cost O(log n + chunk) and the common
// case (new deliveries, in ID order) appends.
type PEL struct {
	chunks [][]*StreamNACK
	n      int
}

const pelChunk = 128

// Len is the number of pending entries.
func (p *PEL) Len() int { return p.n }

// locate returns the chunk and index of the first entry >= id.
func (p *PEL) locate(id StreamID) (int, int) {
	ci := sort.Search(len(p.chunks), func(i int) bool {
		c := p.chunks[i]
		return c[len(c)-1].ID.Cmp(id) >= 0
	})
	if ci == len(p.chunks) {
		return ci, 0
	}
	c := p.chunks[ci]
	i := sort.Search(len(c), func(i int) bool { return c[i].ID.Cmp(id) >= 0 })
	return ci, i
}

// Find returns the entry for id or nil.
func (p *PEL) Find(id StreamID) *StreamNACK {
	ci, i := p.locate(id)
	if ci < len(p.chunks) && p.chunks[ci][i].ID == id {
		return p.chunks[ci][i]
	}
	return nil
}

// Insert adds nack; false when its ID is already there.
func (p *PEL) Insert(nack *StreamNACK) bool {
	if len(p.chunks) == 0 {
		p.chunks = append(p.chunks, append(make([]*StreamNACK, 0, 4), nack))
		p.n++
		return true
	}
	ci, i := p.locate(nack.ID)
	if ci == len(p.chunks) {
		ci = len(p.chunks) - 1
		i = len(p.chunks[ci])
	} else if p.chunks[ci][i].ID == nack.ID {
		return false
	}
	c := p.chunks[ci]
	c = append(c, nil)
	copy(c[i+1:], c[i:])
	c[i] = nack
	if len(c) > pelChunk {
		half := len(c) / 2
		right := append(make([]*StreamNACK, 0, pelChunk), c[half:]...)
		c = c[:half:half]
		p.chunks = append(p.chunks, nil)
		copy(p.chunks[ci+2:], p.chunks[ci+1:])
		p.chunks[ci+1] = right
	}
	p.chunks[ci] = c
	p.n++
	return true
}

// Remove deletes id and returns its entry (nil if absent).
func (p *PEL) Remove(id StreamID) *StreamNACK {
	ci, i := p.locate(id)
	if ci == len(p.chunks) || p.chunks[ci][i].ID != id {
		return nil
	}
	c := p.chunks[ci]
	nack := c[i]
	copy(c[i:], c[i+1:])
	c[len(c)-1] = nil
	c = c[:len(c)-1]
	if len(c) == 0 {
		p.chunks = append(p.chunks[:ci], p.chunks[ci+1:]...)
	} else {
		p.chunks[ci] = c
	}
	p.n--
	return nack
}

// Ascend calls fn for the entries with ID >= from in order until it returns
// false. fn must not change the PEL.
func (p *PEL) Ascend(from StreamID, fn func(n *StreamNACK) bool) {
	ci, i := p.locate(from)
	for ; ci < len(p.chunks); ci++ {
		c := p.chunks[ci]
		for ; i < len(c); i++ {
			if !fn(c[i]) {
				return
			}
		}
		i = 0
	}
}

// First and Last return the smallest and largest pending IDs (Len > 0).
func (p *PEL) First() StreamID { return p.chunks[0][0].ID }
func (p *PEL) Last() StreamID {
	c := p.chunks[len(p.chunks)-1]
	return c[len(c)-1].ID
}

// Groups returns the consumer groups in name order (do not modify).
func (s *Stream) Groups() []*StreamCG { return s.groups }

// LookupCG finds a group by name.
func (s *Stream) LookupCG(name []byte) *StreamCG {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		return s.groups[i]
	}
	return nil
}

// CreateCG creates a group (streamCreateCG); nil when the name exists.
func (s *Stream) CreateCG(name []byte, last StreamID, entriesRead int64) *StreamCG {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		return nil
	}
	cg := &StreamCG{Name: string(name), LastID: last, EntriesRead: entriesRead}
	s.groups = append(s.groups, nil)
	copy(s.groups[i+1:], s.groups[i:])
	s.groups[i] = cg
	return cg
}

// DestroyCG removes a group; false when there is none.
func (s *Stream) DestroyCG(name []byte) bool {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		s.groups = append(s.groups[:i], s.groups[i+1:]...)
		return true
	}
	return false
}

// Consumers returns the group's consumers in name order (do not modify).
func (cg *StreamCG) Consumers() []*StreamConsumer { return cg.consumers }

// LookupConsumer finds a consumer by name.
func (cg *StreamCG) LookupConsumer(name []byte) *StreamConsumer {
	i := sort.Search(len(cg.consumers), func(i int) bool { return cg.consumers[i].Name >= string(name) })
	if i < len(cg.consumers) && cg.consumers[i].Name == string(name) {
		return cg.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer seen now (streamCreateConsumer); nil when
// it exists.
func (cg *StreamCG) CreateConsumer(name []byte, now int64) *StreamConsumer {
	i := sort.Search(len(cg.consumers), func(i int) bool { return cg.consumers[i].Name >= string(name) })
	if i < len(cg.consumers) && cg.consumers[i].Name == string(name) {
		return nil
	}
	c := &StreamConsumer{Name: string(name), SeenTime: now, ActiveTime: -1}
	cg.consumers = append(cg.consumers, nil)
	copy(cg.consumers[i+1:], cg.consumers[i:])
	cg.consumers[i] = c
	return c
}

// DeleteConsumer removes a consumer and its pending entries from the group
// (streamDelConsumer).
func (cg *StreamCG) DeleteConsumer(c *StreamConsumer) {
	c.PEL.Ascend(StreamID{}, func(n *StreamNACK) bool {
		cg.PEL.Remove(n.ID)
		return true
	})
	i := sort.Search(len(cg.consumers), func(i int) bool { return cg.consumers[i].Name >= c.Name })
	if i < len(cg.consumers) && cg.consumers[i] == c {
		cg.consumers = append(cg.consumers[:i], cg.consumers[i+1:]...)
	}
}

// Ack removes id from the group's and its consumer's PEL; false when it was
// not pending.
func (cg *StreamCG) Ack(id StreamID) bool {
	n := cg.PEL.Remove(id)
	if n == nil {
		return false
	}
	if n.Consumer != nil {
		n.Consumer.PEL.Remove(id)
	}
	return true
}

// Clone deep-copies the stream, its groups, consumers and PELs (COPY).
func (s *Stream) Clone() any {
	c := &Stream{length: s.length, LastID: s.LastID, FirstID: s.FirstID,
		MaxDeletedID: s.MaxDeletedID, EntriesAdded: s.EntriesAdded,
		IdmpDuration: s.IdmpDuration, IdmpMaxSize: s.IdmpMaxSize, idmp: s.cloneIdmp(),
		IidsAdded: s.IidsAdded, IidsDuplicates: s.IidsDuplicates}
	c.nodes = make([]*streamNode, len(s.nodes))
	for i, n := range s.nodes {
		c.nodes[i] = &streamNode{master: n.master, lp: append([]byte(nil), n.lp...)}
	}
	for _, g := range s.groups {
		ng := &StreamCG{Name: g.Name, LastID: g.LastID, EntriesRead: g.EntriesRead}
		byOld := map[*StreamConsumer]*StreamConsumer{}
		for _, cons := range g.consumers {
			nc := &StreamConsumer{Name: cons.Name, SeenTime: cons.SeenTime, ActiveTime: cons.ActiveTime}
			byOld[cons] = nc
			ng.consumers = append(ng.consumers, nc)
		}
		g.PEL.Ascend(StreamID{}, func(n *StreamNACK) bool {
			nn := &StreamNACK{ID: n.ID, DeliveryTime: n.DeliveryTime, DeliveryCount: n.DeliveryCount}
			ng.PEL.Insert(nn)
			if nc := byOld[n.Consumer]; nc != nil {
				nn.Consumer = nc
				nc.PEL.Insert(nn)
			}
			return true
		})
		c.groups = append(c.groups, ng)
	}
	return c
}

// EntryReferenced is streamEntryIsReferenced (Redis 8.2): id is still needed
// by a group that has not been delivered it yet (its last ID is before id) or
// holds it pending.
func (s *Stream) EntryReferenced(id StreamID) bool {
	for _, g := range s.groups {
		if id.Cmp(g.LastID) > 0 {
			return true
		}
	}
	for _, g := range s.groups {
		if g.PEL.Find(id) != nil {
			return true
		}
	}
	return false
}

// CleanupEntryRefs is streamCleanupEntryCGroupRefs: id leaves every group's
// and consumer's PEL. It reports whether a reference was removed.
func (s *Stream) CleanupEntryRefs(id StreamID) bool {
	removed := false
	for _, g := range s.groups {
		if g.Ack(id) {
			removed = true
		}
	}
	return removed
}

// DeleteOne deletes the live entry id (streamDeleteItem) keeping the first
// and max-deleted IDs as XDEL does; false when there is no such entry.
func (s *Stream) DeleteOne(id StreamID) bool { return s.Delete([]StreamID{id}) == 1 }
