#!/usr/bin/env bash
# Functional mode against the evaluator (issue 20 item 3): host time and peak memory of
# `tpusim run M --check` (values simulated, every output checked against the CPU evaluator twice:
# TPU numerics, then full f32) beside `tpusim cpu M` (the same evaluator alone: one warm-up and
# --repeat R timed passes, default 3) on the same module, config tpu-v4 and the same devices (both
# commands count them the same way by default: `tpusim cpu --help`).
#   benchmarks/functional.sh [TPUSIM] [MODULE.hlo...]
# Default modules: GPT-2 1-layer and SSD-MobileNet (tests/data/hlo) and the JAX MNIST pmap step
# of the real-module corpus ($TPUSIM_REAL_HLO, default ../shared/hlo/real beside the clone;
# skipped with a note when absent).
# Each command runs under /usr/bin/time -f "%e %M" (GNU time: wall seconds, max RSS kB). Prints one
# Markdown row per module: both commands' wall s and max RSS MB, the ratios run/cpu (targets: time
# <= 2, memory <= 1.5), the evaluator's median seconds per pass (as `tpusim cpu` reports it) and
# the check's verdict. Host times on a shared machine are upper bounds; RSS is not load-dependent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tpusim="${1:-$here/../build/tpusim}"
shift || true
modules=("$@")
if [[ ${#modules[@]} -eq 0 ]]; then
  real="${TPUSIM_REAL_HLO:-$here/../../shared/hlo/real}"
  modules=("$here/../tests/data/hlo/pt_gpt2_1layer_tp1.hlo"
           "$here/../tests/data/hlo/xla_ssd_mobilenet_tf.hlo")
  if [[ -f "$real/jax_mnist_pmap_train_step.hlo" ]]; then
    modules+=("$real/jax_mnist_pmap_train_step.hlo")
  else
    echo "note: $real/jax_mnist_pmap_train_step.hlo not found (set TPUSIM_REAL_HLO): skipped" >&2
  fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| module | run --check s | cpu s | time ratio | run --check MB | cpu MB | memory ratio |" \
     "eval s/pass | check |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for model in "${modules[@]}"; do
  /usr/bin/time -f "%e %M" -o "$tmp/run.time" "$tpusim" -q run "$model" --config tpu-v4 --check \
    --json > "$tmp/run.json" || [[ $? -eq 1 ]]  # exit 1: the check failed (reported below)
  /usr/bin/time -f "%e %M" -o "$tmp/cpu.time" "$tpusim" cpu "$model" --json > "$tmp/cpu.json"
  python3 - "$(basename "$model" .hlo)" "$tmp" <<'PY'
import json, sys
name, tmp = sys.argv[1], sys.argv[2]
def timed(which):
    secs, kb = open(f"{tmp}/{which}.time").read().split()[-2:]
    return float(secs), int(kb) / 1024
run_s, run_mb = timed("run")
cpu_s, cpu_mb = timed("cpu")
run = json.load(open(f"{tmp}/run.json"))
cpu = json.load(open(f"{tmp}/cpu.json"))
check = run.get("check", {})
verdict = ("passed" if check.get("passed") else "FAILED") if check.get("performed") else "not run"
print(f"| {name} | {run_s:.2f} | {cpu_s:.2f} | {run_s / cpu_s:.2f} | {run_mb:.0f} | {cpu_mb:.0f} "
      f"| {run_mb / cpu_mb:.2f} | {cpu['seconds_per_run']:.3f} | {verdict} |")
PY
done
