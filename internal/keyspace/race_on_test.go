//go:build race

package keyspace

// raceOn: the race detector is on; its instrumentation changes allocation
// counts, so tests that count allocations skip that part.
const raceOn = true
