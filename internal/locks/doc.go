// Package locks is the server's view of the distributed locks clients take
// with it (docs/ARCHITECTURE.md, "The lock view"): which keys are held, by
// which token (its digest), since when, and what happened to every lock:
// acquired, refused (contention), released by its token, released with a token
// that no longer matched (a stale holder), extended, expired while still held,
// or removed some other way.
//
// A lock is a string key taken with SET ... NX and an expiry (EX, PX, EXAT or
// PXAT), by a client or a script. The commands report what they did as they
// do it (Acquire, Release, Refuse, Stale); a change to a held key that no
// command explained (DEL, an overwrite, a PEXPIRE, a script's DEL after its
// GET) is judged by the server after the command from what the key holds now
// (Check). Expiry, FLUSHDB/FLUSHALL and
// SWAPDB come from the keyspace's observer hooks.
//
// The package is pure: times are inputs (the server's monotonic clock in
// microseconds), and nothing here reads a clock or does I/O. A Table is not
// safe for concurrent use: the server calls it with the engine lock held.
package locks
