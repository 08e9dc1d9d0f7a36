#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${TPUSIM_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" -j "$(nproc)" --output-on-failure --timeout 600
