#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests and benchmarks: no system service, no password, one folder.
#
#   scripts/pg-cluster.sh start <dir> [port]   initdb (first time) + start; prints the admin URL on stdout
#   scripts/pg-cluster.sh stop <dir>           stops it (the folder stays; delete it to start afresh)
#   scripts/pg-cluster.sh install-pgvector     builds pgvector from vendor/ and installs it (needs root and
#                                              postgresql-server-dev-15)
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user, in a folder that user
# owns. `fsync=off`: a test cluster never has to survive a power cut (benchmarks say when they set it).
set -euo pipefail
cmd=${1:-}
root=$(cd "$(dirname "$0")/.." && pwd)

bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  echo "PostgreSQL server binaries (initdb) not found: apt-get install postgresql" >&2; exit 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    dir=${2:?usage: pg-cluster.sh start <dir> [port]}
    port=${3:-54329}
    bin=$(bindir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir" && chmod 700 "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null \
      || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    dir=${2:?usage: pg-cluster.sh stop <dir>}
    as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  install-pgvector)
    tmp=$(mktemp -d)
    tar -xzf "$root/vendor/pgvector-0.8.6.tar.gz" -C "$tmp"
    make -s -C "$tmp/pgvector-0.8.6" >/dev/null
    make -s -C "$tmp/pgvector-0.8.6" install >/dev/null
    rm -rf "$tmp"
    ;;
  *)
    echo "usage: pg-cluster.sh start <dir> [port] | stop <dir> | install-pgvector" >&2; exit 2
    ;;
esac
