#!/usr/bin/env bash
# A multi-host lab on one machine: each host is a network namespace with its own address
# on a private bridge, running its own MariaDB (port 3306) and fleetbench agent (port 7600,
# with a token), so the master / slave / mycat topology can be tried without three boxes.
#
#   deploy/lab.sh up [NAME...]   hosts (default: master slave mycat) on 10.231.0.0/24
#   deploy/lab.sh env            prints the lab's addresses and token file as shell variables
#   deploy/lab.sh down           stops everything and removes the namespaces and the bridge
#
# Processes enter a namespace with `nsenter --net` (util-linux) rather than `ip netns exec`,
# which also remounts /sys and fails where / is not a mount point (chroots).
# Needs root, iproute2, mariadb-server (installed on demand) and the release binaries
# (built on demand; FLEETBENCH_BIN=DIR uses others). State lives in $FLEETBENCH_LAB_DIR
# (default /tmp/fleetbench-lab).
# Example after `up`:
#   eval "$(deploy/lab.sh env)"
#   fleetbench oltp_read_write --agents "$LAB_AGENTS" --token-file "$LAB_TOKEN_FILE" \
#     --mysql-host="$LAB_IP_master" --mysql-user=sbtest --mysql-password=sbtest-pw prepare
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/private-mariadb.sh

lab=${FLEETBENCH_LAB_DIR:-/tmp/fleetbench-lab}
bin=${FLEETBENCH_BIN:-target/release}
bridge=fblab0
net=10.231.0

die() { echo "lab: $*" >&2; exit 1; }

up() {
  [ "$(id -u)" -eq 0 ] || die "run as root (namespaces and a bridge are created)"
  command -v ip >/dev/null || die "iproute2 (ip) is missing: apt-get install iproute2"
  [ ! -e "$lab/hosts" ] || die "a lab is already up in $lab: deploy/lab.sh down first"
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || names=(master slave mycat)
  [ -x "$bin/fleetbench-agent" ] || cargo build --release --locked --bins -q
  mkdir -p "$lab"
  # Leftovers of a lab that died without `down` (same fixed names) would block this one.
  local stale
  for stale in "${names[@]}"; do ip netns del "fblab-$stale" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$lab/token"
  chmod 600 "$lab/token"
  ip link add "$bridge" type bridge
  ip addr add "$net.1/24" dev "$bridge"
  ip link set "$bridge" up
  local i=0 name ip
  for name in "${names[@]}"; do
    i=$((i + 1))
    ip=$net.$((10 + i))
    ip netns add "fblab-$name"
    echo "$name $ip" >> "$lab/hosts"   # recorded at once, so `down` removes a half-made host
    ip link add "fbl-$i" type veth peer name eth0 netns "fblab-$name"
    ip link set "fbl-$i" master "$bridge" up
    nsenter --net="/run/netns/fblab-$name" ip addr add "$ip/24" dev eth0
    nsenter --net="/run/netns/fblab-$name" ip link set eth0 up
    nsenter --net="/run/netns/fblab-$name" ip link set lo up
    # MariaDB inside the namespace, on the host's own address.
    PRIVATE_MARIADB_BIND=$ip PRIVATE_MARIADB_PORT=3306 PRIVATE_MARIADB_EXEC="nsenter --net=/run/netns/fblab-$name" \
      private_mariadb_start "$lab/$name/db"
    echo "$PRIVATE_MARIADB_PID" > "$lab/$name/db.pid"
    # The agent inside the namespace.
    FLEETBENCH_TOKEN=$(cat "$lab/token") nsenter --net="/run/netns/fblab-$name" \
      "$bin/fleetbench-agent" --listen "$ip:7600" >"$lab/$name/agent.out" 2>"$lab/$name/agent.log" &
    echo $! > "$lab/$name/agent.pid"
    local n
    for n in $(seq 100); do grep -q '^listening on' "$lab/$name/agent.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^listening on' "$lab/$name/agent.out" || die "the agent on $name did not start: $(cat "$lab/$name/agent.log")"
    echo "lab: $name at $ip (MariaDB $ip:3306, agent $ip:7600)"
  done
  echo "lab: token in $lab/token; eval \"\$(deploy/lab.sh env)\" for the addresses"
}

env_vars() {
  [ -e "$lab/hosts" ] || die "no lab is up"
  local agents=() name ip
  while read -r name ip; do
    echo "LAB_IP_$name=$ip"
    agents+=("$ip:7600")
  done < "$lab/hosts"
  echo "LAB_AGENTS=$(IFS=,; echo "${agents[*]}")"
  echo "LAB_TOKEN_FILE=$lab/token"
}

down() {
  local name ip
  if [ -e "$lab/hosts" ]; then
    while read -r name ip; do
      [ -e "$lab/$name/agent.pid" ] && kill "$(cat "$lab/$name/agent.pid")" 2>/dev/null || true
      if [ -e "$lab/$name/db.pid" ]; then
        PRIVATE_MARIADB_PID=$(cat "$lab/$name/db.pid") PRIVATE_MARIADB_DIR=$lab/$name/db private_mariadb_stop_pid
      fi
      ip netns del "fblab-$name" 2>/dev/null || true
    done < "$lab/hosts"
  fi
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$lab"
  echo "lab: down"
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
  *) echo "usage: deploy/lab.sh up [NAME...] | env | down" >&2; exit 2 ;;
esac
