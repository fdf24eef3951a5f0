package lock

import "errors"

// The errors of this package. Obtain, Refresh, Release and TTL return them (or
// wrap them: test with errors.Is); any other error is a transport or server error
// (connection refused, timeout, WRONGTYPE because the key holds a non-string...),
// returned as the client gave it.
var (
	// ErrNotObtained: Obtain gave up. The lock was held by someone else on every
	// attempt and the retry strategy stopped, or the context ended (then the error
	// also wraps ctx.Err()).
	ErrNotObtained = errors.New("lock: not obtained")

	// ErrNotHeld: the lock's key now holds another owner's token. This Lock's
	// validity ran out and someone else obtained the lock since.
	ErrNotHeld = errors.New("lock: held by another owner")

	// ErrExpired: the lock's key is gone (its TTL ran out, or it was deleted
	// behind the lock's back), or the lock's validity passed locally without a
	// successful refresh (then the key may still be there until the server expires
	// it). Nobody may rely on the lock any more.
	ErrExpired = errors.New("lock: expired")

	// ErrReleased: Release was already called on this Lock.
	ErrReleased = errors.New("lock: already released")

	// ErrInvalidTTL: a TTL below one millisecond.
	ErrInvalidTTL = errors.New("lock: ttl must be at least 1ms")

	// ErrNotReplicated is what Obtain returns when WithReplicaSync is set and
	// fewer replicas than asked acknowledged the acquisition in time: the
	// lock was released again (a failover could have lost it).
	ErrNotReplicated = errors.New("lock: not acknowledged by enough replicas")
)
