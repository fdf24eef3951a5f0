//go:build !race

package lock

// slow scales the TTLs and tolerances of timing tests (3 under -race).
const slow = 1
