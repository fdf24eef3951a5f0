#!/usr/bin/env bash
# bench/acl.sh - the cost of the ACL check: two HotKV servers side by side,
# A with its default user restricted to key patterns and categories
# (~key:* ~bench:* +@read +@write +ping +echo: every command is checked,
# every key matched against the patterns), B with the default user that may
# do anything (the check is skipped), SET and GET with 50 clients, through
# bench-vs.sh (A/B near 1.0 is no overhead):
#
#   bench/acl.sh             SET and GET, 3 rounds
#   ROUNDS=5 bench/acl.sh    more rounds (bench-vs.sh's knobs apply)
#
# Output goes to stdout and bench/results/<date>-acl.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP=$(mktemp -d -t hotkv-aclbench.XXXXXX)
go build -o "$TMP/hotkv" ./cmd/hotkv
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }
A=$(free_port); B=$(free_port)
printf 'user default on nopass ~key:* ~bench:* +@read +@write +ping +echo\n' >"$TMP/a.conf"
printf '# the default user: every command, key and channel\n' >"$TMP/b.conf"
for side in "a $A" "b $B"; do
  read -r name port <<<"$side"
  mkdir -p "$TMP/$name"
  "$TMP/hotkv" "$TMP/$name.conf" --port "$port" --dir "$TMP/$name" --loglevel warning >"$TMP/$name.log" 2>&1 &
  PIDS+=($!)
  wait_ping "$port"
done
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-acl.txt
{
  echo "# bench/acl.sh: HotKV $(git rev-parse --short HEAD); A = default user ~key:* ~bench:* +@read +@write +ping +echo, B = default user +@all"
  redis-cli -p "$A" ACL LIST
  ONLY=${ONLY:-set_32B_c50,get_32B_c50} bash bench/bench-vs.sh "$A" "$B" full
} 2>&1 | tee "$OUT"
