#!/usr/bin/env bash
# A multi-host lab on one machine: each host is a network namespace with its own address
# on a private bridge, running its own MariaDB (port 3306) and fleetbench agent (port 7600,
# with a token), so the master / slave / mycat topology can be tried without three boxes.
# A host named mycat or proxy is the lab's proxy host: besides its own MariaDB and agent it
# runs HAProxy (TCP mode) on port 8066, Mycat's port, routing MySQL connections to the first
# host that is not a proxy host (the primary) and to the others only as backups, when the
# primary fails HAProxy's MySQL health check. HAProxy forwards connections whole, it does
# not shard or split reads from writes as Mycat does.
# A host named slave or replica (or slaveN, replicaN) is a real replica of the primary:
# MariaDB replication by GTID from the primary's binary log, set up at the primary's
# position once both are up, so everything written to the primary from then on (tables
# prepared, rows changed) is applied on it. Replicas stay writable, so tables can still be
# sharded over primary and replica (sysbench's sharded topology). Every host's agent can
# observe its host (`--observe`, `observers = [...]`): the lab's hosts share one kernel, so
# what an observer sees of CPU and disks is the whole machine's.
#
#   deploy/lab.sh up [HOST...]   hosts (default: master slave mycat) on a free 10.231.X.0/24
#   deploy/lab.sh env            prints the lab's addresses, proxy and token file as shell
#                                variables (LAB_IP_HOST, LAB_AGENTS, LAB_PROXY=IP:8066,
#                                LAB_REPLICA_HOST=PRIMARY, ...)
#   deploy/lab.sh down           stops what `up` started and removes what it made
#
# Several labs can be up at once: each has a name (FLEETBENCH_LAB_NAME, 1-8 of a-z0-9;
# default derived from its directory) that prefixes everything it creates (namespaces
# fblab-NAME-HOST, bridge fb-NAME, veths fb-NAME-I) and its own /24. The script touches only
# what it made: `up` writes a marker file ($LAB/.fleetbench-lab) into a directory it
# creates (or that is empty) and records each namespace, link and process in $LAB/made as
# it makes them; `down` refuses a directory without the marker, and removes only what the
# record names, then the files it wrote. `up` refuses to start over a namespace or bridge
# of the same name (another lab with this name is up), rather than deleting it.
#
# Processes enter a namespace with `nsenter --net` (util-linux) rather than `ip netns exec`,
# which also remounts /sys and fails where / is not a mount point (chroots).
# Needs root, iproute2, util-linux, mariadb-server and, with a proxy host, haproxy (both
# installed on demand with apt-get) and the release binaries (built on demand;
# FLEETBENCH_BIN=DIR uses others). State lives in $FLEETBENCH_LAB_DIR (default
# /tmp/fleetbench-lab); a proxy host's HAProxy configuration, pid file, log (one line per
# connection) and stats socket are in $FLEETBENCH_LAB_DIR/HOST/.
# Example after `up`:
#   eval "$(deploy/lab.sh env)"
#   fleetbench oltp_read_write --agents "$LAB_AGENTS" --token-file "$LAB_TOKEN_FILE" \
#     --mysql-host="$LAB_IP_master" --mysql-user=sbtest --mysql-password=sbtest-pw prepare
#   fleetbench oltp_read_write --agents "$LAB_AGENTS" --token-file "$LAB_TOKEN_FILE" \
#     --mysql-host="${LAB_PROXY%:*}" --mysql-port=8066 --db-ps-mode=disable \
#     --mysql-user=sbtest --mysql-password=sbtest-pw prepare     # through HAProxy to master
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/private-mariadb.sh

lab=${FLEETBENCH_LAB_DIR:-/tmp/fleetbench-lab}
bin=${FLEETBENCH_BIN:-target/release}
marker=.fleetbench-lab
proxy_port=8066
# The passwordless, privilege-less user HAProxy's MySQL health check logs in as (on each
# backend, from the proxy hosts' addresses only): a check that logs in and quits cleanly
# does not count as a failed connection, which would get the proxy's address blocked
# (max_connect_errors) after a while.
check_user=fleetbench_check

die() { echo "lab: $*" >&2; exit 1; }

# The lab's name: given, or a short checksum of its directory's absolute path.
lab_name() {
  local name=${FLEETBENCH_LAB_NAME:-}
  if [ -z "$name" ]; then
    local abs
    abs=$(realpath -m "$lab")
    name=l$(( $(printf '%s' "$abs" | cksum | cut -d' ' -f1) % 10000000 ))
  fi
  [[ $name =~ ^[a-z0-9]{1,8}$ ]] || die "lab name '$name' must be 1-8 characters of a-z0-9 (FLEETBENCH_LAB_NAME)"
  echo "$name"
}

# Appends one thing `up` made to the record, before the next step can fail.
made() { echo "$*" >> "$lab/made"; }

# A host with one of these names is a proxy host.
is_proxy() { [ "$1" = mycat ] || [ "$1" = proxy ]; }

# A host with one of these names replicates the primary.
is_replica() { [[ $1 =~ ^(slave|replica)[0-9]*$ ]]; }

# Runs SQL as root over the socket of lab host NAME's MariaDB; extra client options first.
host_sql() {
  local name=$1
  shift
  "$client" --no-defaults -S "$lab/$name/db/mysqld.sock" -uroot "$@"
}

# Makes lab host REPLICA a replica of PRIMARY (both up): a replication user on the primary
# for the replica's address only, then the replica starts at the primary's GTID position and
# must be running within 15 s.
replicate() {
  local r=$1 p=$2 pw pos state
  pw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  host_sql "$p" -e "CREATE USER 'fleetbench_repl'@'${ips[$r]}' IDENTIFIED BY '$pw';
    GRANT REPLICATION SLAVE ON *.* TO 'fleetbench_repl'@'${ips[$r]}'" ||
    die "could not create the replication user on $p"
  pos=$(host_sql "$p" -N -e "SELECT @@gtid_binlog_pos") || die "could not read $p's GTID position"
  host_sql "$r" -e "SET GLOBAL gtid_slave_pos = '$pos';
    CHANGE MASTER TO MASTER_HOST='${ips[$p]}', MASTER_PORT=3306, MASTER_USER='fleetbench_repl',
      MASTER_PASSWORD='$pw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;
    START SLAVE" || die "could not start replication on $r"
  made "replica $r $p"
  for _ in $(seq 150); do
    state=$(host_sql "$r" -e "SHOW SLAVE STATUS\G")
    grep -q 'Slave_IO_Running: Yes' <<<"$state" && grep -q 'Slave_SQL_Running: Yes' <<<"$state" && break
    sleep 0.1
  done
  grep -q 'Slave_IO_Running: Yes' <<<"$state" && grep -q 'Slave_SQL_Running: Yes' <<<"$state" ||
    die "replication $p -> $r did not start: $(grep -E 'Last_(IO|SQL)_Error:' <<<"$state" | tr -s ' ' | tr '\n' ' ')"
  echo "lab $(lab_name): $r replicates $p (MariaDB replication by GTID)"
}

haproxy_bin() { command -v haproxy || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; }; }

# Installs haproxy if it is missing, as private_mariadb_install does mariadb-server: with
# apt-get, without letting the package start its own service.
haproxy_install() {
  haproxy_bin >/dev/null && return 0
  echo "lab: haproxy is missing: installing it with apt-get" >&2
  local policy="" rc=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
  fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy; } >&2 || rc=$?
  [ -z "$policy" ] || rm -f "$policy"
  if [ "$rc" -ne 0 ] || ! haproxy_bin >/dev/null; then
    die "a proxy host (mycat or proxy) runs HAProxy, which is missing and could not be installed: apt-get install haproxy (or leave the proxy host out)"
  fi
}

# Writes the HAProxy configuration of proxy host NAME at IP, routing to the backends given
# as NAME=IP: TCP mode on IP:8066, the first backend the primary, the others backups, MySQL
# health checks as $check_user.
haproxy_config() {
  local name=$1 ip=$2 dir=$lab/$1 b backup=""
  shift 2
  {
    echo "# HAProxy for the lab's proxy host $name (written by deploy/lab.sh up)"
    echo "global"
    echo "    maxconn 4000"
    echo "    log stdout format raw local0"
    echo "    stats socket $dir/haproxy.sock mode 600 level user"
    echo "defaults"
    echo "    mode tcp"
    echo "    log global"
    echo "    option tcplog"
    echo "    timeout connect 5s"
    echo "    timeout client 1h"
    echo "    timeout server 1h"
    echo "listen mysql"
    echo "    bind $ip:$proxy_port"
    echo "    option mysql-check user $check_user post-41"
    for b in "$@"; do
      echo "    server ${b%%=*} ${b#*=}:3306 check inter 2s$backup"
      backup=" backup"
    done
  } > "$dir/haproxy.cfg"
}

# True once something listens on the proxy port in namespace NS.
proxy_listens() { [ -n "$(nsenter --net="/run/netns/$1" ss -Hltn "sport = :$proxy_port")" ]; }

is_lab() { [ -f "$lab/$marker" ] && [ "$(head -c 14 "$lab/$marker")" = "fleetbench-lab" ]; }

up() {
  [ "$(id -u)" -eq 0 ] || die "run as root (namespaces and a bridge are created)"
  command -v ip >/dev/null || die "iproute2 (ip) is missing: apt-get install iproute2"
  command -v flock >/dev/null || die "util-linux (flock, nsenter) is missing"
  local names=("$@") name
  [ ${#names[@]} -gt 0 ] || names=(master slave mycat)
  [ ${#names[@]} -le 99 ] || die "at most 99 hosts"
  for name in "${names[@]}"; do
    [[ $name =~ ^[A-Za-z0-9_]{1,32}$ ]] || die "host name '$name' must be 1-32 of A-Za-z0-9_"
    case $name in token|hosts|made) die "host name '$name' is taken by the lab's own files" ;; esac
  done
  # Proxy hosts route to the others: there must be some, and HAProxy must be there.
  local proxies=() backends=()
  for name in "${names[@]}"; do
    if is_proxy "$name"; then proxies+=("$name"); else backends+=("$name"); fi
  done
  if [ ${#proxies[@]} -gt 0 ] && [ ${#backends[@]} -eq 0 ]; then
    die "the proxy host ${proxies[0]} routes to the other hosts: give at least one host not named mycat or proxy"
  fi
  # Replicas replicate the primary, the first host that is neither proxy nor replica.
  local replicas=() primary=""
  for name in "${backends[@]}"; do
    if is_replica "$name"; then replicas+=("$name"); elif [ -z "$primary" ]; then primary=$name; fi
  done
  if [ ${#replicas[@]} -gt 0 ] && [ -z "$primary" ]; then
    die "the replica host ${replicas[0]} needs a primary: give a host not named slave, replica, mycat or proxy"
  fi
  local labname bridge
  labname=$(lab_name)
  bridge=fb-$labname
  if is_lab; then
    die "a lab is already up in $lab: deploy/lab.sh down first"
  elif [ -e "$lab" ] && [ -n "$(ls -A "$lab" 2>/dev/null)" ]; then
    die "$lab exists and is not an empty directory: give another FLEETBENCH_LAB_DIR"
  fi
  [ -x "$bin/fleetbench-agent" ] || cargo build --release --locked --bins -q
  [ ${#proxies[@]} -eq 0 ] || haproxy_install
  # Another lab of this name owns these: refuse rather than delete them.
  ! ip link show "$bridge" >/dev/null 2>&1 || die "bridge $bridge exists: a lab named $labname is up elsewhere (set FLEETBENCH_LAB_NAME)"
  for name in "${names[@]}"; do
    [ ! -e "/run/netns/fblab-$labname-$name" ] || die "namespace fblab-$labname-$name exists: a lab named $labname is up elsewhere (set FLEETBENCH_LAB_NAME)"
  done
  local created=no
  [ -d "$lab" ] || { mkdir -p "$lab"; created=yes; }
  printf 'fleetbench-lab %s\n' "$labname" > "$lab/$marker"
  : > "$lab/made"
  made "name $labname"
  made "dir-created $created"
  head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$lab/token"
  chmod 600 "$lab/token"
  # Choosing a free /24 and taking it (the bridge's address) is one step for all labs.
  local net x inuse
  exec 9>/run/fleetbench-lab.lock
  flock 9
  # Read in full first: `ip ... | grep -q` fails under pipefail when grep's early exit
  # leaves ip writing into a closed pipe, and a taken /24 would then look free.
  inuse=$(ip -o -4 addr show)
  for x in $(seq 1 254); do
    grep -q " 10\.231\.$x\." <<<"$inuse" || { net=10.231.$x; break; }
  done
  [ -n "${net:-}" ] || die "no free 10.231.X.0/24 left for a lab"
  ip link add "$bridge" type bridge
  made "link $bridge"
  ip addr add "$net.1/24" dev "$bridge"
  flock -u 9
  exec 9>&-
  made "net $net"
  ip link set "$bridge" up
  # Each host's address, by its place in the list.
  local i=0 ip ns p client
  local -A ips=()
  for name in "${names[@]}"; do
    i=$((i + 1))
    ips[$name]=$net.$((10 + i))
  done
  client=$(command -v mariadb || echo /usr/bin/mariadb)
  i=0
  local server_args
  for name in "${names[@]}"; do
    i=$((i + 1))
    ip=${ips[$name]}
    ns=fblab-$labname-$name
    # The primary writes a binary log for its replicas; every server has its own id.
    server_args="--server-id=$i"
    [ "$name" != "$primary" ] || server_args+=" --log-bin=binlog --binlog-format=ROW"
    ip netns add "$ns"
    made "netns $ns"
    echo "$name $ip" >> "$lab/hosts"
    mkdir -p "$lab/$name"
    ip link add "$bridge-$i" type veth peer name eth0 netns "$ns"
    made "link $bridge-$i"
    ip link set "$bridge-$i" master "$bridge" up
    nsenter --net="/run/netns/$ns" ip addr add "$ip/24" dev eth0
    nsenter --net="/run/netns/$ns" ip link set eth0 up
    nsenter --net="/run/netns/$ns" ip link set lo up
    # MariaDB inside the namespace, on the host's own address.
    PRIVATE_MARIADB_BIND=$ip PRIVATE_MARIADB_PORT=3306 PRIVATE_MARIADB_EXEC="nsenter --net=/run/netns/$ns" \
      PRIVATE_MARIADB_ARGS=$server_args private_mariadb_start "$lab/$name/db"
    made "mariadbd $PRIVATE_MARIADB_PID $name"
    if ! is_proxy "$name"; then
      for p in "${proxies[@]}"; do
        "$client" --no-defaults -S "$MARIADB_SOCKET" -uroot -e "CREATE USER '$check_user'@'${ips[$p]}'" ||
          die "could not create the health-check user on $name's MariaDB"
      done
    fi
    # The agent inside the namespace.
    FLEETBENCH_TOKEN=$(cat "$lab/token") nsenter --net="/run/netns/$ns" \
      "$bin/fleetbench-agent" --listen "$ip:7600" >"$lab/$name/agent.out" 2>"$lab/$name/agent.log" &
    made "agent $! $name"
    for _ in $(seq 100); do grep -q '^listening on' "$lab/$name/agent.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^listening on' "$lab/$name/agent.out" || die "the agent on $name did not start: $(cat "$lab/$name/agent.log")"
    echo "lab $labname: $name at $ip (MariaDB $ip:3306, agent $ip:7600)"
  done
  for name in "${replicas[@]}"; do replicate "$name" "$primary"; done
  # The proxies, once their backends are up.
  local haproxy="" b targets
  [ ${#proxies[@]} -eq 0 ] || haproxy=$(haproxy_bin)
  for name in "${proxies[@]}"; do
    ip=${ips[$name]}
    ns=fblab-$labname-$name
    targets=()
    for b in "${backends[@]}"; do targets+=("$b=${ips[$b]}"); done
    haproxy_config "$name" "$ip" "${targets[@]}"
    nsenter --net="/run/netns/$ns" "$haproxy" -c -q -f "$lab/$name/haproxy.cfg" ||
      die "HAProxy refuses $lab/$name/haproxy.cfg"
    nsenter --net="/run/netns/$ns" "$haproxy" -db -f "$lab/$name/haproxy.cfg" \
      </dev/null >"$lab/$name/haproxy.log" 2>&1 &
    made "haproxy $! $name"
    echo $! > "$lab/$name/haproxy.pid"
    for _ in $(seq 100); do proxy_listens "$ns" && break; sleep 0.1; done
    proxy_listens "$ns" || die "HAProxy on $name did not start: $(cat "$lab/$name/haproxy.log")"
    echo "lab $labname: $name runs HAProxy on $ip:$proxy_port -> ${backends[0]} (primary)${backends[1]:+, backup ${backends[*]:1}}"
  done
  echo "lab $labname: token in $lab/token; eval \"\$(deploy/lab.sh env)\" for the addresses"
}

env_vars() {
  is_lab && [ -e "$lab/hosts" ] || die "no lab is up in $lab"
  local agents=() name ip
  while read -r name ip; do
    echo "LAB_IP_$name=$ip"
    agents+=("$ip:7600")
  done < "$lab/hosts"
  echo "LAB_AGENTS=$(IFS=,; echo "${agents[*]}")"
  # Proxy hosts are the ones with a HAProxy in the record; LAB_PROXY is the first.
  local kind pid first=""
  while read -r kind pid name; do
    [ "$kind" = haproxy ] || continue
    ip=$(awk -v n="$name" '$1 == n { print $2 }' "$lab/hosts")
    echo "LAB_PROXY_$name=$ip:$proxy_port"
    [ -n "$first" ] || { first=$ip:$proxy_port; echo "LAB_PROXY=$first"; }
  done < "$lab/made"
  local replica of
  while read -r kind replica of; do
    if [ "$kind" = replica ]; then echo "LAB_REPLICA_$replica=$of"; fi
  done < "$lab/made"
  echo "LAB_TOKEN_FILE=$lab/token"
  echo "LAB_NAME=$(sed -n 's/^name //p' "$lab/made")"
}

# True if PID is still the process the record names (not a reused pid).
still() {
  local pid=$1 what=$2
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$what"
}

down() {
  [ -e "$lab" ] || die "$lab does not exist"
  is_lab || die "$lab is not a lab directory (no $marker from deploy/lab.sh up): refusing to touch it"
  local kind a b created=no labname=""
  # Processes first, then namespaces, then links, newest first.
  if [ -e "$lab/made" ]; then
    while read -r kind a b; do
      case $kind in
        agent) still "$a" fleetbench-agent && kill "$a" 2>/dev/null || true ;;
        haproxy) still "$a" haproxy && stop_haproxy "$a" ;;
        mariadbd) still "$a" mariadbd && PRIVATE_MARIADB_PID=$a private_mariadb_stop_pid ;;
      esac
    done < <(tac "$lab/made")
    while read -r kind a b; do
      case $kind in
        netns) ip netns del "$a" 2>/dev/null || true ;;
        link) ip link del "$a" 2>/dev/null || true ;;
        dir-created) created=$a ;;
        name) labname=$a ;;
      esac
    done < <(tac "$lab/made")
  fi
  # Only the files `up` wrote.
  if [ -e "$lab/hosts" ]; then
    while read -r a _; do
      [[ $a =~ ^[A-Za-z0-9_]+$ ]] && rm -rf -- "${lab:?}/$a"
    done < "$lab/hosts"
  fi
  rm -f -- "$lab/token" "$lab/hosts" "$lab/made" "$lab/$marker"
  [ "$created" = yes ] && rmdir -- "$lab" 2>/dev/null || true
  echo "lab ${labname:-?}: down"
}

# Stops a HAProxy started by an earlier `up` (SIGTERM: it closes its connections and
# exits at once) and waits until it is gone.
stop_haproxy() {
  kill "$1" 2>/dev/null || true
  for _ in $(seq 50); do still "$1" haproxy || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}

# Stops a server started by an earlier `up` (another shell, so not our child).
private_mariadb_stop_pid() {
  kill "$PRIVATE_MARIADB_PID" 2>/dev/null || true
  local i
  for i in $(seq 100); do kill -0 "$PRIVATE_MARIADB_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$PRIVATE_MARIADB_PID" 2>/dev/null || true
}

case "${1:-}" in
  up) shift; up "$@" ;;
  env) env_vars ;;
  down) down ;;
  *) echo "usage: deploy/lab.sh up [HOST...] | env | down" >&2; exit 2 ;;
esac
