package server

import (
	"sort"
	"strconv"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// Client-side caching (Redis's tracking.c). A tracking client in the default
// mode has the keys of its read-only commands remembered in the tracking
// table (key -> client IDs); any change to such a key (every keyspace
// Modified: writes, lazy and active expiry, FLUSH*) sends the clients that
// read it one invalidation and forgets the key. A BCAST client instead
// registers key prefixes; the keys changed under a prefix are collected and
// announced together.
//
// Delivery: a RESP3 client gets the push >2 "invalidate" [keys]; with
// REDIRECT the message goes to the redirection client instead, as that push
// when it speaks RESP3, or as a Pub/Sub message on __redis__:invalidate whose
// payload is the array of keys when it is a RESP2 subscriber (anything else
// gets nothing, as in Redis). FLUSHDB/FLUSHALL send a null instead of keys.
//
// When. Redis sends an invalidation at once, except for keys the running
// client invalidates for itself: those wait until its reply has been written
// (server.tracking_pending_keys), and after a whole EXEC or script. BCAST keys
// are collected and sent when the event loop goes to sleep; HotKV sends them
// at the end of each top-level execution unit (a command, an EXEC, a script),
// and at the end of each cron tick for the keys the active expiry cycle
// deleted, so a pipeline of N writes gives N messages where Redis may give
// one per socket read (the keys of one execution unit always share one).
//
// Everything here runs under the engine's serialisation point. Like Redis,
// the table holds client IDs and forgets them lazily: entries of a client
// that turned tracking off or went away stay until the key changes, a flush
// empties the table, or tracking-table-max-keys evicts them.

// tracker is the server's tracking state.
type tracker struct {
	keys     *keyspace.Dict[trackedKey] // Redis's TrackingTable
	items    int                        // (key, client) pairs: tracking_total_items
	prefixes []*bcastPrefix             // Redis's PrefixTable, sorted by prefix
	clients  int                        // tracking_clients

	// cur is the client whose command is being dispatched (Redis's
	// server.current_client); executing is true while it runs.
	cur       *client
	executing bool
	// pending are cur's own invalidations, sent after its reply (a nil entry
	// is a flush)
	pending  [][]byte
	bcastDue bool // some prefix has collected keys
	// flushed: a flush notification went out for the running command (the
	// keyspace reports FLUSHALL database by database)
	flushed bool
	// expiredDB/expiredKey: the key the keyspace just reported expired; its
	// own deletion follows as a Modified call, which must not count twice
	expiredSet bool
	expiredDB  int
	expiredKey string
	// effort is Redis's timeout_counter in trackingLimitUsedSlots
	effort int
	// maxKeys is tracking-table-max-keys (0: no limit)
	maxKeys func() int64
}

// trackedKey is the set of clients that may cache a key, in the order they read it.
type trackedKey struct{ ids []int64 }

// bcastPrefix is one registered prefix (Redis's bcastState): the keys changed
// under it since the last broadcast, each with the client that changed it
// last (nil: none, e.g. expiry), and the BCAST clients registered for it.
type bcastPrefix struct {
	prefix  string
	keys    map[string]*client
	clients []*client // by ID
}

func newTracker(seed uint64, maxKeys func() int64) tracker {
	return tracker{keys: keyspace.NewDict[trackedKey](seed ^ 0x747261636b), maxKeys: maxKeys}
}

// Tracking is the registry CLIENT TRACKING uses.
func (s *Server) Tracking() command.Tracking { return (*trackingAPI)(s) }

type trackingAPI Server

// ClientExists implements REDIRECT's check (lookupClientByID).
func (api *trackingAPI) ClientExists(id int64) bool { return (*Server)(api).lookupClient(id) != nil }

// Enable is Redis's enableTracking.
func (api *trackingAPI) Enable(c *command.Client, redirect int64, bcast, optIn, optOut, noLoop bool, prefixes [][]byte) {
	s := (*Server)(api)
	cl := s.clientOf(c)
	if cl == nil {
		return
	}
	t := &cl.Tracking
	if !t.On {
		s.trk.clients++
	}
	t.On = true
	t.BrokenRedir, t.BCast, t.OptIn, t.OptOut, t.NoLoop = false, false, false, false, false
	t.Redirect = redirect
	if bcast {
		t.BCast = true
		if len(prefixes) == 0 {
			s.trackAddPrefix(cl, "")
		}
		for _, p := range prefixes {
			s.trackAddPrefix(cl, string(p))
		}
	}
	t.OptIn, t.OptOut, t.NoLoop = optIn, optOut, noLoop
}

// Disable is Redis's disableTracking.
func (api *trackingAPI) Disable(c *command.Client) {
	s := (*Server)(api)
	if cl := s.clientOf(c); cl != nil {
		s.trackDisable(cl)
	}
}

// trackDisable turns tracking off for cl (CLIENT TRACKING OFF, RESET,
// disconnect). Its entries in the table are left to be forgotten lazily.
func (s *Server) trackDisable(cl *client) {
	t := &cl.Tracking
	if t.BCast {
		for _, p := range t.Prefixes {
			i, ok := s.findPrefix(p)
			if !ok {
				continue
			}
			bp := s.trk.prefixes[i]
			bp.clients = removeClient(bp.clients, cl)
			if len(bp.clients) == 0 {
				s.trk.prefixes = append(s.trk.prefixes[:i], s.trk.prefixes[i+1:]...)
			}
		}
		t.Prefixes = nil
	}
	if t.On {
		s.trk.clients--
		redirect := t.Redirect
		*t = command.TrackingState{Redirect: redirect}
	}
}

func removeClient(list []*client, cl *client) []*client {
	for i, x := range list {
		if x == cl {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// findPrefix finds p in the sorted prefix table.
func (s *Server) findPrefix(p string) (int, bool) {
	i := sort.Search(len(s.trk.prefixes), func(i int) bool { return s.trk.prefixes[i].prefix >= p })
	return i, i < len(s.trk.prefixes) && s.trk.prefixes[i].prefix == p
}

// trackAddPrefix is enableBcastTrackingForPrefix: cl receives the keys
// changed under p (a no-op when it already does).
func (s *Server) trackAddPrefix(cl *client, p string) {
	i, ok := s.findPrefix(p)
	if !ok {
		bp := &bcastPrefix{prefix: p, keys: map[string]*client{}}
		s.trk.prefixes = append(s.trk.prefixes, nil)
		copy(s.trk.prefixes[i+1:], s.trk.prefixes[i:])
		s.trk.prefixes[i] = bp
	}
	bp := s.trk.prefixes[i]
	j := sort.Search(len(bp.clients), func(j int) bool { return bp.clients[j].ID >= cl.ID })
	if j < len(bp.clients) && bp.clients[j] == cl {
		return
	}
	bp.clients = append(bp.clients, nil)
	copy(bp.clients[j+1:], bp.clients[j:])
	bp.clients[j] = cl
	t := &cl.Tracking
	k := sort.SearchStrings(t.Prefixes, p)
	t.Prefixes = append(t.Prefixes, "")
	copy(t.Prefixes[k+1:], t.Prefixes[k:])
	t.Prefixes[k] = p
}

// lookupClient is Redis's lookupClientByID.
func (s *Server) lookupClient(id int64) *client {
	s.mu.Lock()
	cl := s.clients[id]
	s.mu.Unlock()
	return cl
}

// trackActive reports whether a key change can concern anyone.
func (s *Server) trackActive() bool { return s.trk.keys.Len() > 0 || len(s.trk.prefixes) > 0 }

// trackRemember is trackingRememberKeys: after a read-only command ran for
// the client being dispatched (directly, in an EXEC or in a script), its keys
// are remembered for that client, unless OPTIN/OPTOUT and CLIENT CACHING say
// otherwise. EVAL_RO, EVALSHA_RO and FCALL_RO are left out: the commands the
// script runs are tracked instead.
func (s *Server) trackRemember(spec *command.Spec, argv [][]byte) {
	cl := s.trk.cur
	if cl == nil || spec.Flags&command.ReadOnly == 0 {
		return
	}
	t := &cl.Tracking
	if !t.On || t.BCast || spec.Flags&command.PubSub != 0 {
		return
	}
	if (t.OptIn && !t.Caching) || (t.OptOut && t.Caching) {
		return
	}
	if spec.Flags&command.RunsCommands != 0 {
		return // EVAL_RO and friends: the commands they run are remembered
	}
	for _, i := range spec.KeyIndexes(argv) {
		e, _ := s.trk.keys.Upsert(argv[i])
		if !containsID(e.ids, cl.ID) {
			e.ids = append(e.ids, cl.ID)
			s.trk.items++
		}
	}
}

// trackModified is trackingInvalidateKey for a change to key (Redis's
// signalModifiedKey). by is the client that changed it (nil: expiry, or a
// script's client), for BCAST's NOLOOP.
func (s *Server) trackModified(db int, key []byte) {
	if !s.trackActive() {
		return
	}
	if s.trk.expiredSet && s.trk.expiredDB == db && s.trk.expiredKey == string(key) {
		s.trk.expiredSet = false
		if present, _ := s.ks.DBs[db].Present(key); !present {
			return // the expiry's own deletion, already handled by trackExpired
		}
	}
	by := s.trk.cur
	if s.scripts.depth > 0 {
		by = nil // the script's client changed it (NOLOOP does not apply)
	}
	s.trackInvalidate(by, key, true)
}

// trackExpired handles the deletion of an expired key (lazy or active): an
// invalidation that no client caused.
func (s *Server) trackExpired(db int, key []byte) {
	if !s.trackActive() {
		return
	}
	s.trackInvalidate(nil, key, true)
	s.trk.expiredSet, s.trk.expiredDB, s.trk.expiredKey = true, db, string(key)
}

// trackInvalidate is trackingInvalidateKey. bcast is false for evictions
// from the table, which are no change to announce.
func (s *Server) trackInvalidate(by *client, key []byte, bcast bool) {
	if bcast {
		for _, p := range s.trk.prefixes {
			if len(p.prefix) > len(key) || string(key[:len(p.prefix)]) != p.prefix {
				continue
			}
			p.keys[string(key)] = by
			s.trk.bcastDue = true
		}
	}
	e, ok := s.trk.keys.Get(key)
	if !ok {
		return
	}
	ids := e.ids
	s.trk.keys.Delete(key)
	s.trk.items -= len(ids)
	var msg []byte
	for _, id := range ids {
		target := s.lookupClient(id)
		if target == nil || !target.Tracking.On || target.Tracking.BCast {
			continue // gone, or no longer in the mode that read the key
		}
		if target.Tracking.NoLoop && target == s.trk.cur {
			continue
		}
		if target == s.trk.cur && s.trk.executing {
			s.trk.pending = append(s.trk.pending, append([]byte{}, key...))
			continue
		}
		if msg == nil {
			msg = appendKeysArray(nil, key)
		}
		s.sendTracking(target, msg)
	}
}

// appendKeysArray appends a RESP array of one key.
func appendKeysArray(b, key []byte) []byte {
	b = append(b, "*1\r\n$"...)
	b = strconv.AppendInt(b, int64(len(key)), 10)
	b = append(b, "\r\n"...)
	b = append(b, key...)
	return append(b, "\r\n"...)
}

// nullFor is Redis's shared.null for a protocol: what a flush invalidates.
func nullFor(proto int) []byte {
	if proto > 2 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

const invalidateChannel = "__redis__:invalidate"

// sendTracking is sendTrackingMessage: payload (the RESP array of keys, or a
// null) goes to c, or to its redirection client.
func (s *Server) sendTracking(c *client, payload []byte) {
	target := c
	redirected := false
	if c.Tracking.Redirect != 0 {
		r := s.lookupClient(c.Tracking.Redirect)
		if r == nil {
			c.Tracking.BrokenRedir = true
			if c.Proto > 2 {
				b := append([]byte{}, ">2\r\n$21\r\ntracking-redir-broken\r\n:"...)
				b = strconv.AppendInt(b, c.Tracking.Redirect, 10)
				c.pushMsg(append(b, "\r\n"...))
			}
			return
		}
		target, redirected = r, true
	}
	var b []byte
	switch {
	case target.Proto > 2:
		b = append(b, ">2\r\n$10\r\ninvalidate\r\n"...)
	case redirected && target.subscriptions() > 0:
		b = append(b, "*3\r\n$7\r\nmessage\r\n$20\r\n"+invalidateChannel+"\r\n"...)
	default:
		return // RESP2 without a subscribed redirection client: nowhere to send it
	}
	target.pushMsg(append(b, payload...))
}

// trackFlushing is trackingInvalidateKeysOnFlush (FLUSHDB, FLUSHALL): every
// tracking client gets a null (the running one after its reply), and the
// table is emptied. The keyspace reports FLUSHALL database by database: the
// notification goes out once per command.
func (s *Server) trackFlushing() {
	if s.trk.flushed {
		return
	}
	s.trk.flushed = true
	if s.trk.clients > 0 {
		for _, cl := range s.sortedClients() {
			if !cl.Tracking.On {
				continue
			}
			if cl == s.trk.cur {
				s.trk.pending = append(s.trk.pending, nil)
				continue
			}
			s.sendTracking(cl, nullFor(cl.Proto))
		}
	}
	s.trk.keys.Clear()
	s.trk.items = 0
}

// trackBeginCommand is called before every command runs (also inside EXEC
// and scripts).
func (s *Server) trackBeginCommand() { s.trk.flushed = false }

// trackBeforeExec is called by process before cl's command runs (Redis's
// processCommand): it keeps the table within tracking-table-max-keys.
func (s *Server) trackBeforeExec(cl *client) {
	s.trk.cur = cl
	if s.trk.clients > 0 {
		s.trackLimit()
	}
	s.trk.executing = true
}

// trackAfterCommand is called by process after cl's command, its reply
// written (also when the command was refused or queued by MULTI): cl's own
// invalidations follow its reply (trackingHandlePendingKeyInvalidations),
// then the BCAST keys of the execution unit go out; CLIENT CACHING lasts
// for one command (or one transaction), as Redis's resetClient says.
func (s *Server) trackAfterCommand(cl *client, spec *command.Spec) {
	s.trk.executing = false
	if len(s.trk.pending) > 0 || s.trk.bcastDue {
		// messages for cl go straight after its reply, as its own output
		cl.push.running = true
		for _, key := range s.trk.pending {
			if key == nil {
				s.sendTracking(cl, nullFor(cl.Proto))
			} else {
				s.sendTracking(cl, appendKeysArray(nil, key))
			}
		}
		s.trk.pending = s.trk.pending[:0]
		s.trackBroadcast()
		cl.push.running = false
	}
	s.trk.cur = nil
	if cl.Tracking.Caching && !cl.InMulti() && (spec == nil || spec.Parent() == nil || spec.Parent().Flags&command.KeepsCaching == 0) {
		cl.Tracking.Caching = false
	}
}

// trackCron runs at the end of each cron tick: the keys the active expiry
// cycle deleted are broadcast, and the table is brought back within its
// limit even when no command runs.
func (s *Server) trackCron() {
	if s.trk.clients > 0 {
		s.trackLimit()
	}
	s.trackBroadcast()
}

// trackBroadcast is trackingBroadcastInvalidationMessages: for each prefix
// with changed keys, every client registered for it gets the keys (sorted),
// without the ones it changed itself when it is in NOLOOP mode.
func (s *Server) trackBroadcast() {
	if !s.trk.bcastDue {
		return
	}
	s.trk.bcastDue = false
	for _, p := range s.trk.prefixes {
		if len(p.keys) == 0 {
			continue
		}
		keys := make([]string, 0, len(p.keys))
		for k := range p.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var all []byte
		for _, cl := range p.clients {
			if cl.Tracking.NoLoop {
				if adhoc := buildKeys(keys, p.keys, cl); adhoc != nil {
					s.sendTracking(cl, adhoc)
				}
				continue
			}
			if all == nil {
				all = buildKeys(keys, p.keys, nil)
			}
			s.sendTracking(cl, all)
		}
		clear(p.keys)
	}
}

// buildKeys is trackingBuildBroadcastReply: the RESP array of keys, leaving
// out those last changed by except (nil when that leaves none).
func buildKeys(keys []string, by map[string]*client, except *client) []byte {
	n := 0
	for _, k := range keys {
		if except == nil || by[k] != except {
			n++
		}
	}
	if n == 0 && except != nil {
		return nil
	}
	b := append([]byte{'*'}, strconv.Itoa(n)...)
	b = append(b, "\r\n"...)
	for _, k := range keys {
		if except != nil && by[k] == except {
			continue
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(k)), 10)
		b = append(b, "\r\n"...)
		b = append(b, k...)
		b = append(b, "\r\n"...)
	}
	return b
}

// trackLimit is trackingLimitUsedSlots: over tracking-table-max-keys, random
// keys are evicted from the table (their clients get an invalidation, as if
// the key changed), up to 100 per call, 100 more for each call in a row
// that could not get back under the limit.
func (s *Server) trackLimit() {
	limit := s.trk.maxKeys()
	if limit == 0 {
		return
	}
	if int64(s.trk.keys.Len()) <= limit {
		s.trk.effort = 0
		return
	}
	for effort := 100 * (s.trk.effort + 1); effort > 0; effort-- {
		k, _, ok := s.trk.keys.Random(s.eng.Rand)
		if !ok {
			break
		}
		s.trackInvalidate(nil, []byte(k), false)
		if int64(s.trk.keys.Len()) <= limit {
			s.trk.effort = 0
			return
		}
	}
	s.trk.effort++
}

// trackingStats are INFO's tracking_total_keys, _items and _prefixes.
func (s *Server) trackingStats() (keys, items, prefixes int) {
	return s.trk.keys.Len(), s.trk.items, len(s.trk.prefixes)
}

// trackingFlagChars are CLIENT LIST's tracking flags: t, R, B.
func trackingFlagChars(b []byte, t *command.TrackingState) []byte {
	if t.On {
		b = append(b, 't')
	}
	if t.BrokenRedir {
		b = append(b, 'R')
	}
	if t.BCast {
		b = append(b, 'B')
	}
	return b
}
