#!/usr/bin/env bash
# fleetbench's main job on one machine: builds the release binaries, starts a throwaway
# MariaDB (installing mariadb-server first if mariadbd is missing) and two agent processes
# on free loopback ports, then runs sysbench's oltp_read_write through both agents:
# prepare (4 tables x 10000 rows), a 10 s run with a report every second, kept as JSON and
# HTML, a second run without prepared statements, cleanup, and a compare of the two runs;
# then the same test on a throwaway PostgreSQL (installing postgresql if it is missing)
# through the same agents, compared with the MariaDB run; last, the catalog every run was
# recorded in: a `runs compare` of the first two runs by their names there, and last
# `runs list`, the summary: one line per run with its test, threads, TPS and p95 latency.
# Each fleetbench command line is printed before it runs, as it can be copied. The result
# files stay in target/demo (FLEETBENCH_DEMO_OUT); everything it started is stopped at the
# end. Extra arguments go to both MariaDB runs, e.g. `scripts/demo.sh --threads=8 --time=30`.
# FLEETBENCH_DEMO_BIN: a directory with fleetbench and fleetbench-agent already built; the
# demo then uses them instead of building the release binaries (the tests use their own).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/private-mariadb.sh
. scripts/private-postgres.sh

if [ -n "${FLEETBENCH_DEMO_BIN:-}" ]; then
  bin=$(realpath "$FLEETBENCH_DEMO_BIN")
  [ -x "$bin/fleetbench" ] && [ -x "$bin/fleetbench-agent" ] ||
    { echo "demo: FLEETBENCH_DEMO_BIN=$FLEETBENCH_DEMO_BIN has no fleetbench and fleetbench-agent" >&2; exit 1; }
else
  build_tools_install
  cargo build --release --locked --bins
  bin=$(realpath "${CARGO_TARGET_DIR:-target}/release")
fi
out=$(realpath -m "${FLEETBENCH_DEMO_OUT:-target/demo}")
mkdir -p "$out"
# Every run is recorded in a catalog (by default ~/.local/share/fleetbench/catalog.db,
# docs/catalog.md); the demo's runs go to one of their own, new each time.
export FLEETBENCH_CATALOG="$out/catalog.db"
rm -f "$FLEETBENCH_CATALOG" "$FLEETBENCH_CATALOG-wal" "$FLEETBENCH_CATALOG-shm"

# Prints a fleetbench command line as it can be copied (an argument quoted only where the
# shell would read it otherwise), then runs it.
fb() {
  local line a
  line="\$ $(printf '%q' "$bin/fleetbench")"
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then line+=" $a"; else line+=" $(printf '%q' "$a")"; fi
  done
  printf '%s\n' "$line"
  "$bin/fleetbench" "$@"
}
work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  private_mariadb_stop
  private_postgres_stop 2>/dev/null || true
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
fb "${opts[@]}" --threads=4 prepare
echo
# The run's defaults; the caller's options come after them and win (a repeated option
# takes the last value, as in sysbench 1.0).
fb "${opts[@]}" --threads=4 --time=10 --report-interval=1 --percentile=95,99 \
  --tag statements=prepared --json "$out/ps.json" --html "$out/ps.html" "$@" run
echo
# The same run with plain statements instead of prepared ones, to compare with.
fb "${opts[@]}" --threads=4 --time=10 --report-interval=1 --percentile=95,99 \
  --tag statements=plain --db-ps-mode=disable --json "$out/nops.json" "$@" run
echo
fb "${opts[@]}" cleanup
echo
fb compare "$out/ps.json" "$out/nops.json"
echo

# The same test on PostgreSQL (sysbench's pgsql driver's options), through the same agents.
private_postgres_start "$work/pg"
echo "demo: private PostgreSQL on 127.0.0.1:$PRIVATE_PG_PORT"
pg=(oltp_read_write --agents "${addrs[0]},${addrs[1]}" --db-driver=pgsql
  --pgsql-host=127.0.0.1 --pgsql-port="$PRIVATE_PG_PORT" --pgsql-user=sbtest
  --pgsql-password=sbpass --pgsql-db=sbtest --tables=4 --table-size=10000)
fb "${pg[@]}" --threads=4 prepare
echo
fb "${pg[@]}" --threads=4 --time=10 --report-interval=1 --percentile=95,99 \
  --tag server=postgresql --json "$out/pg.json" run
echo
fb "${pg[@]}" cleanup
echo
fb compare "$out/ps.json" "$out/pg.json"
echo
# The catalog: the first two runs compared by their names there, then the summary of all
# three, newest first (test, threads, TPS, p95 latency and the tags that tell them apart).
fb runs compare last~2 last~1
echo
echo "demo: summary of the runs"
fb runs list
echo
echo "demo: the results are $out/ps.json, $out/nops.json and $out/pg.json, and in the catalog $FLEETBENCH_CATALOG"
echo "demo: the HTML report of the first run is $out/ps.html (open it in a browser)"
