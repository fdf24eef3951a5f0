#!/usr/bin/env bash
# bench/aof.sh - the append-only file side by side: HotKV and redis-server
# 8.6.3 with the same AOF settings on the same disk (both directories under
# one temporary directory), SET and lock acquire (SET NX PX) with 50
# clients, through bench-vs.sh (A = HotKV, B = Redis):
#
#   bench/aof.sh            appendfsync everysec, always, and HotKV everysec
#                           against HotKV without AOF
#   ROUNDS=5 bench/aof.sh   more rounds (bench-vs.sh's knobs apply)
#   POLICIES=always NOAOF=0 bench/aof.sh   one policy, without the last part
#
# Then the fsyncs per second each server makes under the SET load with
# appendfsync always, and the SETs each fsync carried, counted with perf's
# syscall tracepoints (else strace, which slows both: its figure is only a
# count).
#
# REDIS_SERVER is the reference server (default: .ci/redis-ref.sh's build,
# else redis-server on PATH). Output goes to stdout and
# bench/results/<date>-aof.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_tmp aofbench
go build -o "$TMP/hotkv" ./cmd/hotkv
start_hotkv() { # name port args...
  local d=$TMP/$1 p=$2; shift 2; mkdir -p "$d"
  "$TMP/hotkv" --port "$p" --dir "$d" --loglevel warning "$@" >"$d.log" 2>&1 & started $!; wait_ping "$p"
}
start_redis() {
  local d=$TMP/$1 p=$2; shift 2; mkdir -p "$d"
  "$REDIS_SERVER" --port "$p" --dir "$d" --save '' --loglevel warning "$@" >"$d.log" 2>&1 & started $!; wait_ping "$p"
}
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-aof.txt
ONLY=${ONLY:-set_32B_c50,lock_acquire_c50}
{
  echo "# bench/aof.sh: HotKV $(git rev-parse --short HEAD) vs $("$REDIS_SERVER" --version | awk '{print $3}'), ONLY=$ONLY ROUNDS=${ROUNDS:-3}"
  for policy in ${POLICIES:-everysec always}; do
    A=$(free_port); B=$(free_port)
    start_hotkv hk-$policy "$A" --appendonly yes --appendfsync "$policy"
    start_redis rd-$policy "$B" --appendonly yes --appendfsync "$policy"
    echo; echo "## appendfsync $policy: A = HotKV, B = Redis"
    ONLY=$ONLY bash bench/bench-vs.sh "$A" "$B" full
    if [[ $policy == always ]]; then
      # perf's syscall tracepoints count without slowing the servers much;
      # strace stops both at every fsync (its figure is only a count)
      if perf stat -e syscalls:sys_enter_fdatasync true >/dev/null 2>&1; then how=perf
      elif command -v strace >/dev/null; then how=strace
      else how=; fi
      [[ -n $how ]] && { echo; echo "## fsyncs per second and commands per fsync under SET -c 50 (5 s, counted with $how)"; }
      for side in "HotKV $A ${PIDS[0]}" "Redis $B ${PIDS[1]}"; do
        [[ -n $how ]] || break
        read -r name port pid <<<"$side"
        redis-benchmark -p "$port" -c 50 -n 100000000 -r 100000 -t set -q >/dev/null 2>&1 & bp=$!
        sleep 1
        c0=$(redis-cli -p "$port" INFO commandstats | awk -F'[=,:]' '/^cmdstat_set:/{print $3}')
        if [[ $how == perf ]]; then
          n=$(perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "$pid" -- sleep 5 2>&1 | awk -F, '{s+=$1} END{print s+0}')
        else
          n=$( (timeout -s INT 5 strace -f -c -e trace=fsync,fdatasync -p "$pid" 2>&1 || true) | awk '$NF=="fsync"||$NF=="fdatasync"{s+=$4} END{print s+0}')
        fi
        c1=$(redis-cli -p "$port" INFO commandstats | awk -F'[=,:]' '/^cmdstat_set:/{print $3}')
        kill $bp 2>/dev/null || true; wait $bp 2>/dev/null || true
        echo "$name: $((n / 5)) fsyncs/s, $(( (c1 - c0) / (n > 0 ? n : 1) )) SETs per fsync"
      done
    fi
    stop_all
  done
  [[ ${NOAOF:-1} == 0 ]] && exit 0
  A=$(free_port); B=$(free_port)
  start_hotkv hk-aof "$A" --appendonly yes --appendfsync everysec
  start_hotkv hk-noaof "$B"
  echo; echo "## HotKV: A = appendfsync everysec, B = no AOF"
  ONLY=$ONLY bash bench/bench-vs.sh "$A" "$B" full
  stop_all
} 2>&1 | tee "$OUT"
