// Package introspect holds the operator's view of the server that Redis
// keeps beside the keyspace: the slow log (SLOWLOG), the latency monitor's
// event series (LATENCY LATEST, HISTORY, GRAPH, DOCTOR), the line a
// MONITOR client reads for each command, and a HOTKEYS session with its
// top-K sketch (Redis's Cuckoo Heavy Keeper). It is pure: times and
// randomness come in as arguments, and the server decides what to record
// (from its one execution path, internal/server's call) and when.
package introspect
