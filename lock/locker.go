package lock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Locker obtains locks: on one server (New) or on N independent servers by the
// Redlock algorithm (NewRedlock), behind the same API. A Locker is safe for
// concurrent use; make one per process (or per set of servers) and share it.
type Locker struct {
	nodes        []*node
	quorum       int
	driftFactor  float64
	fenceKey     func(string) string
	enableNotify bool
	nodeTimeout  time.Duration
	observe      func(Wait)
	syncReplicas int           // WithReplicaSync: replicas that must acknowledge (0: none)
	syncTimeout  time.Duration // and how long to wait for them
}

// Wait is what an Obtain reports to WithWaitObserver when it ends: how long
// it waited for the lock and how many attempts it made. A HotKV server times
// the wait from its side too, from the first refused attempt to the next
// acquisition of the key (HOTKV.LOCKS STATS wait-usec, hotkv_lock_wait_seconds).
type Wait struct {
	Key      string
	Waited   time.Duration // from the first attempt to the end
	Attempts int           // attempts made (1: obtained or refused at once)
	Obtained bool
	Err      error // why not obtained (ErrNotObtained, a context's, a server's)
}

// Options are the per-Obtain options; nil means the zero Options: one attempt,
// no watchdog.
type Options struct {
	// RetryStrategy paces the attempts while the lock is held by someone else:
	// NoRetry (the default), LinearBackoff, ExponentialBackoff, LimitRetry. The
	// context bounds the whole wait either way.
	RetryStrategy RetryStrategy

	// WaitForRelease sleeps until the holder's key is deleted, expires or is
	// evicted, woken by a keyspace notification (SUBSCRIBE __keyspace@<db>__:<key>)
	// instead of polling. It needs the server to publish these events
	// (notify-keyspace-events with K, g and x, or KA): the Locker checks with
	// CONFIG GET (cached for a second) and, when they are off, never turns them on
	// unless it was made with EnableKeyspaceNotifications.
	//
	// With events and no RetryStrategy, Obtain sleeps between attempts until an
	// event, the holder's TTL has run out, or a second has passed (lost events:
	// a reconnection, FLUSHALL, a cluster), until the context ends. With a
	// RetryStrategy, the strategy still decides the pauses and when to give up,
	// and an event cuts a pause short. Without events, Obtain just follows the
	// RetryStrategy (nil: one attempt).
	WaitForRelease bool

	// AutoRefresh starts a watchdog that refreshes the lock every ttl/3 until it
	// is released. If a refresh finds the lock gone or taken, or the validity runs
	// out without a successful refresh (the server unreachable), the Lock's Done
	// channel closes at that moment and Err says why.
	AutoRefresh bool
}

// LockerOption configures New and NewRedlock.
type LockerOption func(*lockerConfig)

type lockerConfig struct {
	db          int
	dbSet       bool
	drift       float64
	fenceKey    func(string) string
	enable      bool
	nodeTimeout time.Duration
	luaOnly     bool
	observe     func(Wait)
	syncN       int
	syncTimeout time.Duration
}

// WithDB names the database the client works in, for the keyspace channel
// (__keyspace@<db>__:<key>). By default it is read from a *redis.Client's
// options, else 0.
func WithDB(db int) LockerOption {
	return func(c *lockerConfig) { c.db, c.dbSet = db, true }
}

// WithReplicaSync makes an acquisition on a server that has replicas wait
// (WAIT) until n replicas acknowledged it, at most timeout; when fewer do,
// the lock is released and Obtain returns ErrNotReplicated. Replication is
// asynchronous: without this a primary that dies right after granting a lock
// can take it with it, and the promoted replica grants it again
// (docs/locks.md, "Failover"). It applies to a Locker over one server; the
// Redlock's servers are independent, not replicas.
func WithReplicaSync(n int, timeout time.Duration) LockerOption {
	return func(c *lockerConfig) { c.syncN, c.syncTimeout = n, timeout }
}

// WithDriftFactor sets the clock drift allowance: a lock's validity is
// ttl - (time the attempt took) - (ttl*factor + 2ms). The default factor is 0.01.
func WithDriftFactor(f float64) LockerOption {
	return func(c *lockerConfig) { c.drift = f }
}

// WithFenceKey names the key holding a lock's fence counter; the default is
// DefaultFenceKey. The counter must live on the same server (and, in a cluster,
// the same slot) as the lock's key, and must never be deleted: the fence numbers
// of a lock increase only as long as its counter lives.
func WithFenceKey(f func(key string) string) LockerOption {
	return func(c *lockerConfig) { c.fenceKey = f }
}

// EnableKeyspaceNotifications lets Options.WaitForRelease turn on the keyspace
// notifications it needs (CONFIG SET notify-keyspace-events, adding K, g, x and e
// to the classes already on) when the server has them off. Without this option
// the Locker never changes the server's configuration.
func EnableKeyspaceNotifications() LockerOption {
	return func(c *lockerConfig) { c.enable = true }
}

// WithNodeTimeout bounds each round of commands to the servers of a Redlock
// (default: half the lock's TTL), so that one unreachable server does not hold
// an attempt up. It does not apply to a single-server Locker, which waits as long
// as the context and the client allow.
func WithNodeTimeout(d time.Duration) LockerOption {
	return func(c *lockerConfig) { c.nodeTimeout = d }
}

// WithLuaScripts makes the Locker use its Lua scripts for Refresh and Release
// from the start, as it does by itself once a server turns out to predate
// Redis 8.4 (no SET ... IFEQ, no DELEX). For proxies that reject unknown
// commands in their own way, and for tests.
func WithLuaScripts() LockerOption {
	return func(c *lockerConfig) { c.luaOnly = true }
}

// WithWaitObserver has every Obtain report its wait (Wait) when it ends,
// obtained or not: a histogram of lock waits on the client's side. f runs
// on the goroutine that called Obtain and must not block.
func WithWaitObserver(f func(Wait)) LockerOption {
	return func(c *lockerConfig) { c.observe = f }
}

// DefaultFenceKey is the fence counter of lock key: "<key>:fence" when key has a
// Redis Cluster hash tag ({...}), else "{<key>}:fence", which hashes to the
// same slot as a key without braces.
func DefaultFenceKey(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key + ":fence"
		}
	}
	return "{" + key + "}:fence"
}

// New returns a Locker over one server.
func New(c Client, opts ...LockerOption) *Locker {
	l, _ := newLocker([]Client{c}, opts)
	return l
}

// NewRedlock returns a Locker over independent servers (not replicas of each
// other): a lock is held when a majority (N/2+1) of them hold it, for the
// validity ttl - elapsed - drift; an attempt that does not reach the majority
// within the validity releases the lock on every server. See docs/locks.md for
// when this is (and is not) worth it.
func NewRedlock(clients []Client, opts ...LockerOption) (*Locker, error) {
	if len(clients) == 0 {
		return nil, errors.New("lock: NewRedlock needs at least one client")
	}
	return newLocker(clients, opts)
}

func newLocker(clients []Client, opts []LockerOption) (*Locker, error) {
	cfg := lockerConfig{drift: 0.01, fenceKey: DefaultFenceKey}
	for _, o := range opts {
		o(&cfg)
	}
	l := &Locker{
		quorum:       len(clients)/2 + 1,
		driftFactor:  cfg.drift,
		fenceKey:     cfg.fenceKey,
		enableNotify: cfg.enable,
		nodeTimeout:  cfg.nodeTimeout,
		observe:      cfg.observe,
		syncReplicas: cfg.syncN,
		syncTimeout:  cfg.syncTimeout,
	}
	for _, c := range clients {
		n := newNode(c, cfg.db, cfg.dbSet)
		if cfg.luaOnly {
			n.setIfeq.Store(capLua)
			n.delex.Store(capLua)
		}
		l.nodes = append(l.nodes, n)
	}
	return l, nil
}

// Close stops the Locker's subscription connections (used by WaitForRelease).
// Locks already obtained stay valid; it does not close the clients.
func (l *Locker) Close() error {
	for _, n := range l.nodes {
		n.closeWatcher()
	}
	return nil
}

func (l *Locker) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*l.driftFactor) + 2*time.Millisecond
}

func (l *Locker) roundTimeout(ttl time.Duration) time.Duration {
	if l.nodeTimeout > 0 {
		return l.nodeTimeout
	}
	return ttl / 2
}

// Obtain takes the lock named key for ttl: a fresh random token is stored at key
// (SET key token NX PX ttl) together with the next fence number, atomically. If
// the key is held, Obtain waits as opt says (by default it does not) and returns
// ErrNotObtained when it gives up or ctx ends. Other errors are the server's or
// the connection's.
//
// The lock is valid until Lock.Deadline: ttl minus the time the attempt took
// and the drift allowance. Work done under the lock must finish by then, or
// refresh it (Lock.Refresh, Options.AutoRefresh), or be fenced (Lock.Fence).
func (l *Locker) Obtain(ctx context.Context, key string, ttl time.Duration, opt *Options) (lk *Lock, err error) {
	if l.observe != nil {
		start, attempts := time.Now(), 0
		defer func() {
			l.observe(Wait{Key: key, Waited: time.Since(start), Attempts: attempts, Obtained: err == nil, Err: err})
		}()
		return l.obtain(ctx, key, ttl, opt, &attempts)
	}
	return l.obtain(ctx, key, ttl, opt, nil)
}

// obtain is Obtain; it counts its attempts in *attempts when not nil.
func (l *Locker) obtain(ctx context.Context, key string, ttl time.Duration, opt *Options, attempts *int) (*Lock, error) {
	if ttl < time.Millisecond {
		return nil, ErrInvalidTTL
	}
	if opt == nil {
		opt = &Options{}
	}
	retry := opt.RetryStrategy
	if retry == nil {
		retry = NoRetry()
	}
	token := rand.Text()
	fk := l.fenceKey(key)
	var ws *waitSet
	defer func() { ws.close() }()
	var lastErr error // the servers' errors behind the last failed attempt (Redlock)
	notObtained := func(cause error) error {
		if lastErr != nil {
			return fmt.Errorf("%w: %w (%w)", ErrNotObtained, cause, lastErr)
		}
		return fmt.Errorf("%w: %w", ErrNotObtained, cause)
	}
	for failures := 0; ; {
		if ctx.Err() != nil {
			return nil, notObtained(context.Cause(ctx))
		}
		if attempts != nil {
			*attempts++
		}
		res, err := l.attempt(ctx, key, fk, token, ttl)
		if err != nil {
			if ctx.Err() != nil {
				return nil, notObtained(context.Cause(ctx))
			}
			return nil, err
		}
		if res.ok {
			return newLock(l, key, token, res.fence, ttl, res.deadline, opt.AutoRefresh), nil
		}
		failures++
		lastErr = res.errs
		if opt.WaitForRelease && ws == nil {
			ws = l.subscribe(ctx, key)
			if ws.active() {
				continue // listening now: try again, then sleep until an event
			}
		}
		events := ws.active()
		pause := time.Duration(-1) // -1: events only, no pause limit
		if opt.RetryStrategy != nil || !events {
			pause = retry.Backoff(failures)
			if pause < 0 {
				if lastErr != nil {
					return nil, fmt.Errorf("%w: %w", ErrNotObtained, lastErr)
				}
				return nil, ErrNotObtained
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < pause && !events {
				return nil, notObtained(context.DeadlineExceeded)
			}
		}
		var awake bool
		if events {
			awake = ws.wait(ctx, res.holderTTL, pause)
		} else {
			awake = sleep(ctx, pause)
		}
		if !awake {
			return nil, notObtained(context.Cause(ctx))
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

type attemptResult struct {
	ok        bool
	fence     int64
	deadline  time.Time     // the end of the validity
	holderTTL time.Duration // when not obtained: the holder's remaining TTL (<= 0: unknown)
	errs      error         // Redlock: server errors that made the attempt fail
}

// attempt makes one try on every server. The validity counts from before the
// first command was sent, so it never outlasts the keys' TTLs on the servers
// (less the drift allowance for clocks that run at different rates).
func (l *Locker) attempt(ctx context.Context, key, fk, token string, ttl time.Duration) (attemptResult, error) {
	start := time.Now()
	ttlMs := ttl.Milliseconds()
	if len(l.nodes) == 1 {
		n := l.nodes[0]
		ok, fence, pttl, err := n.obtain(ctx, key, fk, token, ttlMs)
		if err != nil {
			// The script may have run and only its reply been lost.
			l.cleanup(ctx, key, token, ttl)
			return attemptResult{}, err
		}
		if !ok {
			return attemptResult{holderTTL: time.Duration(pttl) * time.Millisecond}, nil
		}
		if l.syncReplicas > 0 {
			// the replicas must have the lock before it counts as held
			acked, err := n.c.Do(ctx, "WAIT", l.syncReplicas, max(l.syncTimeout.Milliseconds(), 1)).Int()
			if err != nil || acked < l.syncReplicas {
				l.cleanup(ctx, key, token, ttl)
				if err != nil {
					return attemptResult{}, err
				}
				return attemptResult{}, ErrNotReplicated
			}
		}
		deadline := start.Add(ttl - l.drift(ttl))
		if !time.Now().Before(deadline) {
			l.cleanup(ctx, key, token, ttl)
			return attemptResult{}, nil
		}
		return attemptResult{ok: true, fence: fence, deadline: deadline}, nil
	}

	// Redlock: the same script on every server at once.
	rctx, cancel := context.WithTimeout(ctx, l.roundTimeout(ttl))
	defer cancel()
	type reply struct {
		ok          bool
		fence, pttl int64
		err         error
	}
	rs := make([]reply, len(l.nodes))
	var wg sync.WaitGroup
	for i, n := range l.nodes {
		wg.Go(func() {
			ok, fence, pttl, err := n.obtain(rctx, key, fk, token, ttlMs)
			rs[i] = reply{ok, fence, pttl, err}
		})
	}
	wg.Wait()
	acquired := 0
	var maxFence, holder int64
	var errs []error
	for i, r := range rs {
		switch {
		case r.err != nil:
			errs = append(errs, fmt.Errorf("server %d: %w", i, r.err))
		case r.ok:
			acquired++
			maxFence = max(maxFence, r.fence)
		case r.pttl > 0 && (holder == 0 || r.pttl < holder):
			holder = r.pttl
		}
	}
	if acquired >= l.quorum {
		// Fence numbers: each server counts on its own. Raising the counter of a
		// majority to the largest number handed out makes the next lock's number
		// larger: its majority shares a server with this one.
		acks := 0
		var mu sync.Mutex
		cctx, cancel := context.WithTimeout(ctx, l.roundTimeout(ttl))
		defer cancel()
		for _, n := range l.nodes {
			wg.Go(func() {
				if n.catchUp(cctx, fk, maxFence) == nil {
					mu.Lock()
					acks++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		deadline := start.Add(ttl - l.drift(ttl))
		if acks >= l.quorum && time.Now().Before(deadline) {
			return attemptResult{ok: true, fence: maxFence, deadline: deadline}, nil
		}
	}
	l.cleanup(ctx, key, token, ttl)
	res := attemptResult{holderTTL: time.Duration(holder) * time.Millisecond}
	if len(errs) > len(l.nodes)-l.quorum {
		// Servers down or slow are what a Redlock is for: a failed attempt, to
		// retry; the errors go with ErrNotObtained if Obtain gives up.
		res.errs = fmt.Errorf("no majority of servers answered: %w", errors.Join(errs...))
	}
	return res, nil
}

// cleanup releases token everywhere after a failed attempt, even where the
// attempt seemed to fail (its reply may have been lost), bounded in time and
// immune to ctx having ended.
func (l *Locker) cleanup(ctx context.Context, key, token string, ttl time.Duration) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(l.roundTimeout(ttl)+50*time.Millisecond, time.Second))
	defer cancel()
	l.each(cctx, func(ctx context.Context, _ int, n *node) (status, error) { return n.release(ctx, key, token) })
}

// each runs f on every server (in parallel for a Redlock, each bounded by the
// round timeout) and returns the statuses and errors per server.
func (l *Locker) each(ctx context.Context, f func(context.Context, int, *node) (status, error)) ([]status, []error) {
	sts := make([]status, len(l.nodes))
	errs := make([]error, len(l.nodes))
	if len(l.nodes) == 1 {
		sts[0], errs[0] = f(ctx, 0, l.nodes[0])
		return sts, errs
	}
	var wg sync.WaitGroup
	for i, n := range l.nodes {
		wg.Go(func() { sts[i], errs[i] = f(ctx, i, n) })
	}
	wg.Wait()
	return sts, errs
}

// outcome turns per-server results into one: nil when a majority holds our
// token; the errors when they could hide a majority; else ErrNotHeld if some
// server shows another owner, ErrExpired if it is simply gone.
func (l *Locker) outcome(sts []status, errs []error) error {
	ours, other := 0, 0
	var es []error
	for i := range sts {
		switch {
		case errs[i] != nil:
			if len(l.nodes) == 1 {
				es = append(es, errs[i])
			} else {
				es = append(es, fmt.Errorf("server %d: %w", i, errs[i]))
			}
		case sts[i] == stOurs:
			ours++
		case sts[i] == stOther:
			other++
		}
	}
	switch {
	case ours >= l.quorum:
		return nil
	case ours+len(es) >= l.quorum:
		return errors.Join(es...)
	case other > 0:
		return ErrNotHeld
	}
	return ErrExpired
}
