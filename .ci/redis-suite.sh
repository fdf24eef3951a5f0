#!/usr/bin/env bash
# redis-suite.sh HOST PORT [UNIT...]: runs units of Redis 8.6.3's own Tcl
# suite against a running server (the suite's external mode: tests tagged
# external:skip are left out by the suite) and prints a line per unit and a
# total:
#
#   unit <name>: <passed> passed, <failed> failed, <exc> exceptions/timeouts
#
# (counted by suite-count.awk; a unit killed by UNIT_TIMEOUT or ended
# abnormally adds one exception). The units default to the 35 that the
# project's bar counts; Redis 8.6.3 itself passes 2273 tests of them.
#
# Environment:
#   REDIS_SRC     Redis 8.6.3 source tree (default: .ci/redis-ref.sh's cache)
#   SUITE_TAGS    --tags filter (default: no slow tests, nothing that needs
#                 DEBUG, replication, SAVE, PFDEBUG, LATENCY, maxmemory or a
#                 local server process)
#   SUITE_ARGS    more test_helper.tcl arguments (e.g. --singledb)
#   UNIT_TIMEOUT  seconds per unit (default 600)
#   LOG_DIR       where the logs go (default: a new temp directory)
set -uo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: $0 HOST PORT [UNIT...]" >&2; exit 2; }
host=$1 port=$2
shift 2
units=("$@")
if [[ ${#units[@]} -eq 0 ]]; then
  units=(unit/type/string unit/expire unit/keyspace unit/type/incr unit/info-command
    unit/protocol unit/pubsub unit/scripting unit/multi unit/type/hash unit/type/list
    unit/type/set unit/type/zset unit/querybuf unit/introspection unit/introspection-2
    unit/info-keysizes unit/other unit/functions unit/tracking unit/type/hash-field-expire
    unit/type/list-3 unit/bitops unit/bitfield unit/hyperloglog unit/sort unit/scan
    unit/dump unit/geo unit/type/stream unit/type/stream-cgroups unit/slowlog unit/quit
    unit/pause unit/lazyfree)
fi
REDIS_SRC=${REDIS_SRC:-$(dirname "$(dirname "$(bash .ci/redis-ref.sh)")")}
[[ -f $REDIS_SRC/tests/test_helper.tcl ]] || { echo "REDIS_SRC=$REDIS_SRC has no tests/test_helper.tcl" >&2; exit 2; }
SUITE_TAGS=${SUITE_TAGS--slow -needs:debug -needs:repl -needs:save -needs:pfdebug -needs:latency -needs:config-maxmemory -needs:local-process}
LOG_DIR=${LOG_DIR:-$(mktemp -d -t hotkv-suite.XXXXXX)}
mkdir -p "$LOG_DIR" || exit 2
awkf=$PWD/.ci/suite-count.awk
echo "# Redis's Tcl suite against $host:$port (tags: ${SUITE_TAGS:-none}; logs: $LOG_DIR)"
tp=0 tf=0 te=0
for u in "${units[@]}"; do
  log=$LOG_DIR/${u//\//_}.log
  tags=()
  [[ -n $SUITE_TAGS ]] && tags=(--tags "$SUITE_TAGS")
  # shellcheck disable=SC2086
  (cd "$REDIS_SRC" && TERM=dumb timeout -k 10 "${UNIT_TIMEOUT:-600}" tclsh tests/test_helper.tcl \
    --host "$host" --port "$port" --single "$u" --clients 1 --timeout 120 --durable \
    "${tags[@]}" ${SUITE_ARGS:-} >"$log" 2>&1 </dev/null)
  rc=$?
  read -r p f e < <(awk -f "$awkf" "$log")
  if [[ $rc -eq 124 || $rc -eq 137 ]] || ! grep -q -E 'The End|All tests passed' "$log"; then
    e=$((e + 1))
  fi
  echo "unit $u: $p passed, $f failed, $e exceptions/timeouts"
  tp=$((tp + p)) tf=$((tf + f)) te=$((te + e))
done
echo "total (${#units[@]} units): $tp passed, $tf failed, $te exceptions/timeouts"
