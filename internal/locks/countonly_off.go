//go:build !hotkv_lockfloor

package locks

// countOnly makes the Table count lock events overall and keep nothing per
// key or per lock: no states, no index, no held locks. Never, except in a
// build with the hotkv_lockfloor tag, which exists only to measure the floor
// of the lock view's cost (what the commands' reports and the overall
// counters cost by themselves: bench/overhead.sh with HEAD_TAGS).
const countOnly = false
