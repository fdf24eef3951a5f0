#!/usr/bin/env bash
# bench/replica.sh - a primary's throughput with one replica attached
# (issue 29's bar): SET and lock acquire (SET NX PX) with 50 clients through
# bench-vs.sh, in two runs:
#
#   1. A = HotKV with a HotKV replica, B = redis-server 8.6.3 with a Redis
#      replica (each pair on the same box, synced before the run)
#   2. A = HotKV with a HotKV replica, B = HotKV without one
#
#   bench/replica.sh            3 rounds (bench-vs.sh's knobs apply: ROUNDS=5)
#
# The replicas are checked in sync after each run (master_repl_offset equal
# to the replica's, DEBUG DIGEST equal). REDIS_SERVER is the reference server
# (default: .ci/redis-ref.sh's build, else redis-server on PATH). Output goes
# to stdout and bench/results/<date>-replica.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_tmp replbench
go build -o "$TMP/hotkv" ./cmd/hotkv
start_hotkv() { # name port args...
  local d=$TMP/$1 p=$2; shift 2; mkdir -p "$d"
  "$TMP/hotkv" --port "$p" --dir "$d" --loglevel warning --enable-debug-command yes "$@" >"$d.log" 2>&1 & started $!; wait_ping "$p"
}
start_redis() {
  local d=$TMP/$1 p=$2; shift 2; mkdir -p "$d"
  "$REDIS_SERVER" --port "$p" --dir "$d" --save '' --loglevel warning --enable-debug-command yes "$@" >"$d.log" 2>&1 & started $!; wait_ping "$p"
}
field() { redis-cli -p "$1" INFO replication | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
wait_up() { for _ in $(seq 300); do [[ $(field "$1" master_link_status) == up ]] && return; sleep 0.1; done; echo "replica on $1 not up" >&2; exit 1; }
in_sync() { # primary replica
  for _ in $(seq 300); do
    if [[ $(field "$1" master_repl_offset) == $(field "$2" master_repl_offset) ]]; then
      [[ $(redis-cli -p "$1" DEBUG DIGEST) == $(redis-cli -p "$2" DEBUG DIGEST) ]] && { echo "replica in sync (offset $(field "$1" master_repl_offset), digests equal)"; return; }
    fi
    sleep 0.1
  done
  echo "replica of $1 NOT in sync" >&2; exit 1
}
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-replica.txt
ONLY=${ONLY:-set_32B_c50,lock_acquire_c50}
{
  echo "# bench/replica.sh: HotKV $(git rev-parse --short HEAD) vs $("$REDIS_SERVER" --version | awk '{print $3}'), ONLY=$ONLY ROUNDS=${ROUNDS:-3}"
  A=$(free_port); AR=$(free_port); B=$(free_port); BR=$(free_port)
  start_hotkv hk "$A"; start_hotkv hk-replica "$AR" --replicaof 127.0.0.1 "$A"
  start_redis rd "$B"; start_redis rd-replica "$BR" --replicaof 127.0.0.1 "$B"
  wait_up "$AR"; wait_up "$BR"
  echo; echo "## A = HotKV with a HotKV replica, B = Redis with a Redis replica"
  ONLY=$ONLY bash bench/bench-vs.sh "$A" "$B" full
  echo "HotKV: $(in_sync "$A" "$AR")"; echo "Redis: $(in_sync "$B" "$BR")"
  stop_all
  A=$(free_port); AR=$(free_port); B=$(free_port)
  start_hotkv hk2 "$A"; start_hotkv hk2-replica "$AR" --replicaof 127.0.0.1 "$A"
  start_hotkv hk2-alone "$B"
  wait_up "$AR"
  echo; echo "## A = HotKV with a HotKV replica, B = HotKV without one"
  ONLY=$ONLY bash bench/bench-vs.sh "$A" "$B" full
  echo "HotKV: $(in_sync "$A" "$AR")"
  stop_all
} 2>&1 | tee "$OUT"
