#!/usr/bin/env bash
# redis-exporter.sh [DIR]: builds oliver006/redis_exporter v1.88.0 (the
# Prometheus exporter most Redis dashboards are made for) with the Go module
# proxy into DIR, unless it is there already, and prints the binary's path.
# DIR defaults to the cache the tests look in:
# ${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis_exporter-v1.88.0
# (HOTKV_REDIS_EXPORTER overrides the binary the tests use). Nothing goes into
# the repo: the build happens in a throwaway module.
set -euo pipefail
version=v1.88.0
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis_exporter-$version}
bin=$dir/redis_exporter
if [[ -x $bin ]]; then echo "$bin"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  go mod init hotkv-tools/redis-exporter >/dev/null 2>&1
  go get "github.com/oliver006/redis_exporter@$version" >&2
  mkdir -p "$dir"
  GOBIN=$dir go install github.com/oliver006/redis_exporter >&2
)
"$bin" --version >&2 || true
echo "$bin"
