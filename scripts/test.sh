#!/usr/bin/env bash
# The README's second command: set up, build, and run the whole test suite through CTest — first
# the Release build, then the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/, issue 8). Idempotent: a second run rebuilds only what changed in both.
# Between the two, the Python package's pytest suite (scripts/test_python.sh).
# TPUSIM_ASAN=0 skips the sanitizer pass (e.g. for a quick local run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${TPUSIM_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" -j "$(nproc)" --output-on-failure --timeout 600
# The Python package and its front ends (pytest; TPUSIM_PYTHON=0 skips this part).
if [ "${TPUSIM_PYTHON:-1}" != 0 ]; then
  TPUSIM_BUILD_DIR="$BUILD_DIR" scripts/test_python.sh
fi

if [ "${TPUSIM_ASAN:-1}" != 0 ]; then
  ASAN_DIR=${TPUSIM_ASAN_BUILD_DIR:-build-asan}
  if [ ! -f "$ASAN_DIR/build.ninja" ]; then
    cmake -S . -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPUSIM_WERROR=ON \
      -DTPUSIM_SANITIZE=ON -DTPUSIM_BUILD_BENCHMARKS=OFF
  fi
  cmake --build "$ASAN_DIR" -j "$(nproc)"
  # Any sanitizer report fails the test that triggered it (-fno-sanitize-recover; ASan exits 1).
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    ctest --test-dir "$ASAN_DIR" -j "$(nproc)" --output-on-failure --timeout 600
fi
