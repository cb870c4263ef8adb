#!/bin/bash
# The parts of the official postgres image's entrypoint our tests rely on.
set -euo pipefail

if [[ "${1:-}" == -* ]]; then set -- postgres "$@"; fi
if [[ "${1:-}" != postgres ]]; then exec "$@"; fi

: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${PGDATA:=/var/lib/postgresql/data}"

# Re-exec as the postgres user; exec keeps postgres as PID 1.
if [[ $(id -u) -eq 0 ]]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  if [[ -z "${POSTGRES_PASSWORD:-}" && "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]]; then
    echo 'error: POSTGRES_PASSWORD is not set (or POSTGRES_HOST_AUTH_METHOD=trust)' >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  {
    echo "host all all all $auth"
    echo "host replication all all $auth"
  } >>"$PGDATA/pg_hba.conf"
  # Init server on the unix socket only, as the official image does.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
  if [[ "$POSTGRES_DB" != postgres ]]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -q \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "running $f"; bash "$f" ;;
      *.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -q -f "$f" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  echo 'PostgreSQL init process complete; ready for start up.'
fi

exec postgres -c listen_addresses='*' "${@:2}"
