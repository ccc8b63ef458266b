#!/usr/bin/env bash
# Side-by-side benchmark: fleetbench cpu against sysbench cpu (the reference) on this
# machine, alternating runs, at 1 and 2 threads with --cpu-max-prime=20000. Prints events/s
# of both and their ratio; the target is a ratio within 0.95..1.05 (same work per event).
# Usage: scripts/bench-cpu.sh [ROUNDS] [SECONDS]   (needs sysbench: apt-get install sysbench)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
command -v sysbench >/dev/null || { echo "bench-cpu: sysbench is missing: apt-get install sysbench" >&2; exit 1; }
cargo build --release --locked --bins -q

eps() { awk '/events per second:/ {print $4}'; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
printf '%-8s %-6s %12s %12s %8s\n' threads round sysbench fleetbench ratio
for threads in 1 2; do
  s_sum=0; f_sum=0
  for r in $(seq "$rounds"); do
    s=$(sysbench cpu --cpu-max-prime=20000 --threads="$threads" --time="$secs" run | eps)
    f=$(target/release/fleetbench cpu --cpu-max-prime=20000 --threads="$threads" --time="$secs" run | eps)
    printf '%-8s %-6s %12s %12s %8s\n' "$threads" "$r" "$s" "$f" "$(calc "$f / $s")"
    s_sum=$(calc "$s_sum + $s"); f_sum=$(calc "$f_sum + $f")
  done
  printf '%-8s %-6s %12s %12s %8s\n' "$threads" mean "$(calc "$s_sum / $rounds")" \
    "$(calc "$f_sum / $rounds")" "$(calc "$f_sum / $s_sum")"
done
