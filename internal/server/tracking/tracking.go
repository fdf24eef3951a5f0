// Package tracking is client-side caching (Redis's tracking.c), a feature
// that observes the execution path (docs/ARCHITECTURE.md §8, decision 0037).
// A tracking client in the default mode has the keys of its read-only
// commands remembered in the tracking table (key -> client IDs); any change
// to such a key (every keyspace Modified: writes, lazy and active expiry,
// FLUSH*) sends the clients that read it one invalidation and forgets the
// key. A BCAST client instead registers key prefixes; the keys changed under
// a prefix are collected and announced together.
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
package tracking

import (
	"sort"
	"strconv"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// Client is a connection as tracking sees it.
type Client interface {
	// Base is its command-visible state: ID, Proto, Tracking.
	Base() *command.Client
	// Push queues an out-of-band message for it.
	Push(msg []byte)
	// HasSubscriptions reports whether it has Pub/Sub subscriptions.
	HasSubscriptions() bool
}

// Host is what the tracker needs of the server.
type Host interface {
	// Client is lookupClientByID: nil when there is no such client.
	Client(id int64) Client
	// Clients are every client, in ID order.
	Clients() []Client
	// Present reports whether key exists in database db.
	Present(db int, key []byte) bool
	// InScript reports whether a script is running (its commands' changes
	// are nobody's, for NOLOOP).
	InScript() bool
	// Rand draws from the engine's random source (evictions from the table).
	Rand() uint64
}

// Tracker is the server's tracking state.
type Tracker struct {
	host     Host
	keys     *keyspace.Dict[trackedKey] // Redis's TrackingTable
	items    int                        // (key, client) pairs: tracking_total_items
	prefixes []*bcastPrefix             // Redis's PrefixTable, sorted by prefix
	clients  int                        // tracking_clients

	// cur is the client whose command is being dispatched (Redis's
	// server.current_client) and curBase its state; executing is true
	// while it runs.
	cur       Client
	curBase   *command.Client
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
	keys    map[string]Client
	clients []Client // by ID
}

// New returns an empty tracker; maxKeys reads tracking-table-max-keys.
func New(host Host, seed uint64, maxKeys func() int64) *Tracker {
	return &Tracker{host: host, keys: keyspace.NewDict[trackedKey](seed ^ 0x747261636b), maxKeys: maxKeys}
}

// Enable is Redis's enableTracking (CLIENT TRACKING ON).
func (t *Tracker) Enable(cl Client, redirect int64, bcast, optIn, optOut, noLoop bool, prefixes [][]byte) {
	st := &cl.Base().Tracking
	if !st.On {
		t.clients++
	}
	st.On = true
	st.BrokenRedir, st.BCast, st.OptIn, st.OptOut, st.NoLoop = false, false, false, false, false
	st.Redirect = redirect
	if bcast {
		st.BCast = true
		if len(prefixes) == 0 {
			t.addPrefix(cl, "")
		}
		for _, p := range prefixes {
			t.addPrefix(cl, string(p))
		}
	}
	st.OptIn, st.OptOut, st.NoLoop = optIn, optOut, noLoop
}

// Disable is Redis's disableTracking: tracking off for cl (CLIENT TRACKING
// OFF, RESET, disconnect). Its entries in the table are left to be
// forgotten lazily.
func (t *Tracker) Disable(cl Client) {
	st := &cl.Base().Tracking
	if st.BCast {
		for _, p := range st.Prefixes {
			i, ok := t.findPrefix(p)
			if !ok {
				continue
			}
			bp := t.prefixes[i]
			bp.clients = removeClient(bp.clients, cl)
			if len(bp.clients) == 0 {
				t.prefixes = append(t.prefixes[:i], t.prefixes[i+1:]...)
			}
		}
		st.Prefixes = nil
	}
	if st.On {
		t.clients--
		redirect := st.Redirect
		*st = command.TrackingState{Redirect: redirect}
	}
}

func removeClient(list []Client, cl Client) []Client {
	for i, x := range list {
		if x == cl {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// findPrefix finds p in the sorted prefix table.
func (t *Tracker) findPrefix(p string) (int, bool) {
	i := sort.Search(len(t.prefixes), func(i int) bool { return t.prefixes[i].prefix >= p })
	return i, i < len(t.prefixes) && t.prefixes[i].prefix == p
}

// addPrefix is enableBcastTrackingForPrefix: cl receives the keys changed
// under p (a no-op when it already does).
func (t *Tracker) addPrefix(cl Client, p string) {
	i, ok := t.findPrefix(p)
	if !ok {
		bp := &bcastPrefix{prefix: p, keys: map[string]Client{}}
		t.prefixes = append(t.prefixes, nil)
		copy(t.prefixes[i+1:], t.prefixes[i:])
		t.prefixes[i] = bp
	}
	bp := t.prefixes[i]
	id := cl.Base().ID
	j := sort.Search(len(bp.clients), func(j int) bool { return bp.clients[j].Base().ID >= id })
	if j < len(bp.clients) && bp.clients[j] == cl {
		return
	}
	bp.clients = append(bp.clients, nil)
	copy(bp.clients[j+1:], bp.clients[j:])
	bp.clients[j] = cl
	st := &cl.Base().Tracking
	k := sort.SearchStrings(st.Prefixes, p)
	st.Prefixes = append(st.Prefixes, "")
	copy(st.Prefixes[k+1:], st.Prefixes[k:])
	st.Prefixes[k] = p
}

// active reports whether a key change can concern anyone.
func (t *Tracker) active() bool { return t.keys.Len() > 0 || len(t.prefixes) > 0 }

// Remember is trackingRememberKeys: after a read-only command ran for the
// client being dispatched (directly, in an EXEC or in a script), its keys
// are remembered for that client, unless OPTIN/OPTOUT and CLIENT CACHING say
// otherwise. EVAL_RO, EVALSHA_RO and FCALL_RO are left out: the commands the
// script runs are tracked instead.
func (t *Tracker) Remember(spec *command.Spec, argv [][]byte) {
	if t.curBase != nil && spec.Flags&command.ReadOnly != 0 { // inlined: the common case does nothing
		t.remember(spec, argv)
	}
}

func (t *Tracker) remember(spec *command.Spec, argv [][]byte) {
	cl := t.curBase
	st := &cl.Tracking
	if !st.On || st.BCast || spec.Flags&command.PubSub != 0 {
		return
	}
	if (st.OptIn && !st.Caching) || (st.OptOut && st.Caching) {
		return
	}
	if spec.Flags&command.RunsCommands != 0 {
		return // EVAL_RO and friends: the commands they run are remembered
	}
	for _, i := range spec.KeyIndexes(argv) {
		e, _ := t.keys.Upsert(argv[i])
		if !containsID(e.ids, cl.ID) {
			e.ids = append(e.ids, cl.ID)
			t.items++
		}
	}
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Modified is trackingInvalidateKey for a change to key (Redis's
// signalModifiedKey).
func (t *Tracker) Modified(db int, key []byte) {
	if t.active() {
		t.modified(db, key)
	}
}

func (t *Tracker) modified(db int, key []byte) {
	if t.expiredSet && t.expiredDB == db && t.expiredKey == string(key) {
		t.expiredSet = false
		if !t.host.Present(db, key) {
			return // the expiry's own deletion, already handled by Expired
		}
	}
	by := t.cur // the client that changed it, for BCAST's NOLOOP
	if t.host.InScript() {
		by = nil // the script's client changed it (NOLOOP does not apply)
	}
	t.invalidate(by, key, true)
}

// Expired handles the deletion of an expired key (lazy or active): an
// invalidation that no client caused.
func (t *Tracker) Expired(db int, key []byte) {
	if !t.active() {
		return
	}
	t.invalidate(nil, key, true)
	t.expiredSet, t.expiredDB, t.expiredKey = true, db, string(key)
}

// invalidate is trackingInvalidateKey. bcast is false for evictions from
// the table, which are no change to announce.
func (t *Tracker) invalidate(by Client, key []byte, bcast bool) {
	if bcast {
		for _, p := range t.prefixes {
			if len(p.prefix) > len(key) || string(key[:len(p.prefix)]) != p.prefix {
				continue
			}
			p.keys[string(key)] = by
			t.bcastDue = true
		}
	}
	e, ok := t.keys.Get(key)
	if !ok {
		return
	}
	ids := e.ids
	t.keys.Delete(key)
	t.items -= len(ids)
	var msg []byte
	for _, id := range ids {
		target := t.host.Client(id)
		if target == nil {
			continue // gone
		}
		if st := &target.Base().Tracking; !st.On || st.BCast {
			continue // no longer in the mode that read the key
		} else if st.NoLoop && target == t.cur {
			continue
		}
		if target == t.cur && t.executing {
			t.pending = append(t.pending, append([]byte{}, key...))
			continue
		}
		if msg == nil {
			msg = appendKeysArray(nil, key)
		}
		t.send(target, msg)
	}
}

// appendKeysArray appends a RESP array of one key.
func appendKeysArray(b, key []byte) []byte {
	return appendBulk(append(b, "*1\r\n"...), key)
}

// appendBulk appends a RESP bulk string.
func appendBulk[S string | []byte](b []byte, s S) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
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

// send is sendTrackingMessage: payload (the RESP array of keys, or a null)
// goes to c, or to its redirection client.
func (t *Tracker) send(c Client, payload []byte) {
	target := c
	redirected := false
	cb := c.Base()
	if cb.Tracking.Redirect != 0 {
		r := t.host.Client(cb.Tracking.Redirect)
		if r == nil {
			cb.Tracking.BrokenRedir = true
			if cb.Proto > 2 {
				b := append([]byte{}, ">2\r\n$21\r\ntracking-redir-broken\r\n:"...)
				b = strconv.AppendInt(b, cb.Tracking.Redirect, 10)
				c.Push(append(b, "\r\n"...))
			}
			return
		}
		target, redirected = r, true
	}
	var b []byte
	switch {
	case target.Base().Proto > 2:
		b = append(b, ">2\r\n$10\r\ninvalidate\r\n"...)
	case redirected && target.HasSubscriptions():
		b = append(b, "*3\r\n$7\r\nmessage\r\n$20\r\n"+invalidateChannel+"\r\n"...)
	default:
		return // RESP2 without a subscribed redirection client: nowhere to send it
	}
	target.Push(append(b, payload...))
}

// Flushing is trackingInvalidateKeysOnFlush (FLUSHDB, FLUSHALL): every
// tracking client gets a null (the running one after its reply), and the
// table is emptied. The keyspace reports FLUSHALL database by database: the
// notification goes out once per command.
func (t *Tracker) Flushing() {
	if t.flushed {
		return
	}
	t.flushed = true
	if t.clients > 0 {
		for _, cl := range t.host.Clients() {
			if !cl.Base().Tracking.On {
				continue
			}
			if cl == t.cur {
				t.pending = append(t.pending, nil)
				continue
			}
			t.send(cl, nullFor(cl.Base().Proto))
		}
	}
	t.keys.Clear()
	t.items = 0
}

// BeginCommand is called before every command runs (also inside EXEC and
// scripts).
func (t *Tracker) BeginCommand() { t.flushed = false }

// Current is who the tracker takes for the running client, saved and
// restored around a blocked client's command run from another's.
type Current struct {
	cl        Client
	base      *command.Client
	executing bool
}

// Save returns the running client's state.
func (t *Tracker) Save() Current { return Current{t.cur, t.curBase, t.executing} }

// Restore puts back what Save returned.
func (t *Tracker) Restore(c Current) { t.cur, t.curBase, t.executing = c.cl, c.base, c.executing }

// BeforeExec is called before cl's command runs (Redis's processCommand):
// it keeps the table within tracking-table-max-keys.
func (t *Tracker) BeforeExec(cl Client, base *command.Client) {
	t.cur, t.curBase = cl, base
	if t.clients > 0 {
		t.limit()
	}
	t.executing = true
}

// AfterExec is called after cl's command, its reply written (also when the
// command was refused or queued by MULTI). It reports whether messages are
// due: cl's own invalidations, which follow its reply
// (trackingHandlePendingKeyInvalidations), then the BCAST keys of the
// execution unit. The caller sends them with SendDue, then calls
// EndCommand.
func (t *Tracker) AfterExec() bool {
	t.executing = false
	return len(t.pending) > 0 || t.bcastDue
}

// SendDue sends what AfterExec reported due; cl is the client whose
// command ran.
func (t *Tracker) SendDue(cl Client) {
	proto := cl.Base().Proto
	for _, key := range t.pending {
		if key == nil {
			t.send(cl, nullFor(proto))
		} else {
			t.send(cl, appendKeysArray(nil, key))
		}
	}
	t.pending = t.pending[:0]
	t.broadcast()
}

// EndCommand ends cl's command: CLIENT CACHING lasts for one command (or
// one transaction), as Redis's resetClient says.
func (t *Tracker) EndCommand(base *command.Client, spec *command.Spec) {
	t.cur, t.curBase = nil, nil
	if base.Tracking.Caching && !base.InMulti() && (spec == nil || spec.Parent() == nil || spec.Parent().Flags&command.KeepsCaching == 0) {
		base.Tracking.Caching = false
	}
}

// Cron runs at the end of each cron tick: the keys the active expiry cycle
// deleted are broadcast, and the table is brought back within its limit
// even when no command runs.
func (t *Tracker) Cron() {
	if t.clients > 0 {
		t.limit()
	}
	t.broadcast()
}

// broadcast is trackingBroadcastInvalidationMessages: for each prefix with
// changed keys, every client registered for it gets the keys (sorted),
// without the ones it changed itself when it is in NOLOOP mode.
func (t *Tracker) broadcast() {
	if !t.bcastDue {
		return
	}
	t.bcastDue = false
	for _, p := range t.prefixes {
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
			if cl.Base().Tracking.NoLoop {
				if adhoc := buildKeys(keys, p.keys, cl); adhoc != nil {
					t.send(cl, adhoc)
				}
				continue
			}
			if all == nil {
				all = buildKeys(keys, p.keys, nil)
			}
			t.send(cl, all)
		}
		clear(p.keys)
	}
}

// buildKeys is trackingBuildBroadcastReply: the RESP array of keys, leaving
// out those last changed by except (nil when that leaves none).
func buildKeys(keys []string, by map[string]Client, except Client) []byte {
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
		b = appendBulk(b, k)
	}
	return b
}

// limit is trackingLimitUsedSlots: over tracking-table-max-keys, random
// keys are evicted from the table (their clients get an invalidation, as if
// the key changed), up to 100 per call, 100 more for each call in a row
// that could not get back under the limit.
func (t *Tracker) limit() {
	limit := t.maxKeys()
	if limit == 0 {
		return
	}
	if int64(t.keys.Len()) <= limit {
		t.effort = 0
		return
	}
	for effort := 100 * (t.effort + 1); effort > 0; effort-- {
		k, _, ok := t.keys.Random(t.host.Rand)
		if !ok {
			break
		}
		t.invalidate(nil, []byte(k), false)
		if int64(t.keys.Len()) <= limit {
			t.effort = 0
			return
		}
	}
	t.effort++
}

// Stats are INFO's tracking_clients, tracking_total_keys, _items and _prefixes.
func (t *Tracker) Stats() (clients, keys, items, prefixes int) {
	return t.clients, t.keys.Len(), t.items, len(t.prefixes)
}
