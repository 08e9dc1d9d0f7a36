#!/usr/bin/env bash
# run_catalogue.sh CATALOGUE NAME TPUSIM
# Runs one row of the hostile-input catalogue (tests/cli/hostile_catalogue.tsv): in a fresh
# temporary folder $T, runs the row's SETUP (shell; a failing setup — e.g. mknod when not root —
# skips the case with exit 77), then `tpusim COMMAND` (shell words; $D is tests/data/hostile, $G a
# small valid module, $W a 1024^3 GEMM, $T the folder) under a 4 GiB address-space limit and a 50 s timeout, and
# checks the exit code, that stdout+stderr match REGEX (extended grep; "-" for none), and that
# CHECK (shell, run in $T after the command; "-" for none) succeeds.
set -u
catalogue=$1
name=$2
TPUSIM=$3
row=$(awk -F'\t' -v n="$name" '$1 == n' "$catalogue")
if [ -z "$row" ]; then
  echo "no case '$name' in $catalogue"
  exit 1
fi
IFS=$'\t' read -r _ expected_rc regex setup command check <<<"$row"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=$PWD/tests/data/hostile
G=$PWD/tests/golden/tiny_dot_bias_relu/model.hlo
W=$PWD/benchmarks/workloads/gemm_1024x1024x1024_bf16.hlo
export T D G W TPUSIM
if [ "$setup" != "-" ] && ! (cd "$T" && eval "$setup") >/dev/null 2>&1; then
  echo "SKIP: setup failed: $setup"
  exit 77
fi
if [ "${TPUSIM_SANITIZED:-0}" = 1 ]; then
  # --max-memory is an address-space limit (RLIMIT_AS): AddressSanitizer's shadow memory cannot be
  # mapped under it, so those rows run in the plain build only.
  case "$command" in
    *--max-memory*)
      echo "SKIP: --max-memory (RLIMIT_AS) leaves no room for AddressSanitizer's shadow memory"
      exit 77
      ;;
  esac
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=4096:allocator_may_return_null=0"
else
  ulimit -v 4194304
fi
set -o pipefail
out=$(eval "timeout -s KILL 50 \"\$TPUSIM\" $command" 2>&1)
rc=$?
fail() {
  printf '%s\ncommand: tpusim %s\nexit code %s\n--- output ---\n%s\n' "$1" "$command" "$rc" "$out"
  exit 1
}
[ "$rc" = "$expected_rc" ] || fail "exit code $rc, expected $expected_rc"
if [ "$regex" != "-" ] && ! grep -Eq -- "$regex" <<<"$out"; then
  fail "output does not match /$regex/"
fi
if [ "$check" != "-" ] && ! (cd "$T" && eval "$check"); then
  fail "check failed: $check  (files: $(ls -la "$T"))"
fi
exit 0
