#!/usr/bin/env bash
# Side-by-side pgbench benchmark: `fleetbench pgbench` against PostgreSQL's own pgbench (the
# reference) on the same private PostgreSQL server, which this script starts in a temporary
# directory on a free loopback port (never the system's clusters or port 5432) and removes
# again on exit.
#
#  1. run: initialises once (`pgbench -i -s SCALE`), then for each script in SCRIPTS (a
#     built-in one, or `custom`: a script file in pgbench's language, a zipfian key
#     scattered by permute, read with \gset, a second read keyed by what the first
#     returned and a \if, run with `-f`, at the CUSTOM_CLIENTS counts) and client count in
#     CLIENTS runs pgbench and fleetbench pgbench alternately
#     (ROUNDS rounds of SECONDS seconds, `-n -M MODE -c N`, -j left at its default 1 on
#     both sides) and prints TPS, the ratio fb/pg, and the client CPU (user+sys of the
#     whole client process) in µs per transaction; then per (script, clients) the medians
#     of the rounds' ratios and their spread (lowest..highest).
#  2. init: `-i -s INIT_SCALE` with each tool in turn (INIT_ROUNDS rounds), wall seconds.
#  3. checks the targets: TPS ratio >= 1.0 and CPU per transaction fb/pg <= 1.0 (medians of
#     the rounds) for each script and client count; prints PASS/MISS for each. The init
#     wall times are reported beside them (fb/pg <= 1.0 as a PASS/MISS too).
#
# pgbench is the server version's binary itself ($bindir/pgbench), not Debian's wrapper
# script in /usr/bin, whose Perl start-up would be counted as client CPU.
#
# Usage: scripts/bench-pgbench.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN   directory holding fleetbench [target/release; built with
#                    `cargo build --release --locked --bins -q` if absent]
#   SCALE [10]  SCRIPTS ["tpcb-like select-only custom"]  CLIENTS ["4 64"]
#   CUSTOM_CLIENTS [8]  MODE [prepared]
#   ROUNDS [5]  SECONDS (or RUN_SECONDS) [10]  INIT_SCALE [50]  INIT_ROUNDS [3]
#   SYNC_COMMIT [off]  the server's synchronous_commit: off by default, so that a commit's
#                      wait for the disk (the same for both tools, and the shared disk's
#                      noise) does not drown the clients' difference; on measures with it
#   SECTIONS ["run init"]
#   BENCH_DIR_PARENT [${TMPDIR:-/tmp}]  where the private server's directory is made
# Needs: postgresql (installed if missing), with its pgbench.
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# failed (its command and error are printed), 2 for a setup problem.

BENCH_NAME=bench-pgbench BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
# shellcheck source=private-postgres.sh
source "$(dirname "$0")/private-postgres.sh"

scale=${SCALE:-10}
scripts=${SCRIPTS:-tpcb-like select-only custom}
clients_list=${CLIENTS:-4 64}
custom_clients=${CUSTOM_CLIENTS:-8}
mode=${MODE:-prepared}
rounds=${ROUNDS:-5}
init_scale=${INIT_SCALE:-50}
init_rounds=${INIT_ROUNDS:-3}
sections=" ${SECTIONS:-run init} "

command -v awk >/dev/null || die "awk is missing"
find_fleetbench

dir=$(mktemp -d "${BENCH_DIR_PARENT:-${TMPDIR:-/tmp}}/fb-pgbench.XXXXXX")
# shellcheck disable=SC2317  # called by the EXIT trap
on_exit() {
  private_postgres_stop
  rm -rf "$dir"
}
trap on_exit EXIT
max_conns=0
for c in $clients_list $custom_clients; do [[ $c -gt $max_conns ]] && max_conns=$c; done
PRIVATE_PG_MAX_CONNECTIONS=$((max_conns + 100)) private_postgres_start "$dir/pg" \
  || die "could not start a private PostgreSQL"
port=$PRIVATE_PG_PORT
pgbench=$PRIVATE_PG_BIN/pgbench
[[ -x $pgbench ]] || die "no pgbench beside $PRIVATE_PG_BIN/postgres"
export PGPASSWORD=sbpass
conn=(-h 127.0.0.1 -p "$port" -U sbtest)
sync_commit=${SYNC_COMMIT:-off}
"$PRIVATE_PG_BIN/psql" -X -q -h "$PRIVATE_PG_SOCKET_DIR" -p "$port" -U postgres -d postgres \
  -c "ALTER SYSTEM SET synchronous_commit = '$sync_commit'" -c "SELECT pg_reload_conf()" >/dev/null \
  || die "could not set synchronous_commit=$sync_commit"

txns() { awk -F'[:/ ]+' '/^number of transactions actually processed:/ {print $6}' "$1.out"; }
pg_tps() { awk '/^tps = / {printf "%.0f", $3}' "$1.out"; }
bench_run() {
  measure "$@" || return 1
  [[ -n $(pg_tps "$1") && -n $(txns "$1") ]] && return
  failed=1
  echo "bench-pgbench: no 'tps =' or 'transactions actually processed' line in the report of: ${*:2}" >&2
  return 1
}
# µs of client CPU per transaction
cpu_per_txn() { calc "1000000 * $(cpu "$1") / $(txns "$1")" 1; }
echo "fleetbench: $fleetbench ($("$fleetbench" --version))  pgbench: $("$pgbench" --version)"
echo "server: PostgreSQL $("$PRIVATE_PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, synchronous_commit=$sync_commit"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

# The custom script: what a user's own -f file typically does.
custom=$dir/custom.sql
cat >"$custom" <<'SQL'
\set r random_zipfian(1, 100000 * :scale, 1.1)
\set aid 1 + permute(:r - 1, 100000 * :scale)
SELECT abalance, bid FROM pgbench_accounts WHERE aid = :aid \gset
\if :abalance >= 0
SELECT bbalance FROM pgbench_branches WHERE bid = :bid;
\else
SELECT tbalance FROM pgbench_tellers WHERE bid = :bid LIMIT 1;
\endif
SQL

verdicts=()
if section run; then
  "$pgbench" -i -q -s "$scale" "${conn[@]}" sbtest >"$dir/init.out" 2>&1 \
    || die "pgbench -i failed: $(tail -3 "$dir/init.out")"
  echo "== run: -s $scale -n -M $mode, ${run_secs} s per run, $rounds rounds; CPU = client user+sys µs per transaction"
  row() { printf '%-12s %7s %5s %10s %10s %9s %9s %9s %9s\n' "$@"; }
  row script clients round "pg TPS" "fb TPS" "TPS fb/pg" "pg CPU" "fb CPU" "CPU fb/pg"
  for script in $scripts; do
    counts=$clients_list which=(-b "$script")
    if [[ $script == custom ]]; then counts=$custom_clients which=(-f "$custom"); fi
    for clients in $counts; do
      rate_ratios=() cost_ratios=()
      for r in $(seq "$rounds"); do
        opts=(-n -M "$mode" "${which[@]}" -c "$clients" -T "$run_secs" "${conn[@]}" sbtest)
        p=$dir/run-pg-$script-$clients-$r f=$dir/run-fb-$script-$clients-$r
        pair_order "$r" "$p" "$f" bench_run "$pgbench" "${opts[@]}" -- "$fleetbench" pgbench "${opts[@]}"
        pair_figures "$p" "$f" pg_tps cpu_per_txn
        row "$script" "$clients" "$r" "$ref_rate" "$fb_rate" "$rate_ratio" "$ref_cost" "$fb_cost" "$cost_ratio"
      done
      pair_verdict "$(printf '%-12s %3s clients' "$script" "$clients")" "TPS fb/pg" "CPU/txn fb/pg" 1.0
    done
  done
  echo
fi

if section init; then
  echo "== init: -i -s $init_scale, $init_rounds round(s); wall seconds"
  printf '%5s %9s %9s %9s\n' round "pg wall" "fb wall" "fb/pg"
  ratios=()
  for r in $(seq "$init_rounds"); do
    p=$dir/init-pg-$r f=$dir/init-fb-$r
    pair_order "$r" "$p" "$f" measure "$pgbench" -i -q -s "$init_scale" "${conn[@]}" sbtest \
      -- "$fleetbench" pgbench -i -q -s "$init_scale" "${conn[@]}" sbtest
    pw=ERR fw=ERR ratio=-
    [[ $ref_ok == 1 ]] && pw=$(wall "$p")
    [[ $fb_ok == 1 ]] && fw=$(wall "$f")
    if [[ $ref_ok == 1 && $fb_ok == 1 ]]; then ratio=$(calc "$fw / $pw"); ratios+=("$ratio"); fi
    printf '%5s %9s %9s %9s\n' "$r" "$pw" "$fw" "$ratio"
  done
  if [[ ${#ratios[@]} -gt 0 ]]; then
    read -r i_med i_spread <<<"$(stats "${ratios[@]}")"
    v=MISS
    [[ $(calc "$i_med <= 1.0" 0) == 1 ]] && v=PASS
    verdicts+=("$(printf 'init -i -s %s: wall fb/pg %s (%s) <= 1.0: %s' "$init_scale" "$i_med" "$i_spread" "$v")")
  fi
  echo
fi

echo "== targets"
for v in "${verdicts[@]}"; do echo "$v"; done
exit "$failed"
