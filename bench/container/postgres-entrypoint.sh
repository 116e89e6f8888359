#!/bin/sh
# STAND-IN entrypoint (see postgres.Containerfile): on an empty PGDATA, initdb with POSTGRES_USER and the
# password from POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD), password sign-in (scram-sha-256) from any
# address, POSTGRES_DB created; then the server as the postgres user, listening on every interface. While it
# initialises it listens on its socket only, as the official image does, so a client that can connect over
# TCP meets the finished database.
set -eu
if [ "${1:-}" != postgres ]; then exec "$@"; fi
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then password=$(cat "$POSTGRES_PASSWORD_FILE"); else password=${POSTGRES_PASSWORD:-}; fi
if [ -z "$password" ]; then echo 'stand-in postgres: set POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD)' >&2; exit 1; fi
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$password" > "$pwfile"
  chown postgres "$pwfile"
  as_postgres initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 > /dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start > /dev/null
  if [ "$db" != postgres ]; then as_postgres createdb -U "$user" "$db"; fi
  as_postgres pg_ctl -D "$PGDATA" -m fast -w stop > /dev/null
  echo "stand-in postgres: initialised $db for $user"
fi
shift
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -c listen_addresses='*' "$@"
