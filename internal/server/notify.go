package server

import (
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// Keyspace notifications are internal/server/notify: its Notifier is the
// keyspace's event observer (keyspace.EventObserver, set in New). The server
// propagates the deletions eviction and hash field expiry cause (below).

var _ keyspace.FieldExpiryObserver = (*Server)(nil)

// Notify publishes a keyspace event (command.Server; notify.Notifier.Notify).
func (s *Server) Notify(db int, class byte, event string, key []byte) {
	s.notifier.Notify(db, class, event, key)
}

// keyEvicted propagates an evicted key's deletion (notify.Notifier.Evicted).
func (s *Server) keyEvicted(db int, key []byte) {
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
