#!/usr/bin/env bash
# bench/run.sh - build HotKV, start it and Debian's redis-server on free local
# ports, and run bench-vs.sh against both side by side (A = HotKV, B = Redis).
#
#   bench/run.sh [quick|full|types|default|conns]  (default: full; types: redis-benchmark's
#                                    data-type tests; default: all of a plain redis-benchmark run;
#                                    conns: GET with 50, 1,000 and 10,000 connections)
#   PIPELINE=16 bench/run.sh default every workload pipelined (see bench-vs.sh for the knobs)
#   ROUNDS=5 bench/run.sh full       more rounds per workload
#   MEM=1 bench/run.sh quick         also measure memory per key (1M keys) on both
#   ONLY=lock_release_evalsha bench/run.sh full    one workload (see bench-vs.sh)
# After redis-benchmark's workloads, in mode full (or with EXTRAS=1), it runs bench/txbench (MULTI/EXEC) and
# bench/pubbench (PUBLISH to 1 and 1,000 subscribers) on both servers, then
# bench/lockbench (lock cycles: DELEX IFEQ on HotKV, the EVAL and EVALSHA releases).
#
# Output goes to stdout and to bench/results/<date>-<mode>.txt. Needs
# redis-server, redis-benchmark and redis-cli on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-full}
for t in redis-server redis-benchmark redis-cli go; do
  command -v "$t" >/dev/null || { echo "missing on PATH: $t" >&2; exit 2; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP=$(mktemp -d -t hotkv-bench.XXXXXX)
HK_PORT=$(free_port); RD_PORT=$(free_port)
go build -o "$TMP/hotkv" ./cmd/hotkv
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true   # mode conns: 10,000 connections
"$TMP/hotkv" --port "$HK_PORT" --maxclients 10100 --loglevel warning >"$TMP/hotkv.log" 2>&1 &
HK_PID=$!
redis-server --port "$RD_PORT" --maxclients 10100 --save '' --appendonly no --dir "$TMP" --loglevel warning >"$TMP/redis.log" 2>&1 &
RD_PID=$!
cleanup() { kill "$HK_PID" "$RD_PID" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
for p in "$HK_PORT" "$RD_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$p" PING >/dev/null 2>&1 && break; sleep 0.1; done
done
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-$MODE${PIPELINE:+-P$PIPELINE}${NORAND:+-norand}.txt
{
  echo "# HotKV $(git rev-parse --short HEAD 2>/dev/null || echo '?') vs $(redis-server --version | awk '{print $3}')"
  echo "# A = HotKV (port $HK_PORT), B = redis-server (port $RD_PORT); command: ${PIPELINE:+PIPELINE=$PIPELINE }${NORAND:+NORAND=$NORAND }bench/run.sh $MODE (ROUNDS=${ROUNDS:-3})"
  bench/bench-vs.sh "$HK_PORT" "$RD_PORT" "$MODE"
  if [[ $MODE == full || ${EXTRAS:-0} == 1 ]]; then
    # MULTI/EXEC of 10 INCRs (redis-benchmark cannot send transactions): txbench,
    # interleaved A,B per round, medians and their ratio
    echo; echo "# MULTI + 10 x INCR + EXEC, 50 clients, 5 s per run (bench/txbench)"
    go build -o "$TMP/txbench" ./bench/txbench
    A=(); B=()
    for r in $(seq "${ROUNDS:-3}"); do
      A+=("$("$TMP/txbench" -addr "127.0.0.1:$HK_PORT" -clients 50 -duration 5s | awk '{print $5}')")
      B+=("$("$TMP/txbench" -addr "127.0.0.1:$RD_PORT" -clients 50 -duration 5s | awk '{print $5}')")
    done
    med() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
    MA=$(med "${A[@]}"); MB=$(med "${B[@]}")
    echo "multi_exec_10 A_tx/s=$MA B_tx/s=$MB A/B=$(awk -v a="$MA" -v b="$MB" 'BEGIN {printf "%.3f", a/b}') (runs A: ${A[*]}; B: ${B[*]})"
    # PUBLISH fan-out (redis-benchmark cannot subscribe): pubbench, 10 publishers,
    # 1 and 1,000 subscribers, interleaved A,B per round; delivered messages/s
    go build -o "$TMP/pubbench" ./bench/pubbench
    for subs in 1 1000; do
      A=(); B=()
      for r in $(seq "${ROUNDS:-3}"); do
        A+=("$("$TMP/pubbench" -addr "127.0.0.1:$HK_PORT" -subs "$subs" -duration 5s | awk '{print $9}')")
        B+=("$("$TMP/pubbench" -addr "127.0.0.1:$RD_PORT" -subs "$subs" -duration 5s | awk '{print $9}')")
      done
      MA=$(med "${A[@]}"); MB=$(med "${B[@]}")
      echo "publish_subs$subs A_delivered/s=$MA B_delivered/s=$MB A/B=$(awk -v a="$MA" -v b="$MB" 'BEGIN {printf "%.3f", a/b}') (runs A: ${A[*]}; B: ${B[*]})"
    done
    # Lock cycles (SET NX PX, then release only with the right token): HotKV's
    # DELEX IFEQ against Redis's classic release, the Lua script by EVAL (with
    # its text) and by EVALSHA (what most clients send); -pipeline 1 is a lock
    # user's two round trips, -pipeline 16 keeps 16 cycles in flight per client
    # so that the server is the limit. bench/lockbench (epoll engine: one client
    # thread, as redis-benchmark). ratio = A delex / B eval, as issue 7 asks;
    # A/B_evalsha against the faster EVALSHA.
    go build -o "$TMP/lockbench" ./bench/lockbench
    lb() { "$TMP/lockbench" -addr "127.0.0.1:$1" -release "$2" -pipeline "$pl" -duration 5s | awk '{print $5}'; }
    for pl in 1 16; do
      A=(); B=(); E=(); C=()
      for r in $(seq "${ROUNDS:-3}"); do
        A+=("$(lb "$HK_PORT" delex)"); B+=("$(lb "$RD_PORT" eval)")
        E+=("$(lb "$RD_PORT" evalsha)"); C+=("$(lb "$HK_PORT" evalsha)")
      done
      MA=$(med "${A[@]}"); MB=$(med "${B[@]}"); ME=$(med "${E[@]}"); MC=$(med "${C[@]}")
      r() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
      echo "lock_cycle_P$pl A_delex_cycles/s=$MA B_eval_cycles/s=$MB A/B=$(r "$MA" "$MB") B_evalsha_cycles/s=$ME A/B_evalsha=$(r "$MA" "$ME") A_evalsha_cycles/s=$MC A_evalsha/B_evalsha=$(r "$MC" "$ME") (runs A: ${A[*]}; B eval: ${B[*]}; B evalsha: ${E[*]}; A evalsha: ${C[*]})"
    done
  fi
  if [[ ${MEM:-0} == 1 ]]; then
    echo; echo "# memory per key, 1M keys of 32 bytes"
    echo "## HotKV"; bench/mem-per-key.sh "$HK_PORT" 1000000
    echo "## redis-server"; bench/mem-per-key.sh "$RD_PORT" 1000000
  fi
} 2>&1 | tee "$OUT"
echo "results in $OUT"
