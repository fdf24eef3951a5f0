#!/usr/bin/env bash
# bench/overhead.sh - what observability costs: HotKV at HEAD with the slow
# log (default threshold), the latency monitor (latency-monitor-threshold
# 100) and the lock view on, side by side with a build without them: by
# default this checkout built with the hotkv_noobserve tag, which compiles
# call's observation steps out and gives the commands no lock view
# (internal/server/observing_off.go), so that the two differ in nothing
# else; BASE=<commit> compares with an older build instead (69498d5: before
# SLOWLOG, LATENCY, MONITOR and the lock view existed).
#
#   bench/overhead.sh              bench-vs.sh (A = HEAD, B = BASE) on SET,
#                                  GET, their -P 16 forms, lock acquire and
#                                  lock release by DELEX; lock cycles with
#                                  bench/lockbench (12 rounds of 3 s, the
#                                  servers alternating, pinned to cpu 0 and
#                                  lockbench to cpu 1: cycles/s and the
#                                  server's CPU a cycle, median of the
#                                  per-round ratios); then instructions per
#                                  command (callgrind)
#   ROUNDS=5 bench/overhead.sh     more rounds (bench-vs.sh's knobs apply)
#   PARTS="callgrind" bench/overhead.sh   only one part (vs, lockbench, callgrind)
#   PIPELINE=1 LB_ROUNDS=20 PARTS=lockbench bench/overhead.sh   lockbench's knobs
#   HEAD_TAGS=hotkv_lockfloor bench/overhead.sh   A built with these tags:
#                                  hotkv_lockfloor makes the lock view count
#                                  events overall and keep nothing per key or
#                                  per lock (internal/locks/countonly_on.go):
#                                  the floor any lock view that counts could
#                                  reach against the same base
#
# Callgrind counts instructions, which the machine's noise does not blur:
# BenchmarkHotPath's SET, GET, DELEX_hit+SET_NX (a lock acquired and
# released) and lock_cycle_800_keys (lockbench -pipeline 16's shape) at
# 200,001 iterations less a run of 1, under
# GODEBUG=asyncpreemptoff=1 and -test.cpu 1. Output goes to stdout and
# bench/results/<date>-overhead.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:-noobserve}
PARTS=${PARTS:-vs lockbench callgrind}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP=$(mktemp -d -t hotkv-overhead.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
HEAD_TAGS=${HEAD_TAGS:-}
go build -tags "$HEAD_TAGS" -o "$TMP/hotkv-head" ./cmd/hotkv
if [[ " $HEAD_TAGS " == *" hotkv_lockfloor "* ]]; then # A must be the floor it claims to be
  go test -tags hotkv_lockfloor -count 1 -run TestCountOnlyKeepsNoState ./internal/locks >/dev/null
fi
if [[ $BASE == noobserve ]]; then
  BASE_TAGS=(-tags hotkv_noobserve); BASE_DIR=.
else
  BASE_TAGS=(); BASE_DIR="$TMP/base"
  git worktree add --detach "$TMP/base" "$BASE" >/dev/null 2>&1
fi
(cd "$BASE_DIR" && go build "${BASE_TAGS[@]}" -o "$TMP/hotkv-base" ./cmd/hotkv)
if [[ $BASE == noobserve ]]; then # the base must be without the view it is measured against
  go test -tags hotkv_noobserve -count 1 -run TestNoObserveReportsNoLocks ./internal/server >/dev/null
fi
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }
PIN=() # a prefix for the servers started (taskset -c 0)
start() { # binary port args...
  local bin=$1 p=$2; shift 2
  "${PIN[@]}" "$bin" --port "$p" --loglevel warning "$@" >"$TMP/$p.log" 2>&1 & PIDS+=($!); wait_ping "$p"
}
stop_all() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; PIDS=(); }
HEAD_ARGS=(--latency-monitor-threshold 100)
info_field() { redis-cli -p "$1" INFO everything | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
metric() { curl -s "127.0.0.1:$1/metrics" | awk -v k="$2" '$1 == k {printf "%.0f", $2}'; }
scrape_check() { # port metrics-port: one line a scrape, "ok" or what was outside
  while sleep 2; do
    lo=$(info_field "$1" total_commands_processed); llo=$(info_field "$1" locks_acquired)
    m=$(metric "$2" redis_commands_processed_total); lm=$(metric "$2" hotkv_locks_acquired_total)
    hi=$(info_field "$1" total_commands_processed); lhi=$(info_field "$1" locks_acquired)
    if (( lo <= m && m <= hi && llo <= lm && lm <= lhi )); then echo ok; else echo "commands $lo<=$m<=$hi locks $llo<=$lm<=$lhi"; fi
  done
}
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-overhead.txt
{
  echo "# bench/overhead.sh: A = HEAD $(git rev-parse --short HEAD)${HEAD_TAGS:+ -tags $HEAD_TAGS} (${HEAD_ARGS[*]}), B = BASE $BASE"
  if [[ " $PARTS " == *" vs "* ]]; then
    A=$(free_port); B=$(free_port); M=$(free_port)
    start "$TMP/hotkv-head" "$A" "${HEAD_ARGS[@]}" --metrics-port "$M"
    start "$TMP/hotkv-base" "$B"
    echo; echo "## redis-benchmark: A = HEAD, B = BASE"
    # meanwhile, A's /metrics every 2 s against INFO before and after it:
    # each counter must lie between the two
    scrape_check "$A" "$M" >"$TMP/scrapes" & checker=$!
    ONLY=${ONLY:-set_32B_c50,get_32B_c50,set_32B_c50_P16,get_32B_c50_P16,lock_acquire_c50,lock_release_delex} \
      bash bench/bench-vs.sh "$A" "$B" full
    kill $checker 2>/dev/null || true; wait $checker 2>/dev/null || true
    echo; echo "## /metrics scraped during the run against INFO (total_commands_processed, locks_acquired)"
    awk '{n++; if ($1 != "ok") bad++} END {printf "%d scrapes, %d outside INFO'"'"'s before..after\n", n, bad}' "$TMP/scrapes"
    grep -v '^ok' "$TMP/scrapes" | head -5 || true
    stop_all
  fi
  if [[ " $PARTS " == *" lockbench "* ]]; then
    go build -o "$TMP/lockbench" ./bench/lockbench
    A=$(free_port); B=$(free_port)
    # the servers on one core, the load generator on the other (taskset, when
    # there are two): a figure of a few percent needs them kept apart
    PIN_SRV=(); PIN_GEN=()
    if command -v taskset >/dev/null && (( $(nproc) >= 2 )); then PIN_SRV=(taskset -c 0); PIN_GEN=(taskset -c 1); fi
    PIN=("${PIN_SRV[@]}")
    start "$TMP/hotkv-head" "$A" "${HEAD_ARGS[@]}"
    start "$TMP/hotkv-base" "$B"
    PIN=()
    pid_of() { pgrep -f -- "--port $1 " | head -1; }
    cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
    LB_ARGS=(-release delex -pipeline "${PIPELINE:-16}" -duration "${LB_SECS:-3}s")
    echo; echo "## lock cycles (lockbench ${LB_ARGS[*]}${PIN_SRV:+, servers pinned to cpu 0 and lockbench to cpu 1}), order alternating"
    echo "## per round: cycles/s and the server's CPU per cycle (utime+stime from /proc); ratios HEAD against BASE"
    : >"$TMP/lb-ratios"
    for round in $(seq "${LB_ROUNDS:-12}"); do
      if (( round % 2 )); then order="$A $B"; else order="$B $A"; fi
      declare -A rate cpu
      for p in $order; do
        redis-cli -p "$p" FLUSHALL >/dev/null
        pid=$(pid_of "$p"); c0=$(cpu_ticks "$pid")
        out=$("${PIN_GEN[@]}" "$TMP/lockbench" -addr "127.0.0.1:$p" "${LB_ARGS[@]}" 2>&1)
        c1=$(cpu_ticks "$pid")
        n=$(grep -o 'cycles [0-9]*' <<<"$out" | head -1 | cut -d' ' -f2)
        rate[$p]=$(grep -o '[0-9.]* cycles/s' <<<"$out" | head -1 | cut -d' ' -f1)
        cpu[$p]=$(awk -v t="$((c1 - c0))" -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", t / hz * 1e9 / n}')
      done
      echo "round $round HEAD ${rate[$A]}/s ${cpu[$A]} ns, BASE ${rate[$B]}/s ${cpu[$B]} ns"
      awk -v ra="${rate[$A]}" -v rb="${rate[$B]}" -v ca="${cpu[$A]}" -v cb="${cpu[$B]}" 'BEGIN {print ra / rb, cb / ca}' >>"$TMP/lb-ratios"
    done
    med() { sort -g | awk '{a[NR] = $1} END {printf "%.3f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
    echo "median of the per-round ratios: cycles/s HEAD/BASE $(cut -d' ' -f1 "$TMP/lb-ratios" | med), server CPU a cycle BASE/HEAD $(cut -d' ' -f2 "$TMP/lb-ratios" | med)"
    stop_all
  fi
  if [[ " $PARTS " == *" callgrind "* ]] && command -v valgrind >/dev/null; then
    echo; echo "## instructions per command (callgrind, BenchmarkHotPath)"
    go test -tags "$HEAD_TAGS" -c -o "$TMP/head.test" ./internal/server
    (cd "$BASE_DIR" && go test "${BASE_TAGS[@]}" -c -o "$TMP/base.test" ./internal/server)
    ir() { # test-binary bench N -> instructions
      GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$1" \
        -test.run '^$' -test.bench "^BenchmarkHotPath$/$2" -test.benchtime "$3x" -test.cpu 1 >/dev/null 2>&1
      callgrind_annotate "$TMP/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",","",$1); print $1; done=1}'
    }
    for bench in '^SET$' '^GET$' '^DELEX_hit\+SET_NX$' '^lock_cycle_800_keys$'; do
      line="$bench"
      for side in base head; do
        big=$(ir "$TMP/$side.test" "$bench" 200001); small=$(ir "$TMP/$side.test" "$bench" 1)
        line="$line $side $(( (big - small) / 200000 ))"
      done
      echo "$line"
    done
  fi
} 2>&1 | tee "$OUT"
