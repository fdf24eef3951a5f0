package command

import (
	"unsafe"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/introspect"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/locks"
	"github.com/hotkv/hotkv/internal/resp"
)

// Ctx is one command's execution context. The server builds it (and reuses it) per
// connection; the handler reads Argv, works on DB and appends exactly one reply to W.
type Ctx struct {
	Argv [][]byte // aliases the connection's read buffer: copy what you keep
	// Own marks the arguments a command may keep instead of copying (bit i
	// for Argv[i]): big ones the reader allocated for them alone
	// (resp.Reader.OwnedArgs). Kept bytes must be marked shared in the
	// keyspace: the command's propagation still reads them after it ran.
	Own    uint64
	Spec   *Spec
	W      *resp.Writer
	Client *Client
	KS     *keyspace.Keyspace
	DB     *keyspace.DB // the client's selected database
	Srv    Server
	Rand   func() uint64 // the execution unit's seeded source (docs/ARCHITECTURE.md §4.4)
	Now    int64         // frozen Unix ms for the execution unit (equals KS.Now())
	// NoBlock makes Block refuse: the command runs again after its timeout (or
	// CLIENT UNBLOCK) and must reply as for an empty result.
	NoBlock bool
	// StartUs is when the command started (the server's clock, µs), set by
	// the server before each command: the time of its lock events.
	StartUs int64
	// FrozenUs, when not 0, is the time TIME reports (Unix µs): a script's
	// start, so that TIME is constant inside a script, as in Redis 7.2+.
	FrozenUs int64

	// ErrCode is set by Error to the first word of the error reply ("ERR",
	// "WRONGTYPE"), for INFO errorstats and commandstats failed_calls.
	ErrCode string
	// Parked is set by Block when the client was parked (or stays parked):
	// the command has not replied, and is counted when it does.
	Parked bool
	// FailedNoStats marks a failed call whose error was already counted in the
	// error stats (a script returning an error raised by redis.call).
	FailedNoStats bool
	// Dirty counts the changes the command made (Redis's server.dirty delta).
	Dirty int
	// ReplyLast: the messages the command produced for its own client (its
	// invalidations) precede its reply, as for a command Redis finishes in
	// the background and answers when done (FLUSHALL/FLUSHDB SYNC).
	ReplyLast bool
	// Prop collects the unit's propagated commands; nil when nothing listens
	// (see propagate.go). Set by the server before each command.
	Prop *Propagation
	// Redacted lists the arguments the slow log and MONITOR show as
	// "(redacted)" (Redact); the server clears it before each command.
	Redacted []int
	// Locks is the server's lock view (nil: none), told of the command's
	// lock events as they happen (LockAcquired, LockReleased, ...).
	Locks *locks.Table
}

// The lock view's reports (locks.Table): a command says what it did to a
// distributed lock as it does it, an acquisition or a release before it sets
// or deletes the key. key and val alias the arguments, e is the key's entry
// when the command has it: the view copies what it keeps. Nothing is
// reported where the Ctx has no Locks (a unit applied without a connection).

// LockAcquired reports that SET NX with an expiry takes key with token val,
// expiring at at (Unix ms); LockEntry then gives the key's new entry.
func (c *Ctx) LockAcquired(key, val []byte, at int64) {
	if c.Locks != nil {
		c.Locks.Acquire(c.DB.ID, key, val, at, c.StartUs)
	}
}

// LockEntry gives the lock view the entry an acquisition just made.
func (c *Ctx) LockEntry(e *keyspace.Entry) {
	if c.Locks != nil {
		c.Locks.Entry(unsafe.Pointer(e))
	}
}

// LockReleased reports a release by token that deletes key (entry e).
func (c *Ctx) LockReleased(key []byte, e *keyspace.Entry) {
	if c.Locks != nil {
		c.Locks.Release(c.DB.ID, key, unsafe.Pointer(e), c.StartUs)
	}
}

// LockRefused reports SET NX with an expiry that found key set.
func (c *Ctx) LockRefused(key []byte) {
	if c.Locks != nil {
		c.Locks.Refuse(c.DB.ID, key, c.StartUs)
	}
}

// LockStale reports a release by token that deleted nothing: key gone (e
// nil) or holding another value.
func (c *Ctx) LockStale(key []byte, e *keyspace.Entry) {
	if c.Locks != nil {
		c.Locks.Stale(c.DB.ID, key, unsafe.Pointer(e), c.StartUs)
	}
}

// Redact hides argument i from the slow log and MONITOR (passwords: Redis's
// redactClientCommandArgument).
func (c *Ctx) Redact(i int) { c.Redacted = append(c.Redacted, i) }

// Error appends an error reply: msg is the full text after '-', e.g. "ERR syntax error".
func (c *Ctx) Error(msg string) {
	c.W.Error(msg)
	c.ErrCode = errCode(msg)
}

// Err appends the error for code e.
func (c *Ctx) Err(e Err) { c.Error(e.Text()) }

func errCode(msg string) string {
	for i := 0; i < len(msg); i++ {
		if msg[i] == ' ' {
			return msg[:i]
		}
	}
	return msg
}

// Arg returns argument i (0 is the command name).
func (c *Ctx) Arg(i int) []byte { return c.Argv[i] }

// ReplyMode is CLIENT REPLY's state.
type ReplyMode uint8

// Reply modes.
const (
	ReplyOn ReplyMode = iota
	ReplyOff
	ReplySkip // skip the next reply only
	// ReplySkipping: the running command's reply is skipped (CLIENT REPLY
	// SKIP before it), unless the command turns replies ON again
	ReplySkipping
)

// Client is the per-connection state that commands may read and change. The server
// owns it; fields are touched only by the connection's own goroutine, except those
// documented as shared.
type Client struct {
	ID            int64
	Addr          string
	LAddr         string
	FD            int
	Name          string
	LibName       string
	LibVer        string
	DB            int
	Proto         int
	Authenticated bool
	// User is the ACL user the client runs as; nil runs anything (the
	// connection-less clients of loading and Apply, as Redis's NULL user)
	User    *acl.User
	NoTouch bool
	NoEvict bool
	Reply   ReplyMode
	// CloseAfterReply asks the server to flush and close (QUIT, CLIENT KILL of self).
	CloseAfterReply bool
	CreatedMs       int64
	LastCmd         string
	LastInteraction int64 // ms
	Multi           int   // queued commands in MULTI, -1 when not in MULTI
	// Subscribed is true while the client has Pub/Sub subscriptions (RESP2
	// clients are then in subscribed mode).
	Subscribed bool
	// Script marks the client a Lua script's commands run as: blocking commands
	// do not block for it (Redis's CLIENT_DENY_BLOCKING).
	Script bool
	// DenyBlocking is set by the server while it runs the commands of an EXEC
	// block: blocking commands then answer at once, as on timeout (Redis's
	// CLIENT_DENY_BLOCKING, which a script's client has too; see Ctx.MayBlock).
	DenyBlocking bool
	Flags        string
	// Tracking is the client-side caching mode (CLIENT TRACKING).
	Tracking TrackingState
}

// Server is what connection and server commands need from the server plumbing.
// Calls happen on the calling client's goroutine.
type Server interface {
	// Migrate sends a MIGRATE's RESTORE commands to its target, over the
	// connection kept for that address (opened, authenticated and switched
	// to the database as needed), and reads the replies; it blocks until
	// they come or the timeout passes (Redis's migrateCommand's I/O).
	Migrate(m *Migration) MigrateResult
	// Warn logs msg at warning level (what Redis logs with LL_WARNING).
	Warn(msg string)
	// Info appends the INFO sections named (lower case; "default", "all",
	// "everything" as Redis) to dst in Redis's text format.
	Info(dst []byte, sections []string) []byte
	// ClientList appends CLIENT LIST lines for the clients matching the filter
	// (ids nil = all; typ "" = any) to dst.
	ClientList(dst []byte, typ string, ids []int64) []byte
	// ClientInfo appends the CLIENT INFO line of c to dst.
	ClientInfo(dst []byte, c *Client) []byte
	// KillClients closes the clients matching f and returns how many.
	KillClients(f KillFilter, self *Client) int
	// Pause pauses clients until untilMs; writeOnly is PAUSE's WRITE mode.
	Pause(untilMs int64, writeOnly bool)
	Unpause()
	// Config is the parameter registry.
	ConfigGet(patterns []string) [][2]string
	ConfigSet(c *Client, pairs [][2]string) error
	ConfigRewrite() error
	// ConfigSensitive reports whether a parameter's value is to be redacted.
	ConfigSensitive(name string) bool
	ResetStats()
	// Table is the command table (COMMAND).
	Table() *Table
	// Shutdown is SHUTDOWN: save as the flags say, then stop after the
	// current reply; an error is the error reply.
	Shutdown(f ShutdownFlags) error
	// ACL is the users registry (ACL, AUTH, HELLO AUTH).
	ACL() *acl.ACL
	// ACLFile is the aclfile parameter ("" when none).
	ACLFile() string
	// ACLDenied records a denial in the ACL log and INFO's counters, with
	// c's CLIENT INFO line.
	ACLDenied(c *Client, r acl.Reason, ctx acl.Context, object, username string)
	// RandomHex is n hex digits from a cryptographic source (ACL GENPASS).
	RandomHex(n int) string
	// SetCopyAvoidance turns reply copy avoidance on or off for every client
	// (DEBUG REPLY-COPY-AVOIDANCE).
	SetCopyAvoidance(on bool)
	// LastSave is LASTSAVE's Unix time in seconds.
	LastSave() int64
	// Stats.
	// ProtoMaxBulkLen is proto-max-bulk-len: the largest string a command may build.
	ProtoMaxBulkLen() int64
	// LFU reports whether an LFU maxmemory-policy is selected (OBJECT FREQ/IDLETIME).
	LFU() bool
	// MemoryStats measures MEMORY STATS and MEMORY DOCTOR's figures.
	MemoryStats() MemoryStats
	// MemoryPurge returns free memory to the OS (MEMORY PURGE).
	MemoryPurge()
	// MallocStats is MEMORY MALLOC-STATS' report.
	MallocStats() string
	// NowUs is the live server clock in Unix microseconds (TIME).
	NowUs() int64
	// SetDisableDenyScripts lets scripts run noscript commands (DEBUG
	// SET-DISABLE-DENY-SCRIPTS, for tests).
	SetDisableDenyScripts(on bool)
	// SetActiveExpire turns the active expiry cycle on or off (DEBUG SET-ACTIVE-EXPIRE).
	SetActiveExpire(on bool)
	// Watch, Unwatch, DiscardMulti and Exec implement the transaction commands.
	Watch(c *Client, db *keyspace.DB, keys [][]byte)
	Unwatch(c *Client)
	DiscardMulti(c *Client)
	Exec(c *Ctx)
	// Block parks the calling client (see Ctx.Block).
	Block(c *Ctx, on BlockOn) bool
	// UnblockClient is CLIENT UNBLOCK: 1 when the client was blocked.
	UnblockClient(id int64, withError bool) int
	// PubSub is the Pub/Sub registry.
	PubSub() PubSubHub
	// Tracking is the client-side caching registry (CLIENT TRACKING).
	Tracking() Tracking
	// Scripts is the Lua engine (EVAL, SCRIPT, FUNCTION, FCALL).
	Scripts() Scripting
	// Notify publishes a keyspace event (see Ctx.Notify).
	Notify(db int, class byte, event string, key []byte)
	// Persistence is the RDB machinery (DUMP, RESTORE, DEBUG RELOAD).
	Persistence() Persistence
	// SignalKeyReady wakes the clients blocked on key without touching it for
	// WATCH (Redis's signalKeyAsReady: XGROUP DESTROY).
	SignalKeyReady(db int, key []byte)
	// Slowlog is the slow log (SLOWLOG), Latency the latency monitor's
	// events (LATENCY), LatencyDoctor LATENCY DOCTOR's report.
	// Locks is the lock view (HOTKV.LOCKS).
	Locks() *locks.Table
	Slowlog() *introspect.Slowlog
	Latency() *introspect.Latency
	LatencyDoctor() string
	// LatencyHistogram is a command's latency distribution for LATENCY
	// HISTOGRAM: its calls and [upper bound in µs, cumulative count] pairs;
	// false when it has none.
	LatencyHistogram(s *Spec) (calls int64, cdf [][2]int64, ok bool)
	// Monitor makes c a MONITOR client (on), or an ordinary one again
	// (RESET); false when nothing changed.
	Monitor(c *Client, on bool) bool
	// Hotkeys is the HOTKEYS session, running or stopped; nil when there is
	// none. HotkeysStart starts one (replacing a stopped one), HotkeysStop
	// stops the running one, HotkeysReset drops a stopped one.
	// HotkeysCPUMs is the process's user and system CPU time since the
	// session started, in ms.
	Hotkeys() *introspect.Hotkeys
	HotkeysStart(cfg introspect.HotkeysConfig)
	HotkeysStop()
	HotkeysReset()
	HotkeysCPUMs() (user, sys int64)
}

// BlockOn is what a blocked client waits for (Redis's blockForKeys arguments).
type BlockOn struct {
	Kind     keyspace.Kind // the type a key must hold to serve it (KindNone: no key, WAIT)
	Keys     [][]byte
	Deadline int64 // absolute Unix ms; 0: none
	// UnblockOnNoKey: run again when a key is deleted or changes type too
	// (XREADGROUP, which then fails)
	UnblockOnNoKey bool
	// WakeAt (absolute Unix ms, 0: none): run again at that time, as if a
	// key had changed, still waiting (XREADGROUP CLAIM: when a pending entry
	// becomes idle enough). A later Block call sets it anew.
	WakeAt int64
}

// KillFilter is CLIENT KILL's filter set (all given fields must match).
type KillFilter struct {
	Addr, LAddr, User, Name string
	ID                      int64
	Type                    string
	SkipMe                  bool
	MaxAgeSec               int64
}

// Notify announces a keyspace event (Redis's notifyKeyspaceEvent) for key in the
// client's database: class is the notify-keyspace-events letter of the event's
// class ('g' generic, '$' string, 'l' list, 's' set, 'h' hash, 'z' sorted set,
// 'x' expired, 'e' evicted, 't' stream, 'n' new key), event Redis's event name
// ("sadd", "del", ...). Every write handler calls it once per Redis event, after
// the change, exactly where Redis calls notifyKeyspaceEvent.
func (c *Ctx) Notify(class byte, event string, key []byte) {
	if c.Srv != nil {
		c.Srv.Notify(c.DB.ID, class, event, key)
	}
}

// Block parks the client until one of keys is written with a value of kind
// (or, with unblockOnNoKey, deleted or replaced by another type), the deadline passes
// (absolute Unix ms from parseTimeout; 0 = never) or CLIENT UNBLOCK: a blocking
// command's handler calls it when it finds nothing to serve, and returns
// without a reply. The handler then runs again, whole, with the same arguments
// whenever a key changes, until it replies (a second Block call while still
// waiting keeps the client's place and deadline); after the deadline it runs
// with NoBlock set. Block returns false when the client may not block
// (MayBlock): the handler must then reply at once as it does on timeout.
func (c *Ctx) Block(kind keyspace.Kind, keys [][]byte, deadline int64, unblockOnNoKey bool) bool {
	return c.BlockOn(BlockOn{Kind: kind, Keys: keys, Deadline: deadline, UnblockOnNoKey: unblockOnNoKey})
}

// BlockOn is Block with every parameter (see BlockOn's fields).
func (c *Ctx) BlockOn(on BlockOn) bool {
	if !c.MayBlock() || c.Srv == nil {
		return false
	}
	return c.Srv.Block(c, on)
}

// NotifyIn is Notify for a key of another database (MOVE, COPY ... DB).
func (c *Ctx) NotifyIn(db *keyspace.DB, class byte, event string, key []byte) {
	if c.Srv != nil {
		c.Srv.Notify(db.ID, class, event, key)
	}
}
