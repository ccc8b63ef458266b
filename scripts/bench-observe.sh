#!/usr/bin/env bash
# What observing the servers costs (docs/servers.md): on a private MariaDB (a temporary
# directory, a free loopback port, removed on exit), an oltp_point_select load with an
# observer agent on "the server's host" (this machine) and the server's status read each
# interval, then the same load without either.
#
#  1. the observer agent's own CPU over the run, as a share of one core (its process's
#     user+system time from /proc over the wall time), against the target of 1 %;
#  2. the status statements the server received (Com_show_status, Com_show_slave_status,
#     Com_show_variables) with the reading on and with --server-status=off, against the
#     target of one per interval (plus, at the start, the baseline and one question whether
#     the server is a replica);
#  3. the run's QPS both ways, for the cost on the load itself (noisy on a shared machine).
#
# Usage: scripts/bench-observe.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN  directory holding fleetbench and fleetbench-agent [target/release;
#                   built with `cargo build --release --locked --bins -q` if absent]
#   SECONDS (or RUN_SECONDS) [30]  THREADS [4]  TABLE_SIZE [10000]
# Needs: sysbench is not needed; mariadb-server.
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# failed, 2 for a setup problem.

BENCH_NAME=bench-observe BENCH_SECONDS=30
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

threads=${THREADS:-4}
table_size=${TABLE_SIZE:-10000}
find_fleetbench
agent_bin=$(dirname "$fleetbench")/fleetbench-agent
[[ -x $agent_bin ]] || die "no fleetbench-agent beside $fleetbench"
bench_mariadb fb-observe 200

conn=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest
  --mysql-password=sbtest-pw --mysql-db=sbtest --tables=1 --table-size="$table_size")
"$fleetbench" oltp_point_select "${conn[@]}" prepare >/dev/null || die "prepare failed"
bench_agent "$agent_bin" "$dir/agent"
observer=$agent_addr

status_sum() {
  mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot -N -B -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_show_status', 'Com_show_slave_status', 'Com_show_variables')" |
    awk '{s += $2} END {print s}'
}
jiffies() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

echo "fleetbench: $fleetbench ($("$fleetbench" --version)); server: private MariaDB on 127.0.0.1:$MARIADB_PORT"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy); ${run_secs} s per run, $threads threads"
echo

# One run: its QPS, the status statements per interval, and the observer's CPU share.
one() {
  local name=$1; shift
  local s0 j0 t0 s1 j1 t1
  s0=$(status_sum); j0=$(jiffies "$agent_pid"); t0=$(date +%s.%N)
  sysbench_run "$dir/$name" "$fleetbench" oltp_point_select "${conn[@]}" --threads="$threads" \
    --time="$run_secs" --report-interval=1 "$@" run || return 1
  t1=$(date +%s.%N); j1=$(jiffies "$agent_pid"); s1=$(status_sum)
  local wall statements intervals cpu
  wall=$(calc "$t1 - $t0")
  # The first SHOW STATUS above is this script's own, counted by the second.
  statements=$((s1 - s0 - 1))
  intervals=$(grep -c '^\[ ' "$dir/$name.out" || true)
  cpu=$(calc "100 * ($j1 - $j0) / $hz / $wall" 3)
  printf '%-10s QPS %12s   status statements %4s for %3s intervals   observer CPU %7s %% of one core\n' \
    "$name" "$(qps "$dir/$name")" "$statements" "$intervals" "$cpu"
  eval "${name}_statements=$statements ${name}_intervals=$intervals ${name}_cpu=$cpu ${name}_qps=$(qps "$dir/$name")"
}

one observed --observe=default="$observer" --observe-process=mariadbd
one plain --server-status=off
echo
echo "== targets"
v=MISS; [[ $(calc "${observed_cpu:-99} <= 1.0" 0) == 1 ]] && v=PASS
echo "observer agent CPU: ${observed_cpu:-ERR} % of one core <= 1 %: $v"
# One reading per interval, and at the start a baseline and one question whether the server
# is a replica.
added=$(( ${observed_statements:-999} - ${plain_statements:-0} ))
v=MISS; [[ $added -le $(( ${observed_intervals:-0} + 2 )) ]] && v=PASS
echo "status statements: $added for ${observed_intervals:-?} intervals <= one per interval + 2 at the start: $v"
echo "QPS with the servers observed / without: $(calc "${observed_qps:-0} / ${plain_qps:-1}")"
exit "$failed"
