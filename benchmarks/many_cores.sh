#!/usr/bin/env bash
# Host time and peak memory of `tpusim run` against the number of simulated TensorCores (issue 20
# item 4): each model runs timing-only on tpu-v4 with --replicas N, one replica per TensorCore, on
# the smallest v4 slice that holds them (N/2 chips, a 3D torus).
#   benchmarks/many_cores.sh [TPUSIM] [CORES...] [-- EXTRA TPUSIM RUN OPTIONS]
# Models: the PyTorch/XLA data-parallel MLP training step (tests/data/hlo/pt_mini_mlp_train_dp.hlo,
# gradients all-reduced over every replica: replica_groups={}) and a GPT-2 small layer
# (benchmarks/workloads/gpt2_small_layer_bf16.hlo, one independent replica per core).
# Prints one Markdown row per model and count: cores, simulated cycles, host wall s, host CPU s
# (user + system: what the run costs on a machine shared with other jobs), max RSS MB, RSS per core
# kB (above the one-core run's), simulated core-cycles per host CPU second.
# Needs /usr/bin/time (GNU time).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tpusim="${1:-$here/../build/tpusim}"
shift || true
counts=()
while [[ $# -gt 0 && "$1" != "--" ]]; do counts+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
[[ ${#counts[@]} -eq 0 ]] && counts=(8 64 512 4096)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
models=("$here/../tests/data/hlo/pt_mini_mlp_train_dp.hlo" "$here/workloads/gpt2_small_layer_bf16.hlo")
echo "| model | cores | cycles | wall s | CPU s | max RSS MB | RSS per core kB | core-cycles / CPU s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for model in "${models[@]}"; do
  base_kb=""
  for n in 1 "${counts[@]}"; do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$tpusim" -q run "$model" --config tpu-v4 \
      --replicas "$n" --timing-only --json "$@" > "$tmp/out.json"
    read -r secs user sys kb < "$tmp/time"
    if [[ -z "$base_kb" ]]; then base_kb="$kb"; continue; fi  # the one-core run: the baseline
    cycles="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/out.json")"
    python3 - "$(basename "$model" .hlo)" "$n" "$cycles" "$secs" "$user" "$sys" "$kb" "$base_kb" <<'PY'
import sys
name, n, cycles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
secs, cpu = float(sys.argv[4]), float(sys.argv[5]) + float(sys.argv[6])
kb, base = int(sys.argv[7]), int(sys.argv[8])
rate = n * cycles / cpu if cpu > 0 else float("inf")
per_core = max(kb - base, 0) / max(n - 1, 1)
print(f"| {name} | {n:,} | {cycles:,} | {secs:.2f} | {cpu:.2f} | {kb / 1024:.1f} | {per_core:.0f} | {rate:.3g} |")
PY
  done
done
