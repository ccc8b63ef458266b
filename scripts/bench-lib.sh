# Sourced first thing by fleetbench's benchmark scripts, with BENCH_NAME (the script's name,
# for messages) and BENCH_SECONDS (its default seconds per run) set: the preamble they
# share, finding the fleetbench binary, measuring a client command's wall and CPU time,
# and saying what failed.
#   run_secs              seconds per run: RUN_SECONDS, else SECONDS as the environment
#                         gives it, else BENCH_SECONDS
#   (then strict mode, set -euo pipefail, and the repository's root as working directory)
#   die MESSAGE           prints "BENCH_NAME: MESSAGE" on stderr and exits 2 (a setup problem)
#   find_fleetbench       sets fleetbench to FLEETBENCH_BIN's fleetbench [target/release;
#                         built with `cargo build --release --locked --bins -q` if absent]
#   cpu_busy              the share of the machine's CPU time that was busy over one second
#                         (other load on the box)
#   calc EXPR [DECIMALS]  awk arithmetic, printed with DECIMALS (3) decimals
#   measure OUT CMD...    runs CMD with stdout/stderr to OUT.out/OUT.err and its wall, user
#                         and system seconds and its context switches, voluntary and not (the
#                         process and its children) to OUT.time as "WALL USER SYS VCS ICS";
#                         on failure prints the command and its error, sets failed=1 and
#                         returns 1
#   wall OUT, cpu OUT     the wall seconds, and user+system seconds, of a measured command
#   switches OUT          its context switches (empty when measured without /usr/bin/time)
#   raise_files N [HINT]  lifts this shell's open-files limit to its hard limit, which must
#                         allow N files (else dies, with HINT as another way out)
#   bench_mariadb PREFIX MAXCONN
#                         a private MariaDB (private-mariadb.sh, MARIADB_PORT) allowing
#                         MAXCONN connections, in a new directory $dir (mktemp PREFIX.XXXXXX)
#                         that goes on exit with the server and the agent of $agent_pid
#   bench_agent BIN OUT   starts the agent BIN on a free loopback port in the background,
#                         its output in OUT.out/OUT.err, and sets agent_pid and agent_addr
#                         once it says where it listens (dies if it does not)
#   section NAME          whether $sections (" ${SECTIONS:-DEFAULT} ", set by the script)
#                         names NAME
#   queries OUT, qps OUT, tps OUT, total_time OUT
#                         figures of a report in sysbench's layout (both tools print it)
#   sysbench_run OUT CMD...
#                         measure, then check that the report has a QPS and a total time
#   cpu_per_k CPU COUNT   client CPU seconds per 1000 queries (4 decimals)
#   pair_order R REF_OUT FB_OUT RUN_FN REF_CMD... -- FB_CMD...
#                         one round of a pair, each through RUN_FN: odd rounds the reference
#                         first, even rounds fleetbench, so that a drift of the shared
#                         machine's speed favours neither; sets ref_ok and fb_ok (0 or 1)
#   pair_figures REF_OUT FB_OUT RATE_FN COST_FN
#                         after pair_order: sets ref_rate fb_rate rate_ratio ref_cost fb_cost
#                         cost_ratio (ERR for a failed run, - for a ratio missing a side) and
#                         appends the ratios to rate_ratios and cost_ratios
#   pair_verdict LABEL RATE_NAME COST_NAME COST_MAX
#                         after the rounds: prints the medians of rate_ratios and cost_ratios
#                         and appends "LABEL: ... PASS|MISS" to verdicts (rate >= 1.0, cost
#                         <= COST_MAX)

# SECONDS is bash's own clock; take a value given in the environment before it moves on.
run_secs=${RUN_SECONDS:-$(printenv SECONDS || echo "${BENCH_SECONDS:-10}")}

set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "${BENCH_NAME:-$(basename "$0" .sh)}: $*" >&2; exit 2; }

find_fleetbench() {
  local bin_dir=${FLEETBENCH_BIN:-target/release}
  fleetbench=$bin_dir/fleetbench
  if [[ ! -x $fleetbench ]]; then
    if [[ -n ${FLEETBENCH_BIN:-} ]]; then die "no fleetbench binary in FLEETBENCH_BIN=$bin_dir"; fi
    cargo build --release --locked --bins -q
  fi
}

cpu_busy() {
  local a b
  a=$(head -1 /proc/stat); sleep 1; b=$(head -1 /proc/stat)
  echo "$a $b" | awk '{ n = (NF - 2) / 2; for (i = 2; i <= n + 1; i++) { t += $(i + n + 1) - $i }
    idle = $(5 + n + 1) - $5 + $(6 + n + 1) - $6; printf "%.0f%%", 100 * (t - idle) / t }'
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", ($1) }"; }
# median and spread (lowest..highest) of the numbers given: paired rounds' ratios are judged
# by their median, so that one round disturbed by the shared machine does not decide
stats() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3f %.3f..%.3f", m, v[1], v[NR] }'
}
failed=0

if [[ -x /usr/bin/time ]]; then
  measure() {
    local out=$1; shift
    /usr/bin/time -f '%e %U %S %w %c' -o "$out.time" "$@" >"$out.out" 2>"$out.err" && return
    report_failure "$out" "$@"
  }
else
  measure() {
    local out=$1; shift
    local t0 t1 before after
    before=$(times | tail -1); t0=$(date +%s.%N)
    "$@" >"$out.out" 2>"$out.err" || { report_failure "$out" "$@"; return 1; }
    t1=$(date +%s.%N); after=$(times | tail -1)
    # `times` prints children's user and system time as "XmY.YYYs XmY.YYYs".
    echo "$before $after" | awk -v w="$(calc "$t1 - $t0")" '
      function s(x) { split(x, a, "m"); return a[1] * 60 + a[2] }
      { printf "%s %.2f %.2f\n", w, s($3) - s($1), s($4) - s($2) }' >"$out.time"
  }
fi

report_failure() {
  local out=$1; shift
  failed=1
  {
    printf '%s: FAILED:' "${BENCH_NAME:-bench}"; printf ' %q' "$@"; echo
    # the error, or the end of the report for tools that print errors there
    if [[ -s $out.err ]]; then tail -20 "$out.err"; else tail -20 "$out.out"; fi | sed 's/^/  | /'
  } >&2
  return 1
}

# (the last line of OUT.time: /usr/bin/time puts a "Command exited ..." line before it)
wall() { awk 'END {printf "%.2f", $1}' "$1.time"; }
cpu() { awk 'END {printf "%.2f", $2 + $3}' "$1.time"; }
switches() { awk 'END {if (NF >= 5) printf "%d", $4 + $5}' "$1.time"; }

raise_files() {
  local need=$1 hint=${2:-}
  if [[ $(ulimit -Hn) != unlimited && $(ulimit -Hn) -lt $need ]]; then
    die "the open-files hard limit $(ulimit -Hn) is below $need: raise it (ulimit -Hn as root)${hint:+, or $hint}"
  fi
  ulimit -n "$(ulimit -Hn)"
}

bench_mariadb() {
  # shellcheck source=private-mariadb.sh
  source scripts/private-mariadb.sh
  dir=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  agent_pid=
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  PRIVATE_MARIADB_MAX_CONNECTIONS=$2 private_mariadb_start "$dir/db" >/dev/null ||
    die "could not start a private MariaDB"
}

bench_cleanup() {
  [[ -n ${agent_pid:-} ]] && kill "$agent_pid" 2>/dev/null
  private_mariadb_stop
  rm -rf "$dir"
}

section() { [[ $sections == *" $1 "* ]]; }

queries() { awk '/^ *queries:/ {print $2}' "$1.out"; }
qps() { awk '/^ *queries:/ {gsub(/[(]/, "", $3); print $3}' "$1.out"; }
tps() { awk '/^ *transactions:/ {gsub(/[(]/, "", $3); print $3}' "$1.out"; }
total_time() { awk '/^ *total time:/ {sub(/s$/, "", $3); print $3}' "$1.out"; }
sysbench_run() {
  measure "$@" || return 1
  [[ -n $(qps "$1") && -n $(total_time "$1") ]] && return
  failed=1
  echo "${BENCH_NAME:-bench}: no 'queries:' or 'total time:' line in the report of: ${*:2}" >&2
  return 1
}
cpu_per_k() { calc "1000 * $1 / $2" 4; }

pair_order() {
  local r=$1 ref_out=$2 fb_out=$3 run=$4 ref_cmd=() fb_cmd=()
  shift 4
  while [[ $# -gt 0 && $1 != -- ]]; do ref_cmd+=("$1"); shift; done
  shift
  fb_cmd=("$@")
  ref_ok=0 fb_ok=0
  if ((r % 2)); then
    "$run" "$ref_out" "${ref_cmd[@]}" && ref_ok=1
    "$run" "$fb_out" "${fb_cmd[@]}" && fb_ok=1
  else
    "$run" "$fb_out" "${fb_cmd[@]}" && fb_ok=1
    "$run" "$ref_out" "${ref_cmd[@]}" && ref_ok=1
  fi
  return 0
}

pair_figures() {
  local ref=$1 fb=$2 rate=$3 cost=$4
  ref_rate=ERR fb_rate=ERR rate_ratio=- ref_cost=- fb_cost=- cost_ratio=-
  if [[ $ref_ok == 1 ]]; then ref_rate=$("$rate" "$ref"); ref_cost=$("$cost" "$ref"); fi
  if [[ $fb_ok == 1 ]]; then fb_rate=$("$rate" "$fb"); fb_cost=$("$cost" "$fb"); fi
  if [[ $ref_ok == 1 && $fb_ok == 1 ]]; then
    rate_ratio=$(calc "$fb_rate / $ref_rate") cost_ratio=$(calc "$fb_cost / $ref_cost")
    rate_ratios+=("$rate_ratio") cost_ratios+=("$cost_ratio")
  fi
}

pair_verdict() {
  local label=$1 rate=$2 cost=$3 cost_max=$4 r_med r_spread c_med c_spread v_r=MISS v_c=MISS
  if [[ ${#rate_ratios[@]} -eq 0 ]]; then
    verdicts+=("$label: no round where both worked")
    return
  fi
  read -r r_med r_spread <<<"$(stats "${rate_ratios[@]}")"
  read -r c_med c_spread <<<"$(stats "${cost_ratios[@]}")"
  echo "  median $rate $r_med ($r_spread), $cost $c_med ($c_spread)"
  [[ $(calc "$r_med >= 1.0" 0) == 1 ]] && v_r=PASS
  [[ $(calc "$c_med <= $cost_max" 0) == 1 ]] && v_c=PASS
  verdicts+=("$label: $rate $r_med >= 1.0: $v_r; $cost $c_med <= $cost_max: $v_c")
}

bench_agent() {
  "$1" --listen 127.0.0.1:0 >"$2.out" 2>"$2.err" &
  agent_pid=$!
  agent_addr=
  for _ in $(seq 100); do
    agent_addr=$(awk '/^listening on / {print $3; exit}' "$2.out")
    [[ -n $agent_addr ]] && return
    sleep 0.1
  done
  die "the agent did not say where it listens: $(cat "$2.err")"
}
