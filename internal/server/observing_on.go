//go:build !hotkv_noobserve

package server

// observing is whether call feeds the operator's view: the slow log, the
// latency monitor and per-command histograms, MONITOR, HOTKEYS and the lock
// view. Always, except in a build with the hotkv_noobserve tag, which exists
// only to measure what they cost (bench/overhead.sh builds its base with it;
// docs/observability.md).
const observing = true
