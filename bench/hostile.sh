#!/usr/bin/env bash
# bench/hostile.sh - the hostile-client battery (bench/hostile) against HotKV
# and redis-server side by side, each started with the same limits:
# maxmemory 100mb, client-output-buffer-limit normal 64mb 32mb 10 and
# pubsub 32mb 8mb 60, timeout 10, maxclients 11000, proto-max-bulk-len 512mb.
# For each attack: the probe's p50/p99/longest PING wait, peak RSS, and
# whether the server still answers.
#
#   bench/hostile.sh                 both servers, 5 s an attack
#   FOR=10s ATTACKS=neverread bench/hostile.sh
#
# REDIS_SERVER is the reference (default: .ci/redis-ref.sh's build, else
# redis-server on PATH). Needs `ulimit -n` above 11000 for the idle attack.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ulimit -n 65536 2>/dev/null || true
bench_tmp hostile
go build -o "$TMP/hotkv-server" ./cmd/hotkv
go build -o "$TMP/hostile" ./bench/hostile
LIMITS=(--maxmemory 100mb --client-output-buffer-limit "normal 64mb 32mb 10" --client-output-buffer-limit "pubsub 32mb 8mb 60"
  --timeout 10 --maxclients 11000 --loglevel warning)
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-hostile.txt
{
  for side in hotkv redis; do
    port=$(free_port); mkdir -p "$TMP/$side"
    if [[ $side == hotkv ]]; then
      "$TMP/hotkv-server" --port "$port" --dir "$TMP/$side" "${LIMITS[@]}" >"$TMP/$side.log" 2>&1 &
    else
      "$REDIS_SERVER" --port "$port" --dir "$TMP/$side" --save '' --appendonly no "${LIMITS[@]}" >"$TMP/$side.log" 2>&1 &
    fi
    pid=$!; started "$pid"; wait_ping "$port"
    echo; echo "## $side ($(git rev-parse --short HEAD) / $("$REDIS_SERVER" --version | awk '{print $3}'))"
    "$TMP/hostile" -addr "127.0.0.1:$port" -pid "$pid" -for "${FOR:-5s}" -attacks "${ATTACKS:-neverread,bigargs,garbage,idle,slowloris,subscriber}" || echo "!! $side stopped answering"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
} 2>&1 | tee "$OUT"
