#!/usr/bin/env bash
# fleetbench's main job on one machine: builds the release binaries, starts two agent
# processes on free loopback ports, runs a cpu benchmark through them and stops them again.
# Extra arguments go to the coordinator, e.g. `scripts/demo.sh --threads=4 --time=5`.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked --bins
bin=target/release
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

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

"$bin/fleetbench" cpu --agents "${addrs[0]},${addrs[1]}" --threads=2 --time=10 \
  --report-interval=1 --cpu-max-prime=20000 --percentile=95,99 "$@" run
