#!/usr/bin/env bash
# Lua scripts side by side: sysbench 1.0 running its own bundled scripts against fleetbench
# running the same files through its embedded LuaJIT, and fleetbench's built-in (native)
# implementation of the same tests, on one private MariaDB server (private-mariadb.sh: a
# free loopback port, never the system service), in alternating rounds.
#
#  1. run: for each script in SCRIPTS (from /usr/share/sysbench) and thread count in
#     THREADS, ROUNDS rounds of sysbench FILE, fleetbench FILE and fleetbench NAME
#     (built-in), SECONDS each; QPS and client CPU (user+sys) per 1000 queries, and the
#     ratios the targets name: Lua QPS / sysbench QPS (>= 1.0), Lua CPU / sysbench CPU
#     (<= 0.9), Lua CPU / built-in CPU (<= 1.3), per round and as medians over the rounds
#     (the three start in turn, so that a drift of the machine's speed favours none).
#  2. memory: MEM_THREADS threads running oltp_point_select.lua: the peak resident memory
#     of sysbench and of one fleetbench agent process (--allow-scripts) (target: agent <=
#     sysbench).
#  3. tpcc: when TPCC_LUA_DIR names a checkout of Percona-Lab/sysbench-tpcc (kept outside
#     the repository), tpcc.lua at scale TPCC_SCALE with 1 table set, TPCC_THREADS
#     threads, ROUNDS rounds in alternating order: sysbench's TPS and fleetbench's and the
#     median of the rounds' ratios (target: >= 0.95x).
#
# Usage: scripts/bench-lua.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN [target/release]  SCRIPTS ["oltp_read_write oltp_point_select"]
#   THREADS ["4 64"]  ROUNDS [5]  SECONDS (or RUN_SECONDS) [10]  TABLES [4]
#   TABLE_SIZE [10000]  MEM_THREADS [1000]  SECTIONS ["run memory tpcc"]
#   TPCC_LUA_DIR []  TPCC_SCALE [2]  TPCC_THREADS [8]
# Needs: sysbench, mariadb-server and mariadb-client.
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# failed, 2 for a setup problem.

BENCH_NAME=bench-lua BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

scripts=${SCRIPTS:-oltp_read_write oltp_point_select}
threads_list=${THREADS:-4 64}
rounds=${ROUNDS:-5}
tables=${TABLES:-4}
table_size=${TABLE_SIZE:-10000}
mem_threads=${MEM_THREADS:-1000}
sections=" ${SECTIONS:-run memory tpcc} "
lua_dir=/usr/share/sysbench

command -v sysbench >/dev/null || die "sysbench is missing (apt-get install sysbench)"
[[ -f $lua_dir/oltp_common.lua ]] || die "$lua_dir has no sysbench scripts (apt-get install sysbench)"
find_fleetbench
agent_bin=$(dirname "$fleetbench")/fleetbench-agent

raise_files $((mem_threads + 1024)) "lower MEM_THREADS"
bench_mariadb fb-lua $((mem_threads + 500))

conn=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest
  --mysql-password=sbtest-pw --mysql-db=sbtest)
data=(--tables="$tables" --table-size="$table_size")

echo "fleetbench: $fleetbench ($("$fleetbench" --version))  sysbench: $(sysbench --version)"
echo "server: private MariaDB on 127.0.0.1:$MARIADB_PORT; machine: $(nproc) cores, CPU busy before start: $(cpu_busy)"
echo
sysbench "$lua_dir/oltp_read_write.lua" "${conn[@]}" "${data[@]}" --threads=4 prepare >/dev/null

verdicts=()
verdict() { # NAME VALUE OP LIMIT
  local ok
  ok=$(awk "BEGIN { print ($2 $3 $4) ? \"PASS\" : \"MISS\" }")
  verdicts+=("$ok $1: $2 (target $3 $4)")
}

# --- 1. runs ---------------------------------------------------------------------------------
if section run; then
  echo "== run: ${run_secs} s per run, $rounds rounds; CPU = client user+sys s per 1000 queries"
  row() { printf '%-18s %7s %5s %10s %10s %10s %9s %9s %9s %8s %8s %8s\n' "$@"; }
  row script threads round "sb QPS" "lua QPS" "nat QPS" "sb CPU" "lua CPU" "nat CPU" \
    "QPS l/s" "CPU l/s" "CPU l/n"
  for script in $scripts; do
    for threads in $threads_list; do
      q_ls=() c_ls=() c_ln=()
      for r in $(seq "$rounds"); do
        opts=(--threads="$threads" --time="$run_secs" "${data[@]}" "${conn[@]}")
        s=$dir/sb-$script-$threads-$r l=$dir/lua-$script-$threads-$r n=$dir/nat-$script-$threads-$r
        # the three start in turn (round 1: sysbench first, 2: Lua, 3: built-in, ...): a
        # drift of the shared machine's speed then favours none of them
        order=("sysbench $s" "lua $l" "native $n")
        all=1
        for i in 0 1 2; do
          read -r which out <<<"${order[$(((r - 1 + i) % 3))]}"
          case $which in
            sysbench) measure "$out" sysbench "$lua_dir/$script.lua" "${opts[@]}" run || all=0 ;;
            lua) measure "$out" "$fleetbench" "$lua_dir/$script.lua" "${opts[@]}" run || all=0 ;;
            native) measure "$out" "$fleetbench" "$script" "${opts[@]}" run || all=0 ;;
          esac
        done
        if [[ $all == 1 ]]; then
          sc=$(cpu_per_k "$(cpu "$s")" "$(queries "$s")") lc=$(cpu_per_k "$(cpu "$l")" "$(queries "$l")")
          nc=$(cpu_per_k "$(cpu "$n")" "$(queries "$n")")
          q=$(calc "$(qps "$l") / $(qps "$s")") c1=$(calc "$lc / $sc") c2=$(calc "$lc / $nc")
          q_ls+=("$q") c_ls+=("$c1") c_ln+=("$c2")
          row "$script" "$threads" "$r" "$(qps "$s")" "$(qps "$l")" "$(qps "$n")" "$sc" "$lc" "$nc" "$q" "$c1" "$c2"
        fi
      done
      if [[ ${#q_ls[@]} -gt 0 ]]; then
        read -r m1 sp1 <<<"$(stats "${q_ls[@]}")"
        read -r m2 sp2 <<<"$(stats "${c_ls[@]}")"
        read -r m3 sp3 <<<"$(stats "${c_ln[@]}")"
        echo "  medians: QPS lua/sysbench $m1 ($sp1), CPU/q lua/sysbench $m2 ($sp2), CPU/q lua/built-in $m3 ($sp3)"
        verdict "$script.lua $threads thr QPS lua/sysbench" "$m1" '>=' 1.0
        verdict "$script.lua $threads thr CPU/q lua/sysbench" "$m2" '<=' 0.9
        verdict "$script.lua $threads thr CPU/q lua/built-in" "$m3" '<=' 1.3
      fi
    done
  done
  echo
fi

# --- 2. memory at many threads ---------------------------------------------------------------
if section memory; then
  echo "== memory: $mem_threads threads running oltp_point_select.lua, ${run_secs} s; peak resident MiB"
  mem_opts=(--threads="$mem_threads" --time="$run_secs" "${data[@]}" "${conn[@]}")
  sb_kb=ERR fb_kb=ERR
  if /usr/bin/time -f '%M' -o "$dir/mem-sb.time" sysbench "$lua_dir/oltp_point_select.lua" \
    "${mem_opts[@]}" run >"$dir/mem-sb.out" 2>&1; then
    sb_kb=$(tail -1 "$dir/mem-sb.time")
  else
    failed=1; tail -5 "$dir/mem-sb.out" >&2
  fi
  "$agent_bin" --listen 127.0.0.1:0 --work-dir "$dir" --allow-scripts >"$dir/agent.out" 2>"$dir/agent.err" &
  agent_pid=$!
  addr=
  for _ in $(seq 100); do
    addr=$(awk '/^listening on/ {print $3}' "$dir/agent.out")
    [[ -n $addr ]] && break
    sleep 0.1
  done
  [[ -n $addr ]] || die "the agent did not start: $(cat "$dir/agent.err")"
  if "$fleetbench" "$lua_dir/oltp_point_select.lua" "${mem_opts[@]}" --agents "$addr" \
    --ready-timeout=60 run >"$dir/mem-fb.out" 2>"$dir/mem-fb.err"; then
    fb_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status")
  else
    failed=1; tail -5 "$dir/mem-fb.err" >&2
  fi
  kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true
  agent_pid=
  printf '%-24s %10s %10s\n' "" sysbench "fb agent"
  printf '%-24s %10s %10s\n' "peak MiB" "$([[ $sb_kb != ERR ]] && calc "$sb_kb / 1024" 1 || echo ERR)" \
    "$([[ $fb_kb != ERR ]] && calc "$fb_kb / 1024" 1 || echo ERR)"
  printf '%-24s %10s %10s\n' "QPS" "$(qps "$dir/mem-sb" || true)" "$(qps "$dir/mem-fb" || true)"
  if [[ $sb_kb != ERR && $fb_kb != ERR ]]; then
    verdict "memory at $mem_threads threads agent/sysbench" "$(calc "$fb_kb / $sb_kb")" '<=' 1.0
  fi
  echo
fi

# --- 3. sysbench-tpcc ------------------------------------------------------------------------
if section tpcc && [[ -n ${TPCC_LUA_DIR:-} ]]; then
  [[ -f $TPCC_LUA_DIR/tpcc.lua ]] || die "TPCC_LUA_DIR=$TPCC_LUA_DIR holds no tpcc.lua"
  scale=${TPCC_SCALE:-2} tthreads=${TPCC_THREADS:-8}
  echo "== tpcc.lua: scale $scale, 1 table set, $tthreads threads, ${run_secs} s per run, $rounds rounds"
  topts=(--tables=1 --scale="$scale" "${conn[@]}")
  # sysbench finds tpcc.lua's modules in its working directory only.
  tpcc_sb() { env -C "$TPCC_LUA_DIR" sysbench ./tpcc.lua "$@"; }
  tpcc_sb "${topts[@]}" --threads="$tthreads" prepare >"$dir/tpcc-prepare.out" 2>&1 ||
    { tail -5 "$dir/tpcc-prepare.out" >&2; die "sysbench tpcc.lua prepare failed"; }
  printf '%-6s %12s %12s %9s\n' round "sb TPS" "fb TPS" "fb/sb"
  ratios=()
  for r in $(seq "$rounds"); do
    s=$dir/tpcc-sb-$r f=$dir/tpcc-fb-$r all=1
    # alternating order: the tables grow with every run, so each tool goes first in turn
    for which in $( ((r % 2)) && echo "sb fb" || echo "fb sb"); do
      if [[ $which == sb ]]; then
        measure "$s" env -C "$TPCC_LUA_DIR" sysbench ./tpcc.lua "${topts[@]}" --threads="$tthreads" --time="$run_secs" run || all=0
      else
        measure "$f" "$fleetbench" "$TPCC_LUA_DIR/tpcc.lua" "${topts[@]}" --threads="$tthreads" --time="$run_secs" run || all=0
      fi
    done
    if [[ $all == 1 ]]; then
      ratio=$(calc "$(tps "$f") / $(tps "$s")")
      ratios+=("$ratio")
      printf '%-6s %12s %12s %9s\n' "$r" "$(tps "$s")" "$(tps "$f")" "$ratio"
    fi
  done
  if [[ ${#ratios[@]} -gt 0 ]]; then
    read -r med spread <<<"$(stats "${ratios[@]}")"
    echo "  median TPS fb/sb $med ($spread)"
    verdict "tpcc.lua TPS fleetbench/sysbench" "$med" '>=' 0.95
  fi
  echo
elif section tpcc; then
  echo "== tpcc.lua: skipped (set TPCC_LUA_DIR to a sysbench-tpcc checkout to measure it)"
  echo
fi

echo "== targets"
for v in "${verdicts[@]}"; do echo "$v"; done
exit "$failed"
