#!/usr/bin/env bash
# fleetbench against the reference tools with server and client pinned apart: the server on
# SERVER_CPU (0), every client on CLIENT_CPU (1), so that neither takes the other's core and
# a gap in throughput is the tools' own, not the scheduler's. One private MariaDB and one
# private PostgreSQL (free loopback ports, never the system's services), both pinned.
#
# Cases (CASES, each ROUNDS rounds of SECONDS seconds, the reference first in odd rounds and
# fleetbench first in even ones; medians of the rounds' ratios):
#   rw4, rw64    oltp_read_write, 4 and 64 threads, MariaDB, against sysbench 1.0
#   ps4, ps64    oltp_point_select, 4 and 64 threads, MariaDB, against sysbench 1.0
#   pgrw         oltp_read_write, 4 threads, PostgreSQL (--db-driver=pgsql), against sysbench
#   tpcb         pgbench's tpcb-like, -n -M prepared -c 4, -s 10, against pgbench
#   pgwide       a wide result set: a Lua script whose event executes a prepared
#                `SELECT *` returning all 2,000 rows of a 21-column table of mixed types
#                (integers, numeric, float, boolean, text, bytea, json, dates, times,
#                timestamps), on PostgreSQL, sysbench and fleetbench running the same file
#   mywide       the same table and script on MariaDB
# Per round: each tool's rate (QPS, or TPS for tpcb and the wide cases), its client CPU
# (user+sys µs per query or transaction) and the server's CPU per query or transaction
# (the server processes' user+sys time from /proc, backends reaped included). Then per
# case the medians and PASS/MISS against the case's floor (TARGET_<case>, the rate ratio
# fleetbench/reference it must reach). Every run starts once both servers are idle (MariaDB
# purges and flushes for a while after the write-heavy cases, on the servers' core).
#
# Usage: scripts/bench-pinned.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN [target/release]  CASES ["rw4 rw64 ps4 ps64 pgrw tpcb pgwide"]
#   ROUNDS [5]  SECONDS (or RUN_SECONDS) [10]  SERVER_CPU [0]  CLIENT_CPU [1]
#   TABLES [10]  TABLE_SIZE [100000]  PGBENCH_SCALE [10]  WIDE_ROWS [2000]
#   TARGET_rw4 [1.10] TARGET_rw64 [1.10] TARGET_ps4 [1.09] TARGET_ps64 [1.0]
#   TARGET_pgrw [1.17] TARGET_tpcb [1.06] TARGET_pgwide [0.98] TARGET_mywide [0.99]
#   REF_FLEETBENCH_BIN []  a directory with another fleetbench build to take the reference
#                    tools' place: an A/B of a change, pinned the same way
# Needs: sysbench, mariadb-server, postgresql (pgbench), taskset (util-linux).
# Exit status: 0 when every run worked (whether or not the floors are met), 1 when a run
# failed, 2 for a setup problem.

BENCH_NAME=bench-pinned BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
# shellcheck source=private-postgres.sh
source "$(dirname "$0")/private-postgres.sh"

cases=" ${CASES:-rw4 rw64 ps4 ps64 pgrw tpcb pgwide} "
rounds=${ROUNDS:-5}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
tables=${TABLES:-10}
table_size=${TABLE_SIZE:-100000}
scale=${PGBENCH_SCALE:-10}
wide_rows=${WIDE_ROWS:-2000}

for tool in sysbench taskset mariadb awk; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install sysbench mariadb-server util-linux)"
done
[[ $(nproc) -gt $server_cpu && $(nproc) -gt $client_cpu ]] ||
  die "this machine has $(nproc) CPUs: SERVER_CPU=$server_cpu and CLIENT_CPU=$client_cpu must be below that"
find_fleetbench
# The reference: sysbench and pgbench, or another fleetbench build (an A/B of a change).
ref_sb=(sysbench)
ref_pgbench=()
if [[ -n ${REF_FLEETBENCH_BIN:-} ]]; then
  [[ -x $REF_FLEETBENCH_BIN/fleetbench ]] || die "no fleetbench binary in REF_FLEETBENCH_BIN=$REF_FLEETBENCH_BIN"
  ref_sb=("$REF_FLEETBENCH_BIN/fleetbench")
  ref_pgbench=("$REF_FLEETBENCH_BIN/fleetbench" pgbench)
fi
has() { [[ $cases == *" $1 "* ]]; }
wants_pg() { has pgrw || has tpcb || has pgwide; }
wants_my() { has rw4 || has rw64 || has ps4 || has ps64 || has mywide; }

bench_mariadb fb-pinned 200
my_pid=$PRIVATE_MARIADB_PID
# Every thread of the server, and the threads it makes later (they inherit it), on SERVER_CPU.
taskset -a -p -c "$server_cpu" "$my_pid" >/dev/null || die "could not pin MariaDB to CPU $server_cpu"
pg_pid=
if wants_pg; then
  PRIVATE_PG_MAX_CONNECTIONS=200 private_postgres_start "$dir/pg" >/dev/null || die "could not start a private PostgreSQL"
  trap 'bench_cleanup; private_postgres_stop' EXIT
  pg_pid=$(head -1 "$PRIVATE_PG_HOME/data/postmaster.pid")
  # The postmaster and its running children; backends forked later inherit it.
  for p in $pg_pid $(pgrep -P "$pg_pid"); do taskset -p -c "$server_cpu" "$p" >/dev/null; done
  pg_children=$(pgrep -c -P "$pg_pid")
fi

my=(--mysql-host=127.0.0.1 --mysql-port="$MARIADB_PORT" --mysql-user=sbtest --mysql-password=sbtest-pw --mysql-db=sbtest)
pg=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="${PRIVATE_PG_PORT:-0}" --pgsql-user=sbtest
  --pgsql-password=sbpass --pgsql-db=sbtest)
pin=(taskset -c "$client_cpu")

# The server's CPU time so far in clock ticks: MariaDB's process (all threads), or the
# postmaster with every child, the ones it reaped included (cutime, cstime).
server_ticks() {
  local p
  if [[ $1 == my ]]; then
    awk '{print $14 + $15}' "/proc/$my_pid/stat"
  else
    { awk '{print $14 + $15 + $16 + $17}' "/proc/$pg_pid/stat"
      for p in $(pgrep -P "$pg_pid"); do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null; done
    } | awk '{s += $1} END {print s}'
  fi
}
hz=$(getconf CLK_TCK)
# A run's backends exit after its client does, and count (in the postmaster's cutime) only
# once reaped: wait for the postmaster's children to be back to what it had before.
pg_children=
settle() {
  [[ $1 == pg ]] || return 0
  local i
  for i in $(seq 50); do
    [[ $(pgrep -c -P "$pg_pid") -le $pg_children ]] && return
    sleep 0.1
  done
}

# Waits (up to 90 s) until neither server has used more than 5 % of a CPU over a second:
# after a write-heavy run MariaDB purges and flushes for a while on the servers' core,
# which would slow, and be counted against, whichever run came next.
quiet() {
  local i a b c d busy
  for i in $(seq 90); do
    a=$(server_ticks my); c=$([[ -n $pg_pid ]] && server_ticks pg || echo 0)
    sleep 1
    b=$(server_ticks my); d=$([[ -n $pg_pid ]] && server_ticks pg || echo 0)
    busy=$(((b - a + d - c) * 100 / hz))
    [[ $busy -le 5 ]] && return
  done
  echo "$BENCH_NAME: the servers were still busy ($busy % of a CPU) after 90 s; running anyway" >&2
}

# Runs the command pinned to CLIENT_CPU and keeps the server's CPU ticks it cost in OUT.srv.
server=my
pinned_run() {
  local out=$1 before; shift
  quiet
  before=$(server_ticks "$server")
  measure "$out" "${pin[@]}" "$@" || return 1
  settle "$server"
  echo $(($(server_ticks "$server") - before)) >"$out.srv"
}

# The figures of one run: rate and count by kind (sysbench's report, or pgbench's).
kind=qps
rate() {
  case $kind in
    qps) qps "$1" ;;
    tps) tps "$1" ;;
    pgbench) awk '/^tps = / {printf "%.0f", $3}' "$1.out" ;;
  esac
}
count() {
  case $kind in
    qps) queries "$1" ;;
    tps) awk '/^ *transactions:/ {print $2}' "$1.out" ;;
    pgbench) awk -F'[:/ ]+' '/^number of transactions actually processed:/ {print $6}' "$1.out" ;;
  esac
}
client_us() { calc "1000000 * $(cpu "$1") / $(count "$1")" 1; }
server_us() { calc "1000000 * $(cat "$1.srv") / $hz / $(count "$1")" 1; }
checked_run() {
  pinned_run "$@" || return 1
  [[ -n $(rate "$1") && -n $(count "$1") ]] && return
  failed=1
  echo "$BENCH_NAME: no rate or count in the report of: ${*:2}" >&2
  return 1
}

verdicts=()
# run_case NAME LABEL SERVER(my|pg) KIND(qps|tps|pgbench) FLOOR -- REF_CMD... -- FB_CMD...
run_case() {
  local name=$1 label=$2 target_var="TARGET_$1" floor=$5; server=$3 kind=$4
  shift 6
  local ref=() fb=()
  while [[ $1 != -- ]]; do ref+=("$1"); shift; done
  shift
  fb=("$@")
  local target=${!target_var:-$floor}
  local per=transaction
  [[ $kind == qps ]] && per=query
  echo "== $name: $label (${run_secs} s, $rounds rounds; cli/srv = client/server CPU µs per $per)"
  row() { printf '%5s %10s %10s %8s %9s %9s %9s %9s\n' "$@"; }
  row round "ref rate" "fb rate" "fb/ref" "ref cli" "fb cli" "ref srv" "fb srv"
  rate_ratios=() cost_ratios=()
  local srv_ratios=() r s f
  for r in $(seq "$rounds"); do
    s=$dir/$name-ref-$r f=$dir/$name-fb-$r
    pair_order "$r" "$s" "$f" checked_run "${ref[@]}" -- "${fb[@]}"
    pair_figures "$s" "$f" rate client_us
    local rs=- fs=-
    if [[ $ref_ok == 1 ]]; then rs=$(server_us "$s"); fi
    if [[ $fb_ok == 1 ]]; then fs=$(server_us "$f"); fi
    [[ $ref_ok == 1 && $fb_ok == 1 ]] && srv_ratios+=("$(calc "$fs / $rs")")
    row "$r" "$ref_rate" "$fb_rate" "$rate_ratio" "$ref_cost" "$fb_cost" "$rs" "$fs"
  done
  if [[ ${#rate_ratios[@]} -eq 0 ]]; then
    verdicts+=("$name: no round where both worked")
    return
  fi
  local rm rsp cm csp sm ssp v=MISS
  read -r rm rsp <<<"$(stats "${rate_ratios[@]}")"
  read -r cm csp <<<"$(stats "${cost_ratios[@]}")"
  read -r sm ssp <<<"$(stats "${srv_ratios[@]}")"
  echo "  medians fb/ref: rate $rm ($rsp), client CPU $cm ($csp), server CPU $sm ($ssp)"
  echo
  [[ $(calc "$rm >= $target" 0) == 1 ]] && v=PASS
  verdicts+=("$(printf '%-7s %-44s rate fb/ref %s >= %s: %s (client CPU %s, server CPU %s)' \
    "$name" "$label" "$rm" "$target" "$v" "$cm" "$sm")")
}

echo "fleetbench: $fleetbench ($("$fleetbench" --version))  reference: ${ref_sb[0]} ($("${ref_sb[0]}" --version))"
echo "servers pinned to CPU $server_cpu (MariaDB 127.0.0.1:$MARIADB_PORT${pg_pid:+, PostgreSQL 127.0.0.1:$PRIVATE_PG_PORT}), clients to CPU $client_cpu"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

data=(--tables="$tables" --table-size="$table_size")
if has rw4 || has rw64 || has ps4 || has ps64; then
  "${pin[@]}" "$fleetbench" oltp_read_write "${data[@]}" --threads=4 "${my[@]}" prepare >"$dir/my-prepare.out" 2>&1 ||
    die "prepare on MariaDB failed: $(tail -3 "$dir/my-prepare.out")"
fi
for c in rw4 rw64 ps4 ps64; do
  has $c || continue
  case $c in
    rw*) test=oltp_read_write; floor=1.10 ;;
    ps4) test=oltp_point_select; floor=1.09 ;;
    ps64) test=oltp_point_select; floor=1.0 ;;
  esac
  threads=${c#??}
  opts=("$test" "${data[@]}" --threads="$threads" --time="$run_secs" "${my[@]}" run)
  run_case "$c" "$test, $threads threads, MariaDB" my qps "$floor" -- "${ref_sb[@]}" "${opts[@]}" -- "$fleetbench" "${opts[@]}"
done

if has pgrw; then
  "${pin[@]}" sysbench oltp_read_write "${data[@]}" --threads=4 "${pg[@]}" prepare >"$dir/pg-prepare.out" 2>&1 ||
    die "prepare on PostgreSQL failed: $(tail -3 "$dir/pg-prepare.out")"
  opts=(oltp_read_write "${data[@]}" --threads=4 --time="$run_secs" "${pg[@]}" run)
  run_case pgrw "oltp_read_write, 4 threads, PostgreSQL" pg qps 1.17 -- "${ref_sb[@]}" "${opts[@]}" -- "$fleetbench" "${opts[@]}"
fi

if has tpcb; then
  pgbench=$PRIVATE_PG_BIN/pgbench
  [[ ${#ref_pgbench[@]} -gt 0 ]] || ref_pgbench=("$pgbench")
  pgconn=(-h 127.0.0.1 -p "$PRIVATE_PG_PORT" -U sbtest)
  export PGPASSWORD=sbpass
  "${pin[@]}" "$pgbench" -i -q -s "$scale" "${pgconn[@]}" sbtest >"$dir/pgbench-init.out" 2>&1 ||
    die "pgbench -i failed: $(tail -3 "$dir/pgbench-init.out")"
  opts=(-n -M prepared -b tpcb-like -c 4 -T "$run_secs" "${pgconn[@]}" sbtest)
  run_case tpcb "pgbench tpcb-like, -M prepared -c 4, PostgreSQL" pg pgbench 1.06 -- "${ref_pgbench[@]}" "${opts[@]}" -- "$fleetbench" pgbench "${opts[@]}"
fi

# The wide table: 21 columns of mixed types, made by SQL (the same rows for both servers but
# for the types each lacks), and a script that reads all of it through a prepared statement.
wide_lua=$dir/wide_scan.lua
cat >"$wide_lua" <<'LUA'
-- Each event reads every row of wide1 through a statement prepared once per thread.
function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("SELECT * FROM wide1 WHERE small_col > -40000")
end
function thread_done()
  stmt:close()
  con:disconnect()
end
function event()
  stmt:execute()
end
LUA
wide_sql() { # DIALECT: pg or my
  local bytes=BYTEA json=JSON double="DOUBLE PRECISION" bool=BOOLEAN
  [[ $1 == my ]] && bytes=BLOB bool=TINYINT
  cat <<SQL
DROP TABLE IF EXISTS wide1;
CREATE TABLE wide1 (id INT PRIMARY KEY, tiny_col SMALLINT NOT NULL, small_col SMALLINT NOT NULL,
  int_col INT NOT NULL, int2_col INT NOT NULL, big_col BIGINT NOT NULL, big2_col BIGINT NOT NULL,
  dec_col NUMERIC(20,6) NOT NULL, real_col REAL NOT NULL, double_col $double NOT NULL,
  bool_col $bool NOT NULL, char_col CHAR(1) NOT NULL, vchar_col VARCHAR(64) NOT NULL,
  text_col TEXT NOT NULL, text2_col TEXT NOT NULL, bytes_col $bytes NOT NULL, json_col $json NOT NULL,
  date_col DATE NOT NULL, time_col TIME NOT NULL, ts_col TIMESTAMP NOT NULL, ts2_col TIMESTAMP NOT NULL);
SQL
  local i values=()
  for ((i = 1; i <= wide_rows; i++)); do
    local b="(1 = 1)"
    [[ $1 == my ]] && b=$((i % 2))
    [[ $1 == pg ]] && b=$([[ $((i % 2)) == 0 ]] && echo true || echo false)
    values+=("($i, $((i % 256 - 128)), $((i * 7 % 65536 - 32768)), $((i * 131)), $((i * 265443)), $((i * 1000003)), $((i * 7919)), $i.37, $i.5, $i.123456789, $b, '$((i % 10))', 'val$((i % 13))', 'val$((i % 11))', 'text value $i', 'val$((i % 7))', '{\"val$((i % 13))\": 1}', '2020-0$((i % 9 + 1))-$((i % 18 + 10))', '0$((i % 9 + 1)):$((i % 50 + 10)):00', '2020-0$((i % 9 + 1))-$((i % 18 + 10)) 0$((i % 9 + 1)):$((i % 50 + 10)):00', '2021-0$((i % 9 + 1))-$((i % 18 + 10)) 1$((i % 9)):$((i % 50 + 10)):30')")
    if ((${#values[@]} == 500 || i == wide_rows)); then
      local IFS=,
      echo "INSERT INTO wide1 VALUES ${values[*]};"
      values=()
    fi
  done
}
if has pgwide; then
  wide_sql pg | PGPASSWORD=sbpass "$PRIVATE_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 \
    -p "$PRIVATE_PG_PORT" -U sbtest sbtest >"$dir/wide-pg.out" 2>&1 || die "the wide table on PostgreSQL: $(tail -3 "$dir/wide-pg.out")"
  opts=("$wide_lua" --threads=4 --time="$run_secs" "${pg[@]}" run)
  run_case pgwide "$wide_rows-row 21-column SELECT *, 4 threads, PostgreSQL" pg tps 0.98 -- "${ref_sb[@]}" "${opts[@]}" -- "$fleetbench" "${opts[@]}"
fi
if has mywide; then
  wide_sql my | mariadb --no-defaults -S "$MARIADB_SOCKET" -uroot sbtest >"$dir/wide-my.out" 2>&1 ||
    die "the wide table on MariaDB: $(tail -3 "$dir/wide-my.out")"
  opts=("$wide_lua" --threads=4 --time="$run_secs" "${my[@]}" run)
  run_case mywide "$wide_rows-row 21-column SELECT *, 4 threads, MariaDB" my tps 0.99 -- "${ref_sb[@]}" "${opts[@]}" -- "$fleetbench" "${opts[@]}"
fi

echo "== floors (rate fleetbench/reference, medians of $rounds pinned rounds)"
for v in "${verdicts[@]}"; do echo "$v"; done
exit "$failed"
