#!/usr/bin/env bash
# run_cli.sh EXPECTED_RC REGEX -- tpusim args...
# Runs the command, fails unless it exits with EXPECTED_RC and its stdout+stderr match REGEX
# (an extended grep regex; "" to skip). Used by the CLI smoke tests in CTest.
set -u
expected_rc=$1
regex=$2
shift 3
out=$("$@" 2>&1)
rc=$?
if [ "$rc" != "$expected_rc" ]; then
  printf 'exit code %s, expected %s\n--- output ---\n%s\n' "$rc" "$expected_rc" "$out"
  exit 1
fi
if [ -n "$regex" ] && ! grep -Eq -- "$regex" <<<"$out"; then
  printf 'output does not match /%s/\n--- output ---\n%s\n' "$regex" "$out"
  exit 1
fi
exit 0
