//go:build race

package lock

// slow scales the TTLs and tolerances of timing tests under the race detector,
// which makes every command several times slower.
const slow = 3
