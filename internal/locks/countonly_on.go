//go:build hotkv_lockfloor

package locks

// countOnly: see countonly_off.go. This build measures the floor of the lock
// view's cost; it is not a build to run.
const countOnly = true
