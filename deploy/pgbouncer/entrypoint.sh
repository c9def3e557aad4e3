#!/bin/sh
# PgBouncer in transaction pooling, from its environment (compose and deploy/kubernetes set these):
#   DB_HOST, DB_PORT (5432), DB_NAME, DB_USER      the Postgres it pools, and the one database and role it serves
#   DB_PASSWORD or DB_PASSWORD_FILE                 that role's password: clients log in with it (SCRAM), and so does
#                                                   PgBouncer to Postgres
#   POOL_SIZE (20)        server connections to Postgres at most: the budget's number (docs/operations.md)
#   MAX_CLIENT_CONN (500) client connections at most: every process's PG_POOL_MAX, over every replica, fits in it
#   LISTEN_PORT (5432)
set -eu
: "${DB_HOST:?set DB_HOST to the Postgres host}" "${DB_NAME:?set DB_NAME}" "${DB_USER:?set DB_USER}"
if [ -n "${DB_PASSWORD_FILE:-}" ]; then
  [ -z "${DB_PASSWORD:-}" ] || { echo "pgbouncer: set either DB_PASSWORD or DB_PASSWORD_FILE, not both" >&2; exit 78; }
  DB_PASSWORD=$(cat "$DB_PASSWORD_FILE")
fi
: "${DB_PASSWORD:?set DB_PASSWORD or DB_PASSWORD_FILE to the password of DB_USER}"
dir=$(mktemp -d /tmp/pgbouncer.XXXXXX)
# auth_file quotes a value in double quotes, doubling any inside it.
printf '"%s" "%s"\n' "$(printf %s "$DB_USER" | sed 's/"/""/g')" "$(printf %s "$DB_PASSWORD" | sed 's/"/""/g')" > "$dir/userlist.txt"
chmod 600 "$dir/userlist.txt"
cat > "$dir/pgbouncer.ini" <<INI
[databases]
$DB_NAME = host=$DB_HOST port=${DB_PORT:-5432} dbname=$DB_NAME
[pgbouncer]
listen_addr = 0.0.0.0
listen_port = ${LISTEN_PORT:-5432}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
; A server connection goes back to the pool at each transaction's end: nothing in the services keeps a session
; across transactions (no named prepared statements, no session SET, advisory locks or LISTEN).
pool_mode = transaction
default_pool_size = ${POOL_SIZE:-20}
max_db_connections = ${POOL_SIZE:-20}
max_client_conn = ${MAX_CLIENT_CONN:-500}
ignore_startup_parameters = extra_float_digits
INI
exec pgbouncer "$dir/pgbouncer.ini"
