#!/usr/bin/env bash
# run_limited.sh RC REGEX -- tpusim args...
# A hostile-input case (tests/cli/bad_inputs.cmake): the command must exit with exactly RC (2 for bad
# input) — not a signal, not a sanitizer report (ASan exits 1) — and its output must match REGEX (an
# extended grep regex naming the file and line:column, or the key path). Time is bounded by the
# CTest TIMEOUT; memory by `ulimit -v` (4 GiB), so a case that tries to allocate a tensor's logical
# size fails instead of swapping. Under ASan (TPUSIM_SANITIZED=1) the address-space limit
# cannot be used (the shadow memory alone reserves terabytes); ASAN_OPTIONS then caps each
# allocation at 4 GiB instead.
set -u
expected_rc=$1
regex=$2
shift 3
if [ "${TPUSIM_SANITIZED:-0}" = 1 ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=4096:allocator_may_return_null=0"
else
  ulimit -v 4194304
fi
out=$("$@" 2>&1)
rc=$?
if [ "$rc" != "$expected_rc" ]; then
  printf 'exit code %s, expected %s\n--- output ---\n%s\n' "$rc" "$expected_rc" "$out"
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  printf 'output does not match /%s/\n--- output ---\n%s\n' "$regex" "$out"
  exit 1
fi
exit 0
