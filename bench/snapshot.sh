#!/usr/bin/env bash
# bench/snapshot.sh - snapshots without stopping the world, side by side:
# HotKV and redis-server 8.6.3 (same dataset, same write load, one after
# the other on this machine), each running BGSAVE, BGREWRITEAOF and CONFIG
# SET appendonly yes while bench/snapprobe's probe client sends PING every
# 20 ms and 4 clients send SETs. Prints each operation's duration, the
# probe's longest wait and p99, and the writes acknowledged meanwhile.
# First comes the control, `none`: the write load alone for 10 s (on two
# cores the load generator and the server share the processors, and the
# probe waits for one even without a snapshot: read the operations' figures
# against it).
#
#   bench/snapshot.sh                 1,000,000 keys, 2 rounds
#   KEYS=5000000 ROUNDS=1 bench/snapshot.sh
#   OPS=bgsave bench/snapshot.sh      some operations only (default:
#                                     none,bgsave,bgrewriteaof,appendonly)
#   RATE=10000 bench/snapshot.sh      the writers paced to 10,000 SETs/s in
#                                     all (default 0: as fast as the server
#                                     answers, which on two cores leaves no
#                                     processor idle)
#
# REDIS_SERVER is the reference server (default: the cached 8.6.3 build,
# else redis-server on PATH). Output goes to stdout and
# bench/results/<date>-snapshot.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
KEYS=${KEYS:-1000000}
ROUNDS=${ROUNDS:-2}
OPS=${OPS:-none,bgsave,bgrewriteaof,appendonly}
RATE=${RATE:-0}
bench_tmp snapbench
go build -o "$TMP/hotkv" ./cmd/hotkv
go build -o "$TMP/snapprobe" ./bench/snapprobe
mkdir -p bench/results "$TMP/hk" "$TMP/rd"
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-snapshot.txt
A=$(free_port); B=$(free_port)
"$TMP/hotkv" --port "$A" --dir "$TMP/hk" --loglevel warning --enable-debug-command yes >"$TMP/hk.log" 2>&1 & started $!
"$REDIS_SERVER" --port "$B" --dir "$TMP/rd" --save '' --loglevel warning --enable-debug-command yes >"$TMP/rd.log" 2>&1 & started $!
wait_ping "$A"; wait_ping "$B"
{
  echo "# bench/snapshot.sh: HotKV $(git rev-parse --short HEAD) vs $("$REDIS_SERVER" --version | awk '{print $3}'), KEYS=$KEYS ROUNDS=$ROUNDS OPS=$OPS RATE=$RATE"
  for r in $(seq "$ROUNDS"); do
    echo "## round $r"
    "$TMP/snapprobe" -addr "127.0.0.1:$A" -keys "$KEYS" -name HotKV -ops "$OPS" -rate "$RATE"
    "$TMP/snapprobe" -addr "127.0.0.1:$B" -keys "$KEYS" -name Redis -ops "$OPS" -rate "$RATE"
  done
} | tee "$OUT"
