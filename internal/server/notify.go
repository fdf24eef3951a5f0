package server

import (
	"github.com/hotkv/hotkv/internal/command"
	"strconv"
	"unsafe"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/pubsub"
)

// Keyspace notifications (redis.io/docs/latest/develop/use/keyspace-notifications),
// Redis's notify.c. Events come from three places, all under the engine lock:
// the command handlers (Ctx.Notify: "set", "del", "rename_from", ...), the
// keyspace layer (keyspace.EventObserver: "new", "overwritten",
// "type_changed", "keymiss", "evicted"; keyspace.Observer.Expired: "expired",
// from lazy and active expiry alike; FieldsExpired: "hexpired" from the active
// hash field expiry) and nothing else. Each event is published through the
// same hub as PUBLISH, so channel and pattern subscribers both receive it.
//
// notify-keyspace-events is kept parsed in s.notifyFlags (an atomic, set at
// start and by CONFIG SET): with notifications off, which is the default, an
// event costs one atomic load and no allocation.

var (
	_ keyspace.EventObserver       = (*Server)(nil)
	_ keyspace.FieldExpiryObserver = (*Server)(nil)
)

// notifyClass maps an event class letter (Ctx.Notify's class) to its flag.
var notifyClass = func() (t [256]config.NotifyFlags) {
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

// watchNotifyConfig loads notify-keyspace-events and follows CONFIG SET. The
// hook reads the parsed flags rather than its argument: the printed form drops
// n, o and c when A is set, the parsed one keeps them (as Redis's does).
func (s *Server) watchNotifyConfig() {
	s.notifyFlags.Store(uint32(s.cfg.NotifyKeyspaceEvents()))
	s.cfg.OnChange("notify-keyspace-events", func(string) error {
		s.notifyFlags.Store(uint32(s.cfg.NotifyKeyspaceEvents()))
		return nil
	})
}

// Notify publishes a keyspace event (Redis's notifyKeyspaceEvent): when the
// class is enabled, "__keyspace@<db>__:<key>" receives the event name (K) and
// "__keyevent@<db>__:<event>" receives the key (E), in that order. Called
// under the engine lock; key may alias a read buffer (it is copied).
func (s *Server) Notify(db int, class byte, event string, key []byte) {
	f := config.NotifyFlags(s.notifyFlags.Load())
	if f&notifyClass[class] == 0 {
		return
	}
	s.publishEvent(f, db, event, key)
}

func (s *Server) publishEvent(f config.NotifyFlags, db int, event string, key []byte) {
	if s.hub.Len(pubsub.Channel) == 0 && s.hub.Len(pubsub.Pattern) == 0 {
		return // nobody can receive it (Redis 8.6 returns here too)
	}
	// the hub reads the channel and the message during the call only: they
	// alias this buffer, the event name and the key, without copies
	var num [20]byte
	dbs := strconv.AppendInt(num[:0], int64(db), 10)
	if f&config.NotifyKeyspace != 0 {
		ch := make([]byte, 0, len("__keyspace@__:")+len(dbs)+len(key))
		ch = append(append(append(append(ch, "__keyspace@"...), dbs...), "__:"...), key...)
		s.hub.Publish(pubsub.Channel, unsafe.String(unsafe.SliceData(ch), len(ch)), unsafe.Slice(unsafe.StringData(event), len(event)))
	}
	if f&config.NotifyKeyevent != 0 {
		ch := make([]byte, 0, len("__keyevent@__:")+len(dbs)+len(event))
		ch = append(append(append(append(ch, "__keyevent@"...), dbs...), "__:"...), event...)
		s.hub.Publish(pubsub.Channel, unsafe.String(unsafe.SliceData(ch), len(ch)), key)
	}
}

// KeyAdded implements keyspace.EventObserver: "new" (class n).
func (s *Server) KeyAdded(db int, key []byte) { s.Notify(db, 'n', "new", key) }

// KeyOverwritten implements keyspace.EventObserver: "overwritten" (class o),
// then "type_changed" (class c) when the kind changed, as Redis's setKey.
func (s *Server) KeyOverwritten(db int, key []byte, typeChanged bool) {
	s.Notify(db, 'o', "overwritten", key)
	if typeChanged {
		s.Notify(db, 'c', "type_changed", key)
	}
}

// KeyMiss implements keyspace.EventObserver: "keymiss" (class m).
func (s *Server) KeyMiss(db int, key []byte) { s.Notify(db, 'm', "keymiss", key) }

// KeyEvicted implements keyspace.EventObserver: "evicted" (class e).
func (s *Server) KeyEvicted(db int, key []byte) {
	s.Notify(db, 'e', "evicted", key)
	s.propDeletion(db, key, "lazyfree-lazy-eviction")
}

// FieldsExpired implements keyspace.FieldExpiryObserver: the active expiry of
// hash fields announces "hexpired", then "del" when the hash was left empty
// (Redis's hashTypeActiveExpire).
func (s *Server) FieldsExpired(db int, key []byte, fields [][]byte, keyDeleted bool) {
	s.Notify(db, 'h', "hexpired", key)
	if keyDeleted {
		s.Notify(db, 'g', "del", key)
	}
	// each field goes out as its own HDEL (propagateHashFieldDeletion), outside
	// any execution unit as active expiry's DELs
	if len(s.prop.targets) > 0 {
		for _, f := range fields {
			s.prop.buf.Add(db, command.PropAll, wordHDel, key, f)
			if s.prop.nesting == 0 {
				s.propFlush()
			}
		}
	}
}
