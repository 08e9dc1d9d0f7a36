#!/usr/bin/env bash
# Host time and peak memory of `tpusim run` against the trip count of one loop
# (benchmarks/workloads/loop_trips.hlo with TRIPS substituted), timing-only on tpu-v4.
#   benchmarks/loop_trips.sh [TPUSIM] [TRIPS...] [-- EXTRA TPUSIM RUN OPTIONS]
# Prints one Markdown row per count: trips, simulated cycles, host s, max RSS MB, simulated cycles
# per host second. Needs /usr/bin/time (GNU time).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tpusim="${1:-$here/../build/tpusim}"
shift || true
trips=()
while [[ $# -gt 0 && "$1" != "--" ]]; do trips+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
[[ ${#trips[@]} -eq 0 ]] && trips=(20000 200000 2000000)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| trips | cycles | host s | max RSS MB | simulated cycles / host s |"
echo "|---:|---:|---:|---:|---:|"
for n in "${trips[@]}"; do
  sed "s/constant(TRIPS)/constant($n)/" "$here/workloads/loop_trips.hlo" > "$tmp/loop.hlo"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$tpusim" -q run "$tmp/loop.hlo" --config tpu-v4 \
    --timing-only --json "$@" > "$tmp/out.json"
  read -r secs kb < "$tmp/time"
  cycles="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/out.json")"
  python3 - "$n" "$cycles" "$secs" "$kb" <<'PY'
import sys
n, cycles, secs, kb = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rate = cycles / secs if secs > 0 else float("inf")
print(f"| {n:,} | {cycles:,} | {secs:.2f} | {kb / 1024:.1f} | {rate:.3g} |")
PY
done
