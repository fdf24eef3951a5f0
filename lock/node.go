package lock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is what the package needs from a connection to one server: go-redis v9's
// UniversalClient (and so *redis.Client, *redis.ClusterClient, *redis.Ring)
// satisfies it. Every command goes through Do, so a wrapper or a test double only
// has to implement this one method. Do is called from many goroutines at once.
type Client interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// Subscriber is the optional part of a Client used to wait for a release by
// keyspace notifications (Options.WaitForRelease). go-redis's clients implement
// it; a Client without it polls with the retry strategy instead.
type Subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// capability of a server for one operation: found out from the first reply.
const (
	capUnknown int32 = iota
	capNative        // Redis 8.4 and HotKV: SET ... IFEQ, DELEX ... IFEQ
	capLua           // older servers: the same operation as a Lua script
)

// status of a lock's key on one server.
type status int8

const (
	stMissing status = 0  // the key is gone
	stOurs    status = 1  // the key holds our token
	stOther   status = -1 // the key holds another owner's token
)

// node is one server. Its fields are safe for concurrent use.
type node struct {
	c   Client
	sub Subscriber // nil: no keyspace notifications
	db  int        // the database of keyspace channels (__keyspace@<db>__:key)

	setIfeq atomic.Int32 // capUnknown, capNative or capLua for Refresh
	delex   atomic.Int32 // the same for Release

	notifyMu    sync.Mutex
	notifyOK    bool      // notify-keyspace-events has K and g, x (or A)
	notifyUntil time.Time // notifyOK is trusted until then

	watchMu sync.Mutex
	watch   *watcher // the node's one subscription connection, made on first need
}

func newNode(c Client, db int, dbSet bool) *node {
	n := &node{c: c, db: db}
	if s, ok := c.(Subscriber); ok {
		n.sub = s
	}
	if !dbSet {
		if o, ok := c.(interface{ Options() *redis.Options }); ok && o.Options() != nil {
			n.db = o.Options().DB
		}
	}
	return n
}

// script is a Lua script run by EVALSHA, falling back to EVAL when the server
// does not have it cached (NOSCRIPT: a restart, SCRIPT FLUSH, a failover).
type script struct{ src, sha string }

func newScript(src string) *script {
	h := sha1.Sum([]byte(src))
	return &script{src: src, sha: hex.EncodeToString(h[:])}
}

// The scripts. Each runs atomically on one server, so "read the token, then act"
// cannot interleave with another client; all of them work on any Redis since 2.6
// and on HotKV.
var (
	// obtain: KEYS = lock, fence counter; ARGV = token, ttl in ms. The lock
	// (SET NX PX) and the fence number (INCR) are granted together. If the INCR
	// fails (a fence key that is not a counter), the lock just set is deleted
	// again and the error returned: scripts do not roll back by themselves. A key
	// already holding our token is an earlier attempt of this same Obtain whose
	// reply was lost: it is ours, with the current fence. Not obtained:
	// {0, PTTL of the holder}.
	obtainScript = newScript(`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local f = redis.pcall('INCR', KEYS[2])
  if type(f) == 'table' and f.err then
    redis.call('DEL', KEYS[1])
    return f
  end
  return {1, f}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
return {0, redis.call('PTTL', KEYS[1])}`)

	// refresh (pre-8.4 SET key token IFEQ token PX ttl): 1 ours, 0 gone, -1 other.
	refreshScript = newScript(`local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not v then return 0 end
return -1`)

	// release (pre-8.4 DELEX key IFEQ token): 1 deleted, 0 gone, -1 other.
	releaseScript = newScript(`local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if not v then return 0 end
return -1`)

	// pttl: {status, PTTL}: the key's TTL only if it holds our token.
	pttlScript = newScript(`local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return {1, redis.call('PTTL', KEYS[1])} end
if not v then return {0, -2} end
return {-1, redis.call('PTTL', KEYS[1])}`)

	// catchUp (Redlock): raise the fence counter to at least ARGV[1].
	catchUpScript = newScript(`local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`)
)

func (n *node) eval(ctx context.Context, s *script, keys []string, args ...any) (any, error) {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, "evalsha", s.sha, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	v, err := n.c.Do(ctx, a...).Result()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		a[0], a[1] = "eval", s.src
		v, err = n.c.Do(ctx, a...).Result()
	}
	return v, err
}

// obtain runs the obtain script: acquired, the fence number when acquired, the
// holder's PTTL in ms when not (negative when unknown).
func (n *node) obtain(ctx context.Context, key, fenceKey, token string, ttlMs int64) (bool, int64, int64, error) {
	v, err := n.eval(ctx, obtainScript, []string{key, fenceKey}, token, ttlMs)
	if err != nil {
		return false, 0, -1, err
	}
	a, b, err := pair(v)
	if err != nil {
		return false, 0, -1, err
	}
	if a == 1 {
		return true, b, 0, nil
	}
	return false, 0, b, nil
}

// refresh sets the key's TTL to ttlMs if it holds token.
func (n *node) refresh(ctx context.Context, key, token string, ttlMs int64) (status, error) {
	if n.setIfeq.Load() != capLua {
		// SET IFEQ with GET replies the old value: ours, nil (gone) or another token.
		v, err := n.c.Do(ctx, "set", key, token, "ifeq", token, "px", ttlMs, "get").Result()
		switch {
		case err == nil:
			n.setIfeq.Store(capNative)
			if s, ok := v.(string); ok && s == token {
				return stOurs, nil
			}
			return stOther, nil
		case err == redis.Nil:
			n.setIfeq.Store(capNative)
			return stMissing, nil
		case !isServerError(err, "ERR syntax error"):
			return 0, err
		}
		n.setIfeq.Store(capLua) // a server before 8.4: no IFEQ
	}
	v, err := n.eval(ctx, refreshScript, []string{key}, token, ttlMs)
	if err != nil {
		return 0, err
	}
	return toStatus(v)
}

// release deletes the key if it holds token.
func (n *node) release(ctx context.Context, key, token string) (status, error) {
	if n.delex.Load() != capLua {
		v, err := n.c.Do(ctx, "delex", key, "ifeq", token).Result()
		switch {
		case err == nil:
			n.delex.Store(capNative)
			if i, ok := v.(int64); ok && i == 1 {
				return stOurs, nil
			}
			// Not deleted: tell "gone" from "someone else's" (a second round trip,
			// only on this failure path).
			e, err := n.c.Do(ctx, "exists", key).Result()
			if err != nil {
				return 0, err
			}
			if i, ok := e.(int64); ok && i > 0 {
				return stOther, nil
			}
			return stMissing, nil
		case !isServerError(err, "ERR unknown command"):
			return 0, err
		}
		n.delex.Store(capLua) // a server before 8.4: no DELEX
	}
	v, err := n.eval(ctx, releaseScript, []string{key}, token)
	if err != nil {
		return 0, err
	}
	return toStatus(v)
}

// pttl is the key's PTTL in ms if it holds token.
func (n *node) pttl(ctx context.Context, key, token string) (int64, status, error) {
	v, err := n.eval(ctx, pttlScript, []string{key}, token)
	if err != nil {
		return 0, 0, err
	}
	a, b, err := pair(v)
	if err != nil {
		return 0, 0, err
	}
	return b, status(a), nil
}

func (n *node) catchUp(ctx context.Context, fenceKey string, fence int64) error {
	_, err := n.eval(ctx, catchUpScript, []string{fenceKey}, fence)
	return err
}

// notifications reports whether the server publishes the keyspace events a
// waiter needs (class K with g and x, or A). With enable it turns the missing
// classes on (CONFIG SET); without, it never changes the server. The answer is
// cached for a second; any error (CONFIG refused by an ACL or renamed) is "no".
func (n *node) notifications(ctx context.Context, enable bool) bool {
	if n.sub == nil {
		return false
	}
	n.notifyMu.Lock()
	defer n.notifyMu.Unlock()
	if time.Now().Before(n.notifyUntil) {
		return n.notifyOK
	}
	n.notifyOK = false
	n.notifyUntil = time.Now().Add(time.Second)
	v, err := n.c.Do(ctx, "config", "get", "notify-keyspace-events").Result()
	if err != nil {
		return false
	}
	flags, ok := configValue(v, "notify-keyspace-events")
	if !ok {
		return false
	}
	if notifyFlagsOK(flags) {
		n.notifyOK = true
		return true
	}
	if !enable {
		return false
	}
	if err := n.c.Do(ctx, "config", "set", "notify-keyspace-events", withNotifyFlags(flags)).Err(); err != nil {
		return false
	}
	n.notifyOK = true
	return true
}

// notifyFlagsOK: keyspace channels (K) carrying generic events (g: del,
// rename_from, move_from) and expirations (x); A stands for all classes.
// Evictions (e) are welcome but not required: lock keys should never be evicted.
func notifyFlagsOK(f string) bool {
	return strings.ContainsRune(f, 'K') &&
		(strings.ContainsRune(f, 'A') || (strings.ContainsRune(f, 'g') && strings.ContainsRune(f, 'x')))
}

// withNotifyFlags adds K, g, x and e to the server's current classes.
func withNotifyFlags(f string) string {
	want := "Kgxe"
	if strings.ContainsRune(f, 'A') {
		want = "K"
	}
	for _, c := range want {
		if !strings.ContainsRune(f, c) {
			f += string(c)
		}
	}
	return f
}

// configValue finds name's value in a CONFIG GET reply (a RESP3 map or a RESP2
// flat array).
func configValue(v any, name string) (string, bool) {
	switch r := v.(type) {
	case map[any]any:
		s, ok := r[name].(string)
		return s, ok
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if k, _ := r[i].(string); k == name {
				s, ok := r[i+1].(string)
				return s, ok
			}
		}
	}
	return "", false
}

// isServerError: err is an error reply from the server starting with prefix (not
// a transport error).
func isServerError(err error, prefix string) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), prefix)
}

func toStatus(v any) (status, error) {
	i, ok := v.(int64)
	if !ok || i < -1 || i > 1 {
		return 0, fmt.Errorf("lock: unexpected script reply %v", v)
	}
	return status(i), nil
}

func pair(v any) (int64, int64, error) {
	a, ok := v.([]any)
	if ok && len(a) == 2 {
		x, ok1 := a[0].(int64)
		y, ok2 := a[1].(int64)
		if ok1 && ok2 {
			return x, y, nil
		}
	}
	return 0, 0, fmt.Errorf("lock: unexpected script reply %v", v)
}
