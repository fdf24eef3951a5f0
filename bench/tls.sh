#!/usr/bin/env bash
# bench/tls.sh - TLS side by side: HotKV and redis-server, both serving
# only TLS (port 0, tls-port, the same RSA 2048 certificates, client
# certificates required), SET and GET with 50 clients, plain and -P 16,
# through bench-vs.sh (A = HotKV, B = Redis):
#
#   bench/tls.sh            4 workloads, 3 rounds
#   ROUNDS=5 bench/tls.sh   more rounds (bench-vs.sh's knobs apply)
#
# REDIS_TLS_SERVER is the reference (default: redis-server on PATH, Debian's
# build, which has TLS; the .ci/redis-ref.sh build has none). Output goes to
# stdout and bench/results/<date>-tls.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
REDIS_TLS_SERVER=${REDIS_TLS_SERVER:-$(command -v redis-server)}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP=$(mktemp -d -t hotkv-tlsbench.XXXXXX)
go build -o "$TMP/hotkv" ./cmd/hotkv
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
# a CA, a server and a client certificate
(
  cd "$TMP"
  openssl genrsa -out ca.key 2048 2>/dev/null
  openssl req -x509 -new -nodes -sha256 -key ca.key -days 2 -subj '/O=HotKV bench/CN=CA' -out ca.crt
  for n in server client; do
    openssl genrsa -out $n.key 2048 2>/dev/null
    openssl req -new -sha256 -key $n.key -subj "/O=HotKV bench/CN=$n" |
      openssl x509 -req -sha256 -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out $n.crt 2>/dev/null
  done
)
TLS_SRV=(--port 0 --tls-cert-file "$TMP/server.crt" --tls-key-file "$TMP/server.key" --tls-ca-cert-file "$TMP/ca.crt")
export TLS_ARGS="--tls --cert $TMP/client.crt --key $TMP/client.key --cacert $TMP/ca.crt"
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" $TLS_ARGS PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }
A=$(free_port); B=$(free_port)
mkdir -p "$TMP/hk" "$TMP/rd"
"$TMP/hotkv" "${TLS_SRV[@]}" --tls-port "$A" --dir "$TMP/hk" --loglevel warning >"$TMP/hk.log" 2>&1 & PIDS+=($!)
"$REDIS_TLS_SERVER" "${TLS_SRV[@]}" --tls-port "$B" --dir "$TMP/rd" --save '' --appendonly no --loglevel warning >"$TMP/rd.log" 2>&1 & PIDS+=($!)
wait_ping "$A"; wait_ping "$B"
mkdir -p bench/results
OUT=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-tls.txt
{
  echo "# bench/tls.sh: HotKV $(git rev-parse --short HEAD) vs $("$REDIS_TLS_SERVER" --version | awk '{print $3}'), both TLS only"
  ONLY=${ONLY:-set_32B_c50,get_32B_c50,set_32B_c50_P16,get_32B_c50_P16} bash bench/bench-vs.sh "$A" "$B" full
} 2>&1 | tee "$OUT"
