#!/bin/sh
# Debian's PostgreSQL 15 behind the official image's contract: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB make
# the cluster on first start in /var/lib/postgresql/data (the compose volume); later starts reuse it. As there, the
# password may come from a file (POSTGRES_PASSWORD_FILE, a Docker secret), and a first start without one refuses.
set -e
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
  [ -z "${POSTGRES_PASSWORD:-}" ] || { echo "error: both POSTGRES_PASSWORD and POSTGRES_PASSWORD_FILE are set (but are exclusive)" >&2; exit 1; }
  POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
fi
export PGDATA=/var/lib/postgresql/data PATH=/usr/lib/postgresql/15/bin:$PATH
mkdir -p "$PGDATA" /run/postgresql && chown -R postgres:postgres "$PGDATA" /run/postgresql && chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "error: Database is uninitialized and superuser password is not specified: set POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE)" >&2; exit 1; }
  echo "$POSTGRES_PASSWORD" > /tmp/pw && chown postgres /tmp/pw
  runuser -u postgres -- initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile=/tmp/pw --auth-host=scram-sha-256 --auth-local=trust >/dev/null
  rm -f /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  runuser -u postgres -- pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  runuser -u postgres -- createdb -U "${POSTGRES_USER:-postgres}" "${POSTGRES_DB:-${POSTGRES_USER:-postgres}}" 2>/dev/null || true
  runuser -u postgres -- pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*'
