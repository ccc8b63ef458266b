#!/usr/bin/env bash
# TPC-C benchmark: fleetbench's `tpcc` on a private MariaDB server (private-mariadb.sh: a
# throwaway server in a temporary directory on a free loopback port, never the system
# service on 3306, removed again on exit), optionally side by side with tpcc-mysql (the
# reference) on the same server.
#
#  1. load: wall seconds of `fleetbench tpcc ... --threads=LOAD_THREADS prepare` for
#     WAREHOUSES warehouses (schema, data, then secondary indexes and foreign keys).
#  2. run: `fleetbench tpcc ... -c THREADS -r WARMUP -l SECONDS run`; prints TpmC (the
#     report's last `NNNN.NNN TpmC` line) and TpmC per client CPU second: TpmC divided by the
#     user+sys CPU seconds of the fleetbench process over the whole run (warm-up included),
#     as /usr/bin/time reports them (or bash's `times` when it is missing). Then `check`
#     (the consistency conditions) on the data the run left.
#  3. tpcc-mysql, only when TPCC_MYSQL_DIR names a directory with already-built tpcc-mysql
#     binaries tpcc_load and tpcc_start and its create_table.sql and add_fkey_idx.sql (this
#     script neither downloads nor builds tpcc-mysql; it only runs what the user provides):
#     the database is dropped and created again, create_table.sql is applied, then
#     `tpcc_load -h 127.0.0.1 -P PORT -d tpcc -u USER -p PW -w WAREHOUSES` and
#     add_fkey_idx.sql are timed together as its load, then `tpcc_start ... -w WAREHOUSES
#     -c THREADS -r WARMUP -l SECONDS` is measured as fleetbench's run is (its TpmC from its
#     `<TpmC>` block). Prints a table of load seconds, TpmC and TpmC per client CPU second,
#     both tools, with the ratios, and the targets: fleetbench's load at least 5x faster.
#     Without TPCC_MYSQL_DIR fleetbench's figures are printed alone.
#  Each report's retried and failed transactions and [NG] constraint lines are summed below
#  the table; a step that failed has its command and error printed. The full reports are
#  removed with the work directory on exit unless REPORT_DIR is set.
#
# Usage: scripts/bench-tpcc.sh
#        TPCC_MYSQL_DIR=/path/to/tpcc-mysql scripts/bench-tpcc.sh
# Environment (defaults in brackets):
#   WAREHOUSES [4]  LOAD_THREADS [4] connections of fleetbench's prepare
#   THREADS [8] connections of the runs  WARMUP [5] seconds of warm-up before the measure
#   SECONDS (or RUN_SECONDS) [30] measured seconds (tpcc_start counts whole multiples of
#                    its 10 s report interval: give a multiple of 10 for equal runs)
#   TPCC_MYSQL_DIR []  directory holding tpcc_load, tpcc_start, create_table.sql and
#                    add_fkey_idx.sql of a tpcc-mysql build (e.g. a checkout of
#                    github.com/Percona-Lab/tpcc-mysql after `make` in its src/)
#   FLEETBENCH_BIN   directory holding the fleetbench binary [target/release; built with
#                    `cargo build --release --locked --bins -q` if the binary is absent]
#   FB_ARGS []       extra options for fleetbench's prepare and run, e.g. "--local-agents=2"
#   BENCH_DIR_PARENT [${TMPDIR:-/tmp}]  where the private server's directory is made
#   REPORT_DIR []    when set, every step's output (*.out, *.err, *.time, the run's JSON)
#                    is copied there on exit
# Needs: mariadb-server and mariadb-client (private-mariadb.sh installs the server when
# missing), awk; /usr/bin/time (apt-get install time) for CPU figures of the process alone.
# Exit status: 0 when every step worked (whether or not the targets are met), 1 when a
# prepare, load or run failed (its command and error are printed), 2 for a setup problem.

BENCH_NAME=bench-tpcc BENCH_SECONDS=30
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

warehouses=${WAREHOUSES:-4}
load_threads=${LOAD_THREADS:-4}
threads=${THREADS:-8}
warmup=${WARMUP:-5}
tpcc_dir=${TPCC_MYSQL_DIR:-}
user=sbtest password=sbtest-pw db=tpcc

for tool in mariadb awk; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install mariadb-client)"
done
for n in WAREHOUSES LOAD_THREADS THREADS WARMUP; do
  [[ ${!n:-1} =~ ^[0-9]+$ ]] || die "$n must be a whole number, not '${!n}'"
done
[[ $run_secs =~ ^[0-9]+$ && $run_secs -gt 0 ]] || die "SECONDS must be a whole number above 0, not '$run_secs'"
if [[ -n $tpcc_dir ]]; then
  for f in tpcc_load tpcc_start; do
    [[ -x $tpcc_dir/$f ]] || die "no executable $f in TPCC_MYSQL_DIR=$tpcc_dir (build tpcc-mysql there first)"
  done
  for f in create_table.sql add_fkey_idx.sql; do
    [[ -f $tpcc_dir/$f ]] || die "no $f in TPCC_MYSQL_DIR=$tpcc_dir"
  done
  tpcc_dir=$(cd "$tpcc_dir" && pwd)
fi

# --- fleetbench binary -------------------------------------------------------------------
find_fleetbench
fleetbench=$(cd "$(dirname "$fleetbench")" && pwd)/fleetbench

# --- private MariaDB server ----------------------------------------------------------------
# shellcheck source=private-mariadb.sh
source scripts/private-mariadb.sh
dir=$(mktemp -d "${BENCH_DIR_PARENT:-${TMPDIR:-/tmp}}/fb-tpcc.XXXXXX")
fb_prepared=0
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  if [[ $fb_prepared == 1 ]]; then
    "$fleetbench" tpcc "${conn[@]}" cleanup >/dev/null 2>&1 || true
  fi
  private_mariadb_stop
  if [[ -n ${REPORT_DIR:-} ]]; then
    mkdir -p "$REPORT_DIR" && cp "$dir"/*.out "$dir"/*.err "$dir"/*.time "$dir"/*.json "$REPORT_DIR"/ 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
private_mariadb_start "$dir/db" >/dev/null || die "could not start a private MariaDB"

sql() { mariadb --no-defaults -S "$MARIADB_SOCKET" -uroot "$@"; }
sql -e "CREATE DATABASE $db"

# --- helpers ---------------------------------------------------------------------------------
conn=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user="$user"
  --mysql-password="$password" --mysql-db="$db")
# tpcc-mysql's letters, which fleetbench takes as well
letters=(-h 127.0.0.1 -P "$MARIADB_PORT" -d "$db" -u "$user" -p "$password")
read -r -a fb_args <<<"${FB_ARGS:-}"
# the figure of the report's last "   NNNN.NNN TpmC" line (after its <TpmC> heading)
tpmc() { awk '/^<TpmC>/ {t = 1} t && $2 == "TpmC" {v = $1} END {print v}' "$1.out"; }
# retried and failed transactions (sums of the rt: and fl: columns of the per-type block
# "<Raw Results2(sum ver.)>", or of "<Raw Results>" when there is no such block), and the
# number of [NG] lines of "<Constraint Check>"
raw_sums() {
  awk '/^<Raw Results2/ {b = 2; next} /^<Raw Results>/ {b = 1; next} /^$/ {b = 0}
    b && /^ *\[[0-9]\]/ { for (i = 1; i <= NF; i++) {
        if ($i ~ /^rt:/) { x = $i; sub(/^rt:/, "", x); if (x == "") x = $(i + 1); r[b] += x }
        if ($i ~ /^fl:/) { x = $i; sub(/^fl:/, "", x); if (x == "") x = $(i + 1); f[b] += x } } ; seen[b] = 1 }
    /\[NG\]/ {ng++}
    END { k = seen[2] ? 2 : 1; printf "retried %d, failed %d, [NG] %d", r[k], f[k], ng }' "$1.out"
}
# bench_run OUT CMD...: measure, then check that the report has a TpmC figure.
bench_run() {
  measure "$@" || return 1
  [[ -n $(tpmc "$1") ]] && return
  failed=1
  echo "bench-tpcc: no '<TpmC>' figure in the report of: ${*:2}" >&2
  tail -20 "$1.out" | sed 's/^/  | /' >&2
  return 1
}
per_cpu() { if [[ $(calc "$2 > 0" 0) == 1 ]]; then calc "$1 / $2" 1; else echo -; fi; }

echo "fleetbench: $fleetbench ($("$fleetbench" --version))"
[[ -n $tpcc_dir ]] && echo "tpcc-mysql: $tpcc_dir"
echo "server: MariaDB $(sql -N -e 'SELECT VERSION()') on 127.0.0.1:$MARIADB_PORT, data in $dir/db"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "TPC-C: $warehouses warehouses; load: fleetbench $load_threads connections; runs: $threads connections, ${warmup} s warm-up, ${run_secs} s measured"
echo

# --- 1./2. fleetbench ------------------------------------------------------------------------
fb_load='' fb_tpmc='' fb_cpu='' fb_sums='' fb_check=''
echo "== fleetbench: prepare"
fb_prepared=1
if measure "$dir/fb-prep" "$fleetbench" tpcc "${conn[@]}" --warehouses="$warehouses" \
  --threads="$load_threads" "${fb_args[@]}" prepare; then
  fb_load=$(wall "$dir/fb-prep")
  echo "wall ${fb_load} s, client CPU $(cpu "$dir/fb-prep") s; its report: $(grep -m1 -o 'loaded in [0-9.]*s' "$dir/fb-prep.out" || echo '(no "loaded in" line)')"
  echo "== fleetbench: run"
  if bench_run "$dir/fb-run" "$fleetbench" tpcc "${letters[@]}" -w "$warehouses" -c "$threads" \
    -r "$warmup" -l "$run_secs" --json="$dir/fb-run.json" "${fb_args[@]}" run; then
    fb_tpmc=$(tpmc "$dir/fb-run") fb_cpu=$(cpu "$dir/fb-run") fb_sums=$(raw_sums "$dir/fb-run")
    echo "TpmC $fb_tpmc, wall $(wall "$dir/fb-run") s, client CPU $fb_cpu s; $fb_sums"
  fi
  echo "== fleetbench: check"
  if measure "$dir/fb-check" "$fleetbench" tpcc "${conn[@]}" --warehouses="$warehouses" "${fb_args[@]}" check; then
    fb_check=passed
  else
    fb_check=FAILED
  fi
  tail -5 "$dir/fb-check.out" | sed 's/^/  | /'
fi
"$fleetbench" tpcc "${conn[@]}" cleanup >/dev/null || { failed=1; echo "bench-tpcc: fleetbench tpcc cleanup failed" >&2; }
fb_prepared=0
echo

# --- 3. tpcc-mysql ---------------------------------------------------------------------------
tm_load='' tm_tpmc='' tm_cpu='' tm_sums=''
if [[ -n $tpcc_dir ]]; then
  echo "== tpcc-mysql: create_table.sql, tpcc_load, add_fkey_idx.sql"
  sql -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  if ! sql "$db" <"$tpcc_dir/create_table.sql" >"$dir/tm-schema.out" 2>&1; then
    failed=1; echo "bench-tpcc: create_table.sql failed:" >&2; tail -5 "$dir/tm-schema.out" >&2
  # tpcc_load reports errors on stdout and may still exit 0: the foreign keys would fail then.
  elif measure "$dir/tm-load" "$tpcc_dir/tpcc_load" "${letters[@]}" -w "$warehouses" &&
    measure "$dir/tm-idx" mariadb --no-defaults -S "$MARIADB_SOCKET" -uroot "$db" \
      -e "source $tpcc_dir/add_fkey_idx.sql"; then
    tm_load=$(calc "$(wall "$dir/tm-load") + $(wall "$dir/tm-idx")" 2)
    echo "wall ${tm_load} s (tpcc_load $(wall "$dir/tm-load") s, client CPU $(cpu "$dir/tm-load") s; add_fkey_idx.sql $(wall "$dir/tm-idx") s)"
    echo "== tpcc-mysql: tpcc_start"
    if bench_run "$dir/tm-run" "$tpcc_dir/tpcc_start" "${letters[@]}" -w "$warehouses" -c "$threads" \
      -r "$warmup" -l "$run_secs"; then
      tm_tpmc=$(tpmc "$dir/tm-run") tm_cpu=$(cpu "$dir/tm-run") tm_sums=$(raw_sums "$dir/tm-run")
      echo "TpmC $tm_tpmc, wall $(wall "$dir/tm-run") s, client CPU $tm_cpu s; $tm_sums"
    fi
  fi
  sql -e "DROP DATABASE IF EXISTS $db"
  echo
fi

# --- results ---------------------------------------------------------------------------------
fb_pc='' tm_pc=''
[[ -n $fb_tpmc ]] && fb_pc=$(per_cpu "$fb_tpmc" "$fb_cpu")
[[ -n $tm_tpmc ]] && tm_pc=$(per_cpu "$tm_tpmc" "$tm_cpu")
ratio() { if [[ -n $1 && -n $2 && $1 != - && $2 != - && $(calc "$2 > 0" 0) == 1 ]]; then calc "$1 / $2" 2; else echo -; fi; }
echo "== results: $warehouses warehouses, $threads connections, ${run_secs} s"
if [[ -n $tpcc_dir ]]; then
  row() { printf '%-28s %12s %12s %10s\n' "$@"; }
  row "" fleetbench tpcc-mysql ratio
  row "load s" "${fb_load:-ERR}" "${tm_load:-ERR}" "$(ratio "$tm_load" "$fb_load") (tm/fb)"
  row "TpmC" "${fb_tpmc:-ERR}" "${tm_tpmc:-ERR}" "$(ratio "$fb_tpmc" "$tm_tpmc") (fb/tm)"
  row "client CPU s (run)" "${fb_cpu:--}" "${tm_cpu:--}" "$(ratio "$fb_cpu" "$tm_cpu") (fb/tm)"
  row "TpmC per client CPU s" "${fb_pc:--}" "${tm_pc:--}" "$(ratio "$fb_pc" "$tm_pc") (fb/tm)"
  echo "fleetbench: ${fb_sums:--}; check: ${fb_check:--}"
  echo "tpcc-mysql: ${tm_sums:--}"
  echo "(a report's 'late' and [NG] response-time lines use its own limits: fleetbench's are the"
  echo " specification's seconds, tpcc_start's defaults 5/5/5/80/20 ms; retried and failed compare)"
  echo
  echo "== targets"
  r=$(ratio "$tm_load" "$fb_load")
  if [[ $r != - ]]; then
    v=MISS; [[ $(calc "$r >= 5" 0) == 1 ]] && v=PASS
    echo "load: fleetbench ${fb_load} s, tpcc-mysql ${tm_load} s: ${r}x faster >= 5x: $v"
  else
    echo "load: not compared (a load failed)"
  fi
else
  row() { printf '%-28s %12s\n' "$@"; }
  row "" fleetbench
  row "load s" "${fb_load:-ERR}"
  row "TpmC" "${fb_tpmc:-ERR}"
  row "client CPU s (run)" "${fb_cpu:--}"
  row "TpmC per client CPU s" "${fb_pc:--}"
  echo "fleetbench: ${fb_sums:--}; check: ${fb_check:--}"
  echo
  echo "To compare with tpcc-mysql on the same server, build it yourself (github.com/Percona-Lab/tpcc-mysql,"
  echo "\`make\` in its src/) and run: TPCC_MYSQL_DIR=/path/to/tpcc-mysql $0"
fi
echo "CPU busy after the runs: $(cpu_busy); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "($(nproc) cores; client and server share them: a busy machine lowers every figure above)"
exit "$failed"
