// Package metrics is HotKV's built-in Prometheus endpoint and status page
// (docs/observability.md, decisions/0048): /metrics, /status.json and / on
// the metrics-port listener.
//
// The collector reads the server's own counters at scrape time and adds
// nothing to a command's path: the server hands it a Snapshot (INFO
// everything's text, a few CONFIG values, the slow log's head, LATENCY
// LATEST, the per-command latency histograms and the lock view), taken under
// the engine lock. Metric names, types and labels are redis_exporter's, so
// that its dashboards work unchanged; the lock view's metrics are HotKV's own
// (hotkv_locks_*, hotkv_lock_*).
package metrics
