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
