# Sourced by fleetbench's scripts: a throwaway MariaDB server for one script run.
#   build_tools_install         installs make (LuaJIT's build needs it) when missing.
#   private_mariadb_start DIR   installs mariadb-server if mariadbd is missing (apt-get, as
#                               root or with sudo), creates a datadir under DIR, starts
#                               mariadbd on a free loopback port with its own socket and
#                               tmpdir, creates database sbtest and user sbtest/sbtest-pw;
#                               sets MARIADB_PORT and MARIADB_SOCKET.
#   private_mariadb_stop        stops it and removes DIR's datadir.
# Optional settings for private_mariadb_start: PRIVATE_MARIADB_BIND (address, default
# 127.0.0.1), PRIVATE_MARIADB_PORT (default: a free one), PRIVATE_MARIADB_EXEC (a command
# prefix, e.g. "ip netns exec NS", to start the server inside a network namespace),
# PRIVATE_MARIADB_MAX_CONNECTIONS (default 1000; above it the server uses its thread pool,
# so that thousands of client connections do not need thousands of server threads),
# PRIVATE_MARIADB_ARGS (more mariadbd options, after the others: e.g. "--log-bin=binlog
# --server-id=1" for a replication primary).
# Never touches the system service, its configuration or port 3306.

# make: the build of LuaJIT (the embedded Lua of scripts) runs it; installed with apt-get
# (as root or with sudo) when missing.
build_tools_install() {
  command -v make >/dev/null && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "make is missing: install it (apt-get install make)" >&2; return 1; }
    sudo=sudo
  fi
  echo "make is missing: installing it with apt-get" >&2
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends make; } >&2 ||
    { echo "could not install make" >&2; return 1; }
}

private_mariadb_install() {
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "mariadbd is missing: install mariadb-server (apt-get install mariadb-server)" >&2; return 1; }
    sudo=sudo
  fi
  echo "mariadbd is missing: installing mariadb-server with apt-get" >&2
  local policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    # Keep the package from starting the system service.
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy"
  fi
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends mariadb-server; } >&2
  local rc=$?
  [ -n "$policy" ] && $sudo rm -f "$policy"
  [ $rc -eq 0 ] || { echo "could not install mariadb-server" >&2; return 1; }
}

private_mariadb_free_port() {
  # A random high port nobody answers on (bash's /dev/tcp: no extra tools needed).
  local p
  while :; do
    p=$(( 20000 + RANDOM % 30000 ))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

private_mariadb_start() {
  PRIVATE_MARIADB_DIR=$1
  private_mariadb_install || return 1
  local mariadbd install_db client
  mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
  install_db=$(command -v mariadb-install-db || echo /usr/bin/mariadb-install-db)
  client=$(command -v mariadb || echo /usr/bin/mariadb)
  mkdir -p "$PRIVATE_MARIADB_DIR/data" "$PRIVATE_MARIADB_DIR/tmp"
  local user_opt=()
  [ "$(id -u)" -eq 0 ] && user_opt=(--user=root)
  "$install_db" --no-defaults --datadir="$PRIVATE_MARIADB_DIR/data" --tmpdir="$PRIVATE_MARIADB_DIR/tmp" \
    --auth-root-authentication-method=normal --skip-name-resolve --force \
    --skip-test-db "${user_opt[@]}" >"$PRIVATE_MARIADB_DIR/install.log" 2>&1 \
    || { echo "mariadb-install-db failed:" >&2; tail -20 "$PRIVATE_MARIADB_DIR/install.log" >&2; return 1; }
  MARIADB_PORT=${PRIVATE_MARIADB_PORT:-$(private_mariadb_free_port)}
  MARIADB_SOCKET=$PRIVATE_MARIADB_DIR/mysqld.sock
  local pool_opt=()
  # Every connection prepares its statements: room for all of them at any connection count.
  [ "${PRIVATE_MARIADB_MAX_CONNECTIONS:-1000}" -gt 1000 ] &&
    pool_opt=(--thread-handling=pool-of-threads --max-prepared-stmt-count=1048576)
  local exec_prefix=() extra_args=()
  [ -n "${PRIVATE_MARIADB_EXEC:-}" ] && read -r -a exec_prefix <<<"$PRIVATE_MARIADB_EXEC"
  [ -n "${PRIVATE_MARIADB_ARGS:-}" ] && read -r -a extra_args <<<"$PRIVATE_MARIADB_ARGS"
  "${exec_prefix[@]}" "$mariadbd" --no-defaults --datadir="$PRIVATE_MARIADB_DIR/data" --socket="$MARIADB_SOCKET" \
    --port="$MARIADB_PORT" --bind-address="${PRIVATE_MARIADB_BIND:-127.0.0.1}" --tmpdir="$PRIVATE_MARIADB_DIR/tmp" \
    --pid-file="$PRIVATE_MARIADB_DIR/mysqld.pid" --log-error="$PRIVATE_MARIADB_DIR/error.log" \
    --skip-log-bin --skip-name-resolve --innodb-buffer-pool-size=256M \
    --max-connections="${PRIVATE_MARIADB_MAX_CONNECTIONS:-1000}" "${pool_opt[@]}" \
    "${user_opt[@]}" "${extra_args[@]}" >/dev/null 2>&1 &
  PRIVATE_MARIADB_PID=$!
  local i
  for i in $(seq 300); do
    "$client" --no-defaults -S "$MARIADB_SOCKET" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$PRIVATE_MARIADB_PID" 2>/dev/null || { echo "mariadbd exited:" >&2; tail -20 "$PRIVATE_MARIADB_DIR/error.log" >&2; return 1; }
    sleep 0.1
  done
  "$client" --no-defaults -S "$MARIADB_SOCKET" -uroot -e "
    CREATE DATABASE IF NOT EXISTS sbtest;
    CREATE USER 'sbtest'@'%' IDENTIFIED BY 'sbtest-pw';
    CREATE USER 'sbtest'@'localhost' IDENTIFIED BY 'sbtest-pw';
    GRANT ALL ON *.* TO 'sbtest'@'%';
    GRANT ALL ON *.* TO 'sbtest'@'localhost';" \
    || { echo "MariaDB did not come up:" >&2; tail -20 "$PRIVATE_MARIADB_DIR/error.log" >&2; return 1; }
}

private_mariadb_stop() {
  # Safe under `set -e` in an EXIT trap: nothing here may fail the caller.
  [ -n "${PRIVATE_MARIADB_PID:-}" ] || return 0
  kill "$PRIVATE_MARIADB_PID" 2>/dev/null || true
  local i
  for i in $(seq 100); do kill -0 "$PRIVATE_MARIADB_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$PRIVATE_MARIADB_PID" 2>/dev/null || true
  wait "$PRIVATE_MARIADB_PID" 2>/dev/null || true
  PRIVATE_MARIADB_PID=
  rm -rf "$PRIVATE_MARIADB_DIR" || true
}
