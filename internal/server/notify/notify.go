// Package notify is keyspace notifications
// (redis.io/docs/latest/develop/use/keyspace-notifications), Redis's
// notify.c: a feature that observes the execution path (docs/ARCHITECTURE.md
// §8, decision 0037). Events come from three places, all under the engine
// lock: the command handlers (Ctx.Notify: "set", "del", "rename_from", ...),
// the keyspace layer (keyspace.EventObserver: "new", "overwritten",
// "type_changed", "keymiss", "evicted"; keyspace.Observer.Expired: "expired",
// from lazy and active expiry alike; FieldsExpired: "hexpired" from the
// active hash field expiry) and nothing else. Each event is published through
// the same hub as PUBLISH, so channel and pattern subscribers both receive it.
//
// notify-keyspace-events is kept parsed in an atomic (set at start and by
// CONFIG SET): with notifications off, which is the default, an event costs
// one atomic load and no allocation.
package notify

import (
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/pubsub"
)

// Publisher is where events go: the server's Pub/Sub hub.
type Publisher interface {
	// Len is how many channels (or patterns) have subscribers.
	Len(k pubsub.Kind) int
	// Publish delivers payload to channel's subscribers; it reads channel
	// and payload during the call only.
	Publish(k pubsub.Kind, channel string, payload []byte) int
}

// Notifier publishes keyspace events. It is the keyspace's
// keyspace.EventObserver.
type Notifier struct {
	flags atomic.Uint32 // notify-keyspace-events, parsed
	pub   Publisher
	// Evicted, when set, is told of each evicted key after its event (the
	// server propagates the deletion).
	Evicted func(db int, key []byte)
}

var _ keyspace.EventObserver = (*Notifier)(nil)

// New returns a Notifier that follows cfg's notify-keyspace-events and
// publishes to pub. The hook reads the parsed flags rather than its argument:
// the printed form drops n, o and c when A is set, the parsed one keeps them
// (as Redis's does).
func New(cfg *config.Config, pub Publisher) *Notifier {
	n := &Notifier{pub: pub}
	n.flags.Store(uint32(cfg.NotifyKeyspaceEvents()))
	cfg.OnChange("notify-keyspace-events", func(string) error {
		n.flags.Store(uint32(cfg.NotifyKeyspaceEvents()))
		return nil
	})
	return n
}

// class maps an event class letter (Ctx.Notify's class) to its flag.
var class = func() (t [256]config.NotifyFlags) {
	t['g'] = config.NotifyGeneric
	t['$'] = config.NotifyString
	t['l'] = config.NotifyList
	t['s'] = config.NotifySet
	t['h'] = config.NotifyHash
	t['z'] = config.NotifyZset
	t['x'] = config.NotifyExpired
	t['e'] = config.NotifyEvicted
	t['t'] = config.NotifyStream
	t['m'] = config.NotifyKeyMiss
	t['d'] = config.NotifyModule
	t['n'] = config.NotifyNew
	t['o'] = config.NotifyOverwritten
	t['c'] = config.NotifyTypeChanged
	return t
}()

// Notify publishes a keyspace event (Redis's notifyKeyspaceEvent): when the
// class is enabled, "__keyspace@<db>__:<key>" receives the event name (K) and
// "__keyevent@<db>__:<event>" receives the key (E), in that order. Called
// under the engine lock; key may alias a read buffer (it is not kept).
func (n *Notifier) Notify(db int, cls byte, event string, key []byte) {
	if config.NotifyFlags(n.flags.Load())&class[cls] != 0 { // inlined: off is the default
		n.publish(db, event, key)
	}
}

func (n *Notifier) publish(db int, event string, key []byte) {
	f := config.NotifyFlags(n.flags.Load())
	if n.pub.Len(pubsub.Channel) == 0 && n.pub.Len(pubsub.Pattern) == 0 {
		return // nobody can receive it (Redis 8.6 returns here too)
	}
	// the hub reads the channel and the message during the call only: they
	// alias this buffer, the event name and the key, without copies
	var num [20]byte
	dbs := strconv.AppendInt(num[:0], int64(db), 10)
	if f&config.NotifyKeyspace != 0 {
		ch := make([]byte, 0, len("__keyspace@__:")+len(dbs)+len(key))
		ch = append(append(append(append(ch, "__keyspace@"...), dbs...), "__:"...), key...)
		n.pub.Publish(pubsub.Channel, unsafe.String(unsafe.SliceData(ch), len(ch)), unsafe.Slice(unsafe.StringData(event), len(event)))
	}
	if f&config.NotifyKeyevent != 0 {
		ch := make([]byte, 0, len("__keyevent@__:")+len(dbs)+len(event))
		ch = append(append(append(append(ch, "__keyevent@"...), dbs...), "__:"...), event...)
		n.pub.Publish(pubsub.Channel, unsafe.String(unsafe.SliceData(ch), len(ch)), key)
	}
}

// KeyAdded is keyspace.EventObserver's "new" (class n).
func (n *Notifier) KeyAdded(db int, key []byte) { n.Notify(db, 'n', "new", key) }

// KeyOverwritten is keyspace.EventObserver's "overwritten" (class o), then
// "type_changed" (class c) when the kind changed, as Redis's setKey.
func (n *Notifier) KeyOverwritten(db int, key []byte, typeChanged bool) {
	n.Notify(db, 'o', "overwritten", key)
	if typeChanged {
		n.Notify(db, 'c', "type_changed", key)
	}
}

// KeyMiss is keyspace.EventObserver's "keymiss" (class m).
func (n *Notifier) KeyMiss(db int, key []byte) { n.Notify(db, 'm', "keymiss", key) }

// KeyEvicted is keyspace.EventObserver's "evicted" (class e), then Evicted.
func (n *Notifier) KeyEvicted(db int, key []byte) {
	n.Notify(db, 'e', "evicted", key)
	if n.Evicted != nil {
		n.Evicted(db, key)
	}
}
