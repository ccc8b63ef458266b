#!/usr/bin/env bash
# Side-by-side benchmark of the non-database tests: fleetbench against sysbench 1.0 (the
# reference) on this machine, same options, alternating runs. Cases: fileio rndrw and seqrd
# at 1 and 8 threads (on the same prepared files), memory write with 1K blocks, threads and
# mutex with their defaults. Prints each tool's ops/s (events/s; for mutex, events over total
# time) and the ratio fleetbench/sysbench; the target is a ratio of at least 0.95.
# Usage: scripts/bench-nodb.sh [ROUNDS] [SECONDS] [FILE_TOTAL_SIZE]
#        (needs sysbench: apt-get install sysbench; files go to a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
fsize=${3:-1G}
command -v sysbench >/dev/null || { echo "bench-nodb: sysbench is missing: apt-get install sysbench" >&2; exit 1; }
cargo build --release --locked --bins -q
fb=$PWD/target/release/fleetbench
work=$(mktemp -d "${TMPDIR:-/var/tmp}/fleetbench-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
# events/s from a report (both tools print the same General statistics block).
eps() { awk '/total time:/ {t=$3+0} /total number of events:/ {e=$5} END {printf "%.2f", e/t}'; }

printf '%-28s %-6s %14s %14s %8s\n' case round sysbench fleetbench ratio
bench() { # NAME ARGS...
  local name=$1; shift
  local s_sum=0 f_sum=0 s f
  for r in $(seq "$rounds"); do
    s=$(sysbench "$@" run | eps)
    f=$("$fb" "$@" run | eps)
    printf '%-28s %-6s %14s %14s %8s\n' "$name" "$r" "$s" "$f" "$(calc "$f / $s")"
    s_sum=$(calc "$s_sum + $s"); f_sum=$(calc "$f_sum + $f")
  done
  printf '%-28s %-6s %14s %14s %8s\n' "$name" mean "$(calc "$s_sum / $rounds")" \
    "$(calc "$f_sum / $rounds")" "$(calc "$f_sum / $s_sum")"
}

fio=(fileio --file-total-size="$fsize" --file-num=128)
"$fb" "${fio[@]}" prepare >/dev/null
for t in 1 8; do
  bench "fileio rndrw ${t} thr" "${fio[@]}" --file-test-mode=rndrw --threads="$t" --time="$secs"
  bench "fileio seqrd ${t} thr" "${fio[@]}" --file-test-mode=seqrd --threads="$t" --time="$secs"
done
"$fb" "${fio[@]}" cleanup >/dev/null
bench "memory write 1K" memory --memory-block-size=1K --memory-oper=write --time="$secs"
bench "threads (defaults)" threads --time="$secs"
bench "mutex (defaults, 2 thr)" mutex --threads=2
