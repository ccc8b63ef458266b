#!/usr/bin/env bash
# Side-by-side PostgreSQL benchmark: fleetbench against sysbench 1.0's pgsql driver (the
# reference) on the same private PostgreSQL server, which this script starts in a temporary
# directory on a free loopback port (never the system's clusters or port 5432) and removes
# again on exit.
#
#  1. run: prepares once (sysbench), then for each script in SCRIPTS and thread count in
#     THREADS runs sysbench and fleetbench in pairs (ROUNDS rounds of SECONDS seconds, odd
#     rounds sysbench first, even rounds fleetbench first) and prints QPS, the client CPU
#     seconds (user+sys) per 1000 queries and both ratios fb/sb per round; then per (script,
#     threads) the medians of the rounds' ratios and their spread (lowest..highest).
#  2. memory: a separate fleetbench-agent process holding MEM_THREADS connections (one
#     worker thread each, oltp_point_select for MEM_SECONDS s); prints its peak resident
#     memory (VmHWM).
#  3. checks the targets on the medians: QPS ratio >= 1.0, CPU per query fb/sb <= 0.8,
#     agent memory at MEM_THREADS connections < 128 MiB; prints PASS/MISS for each.
#
# Usage: scripts/bench-pgsql.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN   directory holding fleetbench and fleetbench-agent [target/release;
#                    built with `cargo build --release --locked --bins -q` if absent]
#   TABLES [10]  TABLE_SIZE [100000]  SCRIPTS ["oltp_read_write oltp_point_select"]
#   THREADS ["4 64"]  ROUNDS [5]  SECONDS (or RUN_SECONDS) [10]
#   MEM_THREADS [1000]  MEM_SECONDS [5]  SECTIONS ["run memory"]
#   BENCH_DIR_PARENT [${TMPDIR:-/tmp}]  where the private server's directory is made
# Needs: sysbench (apt-get install sysbench) and postgresql (installed if missing).
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# failed (its command and error are printed), 2 for a setup problem.

BENCH_NAME=bench-pgsql BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
# shellcheck source=private-postgres.sh
source "$(dirname "$0")/private-postgres.sh"

tables=${TABLES:-10}
table_size=${TABLE_SIZE:-100000}
scripts=${SCRIPTS:-oltp_read_write oltp_point_select}
threads_list=${THREADS:-4 64}
rounds=${ROUNDS:-5}
mem_threads=${MEM_THREADS:-1000}
mem_seconds=${MEM_SECONDS:-5}
sections=" ${SECTIONS:-run memory} "

for tool in sysbench awk; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install sysbench)"
done
[[ $(sysbench --help 2>/dev/null) == *"pgsql - "* ]] || die "this sysbench has no pgsql driver"

find_fleetbench
agent_bin=$(dirname "$fleetbench")/fleetbench-agent
[[ -x $agent_bin ]] || die "no fleetbench-agent beside $fleetbench"

dir=$(mktemp -d "${BENCH_DIR_PARENT:-${TMPDIR:-/tmp}}/fb-pgsql.XXXXXX")
agent_pid=
# shellcheck disable=SC2317  # called by the EXIT trap
on_exit() {
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null
  private_postgres_stop
  rm -rf "$dir"
}
trap on_exit EXIT
PRIVATE_PG_MAX_CONNECTIONS=$((mem_threads + 100)) private_postgres_start "$dir/pg" \
  || die "could not start a private PostgreSQL"
port=$PRIVATE_PG_PORT

conn=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user=sbtest
  --pgsql-password=sbpass --pgsql-db=sbtest)
qps_cost() { cpu_per_k "$(cpu "$1")" "$(queries "$1")"; }

echo "fleetbench: $fleetbench ($("$fleetbench" --version))  sysbench: $(sysbench --version)"
echo "server: PostgreSQL $("$PRIVATE_PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

sysbench oltp_read_write --tables="$tables" --table-size="$table_size" --threads=4 "${conn[@]}" \
  prepare >/dev/null || die "sysbench's prepare failed"

verdicts=()
if section run; then
  echo "== run: ${run_secs} s per run, $rounds rounds; CPU = client user+sys s per 1000 queries"
  row() { printf '%-18s %7s %5s %10s %10s %9s %10s %10s %9s\n' "$@"; }
  row script threads round "sb QPS" "fb QPS" "QPS fb/sb" "sb CPU/1kq" "fb CPU/1kq" "CPU fb/sb"
  for script in $scripts; do
    for threads in $threads_list; do
      rate_ratios=() cost_ratios=()
      for r in $(seq "$rounds"); do
        opts=(--threads="$threads" --time="$run_secs" --tables="$tables" --table-size="$table_size"
          "${conn[@]}")
        s=$dir/run-sb-$script-$threads-$r f=$dir/run-fb-$script-$threads-$r
        pair_order "$r" "$s" "$f" sysbench_run sysbench "$script" "${opts[@]}" run \
          -- "$fleetbench" "$script" "${opts[@]}" run
        pair_figures "$s" "$f" qps qps_cost
        row "$script" "$threads" "$r" "$ref_rate" "$fb_rate" "$rate_ratio" "$ref_cost" "$fb_cost" "$cost_ratio"
      done
      pair_verdict "$(printf '%-18s %3s thr' "$script" "$threads")" "QPS fb/sb" "CPU/query fb/sb" 0.8
    done
  done
  echo
fi

if section memory; then
  echo "== memory: one agent holding $mem_threads connections (oltp_point_select, $mem_seconds s)"
  bench_agent "$agent_bin" "$dir/agent"
  addr=$agent_addr
  if sysbench_run "$dir/mem" "$fleetbench" oltp_point_select --agents="$addr" --threads="$mem_threads" \
    --time="$mem_seconds" --tables="$tables" --table-size="$table_size" "${conn[@]}" run; then
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status")
    mib=$(calc "$hwm / 1024" 1)
    echo "agent peak resident memory: $mib MiB; QPS $(qps "$dir/mem")"
    v=MISS
    [[ $(calc "$mib < 128" 0) == 1 ]] && v=PASS
    verdicts+=("$(printf 'agent memory at %d connections: %s MiB < 128: %s' "$mem_threads" "$mib" "$v")")
  fi
  kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true
  agent_pid=
  echo
fi

echo "== targets"
for v in "${verdicts[@]}"; do echo "$v"; done
exit "$failed"
