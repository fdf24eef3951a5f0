package server

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/pubsub"
	"github.com/hotkv/hotkv/internal/resp"
)

// Pub/Sub delivery. Messages (PUBLISH, keyspace events, tracking invalidations)
// are produced under the engine lock, by any connection's goroutine or the
// cron; a connection's reply buffer belongs to its own goroutine or event loop.
// So a message goes into the subscriber's push buffer (pushMu), and its owner
// moves it into the reply buffer before its next command and when woken: the
// event loop through its wake fd, a goroutine-mode connection by a read
// deadline in the past that interrupts its blocking read. A message for the
// client whose command is running (it published to itself, or its command
// raised a keyspace event it listens to) waits in push.self and follows the
// command's reply (the whole EXEC or script reply included), as Redis 7.2+
// does with server.pending_push_messages.

// pushState is a client's side of message delivery.
type pushState struct {
	mu      sync.Mutex
	buf     []byte
	pending atomic.Bool
	// the subscriptions, by kind (touched under the engine lock only)
	subs [3]map[string]struct{}
	// counts for CLIENT LIST (read without the engine lock)
	counts [3]atomic.Int32
	// running is true while one of the client's own commands runs (engine lock)
	running bool
	// self holds the messages for the client produced by its running command,
	// written after the command's reply (engine lock)
	self []byte
}

// Deliver implements pubsub.Subscriber.
func (cl *client) Deliver(m *pubsub.Message) {
	cl.pushMsg(m.Encode(cl.Proto))
}

// pushMsg queues an out-of-band message (pub/sub, invalidation) for cl.
// Called under the engine lock.
func (cl *client) pushMsg(b []byte) {
	if cl.push.running {
		cl.push.self = append(cl.push.self, b...)
		return
	}
	if cl.srv != nil {
		cl.srv.notePushed(cl)
	}
	cl.push.mu.Lock()
	cl.push.buf = append(cl.push.buf, b...)
	n, c := len(cl.push.buf), cap(cl.push.buf)
	cl.push.mu.Unlock()
	if cl.srv != nil && cl.srv.pushOverLimit(cl, n) {
		cl.kill()
		return
	}
	if cl.srv != nil {
		cl.srv.notePush(cl, int64(c+cap(cl.push.self)))
	}
	if !cl.push.pending.Swap(true) {
		cl.wakeForPush()
	}
}

// pushBulk is pushMsg without client-output-buffer-limit: a replica's
// snapshot payload, which Redis does not count as output either. Engine
// lock, while none of cl's commands runs.
func (cl *client) pushBulk(b []byte) {
	if len(b) == 0 {
		return
	}
	if cl.srv != nil {
		cl.srv.notePushed(cl)
	}
	cl.push.mu.Lock()
	cl.push.buf = append(cl.push.buf, b...)
	cl.push.mu.Unlock()
	if !cl.push.pending.Swap(true) {
		cl.wakeForPush()
	}
}

// flushSelfPush writes the messages the client's own command produced, after
// the command's reply. Engine lock held.
func (cl *client) flushSelfPush() {
	if len(cl.push.self) == 0 {
		return
	}
	cl.w.Buf = append(cl.w.Buf, cl.push.self...)
	if cap(cl.push.self) > 64<<10 {
		cl.push.self = nil
	} else {
		cl.push.self = cl.push.self[:0]
	}
}

// drainPush moves queued messages into the reply buffer. Owner only.
func (cl *client) drainPush() {
	if !cl.push.pending.Load() {
		return
	}
	bulk := cl.bulkOut.Load()
	cl.push.mu.Lock()
	switch {
	case bulk && cl.w.Held() == 0:
		// a replica's stream or snapshot, and nothing else waits: the
		// queued bytes become the reply buffer as they are, and the
		// reply buffer takes the next ones (no copy, no fresh buffer:
		// a full sync's 80 MB went through two fresh copies, a page
		// fault every 4 KiB)
		cl.w.Buf, cl.push.buf = cl.push.buf, cl.w.Buf[:0]
	case cap(cl.push.buf) > replyChunk && !bulk: // a burst: not kept live (resetReplyBuf)
		cl.w.Buf = append(cl.w.Buf, cl.push.buf...)
		cl.push.buf = nil
	default:
		cl.w.Buf = append(cl.w.Buf, cl.push.buf...)
		cl.push.buf = cl.push.buf[:0]
	}
	cl.pushed = true
	cl.push.pending.Store(false)
	cl.push.mu.Unlock()
}

// pushOverLimit applies client-output-buffer-limit to the messages queued for
// a client: the pubsub class for a subscriber, else the normal class.
func (s *Server) pushOverLimit(cl *client, queued int) bool {
	class := 0
	switch {
	case cl.isReplica():
		class = 1
	case cl.subscriptions() > 0:
		class = 2
	}
	return s.overLimit(cl, &s.obufLimits()[class], uint64(queued), &cl.pushSoftSince)
}

func (cl *client) subscriptions() int {
	return int(cl.push.counts[0].Load() + cl.push.counts[1].Load() + cl.push.counts[2].Load())
}

// PubSub is the Pub/Sub registry.
func (s *Server) PubSub() command.PubSubHub { return (*pubsubAPI)(s) }

type pubsubAPI Server

var subVerbs = [3][2]string{
	{"subscribe", "unsubscribe"},
	{"psubscribe", "punsubscribe"},
	{"ssubscribe", "sunsubscribe"},
}

// writeSubReply appends one (un)subscribe confirmation: a push in RESP3.
func writeSubReply(w *resp.Writer, verb string, name []byte, count int) {
	if w.Proto == 3 {
		w.PushLen(3)
	} else {
		w.ArrayLen(3)
	}
	w.BulkString(verb)
	if name == nil {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
}

// count is what a confirmation reports: channels and patterns together, shard
// channels on their own (Redis's clientSubscriptionsCount / ShardSubscriptionsCount).
func (cl *client) subCount(kind int) int {
	if kind == command.SubShard {
		return len(cl.push.subs[2])
	}
	return len(cl.push.subs[0]) + len(cl.push.subs[1])
}

func (api *pubsubAPI) Subscribe(c *command.Ctx, kind int, names [][]byte) {
	s := (*Server)(api)
	cl := s.clientOf(c.Client)
	if cl == nil {
		c.Error("ERR this client cannot subscribe")
		return
	}
	for _, n := range names {
		name := string(n)
		if cl.push.subs[kind] == nil {
			cl.push.subs[kind] = map[string]struct{}{}
		}
		if _, ok := cl.push.subs[kind][name]; !ok {
			cl.push.subs[kind][name] = struct{}{}
			s.hub.Subscribe(pubsub.Kind(kind), name, cl)
			cl.push.counts[kind].Add(1)
		}
		writeSubReply(c.W, subVerbs[kind][0], n, cl.subCount(kind))
	}
	c.Client.Subscribed = cl.subscriptions() > 0
}

func (api *pubsubAPI) Unsubscribe(c *command.Ctx, kind int, names [][]byte) {
	s := (*Server)(api)
	cl := s.clientOf(c.Client)
	if cl == nil {
		return
	}
	if len(names) == 0 {
		all := make([]string, 0, len(cl.push.subs[kind]))
		for n := range cl.push.subs[kind] {
			all = append(all, n)
		}
		sort.Strings(all)
		if len(all) == 0 {
			writeSubReply(c.W, subVerbs[kind][1], nil, cl.subCount(kind))
		}
		for _, n := range all {
			s.unsubscribe(cl, kind, n)
			writeSubReply(c.W, subVerbs[kind][1], []byte(n), cl.subCount(kind))
		}
	} else {
		for _, n := range names {
			s.unsubscribe(cl, kind, string(n))
			writeSubReply(c.W, subVerbs[kind][1], n, cl.subCount(kind))
		}
	}
	c.Client.Subscribed = cl.subscriptions() > 0
}

func (s *Server) unsubscribe(cl *client, kind int, name string) {
	if _, ok := cl.push.subs[kind][name]; !ok {
		return
	}
	delete(cl.push.subs[kind], name)
	s.hub.Unsubscribe(pubsub.Kind(kind), name, cl)
	cl.push.counts[kind].Add(-1)
	// used_memory counts the subscription as freed now, as Redis does, not
	// at the next GC: the client's and the hub's entries, and the name when
	// nobody else holds it (an estimate; the next GC's reading is exact)
	freed := int64(subEntryBytes)
	if s.hub.Count(pubsub.Kind(kind), name) == 0 {
		freed += int64(len(name)) + subNameBytes
	}
	s.mem.released += freed
}

// Estimates of a subscription's memory: its entries in the client's set and
// in the hub's subscribers, and a name's own entry in the hub.
const (
	subEntryBytes = 64
	subNameBytes  = 96
)

// unsubscribeAll drops every subscription of cl (RESET, disconnect). Engine lock held.
func (s *Server) unsubscribeAll(cl *client) {
	for kind := range cl.push.subs {
		for n := range cl.push.subs[kind] {
			s.unsubscribe(cl, kind, n)
		}
	}
	cl.Subscribed = false
}

func (api *pubsubAPI) Publish(kind int, channel, msg []byte) int {
	s := (*Server)(api)
	// the hub reads channel and msg during the call only: no copies
	return s.hub.Publish(pubsub.Kind(kind), unsafe.String(unsafe.SliceData(channel), len(channel)), msg)
}

func (api *pubsubAPI) Channels(kind int, pattern []byte) []string {
	s := (*Server)(api)
	return s.hub.Names(pubsub.Kind(kind), string(pattern), pattern == nil)
}

func (api *pubsubAPI) NumSub(kind int, name []byte) int {
	return (*Server)(api).hub.Count(pubsub.Kind(kind), string(name))
}

func (api *pubsubAPI) NumPat() int { return (*Server)(api).hub.Len(pubsub.Pattern) }

// UnsubscribeAll drops every subscription of the client, without replies (RESET).
func (api *pubsubAPI) UnsubscribeAll(c *command.Ctx) {
	s := (*Server)(api)
	if cl := s.clientOf(c.Client); cl != nil {
		s.unsubscribeAll(cl)
	}
}
