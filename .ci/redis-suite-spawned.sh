#!/usr/bin/env bash
# redis-suite-spawned.sh [UNIT...]: runs units of Redis 8.6.3's own Tcl suite
# in the suite's own mode, where it starts the server itself (src/redis-server
# of the tree, with tests/assets/default.conf and its overrides), first with
# HotKV as src/redis-server, then with redis-server 8.6.3, and prints each
# unit's counts side by side:
#
#   unit <name>: hotkv <passed>/<failed>/<exc>   redis <passed>/<failed>/<exc>
#
# counted by suite-count.awk (a unit killed by UNIT_TIMEOUT or ended
# abnormally adds one exception).
#
# The units default to the ones that need a server of their own (tagged
# external:skip, so run-redis-suite.sh cannot run them against a running
# server). Tests tagged cluster are left out (SUITE_TAGS): HotKV has no
# cluster mode and refuses cluster-enabled yes.
#
# Environment:
#   REDIS_SRC     Redis 8.6.3 source tree, built (default: .ci/redis-ref.sh's cache)
#   HOTKV_BIN     the server to test (default: built from this checkout)
#   SUITE_TAGS    --tags filter (default: -cluster)
#   SUITE_ARGS    more test_helper.tcl arguments
#   REF=0         skip the redis-server run
#   UNIT_TIMEOUT  seconds per unit and server (default 900)
#   LOG_DIR       where the logs go (default: a new temp directory)
set -uo pipefail
cd "$(dirname "$0")/.."
units=("$@")
if [[ ${#units[@]} -eq 0 ]]; then
  units=(unit/info unit/maxmemory unit/latency-monitor unit/wait integration/rdb
    integration/convert-zipmap-hash-on-load integration/convert-ziplist-hash-on-load
    integration/convert-ziplist-zset-on-load integration/logging)
fi
REDIS_SRC=${REDIS_SRC:-$(dirname "$(dirname "$(bash .ci/redis-ref.sh)")")}
[[ -f $REDIS_SRC/tests/test_helper.tcl && -x $REDIS_SRC/src/redis-server ]] ||
  { echo "REDIS_SRC=$REDIS_SRC is not a built Redis tree" >&2; exit 2; }
LOG_DIR=${LOG_DIR:-$(mktemp -d -t hotkv-spawned.XXXXXX)}
mkdir -p "$LOG_DIR" || exit 2
work=$(mktemp -d -t hotkv-spawned-tree.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ -z ${HOTKV_BIN:-} ]]; then
  HOTKV_BIN=$work/hotkv
  go build -o "$HOTKV_BIN" ./cmd/hotkv || exit 1
fi
SUITE_TAGS=${SUITE_TAGS--cluster}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-900}
awkf=$PWD/.ci/suite-count.awk

# tree NAME SERVER: a copy of the suite whose src/redis-server is SERVER
tree() {
  local t=$work/$1
  mkdir -p "$t/src"
  cp -r "$REDIS_SRC/tests" "$t/tests"
  cp "$REDIS_SRC/runtest" "$t/"
  for b in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
    ln -sf "$(realpath "$REDIS_SRC/src/$b")" "$t/src/$b"
  done
  cp "$REDIS_SRC"/src/*.sup "$t/src/" 2>/dev/null
  ln -sf "$(realpath "$2")" "$t/src/redis-server"
}

# run NAME UNIT: runs UNIT in tree NAME; prints ok/err/exc
run() {
  local log=$LOG_DIR/$1_${2//\//_}.log
  local tags=()
  [[ -n $SUITE_TAGS ]] && tags=(--tags "$SUITE_TAGS")
  (cd "$work/$1" && TERM=dumb timeout -k 10 "$UNIT_TIMEOUT" ./runtest --single "$2" --clients 1 \
    --durable --timeout 120 "${tags[@]}" ${SUITE_ARGS:-} >"$log" 2>&1 </dev/null)
  local rc=$? p f e
  read -r p f e < <(awk -f "$awkf" "$log")
  if [[ $rc -eq 124 || $rc -eq 137 ]] || ! grep -q -E 'The End|All tests passed' "$log"; then
    e=$((e + 1))
  fi
  echo "$p/$f/$e"
}

tree hotkv "$HOTKV_BIN"
[[ ${REF:-1} != 0 ]] && tree redis "$REDIS_SRC/src/redis-server"
echo "# Redis's Tcl suite, spawned-server mode (tags: ${SUITE_TAGS:-none}; logs: $LOG_DIR)"
for u in "${units[@]}"; do
  line="unit $u: hotkv $(run hotkv "$u")"
  [[ ${REF:-1} != 0 ]] && line+="   redis $(run redis "$u")"
  echo "$line"
done
