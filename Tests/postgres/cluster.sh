#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests that need one: in a temporary folder, on a free
# loopback port, run by an ordinary user (PostgreSQL refuses to run as root), trust authentication
# on 127.0.0.1 only.
#
#   eval "$(bash Tests/postgres/cluster.sh start)"   # exports CHORUS_TEST_POSTGRES and CHORUS_TEST_PGDATA
#   swift test                                        # the PostgreSQL tests run too
#   bash Tests/postgres/cluster.sh stop               # stops it and removes the folder
#
# Needs Debian's `postgresql` package (initdb and pg_ctl under /usr/lib/postgresql/<version>/bin).
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "initdb not found: install Debian's postgresql package" >&2; exit 1; }

# As root, the cluster belongs to the `postgres` user the package made; otherwise to whoever runs this.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    data=$(mktemp -d /tmp/chorus-pg.XXXXXX)
    [ "$(id -u)" -eq 0 ] && chown postgres "$data"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$data/db" -U chorus -A trust -E UTF8 --no-locale >"$data/initdb.log" 2>&1 \
      || { cat "$data/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c max_connections=200" start >/dev/null \
      || { cat "$data/server.log" >&2; exit 1; }
    echo "export CHORUS_TEST_POSTGRES='postgres://chorus@127.0.0.1:$port/postgres?sslmode=disable'"
    echo "export CHORUS_TEST_PGDATA='$data'"
    ;;
  stop)
    data=${CHORUS_TEST_PGDATA:?"start it first (CHORUS_TEST_PGDATA is not set)"}
    as_owner "$bin/pg_ctl" -D "$data/db" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$data"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
