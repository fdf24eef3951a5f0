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
REDIS_SERVER=${REDIS_SERVER:-}
if [[ -z $REDIS_SERVER ]]; then
  ref=${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis-ref/redis/src/redis-server
  if [[ -x $ref ]]; then REDIS_SERVER=$ref; else REDIS_SERVER=$(command -v redis-server); fi
fi
ulimit -n 65536 2>/dev/null || true
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP=$(mktemp -d -t hotkv-hostile.XXXXXX)
go build -o "$TMP/hotkv-server" ./cmd/hotkv
go build -o "$TMP/hostile" ./bench/hostile
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
LIMITS=(--maxmemory 100mb --client-output-buffer-limit "normal 64mb 32mb 10" --client-output-buffer-limit "pubsub 32mb 8mb 60"
  --timeout 10 --maxclients 11000 --loglevel warning)
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }
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
    pid=$!; PIDS+=($pid); wait_ping "$port"
    echo; echo "## $side ($(git rev-parse --short HEAD) / $("$REDIS_SERVER" --version | awk '{print $3}'))"
    "$TMP/hostile" -addr "127.0.0.1:$port" -pid "$pid" -for "${FOR:-5s}" -attacks "${ATTACKS:-neverread,bigargs,garbage,idle,slowloris,subscriber}" || echo "!! $side stopped answering"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
} 2>&1 | tee "$OUT"
