#!/usr/bin/env bash
# Client instructions per point select: fleetbench's OLTP hot path against sysbench 1.0 (the
# reference), counted by callgrind on a private MariaDB server (private-mariadb.sh: a
# throwaway server in a temporary directory on a free loopback port, never the system
# service on 3306, removed again on exit).
#
# fleetbench prepares 1 table of TABLE_SIZE rows; then each tool runs oltp_point_select with
# 1 thread over TCP, --time=0 and an event limit, under `valgrind --tool=callgrind`, once with
# EVENTS_LOW and once with EVENTS_HIGH events. The figure (issue 45's) is the whole process's
# instruction count (every thread, start-up and end included) of the longer run minus that
# of the shorter, divided by the difference in events: what one more point select costs the
# client, start-up and report cancelled out. fleetbench runs its agent embedded in its own
# process (no --agents), so that process holds the worker, the agent and the coordinator.
# Each count is run ROUNDS times and the least total taken.
#
# fleetbench's figure is also split by thread: the busiest thread (the worker: statements,
# their statistics) and the rest, mostly the once-a-second interval reports (histograms
# taken, encoded, decoded and merged). The rest is per second, not per statement: under
# valgrind the longer run lasts a few seconds more, so it adds a share to the figure that
# grows when the machine is busy (a slower run holds more seconds). Prints both tools'
# totals and figures, their ratio, and whether fleetbench's figure is at most MAX_INSTR
# (issue 45: 2,100). With VERBOSE=1 also the functions (self cost) whose instructions per
# event differ most between the two runs, both tools: where the marginal instructions go.
#
# Usage: scripts/bench-instr.sh
#        VERBOSE=1 scripts/bench-instr.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN   directory holding the fleetbench binary to measure [built here with
#                    `cargo build --release --locked --bin fleetbench` and line tables for
#                    callgrind's source lines (CARGO_PROFILE_RELEASE_DEBUG=line-tables-only)
#                    into ${CARGO_TARGET_DIR:-target}/instr]
#   TABLE_SIZE [10000]  EVENTS_LOW [5000]  EVENTS_HIGH [25000]  ROUNDS [1]
#   MAX_INSTR [2100]  the most instructions per point select fleetbench may take
#   SB_TEST [oltp_point_select]  the test both tools run (e.g. oltp_read_write, with fewer
#                    events: EVENTS_LOW=500 EVENTS_HIGH=2500)
#   FB_TEST [SB_TEST]  what fleetbench runs instead: sysbench's script through fleetbench's
#                    Lua (/usr/share/sysbench/oltp_point_select.lua)
#   SYSBENCH [1]     0: measure fleetbench alone
#   VERBOSE [0]      1: the top TOP [25] functions of the difference, per event, both tools
#   BENCH_DIR_PARENT [${TMPDIR:-/tmp}]  where the private server's directory is made
#   REPORT_DIR []    when set, the callgrind files and the runs' output are copied there
# Needs: valgrind (apt-get install valgrind), sysbench (apt-get install sysbench),
# mariadb-server and mariadb-client (private-mariadb.sh installs the server when missing).
# Exit status: 0 when fleetbench's figure is at most MAX_INSTR, 3 when it is above, 1 when a
# prepare or run failed (its command and error are printed), 2 for a setup problem.

set -euo pipefail
cd "$(dirname "$0")/.."

table_size=${TABLE_SIZE:-10000}
low=${EVENTS_LOW:-5000}
high=${EVENTS_HIGH:-25000}
rounds=${ROUNDS:-1}
max_instr=${MAX_INSTR:-2100}
with_sysbench=${SYSBENCH:-1}
verbose=${VERBOSE:-0}
top=${TOP:-25}

die() { echo "bench-instr: $*" >&2; exit 2; }
for n in TABLE_SIZE EVENTS_LOW EVENTS_HIGH ROUNDS MAX_INSTR TOP; do
  [[ ${!n:-1} =~ ^[0-9]+$ && ${!n:-1} -gt 0 ]] || die "$n must be a whole number above 0, not '${!n}'"
done
[[ $high -gt $low ]] || die "EVENTS_HIGH ($high) must be above EVENTS_LOW ($low)"
for tool in valgrind callgrind_annotate mariadb awk; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install valgrind mariadb-client)"
done
if [[ $with_sysbench != 0 ]]; then
  command -v sysbench >/dev/null || die "sysbench is missing (apt-get install sysbench; SYSBENCH=0 measures fleetbench alone)"
fi

# --- fleetbench binary -------------------------------------------------------------------
if [[ -n ${FLEETBENCH_BIN:-} ]]; then
  fleetbench=$FLEETBENCH_BIN/fleetbench
  [[ -x $fleetbench ]] || die "no fleetbench binary in FLEETBENCH_BIN=$FLEETBENCH_BIN"
else
  # Its own target directory: the line tables would otherwise rebuild the usual release.
  instr_target=${CARGO_TARGET_DIR:-target}/instr
  CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR=$instr_target \
    cargo build --release --locked --bin fleetbench -q || die "cargo build failed"
  fleetbench=$instr_target/release/fleetbench
fi
fleetbench=$(cd "$(dirname "$fleetbench")" && pwd)/fleetbench

# --- private MariaDB server ----------------------------------------------------------------
# shellcheck source=private-mariadb.sh
source scripts/private-mariadb.sh
dir=$(mktemp -d "${BENCH_DIR_PARENT:-${TMPDIR:-/tmp}}/fb-instr.XXXXXX")
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  private_mariadb_stop
  if [[ -n ${REPORT_DIR:-} ]]; then
    mkdir -p "$REPORT_DIR" && cp "$dir"/*.cg* "$dir"/*.out "$dir"/*.err "$REPORT_DIR"/ 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
private_mariadb_start "$dir/db" >/dev/null || die "could not start a private MariaDB"

conn=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest
  --mysql-password=sbtest-pw --mysql-db=sbtest)
BENCH_NAME=bench-instr
# shellcheck source=bench-lib.sh
source scripts/bench-lib.sh

# A run's callgrind files, one per thread (--separate-threads=yes): OUT.cg-01, OUT.cg-02...
# Their "totals:" lines: every thread's instructions, and the largest (the busiest thread's).
totals() { cat "$1".cg-* 2>/dev/null | awk '/^totals:/ { s += $2; if ($2 > m) m = $2 } END { if (NR) print s, m }'; }
# callgrind OUT CMD...: runs CMD under callgrind; its output in OUT.out/.err.
callgrind() {
  local out=$1; shift
  measure "$out" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out.cg" "$@" ||
    return 1
  [[ -n $(totals "$out") ]] && return
  failed=1
  echo "bench-instr: no totals in callgrind's files for: $*" >&2
  return 1
}
# run_cmd TOOL N: the run's command for TOOL with N events, into the array cmd.
run_cmd() {
  local bin=$1 test=${SB_TEST:-oltp_point_select}
  [[ $bin == fleetbench ]] && bin=$fleetbench test=${FB_TEST:-${SB_TEST:-oltp_point_select}}
  cmd=("$bin" "$test" --threads=1 --events="$2" --time=0 --tables=1
    --table-size="$table_size" "${conn[@]}" run)
}
# measure_tool TOOL: the least total of ROUNDS runs at each event count; sets ir[TOOL-low],
# ir[TOOL-high] and busiest[...], and keeps the runs with those totals as TOOL-low/-high.
declare -A ir=() busiest=()
measure_tool() {
  local tool=$1 which n r t out
  for which in low high; do
    n=$low; [[ $which == high ]] && n=$high
    for r in $(seq "$rounds"); do
      out=$dir/$tool-$which-$r
      run_cmd "$tool" "$n"
      callgrind "$out" "${cmd[@]}" || return 1
      read -r -a t <<<"$(totals "$out")"
      if [[ -z ${ir[$tool-$which]:-} || ${t[0]} -lt ${ir[$tool-$which]} ]]; then
        ir[$tool-$which]=${t[0]} busiest[$tool-$which]=${t[1]}
        rm -f "$dir/$tool-$which".cg-*
        for f in "$out".cg-*; do cp "$f" "$dir/$tool-$which.cg-${f##*.cg-}"; done
      fi
    done
  done
}
# per_event A B: (B - A) / (high - low), whole instructions
per_event() { calc "($2 - $1) / ($high - $low)" 0; }
# Self instructions per function over every thread of a run: "COUNT<TAB>FUNCTION" lines,
# the function named by its source file (shortened) and, where callgrind knows it, binary.
by_function() {
  local f
  for f in "$1".cg-*; do
    callgrind_annotate --threshold=100 --inclusive=no --auto=no --show-percs=no "$f" 2>/dev/null |
      awk -v cwd="$PWD/" '/^-+$/ { dashes++; next }
        dashes >= 3 && $1 ~ /^[0-9,]+$/ {
          n = $1; gsub(/,/, "", n); $1 = ""; sub(/^ +/, "")
          if (index($0, cwd) == 1) $0 = substr($0, length(cwd) + 1)
          sub(/^[^ ]*\/registry\/src\/[^\/]*\//, ""); sub(/^\/rustc\/[0-9a-f]*\/library\//, "")
          sub(/ \[[^]]*\//, " [")
          print n "\t" $0 }'
  done
}
# The functions whose self instructions per event differ most between TOOL's two runs.
top_functions() {
  local tool=$1
  echo "-- $tool: instructions per event by function (self), top $top of (high - low) / $((high - low))"
  by_function "$dir/$tool-low" >"$dir/$tool-low.fn"
  by_function "$dir/$tool-high" >"$dir/$tool-high.fn"
  awk -F'\t' -v d=$((high - low)) '
    NR == FNR { low[$2] += $1; next }
    { high[$2] += $1 }
    END {
      for (f in high) { x = (high[f] - low[f]) / d; if (f != "PROGRAM TOTALS" && (x >= 0.5 || x <= -0.5)) printf "%10.1f  %s\n", x, f }
      for (f in low) if (!(f in high)) { x = -low[f] / d; if (x <= -0.5) printf "%10.1f  %s\n", x, f }
    }' "$dir/$tool-low.fn" "$dir/$tool-high.fn" | sort -k1,1 -g -r | awk -v n="$top" 'NR <= n'
}

echo "fleetbench: $fleetbench ($("$fleetbench" --version))"
if [[ $with_sysbench != 0 ]]; then echo "sysbench: $(sysbench --version)"; fi
echo "valgrind: $(valgrind --version); server: $("$(command -v mariadbd || echo /usr/sbin/mariadbd)" --version | awk '{print $3}') on 127.0.0.1:$MARIADB_PORT"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${FB_TEST:-${SB_TEST:-oltp_point_select}}, 1 thread, 1 table x $table_size rows; instructions per event = (total at $high events - total at $low) / $((high - low)); least of $rounds round(s)"
measure "$dir/prepare" "$fleetbench" oltp_point_select --tables=1 --table-size="$table_size" "${conn[@]}" prepare ||
  exit 1

tools=(fleetbench)
if [[ $with_sysbench != 0 ]]; then tools=(sysbench fleetbench); fi
for tool in "${tools[@]}"; do
  measure_tool "$tool" || true
done

echo
printf '%-12s %16s %16s %14s\n' tool "Ir $low events" "Ir $high events" "Ir per event"
for tool in "${tools[@]}"; do
  if [[ -n ${ir[$tool-high]:-} ]]; then
    printf '%-12s %16s %16s %14s\n' "$tool" "${ir[$tool-low]}" "${ir[$tool-high]}" \
      "$(per_event "${ir[$tool-low]}" "${ir[$tool-high]}")"
  else
    printf '%-12s %16s %16s %14s\n' "$tool" ERR ERR -
  fi
done
[[ $failed == 0 && -n ${ir[fleetbench-high]:-} ]] || exit 1
fb=$(per_event "${ir[fleetbench-low]}" "${ir[fleetbench-high]}")
worker=$(per_event "${busiest[fleetbench-low]}" "${busiest[fleetbench-high]}")
echo "fleetbench by thread: worker $worker, the rest (interval reports, per second of run) $((fb - worker))"
if [[ -n ${ir[sysbench-high]:-} ]]; then
  echo "fleetbench/sysbench: $(calc "$fb / $(per_event "${ir[sysbench-low]}" "${ir[sysbench-high]}")")"
fi
if [[ $verbose == 1 ]]; then
  for tool in "${tools[@]}"; do
    if [[ -n ${ir[$tool-high]:-} ]]; then echo; top_functions "$tool"; fi
  done
fi
echo
if [[ $fb -le $max_instr ]]; then
  echo "fleetbench: $fb instructions per point select <= $max_instr: PASS"
else
  echo "fleetbench: $fb instructions per point select > $max_instr: MISS"
  exit 3
fi
