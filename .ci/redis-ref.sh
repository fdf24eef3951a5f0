#!/usr/bin/env bash
# redis-ref.sh [DIR]: builds the reference redis-server, the newest Redis that
# Debian carries (8.6.3, from its experimental source list, read from this
# machine's apt configuration), in DIR/redis, unless it is there already, and
# prints the binary's path. DIR defaults to the cache that the tests look in:
# ${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis-ref (HOTKV_REDIS_REF overrides the
# binary the tests use). About 4 minutes on 2 cores; nothing goes into the repo.
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis-ref}
bin=$dir/redis/src/redis-server
if [[ -x $bin ]]; then echo "$bin"; exit 0; fi
mkdir -p "$dir/apt/lists/partial" "$dir/apt/dl"
mirror=$(sed -n 's/^URIs: *\(.*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[[ -n $mirror ]] || { echo "redis-ref: no Debian mirror in /etc/apt/sources.list.d/debian.sources" >&2; exit 2; }
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror experimental main" >"$dir/apt/sources.list"
o=(-o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$dir/apt/lists")
apt-get "${o[@]}" -qq update >&2
(cd "$dir/apt/dl" && apt-get "${o[@]}" -qq --download-only source redis/experimental >&2)
rm -rf "$dir/redis" && mkdir -p "$dir/redis"
tar -xzf "$dir"/apt/dl/redis_*.orig.tar.gz -C "$dir/redis" --strip-components=1
(cd "$dir/redis" && make -j2 BUILD_TLS=no >"$dir/build.log" 2>&1) || { tail -30 "$dir/build.log" >&2; exit 1; }
"$bin" --version >&2
echo "$bin"
