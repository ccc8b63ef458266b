#!/usr/bin/env bash
# fleetbench's main job on one machine: builds the release binaries, starts a throwaway
# MariaDB (installing mariadb-server first if mariadbd is missing) and two agent processes
# on free loopback ports, then runs sysbench's oltp_read_write through both agents:
# prepare (4 tables x 10000 rows), a 10 s run with a report every second, cleanup.
# Everything it started is stopped at the end. Extra arguments go to the run, e.g.
# `scripts/demo.sh --threads=8 --time=30`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/private-mariadb.sh

build_tools_install
cargo build --release --locked --bins
bin=target/release
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  private_mariadb_stop
  wait 2>/dev/null || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT INT TERM

private_mariadb_start "$work/db"
echo "demo: private MariaDB on 127.0.0.1:$MARIADB_PORT"

addrs=()
for i in 1 2; do
  "$bin/fleetbench-agent" --listen 127.0.0.1:0 >"$work/agent$i.out" 2>"$work/agent$i.log" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q '^listening on ' "$work/agent$i.out" 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/agent$i.log" >&2; exit 1; }
    sleep 0.1
  done
  addr=$(sed -n 's/^listening on //p' "$work/agent$i.out")
  [ -n "$addr" ] || { echo "demo: agent $i did not start" >&2; cat "$work/agent$i.log" >&2; exit 1; }
  addrs+=("$addr")
done
echo "demo: agents at ${addrs[0]} and ${addrs[1]}"
echo

opts=(oltp_read_write --agents "${addrs[0]},${addrs[1]}"
  --mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest
  --mysql-password=sbtest-pw --mysql-db=sbtest --tables=4 --table-size=10000)
"$bin/fleetbench" "${opts[@]}" --threads=4 prepare
echo
# The run's defaults; the caller's options come after them and win (a repeated option
# takes the last value, as in sysbench 1.0).
"$bin/fleetbench" "${opts[@]}" --threads=4 --time=10 --report-interval=1 \
  --percentile=95,99 "$@" run
echo
"$bin/fleetbench" "${opts[@]}" cleanup
