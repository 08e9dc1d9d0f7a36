#!/usr/bin/env bash
# The README's first command: set up, build, and run tpusim's main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${TPUSIM_BUILD_DIR:-build}
# The main job: a real PyTorch/XLA MNIST training step (MLP 784-120-84-10, batch 32; provenance in
# tests/data/hlo/PROVENANCE.md) compiled for the default chip (tpu-v4), simulated cycle by cycle, and
# every output checked against the CPU evaluator.
"$BUILD_DIR/tpusim" run tests/data/hlo/pt_mlp_train_dp8_sep.hlo --report "$BUILD_DIR/mnist_report.json"
