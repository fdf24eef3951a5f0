#!/usr/bin/env bash
# bench/refusal-latency.sh - under appendfsync always, how long a reader and a
# refused lock acquisition wait while other clients write: HotKV and
# redis-server 8.6.3 side by side, each with DEBUG aof-flush-sleep (a slow
# disk: every AOF flush sleeps SLEEP_US first; on this machine's virtual disk
# an fsync takes about 0.15 ms, too short to tell) and WRITERS clients doing
# INCR in a loop, while one probe client sends N requests one at a time:
# GET of a key no writer touches, then SET of a held key NX PX (refused).
#
#   bench/refusal-latency.sh                 SLEEP_US=20000 WRITERS=3 N=50
#
# Prints the probe's latency (p50, p90, max, ms) per server and request.
# REDIS_SERVER is the reference server (default: .ci/redis-ref.sh's build,
# else redis-server on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
SLEEP_US=${SLEEP_US:-20000} WRITERS=${WRITERS:-3} N=${N:-50}
. bench/lib.sh
bench_tmp refusal
go build -o "$TMP/hotkv" ./cmd/hotkv
A=$(free_port); B=$(free_port)
mkdir -p "$TMP/a" "$TMP/b"
common=(--appendonly yes --appendfsync always --enable-debug-command yes --loglevel warning)
"$TMP/hotkv" --port "$A" --dir "$TMP/a" "${common[@]}" >"$TMP/a.log" 2>&1 & started $!
"$REDIS_SERVER" --port "$B" --dir "$TMP/b" --save '' "${common[@]}" >"$TMP/b.log" 2>&1 & started $!
wait_ping "$A"; wait_ping "$B"
echo "# bench/refusal-latency.sh: HotKV $(git rev-parse --short HEAD) vs $("$REDIS_SERVER" --version | awk '{print $3}'), appendfsync always, aof-flush-sleep ${SLEEP_US} us, $WRITERS writers, $N probes"
for side in "HotKV $A" "Redis $B"; do
  read -r name port <<<"$side"
  redis-cli -p "$port" SET other x >/dev/null
  redis-cli -p "$port" SET lock:held tok-a PX 600000 >/dev/null
  redis-cli -p "$port" DEBUG aof-flush-sleep "$SLEEP_US" >/dev/null
  python3 - "$name" "$port" "$WRITERS" "$N" <<'PY'
import socket, sys, threading, time
name, port, writers, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stop = False
def writer():
    s = socket.create_connection(("127.0.0.1", port))
    while not stop:
        s.sendall(b"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"); s.recv(64)
threads = [threading.Thread(target=writer) for _ in range(writers)]
for t in threads: t.start()
time.sleep(0.3)
s = socket.create_connection(("127.0.0.1", port))
def probe(req, want):
    lat = []
    for _ in range(n):
        t = time.perf_counter(); s.sendall(req); got = s.recv(64)
        lat.append((time.perf_counter() - t) * 1000)
        assert got == want, got
    lat.sort()
    return "p50 %.1f p90 %.1f max %.1f ms" % (lat[len(lat)//2], lat[len(lat)*9//10], lat[-1])
get = probe(b"*2\r\n$3\r\nGET\r\n$5\r\nother\r\n", b"$1\r\nx\r\n")
nx = probe(b"*6\r\n$3\r\nSET\r\n$9\r\nlock:held\r\n$5\r\ntok-b\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n", b"$-1\r\n")
stop = True
for t in threads: t.join()
print("%s: GET of an untouched key: %s; refused SET NX PX: %s" % (name, get, nx))
PY
  redis-cli -p "$port" DEBUG aof-flush-sleep 0 >/dev/null
done
