# Sourced by fleetbench's scripts: a throwaway PostgreSQL server for one script run.
#   private_postgres_start DIR  installs postgresql and postgresql-contrib if initdb is
#                               missing (apt-get, as root or with sudo), runs initdb into
#                               DIR, starts the newest installed postgres on a free loopback
#                               port with its socket and log in DIR, creates role
#                               sbtest/sbpass (SCRAM) owning database sbtest (with
#                               pg_stat_statements); exports PRIVATE_PG_PORT and
#                               PRIVATE_PG_SOCKET_DIR (psql -h "$PRIVATE_PG_SOCKET_DIR" -U
#                               postgres: the superuser, no password over the socket).
#   private_postgres_stop       stops it and removes its directory.
# Optional settings for private_postgres_start: PRIVATE_PG_PORT (default: a free one),
# PRIVATE_PG_BIND (address, default 127.0.0.1; on another one sbtest may log in from
# anywhere), PRIVATE_PG_MAX_CONNECTIONS (default 1000).
# PostgreSQL refuses to run as root: as root the server runs as the `postgres` account the
# package creates (`nobody` without it), in a directory of its own under /tmp if it cannot
# reach DIR (mktemp -d makes directories only their owner may enter).
# Never touches the system's clusters, their configuration or port 5432.

private_postgres_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
  d=$(command -v initdb) || return 1
  dirname "$d"
}

private_postgres_install() {
  private_postgres_bindir >/dev/null && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "initdb is missing: install PostgreSQL (apt-get install postgresql postgresql-contrib)" >&2; return 1; }
    sudo=sudo
  fi
  echo "initdb is missing: installing postgresql and postgresql-contrib with apt-get" >&2
  local policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    # Keep the package from starting the system service.
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy"
  fi
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib; } >&2
  local rc=$?
  [ -n "$policy" ] && $sudo rm -f "$policy"
  [ $rc -eq 0 ] || { echo "could not install postgresql" >&2; return 1; }
}

private_postgres_free_port() {
  # A random high port nobody answers on (bash's /dev/tcp: no extra tools needed).
  local p
  while :; do
    p=$(( 20000 + RANDOM % 30000 ))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# Runs a command as the server's account.
private_postgres_as() {
  if [ -n "${PRIVATE_PG_USER:-}" ]; then runuser -u "$PRIVATE_PG_USER" -- "$@"; else "$@"; fi
}

private_postgres_start() {
  PRIVATE_PG_DIR=$1
  PRIVATE_PG_HOME=$1
  private_postgres_install || return 1
  PRIVATE_PG_BIN=$(private_postgres_bindir) || { echo "initdb not found" >&2; return 1; }
  PRIVATE_PG_USER=
  mkdir -p "$PRIVATE_PG_HOME" || return 1
  if [ "$(id -u)" -eq 0 ]; then
    PRIVATE_PG_USER=postgres
    id postgres >/dev/null 2>&1 || PRIVATE_PG_USER=nobody
    chown "$PRIVATE_PG_USER" "$PRIVATE_PG_HOME"
    if ! runuser -u "$PRIVATE_PG_USER" -- test -w "$PRIVATE_PG_HOME"; then
      PRIVATE_PG_HOME=$(mktemp -d /tmp/private-postgres.XXXXXX) || return 1
      chown "$PRIVATE_PG_USER" "$PRIVATE_PG_HOME"
    fi
  fi
  local data=$PRIVATE_PG_HOME/data
  # Run from the directory: the caller's (under /root, say) may be closed to that account.
  (cd "$PRIVATE_PG_HOME" && private_postgres_as "$PRIVATE_PG_BIN/initdb" -D "$data" -U postgres -A trust \
    -E UTF8 --locale=C --no-sync) >"$PRIVATE_PG_HOME/initdb.log" 2>&1 \
    || { echo "initdb failed:" >&2; tail -20 "$PRIVATE_PG_HOME/initdb.log" >&2; return 1; }
  local bind=${PRIVATE_PG_BIND:-127.0.0.1}
  {
    echo "local all all trust"
    echo "host all all 127.0.0.1/32 scram-sha-256"
    if [ "$bind" != 127.0.0.1 ]; then
      echo "host all all 0.0.0.0/0 scram-sha-256"
      echo "host all all ::/0 scram-sha-256"
    fi
  } >"$data/pg_hba.conf"
  local port=${PRIVATE_PG_PORT:-} attempt
  for attempt in 1 2 3 4 5; do
    [ -n "${PRIVATE_PG_PORT:-}" ] || port=$(private_postgres_free_port)
    # In the cluster's own configuration file, read by no other cluster.
    cat >>"$data/postgresql.conf" <<EOF

# private_postgres_start (attempt $attempt; later lines win)
listen_addresses = '$bind'
port = $port
unix_socket_directories = '$PRIVATE_PG_HOME'
max_connections = ${PRIVATE_PG_MAX_CONNECTIONS:-1000}
shared_preload_libraries = 'pg_stat_statements'
EOF
    (cd "$PRIVATE_PG_HOME" && private_postgres_as "$PRIVATE_PG_BIN/pg_ctl" start -w -t 60 -D "$data" \
      -l "$PRIVATE_PG_HOME/postgres.log") >/dev/null 2>&1 && break
    # Only a port taken between probing and binding is worth another try.
    if [ -n "${PRIVATE_PG_PORT:-}" ] || ! grep -q "Address already in use" "$PRIVATE_PG_HOME/postgres.log" 2>/dev/null || [ $attempt -eq 5 ]; then
      echo "postgres did not start:" >&2; tail -20 "$PRIVATE_PG_HOME/postgres.log" >&2; return 1
    fi
  done
  export PRIVATE_PG_PORT=$port PRIVATE_PG_SOCKET_DIR=$PRIVATE_PG_HOME
  "$PRIVATE_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PRIVATE_PG_HOME" -p "$port" -U postgres -d postgres >/dev/null <<'EOF' \
    || { echo "PostgreSQL setup failed:" >&2; tail -20 "$PRIVATE_PG_HOME/postgres.log" >&2; return 1; }
SET password_encryption = 'scram-sha-256';
CREATE ROLE sbtest LOGIN PASSWORD 'sbpass';
CREATE DATABASE sbtest OWNER sbtest;
\c sbtest
CREATE EXTENSION pg_stat_statements;
EOF
}

private_postgres_stop() {
  # Safe under `set -e` in an EXIT trap: nothing here may fail the caller.
  [ -n "${PRIVATE_PG_HOME:-}" ] || return 0
  if [ -f "$PRIVATE_PG_HOME/data/postmaster.pid" ]; then
    (cd "$PRIVATE_PG_HOME" && private_postgres_as "$PRIVATE_PG_BIN/pg_ctl" stop -w -t 30 -m fast -D "$PRIVATE_PG_HOME/data") >/dev/null 2>&1 ||
      (cd "$PRIVATE_PG_HOME" && private_postgres_as "$PRIVATE_PG_BIN/pg_ctl" stop -w -m immediate -D "$PRIVATE_PG_HOME/data") >/dev/null 2>&1 || true
  fi
  rm -rf "$PRIVATE_PG_HOME" || true
  [ "$PRIVATE_PG_DIR" = "$PRIVATE_PG_HOME" ] || rm -rf "$PRIVATE_PG_DIR" || true
  PRIVATE_PG_HOME=
}
