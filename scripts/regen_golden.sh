#!/usr/bin/env bash
# Regenerates the compiler golden files (tests/golden/<case>/expected.tasm and expected_stats.txt) from
# the current compiler. Review the diff (git diff tests/golden) before committing.
#   scripts/regen_golden.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
cmake --build "$build" --target golden_compiler_test
TPUSIM_REGEN_GOLDEN=1 "$build/tests/golden/golden_compiler_test" --gtest_brief=1
git --no-pager diff --stat -- tests/golden || true
