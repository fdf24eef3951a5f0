# bench/lib.sh - what the side-by-side scripts share. Source it from the
# repository's root, then call bench_tmp:
#
#   . bench/lib.sh
#   bench_tmp aofbench      # TMP: a fresh directory; PIDS: servers to stop
#
# REDIS_SERVER is the reference server: as given, else the cached 8.6.3
# build (.ci/redis-ref.sh), else redis-server on PATH.
REDIS_SERVER=${REDIS_SERVER:-}
if [[ -z $REDIS_SERVER ]]; then
  ref=${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis-ref/redis/src/redis-server
  if [[ -x $ref ]]; then REDIS_SERVER=$ref; else REDIS_SERVER=$(command -v redis-server); fi
fi

# free_port prints a TCP port free on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_ping waits up to 10 s for a server on port $1 to answer PING.
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }

# bench_tmp NAME makes TMP (hotkv-NAME.XXXXXX) and empties PIDS; at exit the
# servers started are killed and TMP removed.
bench_tmp() {
  TMP=$(mktemp -d -t "hotkv-$1.XXXXXX")
  PIDS=()
  trap cleanup EXIT
}

# started PID records a server started in the background: in PIDS, and in
# TMP/pids for the exit's cleanup, which does not see PIDS when the server
# was started in a subshell (a `{ ...; } | tee` block that set -e ended).
started() { PIDS+=("$1"); echo "$1" >>"$TMP/pids"; }

# stop_all kills the servers started (PIDS) and waits for them.
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
  : >"$TMP/pids" # they are gone: no stale number for cleanup to kill
}

cleanup() {
  if [[ -f $TMP/pids ]]; then
    while read -r p; do kill "$p" 2>/dev/null || true; done <"$TMP/pids"
  fi
  stop_all
  rm -rf "$TMP"
}
