// Package pubsub is the registry of Pub/Sub subscriptions: channels, patterns
// and shard channels, and the fan-out of a published message to the
// subscribers (docs/ARCHITECTURE.md §2). It is not part of the replicated state.
//
// A Hub is not safe for concurrent use: the server calls it under the engine's
// serialisation point (SUBSCRIBE, PUBLISH, keyspace events, disconnects are all
// execution units or run under the same lock).
package pubsub

import (
	"sort"

	"github.com/hotkv/hotkv/internal/glob"
)

// Subscriber is a client that receives messages. Deliver must not block: it
// buffers the message for the client's connection (and may drop the client
// if its buffer is over its limit). The Message and its encodings are valid
// only during the call (the Hub reuses them): Deliver copies what it keeps.
type Subscriber interface {
	comparable
	Deliver(m *Message)
}

// Kind is the kind of a subscription.
type Kind uint8

// Subscription kinds.
const (
	Channel Kind = iota
	Pattern
	Shard
)

// Message is one published message, encoded for each protocol on first use
// (every subscriber of a publish shares the encoding).
type Message struct {
	Kind    Kind
	Pattern string // for pmessage
	Channel string
	Payload []byte

	enc     [2][]byte // RESP2 array, RESP3 push
	encoded [2]bool
}

// Encode returns the message as RESP2 (proto 2) or RESP3 push (proto 3):
// ["message", channel, payload], ["pmessage", pattern, channel, payload] or
// ["smessage", channel, payload].
func (m *Message) Encode(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.encoded[i] {
		return m.enc[i]
	}
	prefix := byte('*')
	if proto == 3 {
		prefix = '>'
	}
	b := m.enc[i][:0] // a Hub's message reuses its buffers from publish to publish
	switch m.Kind {
	case Pattern:
		b = appendHeader(b, prefix, 4)
		b = appendBulk(b, "pmessage")
		b = appendBulk(b, m.Pattern)
	case Shard:
		b = appendHeader(b, prefix, 3)
		b = appendBulk(b, "smessage")
	default:
		b = appendHeader(b, prefix, 3)
		b = appendBulk(b, "message")
	}
	b = appendBulk(b, m.Channel)
	b = append(b, '$')
	b = appendInt(b, len(m.Payload))
	b = append(b, '\r', '\n')
	b = append(b, m.Payload...)
	b = append(b, '\r', '\n')
	m.enc[i], m.encoded[i] = b, true
	return b
}

func appendHeader(b []byte, prefix byte, n int) []byte {
	b = append(b, prefix)
	b = appendInt(b, n)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = appendInt(b, len(s))
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendInt(b []byte, n int) []byte {
	if n == 0 {
		return append(b, '0')
	}
	var tmp [20]byte
	i := len(tmp)
	for n > 0 {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, tmp[i:]...)
}

// Hub holds every subscription of a server.
type Hub[S Subscriber] struct {
	subs     [3]map[string]*subscribers[S] // by kind: name -> subscribers
	patterns []string                      // the patterns with subscribers, sorted
	msg      Message                       // the message being published, reused
}

// subscribers keeps subscription order, so that delivery order is defined.
type subscribers[S Subscriber] struct {
	order []S
	index map[S]int
}

// New returns an empty hub.
func New[S Subscriber]() *Hub[S] {
	h := &Hub[S]{}
	for i := range h.subs {
		h.subs[i] = map[string]*subscribers[S]{}
	}
	return h
}

// Subscribe adds s to name's subscribers; false if it was already there.
func (h *Hub[S]) Subscribe(k Kind, name string, s S) bool {
	set := h.subs[k][name]
	if set == nil {
		set = &subscribers[S]{index: map[S]int{}}
		h.subs[k][name] = set
		if k == Pattern {
			i := sort.SearchStrings(h.patterns, name)
			h.patterns = append(h.patterns, "")
			copy(h.patterns[i+1:], h.patterns[i:])
			h.patterns[i] = name
		}
	}
	if _, ok := set.index[s]; ok {
		return false
	}
	set.index[s] = len(set.order)
	set.order = append(set.order, s)
	return true
}

// Unsubscribe removes s from name's subscribers; false if it was not there.
func (h *Hub[S]) Unsubscribe(k Kind, name string, s S) bool {
	set := h.subs[k][name]
	if set == nil {
		return false
	}
	i, ok := set.index[s]
	if !ok {
		return false
	}
	delete(set.index, s)
	copy(set.order[i:], set.order[i+1:])
	var zero S
	set.order[len(set.order)-1] = zero
	set.order = set.order[:len(set.order)-1]
	for j := i; j < len(set.order); j++ {
		set.index[set.order[j]] = j
	}
	if len(set.order) == 0 {
		delete(h.subs[k], name)
		if k == Pattern {
			i := sort.SearchStrings(h.patterns, name)
			h.patterns = append(h.patterns[:i], h.patterns[i+1:]...)
		}
	}
	return true
}

// Publish delivers payload to the subscribers of channel (Channel kind: and
// to those of every matching pattern; Shard kind: to the shard channel's) and
// returns how many received it, as PUBLISH replies. channel and payload are
// read during the call only (they may alias a command's arguments); the
// message given to Deliver is the Hub's own, reused by the next Publish, so a
// publish allocates nothing once its buffers have grown. Publish must not be
// called from Deliver.
func (h *Hub[S]) Publish(k Kind, channel string, payload []byte) int {
	n := 0
	m := &h.msg
	if set := h.subs[k][channel]; set != nil {
		m.reset(k, "", channel, payload)
		for _, s := range set.order {
			s.Deliver(m)
			n++
		}
	}
	if k != Channel || len(h.subs[Pattern]) == 0 {
		m.reset(0, "", "", nil)
		return n
	}
	for _, pat := range h.patterns {
		if !glob.MatchString(pat, channel, false) {
			continue
		}
		m.reset(Pattern, pat, channel, payload)
		for _, s := range h.subs[Pattern][pat].order {
			s.Deliver(m)
			n++
		}
	}
	m.reset(0, "", "", nil)
	return n
}

// reset makes m a new message, keeping its encoding buffers.
func (m *Message) reset(k Kind, pattern, channel string, payload []byte) {
	m.Kind, m.Pattern, m.Channel, m.Payload = k, pattern, channel, payload
	m.encoded = [2]bool{}
	for i := range m.enc {
		if cap(m.enc[i]) > 64<<10 { // don't keep a huge message's buffer
			m.enc[i] = nil
		}
	}
}

// Names returns the channels (or shard channels) with at least one subscriber
// that match pattern (all when pattern is empty), sorted (PUBSUB CHANNELS).
func (h *Hub[S]) Names(k Kind, pattern string, all bool) []string {
	var out []string
	for name := range h.subs[k] {
		if all || glob.MatchString(pattern, name, false) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Count is the number of subscribers of name (PUBSUB NUMSUB).
func (h *Hub[S]) Count(k Kind, name string) int {
	if set := h.subs[k][name]; set != nil {
		return len(set.order)
	}
	return 0
}

// Len is the number of distinct names of kind k with subscribers (PUBSUB
// NUMPAT for patterns, INFO pubsub_channels).
func (h *Hub[S]) Len(k Kind) int { return len(h.subs[k]) }
