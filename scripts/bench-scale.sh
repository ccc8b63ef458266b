#!/usr/bin/env bash
# Scale benchmark: memory per database connection of one fleetbench agent against sysbench
# 1.0 (the reference) on the same private MariaDB, side by side in one run, then fleetbench
# alone at 10,000 connections, then the coordinator's merge of 1,000 agents' intervals.
#
#  1. connections: for each script in SCRIPTS and connection count in CONNS, runs sysbench
#     and one fleetbench-agent process (driven by the coordinator over gRPC) with that many
#     threads for SECONDS, and prints each one's peak RSS (sysbench: /usr/bin/time's maximum
#     resident set; the agent: VmHWM of its process), the ratio sysbench/fleetbench, and QPS.
#  2. fleetbench alone at BIG connections (sysbench is not run there).
#  3. opening: for each count in OPEN_CONNS, one agent opens that many connections
#     OPEN_ROUNDS times in a row (1 s runs) against the server with its default back_log;
#     prints how many rounds opened, the connects retried, and sysbench once beside it.
#  4. 1,000 agents: the coordinator's merge and report code fed with AGENTS agents' real
#     interval messages (coordinator/examples/bench_merge.rs).
#  5. targets: agent RSS < 128 MiB per 1,000 connections (1,000: < 128 MiB, 4,000:
#     < 256 MiB, 10,000: < 1 GiB), and at least 3x below sysbench; every opening round
#     opened, and the agent under 512 MiB at BIG connections while opening; PASS/MISS each.
#
# The server is a private MariaDB (private-mariadb.sh) on a free loopback port with
# max_connections above BIG and its thread pool, so that it, not the client, has room.
# Usage: scripts/bench-scale.sh
# Environment (defaults in brackets): SCRIPTS ["oltp_point_select oltp_read_write"]
#   CONNS ["1000 4000"]  BIG [10000]  SECONDS (or RUN_SECONDS) [10]  AGENTS [1000]
#   INTERVALS [30]  TABLES [4]  TABLE_SIZE [10000]  OPEN_CONNS ["1000 4000 10000"]
#   OPEN_ROUNDS [5]  SECTIONS ["memory big opening merge": which of 1-4 to run]
#   FLEETBENCH_BIN [target/release; built with cargo when absent]
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# failed, 2 for a setup problem.

BENCH_NAME=bench-scale BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

scripts=${SCRIPTS:-oltp_point_select oltp_read_write}
conns_list=${CONNS:-1000 4000}
big=${BIG:-10000}
agents=${AGENTS:-1000}
intervals=${INTERVALS:-30}
tables=${TABLES:-4}
table_size=${TABLE_SIZE:-10000}
open_conns=${OPEN_CONNS:-1000 4000 10000}
open_rounds=${OPEN_ROUNDS:-5}
sections=" ${SECTIONS:-memory big opening merge} "
want() { [[ $sections == *" $1 "* ]]; }

command -v sysbench >/dev/null || die "sysbench is missing (apt-get install sysbench)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"

bin_dir=${FLEETBENCH_BIN:-target/release}
if [[ ! -x $bin_dir/fleetbench || ! -x $bin_dir/fleetbench-agent ]]; then
  [[ -z ${FLEETBENCH_BIN:-} ]] || die "no fleetbench binaries in FLEETBENCH_BIN=$bin_dir"
  cargo build --release --locked --bins -q
fi
fleetbench=$PWD/$bin_dir/fleetbench
agent_bin=$PWD/$bin_dir/fleetbench-agent

# Room for BIG connections and the agent's own files in this shell and its children.
raise_files $((big + 1024))
bench_mariadb fb-scale $((big + 500))

conn=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest
  --mysql-password=sbtest-pw --mysql-db=sbtest --tables="$tables" --table-size="$table_size")
sysbench oltp_read_write "${conn[@]}" --threads=4 prepare >/dev/null

calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
qps() { awk '/^ *queries:/ {gsub(/[(]/, "", $3); print $3}' "$1"; }
failed=0
verdicts=()
mib_per_k() { calc "$1 / 1024 / ($2 / 1000)" 1; }

# sysbench SCRIPT N: "peak_kb qps" (or "ERR ERR")
run_sysbench() {
  local out=$dir/sb.out
  if /usr/bin/time -f '%M' -o "$dir/sb.time" sysbench "$1" "${conn[@]}" --threads="$2" \
    --time="$run_secs" run >"$out" 2>&1; then
    echo "$(tail -1 "$dir/sb.time") $(qps "$out")"
  else
    { echo "bench-scale: sysbench $1 --threads=$2 failed:"; tail -5 "$out"; } >&2
    failed=1
    echo "ERR ERR"
  fi
}

# fleetbench SCRIPT N: one agent process, the coordinator beside it; "peak_kb qps".
# start_agent: one agent process on a free port; sets agent_pid and addr.
start_agent() {
  : >"$dir/agent.out"
  "$agent_bin" --listen 127.0.0.1:0 --work-dir "$dir" >"$dir/agent.out" 2>"$dir/agent.err" &
  agent_pid=$!
  addr=
  for _ in $(seq 100); do
    addr=$(awk '/^listening on/ {print $3}' "$dir/agent.out")
    [[ -n $addr ]] && break
    sleep 0.1
  done
  [[ -n $addr ]] || die "the agent did not start: $(cat "$dir/agent.err")"
}

run_fleetbench() {
  local out=$dir/fb.out
  start_agent
  local peak=ERR rate=ERR rc=0
  "$fleetbench" "$1" "${conn[@]}" --agents "$addr" --threads="$2" --time="$run_secs" \
    --ready-timeout=60 run >"$out" 2>"$dir/fb.err" || rc=$?
  if [[ $rc == 0 || ($rc == 3 && -n $(qps "$out")) ]]; then
    # 3: the run ended degraded (e.g. transactions still waiting on row locks past the
    # hard deadline, with thousands of connections on few rows); its figures stand.
    peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status")
    rate=$(qps "$out")
    if [[ $rc == 3 ]]; then
      echo "bench-scale: fleetbench $1 --threads=$2: $(grep -m1 '^WARNING' "$out")" >&2
    fi
  else
    { echo "bench-scale: fleetbench $1 --threads=$2 failed (exit $rc):"; grep -v '^opening' "$dir/fb.err" | tail -5; } >&2
    failed=1
  fi
  kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true
  agent_pid=
  echo "$peak $rate"
}

# target_mib N: the RSS budget for N connections (128 MiB per 1,000, 1 GiB at most).
target_mib() {
  local n=$1
  if ((n <= 1000)); then echo 128; elif ((n <= 4000)); then echo 256; else echo 1024; fi
}

echo "fleetbench: $("$fleetbench" --version)  sysbench: $(sysbench --version)"
echo "server: MariaDB $(/usr/sbin/mariadbd --version | awk '{print $3}') on 127.0.0.1:$MARIADB_PORT (thread pool, max_connections $((big + 500)))"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $tables tables x $table_size rows; ${run_secs} s per run"
echo
row() { printf '%-18s %6s %10s %10s %9s %9s %11s %11s\n' "$@"; }
want memory && echo "== 1. peak client RSS (MiB) and QPS, one client process each"
want memory && row script conns "sb MiB" "fb MiB" "sb/fb" "fb MiB/1k" "sb QPS" "fb QPS"
want memory && for script in $scripts; do
  for n in $conns_list; do
    read -r sb_kb sb_qps < <(run_sysbench "$script" "$n")
    read -r fb_kb fb_qps < <(run_fleetbench "$script" "$n")
    sb_mib=- fb_mib=- ratio=- per_k=-
    [[ $sb_kb != ERR ]] && sb_mib=$(calc "$sb_kb / 1024" 1)
    if [[ $fb_kb != ERR ]]; then
      fb_mib=$(calc "$fb_kb / 1024" 1)
      per_k=$(mib_per_k "$fb_kb" "$n")
      t=$(target_mib "$n")
      v=MISS; [[ $(calc "$fb_mib < $t" 0) == 1 ]] && v=PASS
      verdicts+=("$(printf '%-18s %6s conns: agent %s MiB < %s MiB: %s' "$script" "$n" "$fb_mib" "$t" "$v")")
    fi
    if [[ $sb_kb != ERR && $fb_kb != ERR ]]; then
      ratio=$(calc "$sb_kb / $fb_kb" 1)
      v=MISS; [[ $(calc "$sb_kb >= 3 * $fb_kb" 0) == 1 ]] && v=PASS
      verdicts+=("$(printf '%-18s %6s conns: sysbench/agent RSS %sx >= 3x: %s' "$script" "$n" "$ratio" "$v")")
    fi
    row "$script" "$n" "$sb_mib" "$fb_mib" "$ratio" "$per_k" "$sb_qps" "$fb_qps"
  done
done
want big && echo && echo "== 2. fleetbench alone at $big connections"
want big && row script conns "" "fb MiB" "" "fb MiB/1k" "" "fb QPS"
want big && for script in $scripts; do
  read -r fb_kb fb_qps < <(run_fleetbench "$script" "$big")
  if [[ $fb_kb != ERR ]]; then
    fb_mib=$(calc "$fb_kb / 1024" 1)
    row "$script" "$big" "" "$fb_mib" "" "$(mib_per_k "$fb_kb" "$big")" "" "$fb_qps"
    t=$(target_mib "$big")
    v=MISS; [[ $(calc "$fb_mib < $t" 0) == 1 ]] && v=PASS
    verdicts+=("$(printf '%-18s %6s conns: agent %s MiB < %s MiB: %s' "$script" "$big" "$fb_mib" "$t" "$v")")
  else
    row "$script" "$big" "" ERR "" - "" ERR
  fi
done
want opening && echo
want opening && back_log=$(mariadb --no-defaults -S "$MARIADB_SOCKET" -uroot -N -e 'SELECT @@back_log' 2>/dev/null || echo "?")
want opening && echo "== 3. opening: one agent, $open_rounds rounds per count, server back_log $back_log (its default), net.core.somaxconn $(cat /proc/sys/net/core/somaxconn)"
row2() { printf '%-8s %8s %12s %9s  %s\n' "$@"; }
want opening && row2 conns opened "retried" "fb MiB" "sysbench (once, same server)"
want opening && for n in $open_conns; do
  start_agent
  opened=0 retried=0
  for _ in $(seq "$open_rounds"); do
    if "$fleetbench" oltp_point_select "${conn[@]}" --agents "$addr" --threads="$n" --time=1 \
      run >"$dir/open.out" 2>"$dir/open.err"; then
      opened=$((opened + 1))
      r=$(sed -n 's/.*retried while opening: \([0-9]*\).*/\1/p' "$dir/open.out" | head -1)
      retried=$((retried + ${r:-0}))
    else
      { echo "bench-scale: opening $n connections failed:"; tail -3 "$dir/open.err"; } >&2
    fi
  done
  peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status")
  kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true
  agent_pid=
  sb=$(timeout 120 sysbench oltp_point_select "${conn[@]}" --threads="$n" --time=1 run 2>&1 |
    grep -m1 -E 'FATAL|queries:' | sed 's/^ *//' || true)
  row2 "$n" "$opened/$open_rounds" "$retried" "$(calc "$peak / 1024" 1)" "${sb:-no answer in 120 s}"
  v=MISS; [[ $opened == "$open_rounds" ]] && v=PASS
  verdicts+=("$(printf 'opening %6s conns: %s of %s rounds opened: %s' "$n" "$opened" "$open_rounds" "$v")")
  if [[ $n == "$big" ]]; then
    v=MISS; [[ $(calc "$peak / 1024 < 512" 0) == 1 ]] && v=PASS
    verdicts+=("$(printf 'opening %6s conns: agent %s MiB < 512 MiB: %s' "$n" "$(calc "$peak / 1024" 1)" "$v")")
  fi
  [[ $opened == "$open_rounds" ]] || failed=1
done
want merge && echo && echo "== 4. coordinator: $agents agents, $intervals intervals through the real merge and report"
if want merge && ! cargo run --release --locked -q -p fleetbench --example bench_merge -- "$agents" "$intervals"; then
  echo "bench-scale: the merge benchmark failed" >&2
  failed=1
fi
echo
echo "== 5. targets"
printf '%s\n' "${verdicts[@]}"
exit "$failed"
