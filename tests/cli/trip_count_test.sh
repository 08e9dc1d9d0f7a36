#!/usr/bin/env bash
# CTest (issue 16 item 3): a data-dependent while timed with --trip-count NAME=N in a timing-only
# run takes the cycles of the run with values whose loop ran N trips: the given count runs the
# condition every trip (N + 1 conditions, N bodies) as the real loop does.
# usage: trip_count_test.sh TPUSIM MODULE WHILE CONFIG (from the repository root).
set -uo pipefail
tpusim=$1 model=$2 name=$3 config=$4
values=$("$tpusim" run "$model" --config "$config" 2>&1) || { echo "FAIL: run with values: $values"; exit 1; }
trips=$(sed -n "s/.*while %$name=\([0-9]*\) trips: counted by the CPU evaluator.*/\1/p" <<<"$values")
[[ -n "$trips" ]] || { echo "FAIL: no counted trips for %$name in: $values"; exit 1; }
grep -q "^check  *PASSED" <<<"$values" || { echo "FAIL: the run with values did not pass its check"; exit 1; }
given=$("$tpusim" run "$model" --config "$config" --timing-only --max-check-bytes 0 \
  --trip-count "$name=$trips" 2>&1) || { echo "FAIL: timing-only run: $given"; exit 1; }
grep -q "while %$name=$trips trips: given by --trip-count" <<<"$given" || { echo "FAIL: no given-count note"; exit 1; }
a=$(sed -n 's/^cycles  *\([0-9]*\).*/\1/p' <<<"$values")
b=$(sed -n 's/^cycles  *\([0-9]*\).*/\1/p' <<<"$given")
echo "%$name: $trips trips; with values $a cycles, timing-only --trip-count $name=$trips: $b cycles"
[[ -n "$a" && "$a" == "$b" ]] || { echo "FAIL: cycles differ"; exit 1; }
# One trip fewer must time fewer cycles (the count is used, not ignored).
fewer=$("$tpusim" run "$model" --config "$config" --timing-only --max-check-bytes 0 \
  --trip-count "$name=$((trips - 1))" 2>&1 | sed -n 's/^cycles  *\([0-9]*\).*/\1/p')
[[ -n "$fewer" && "$fewer" -lt "$b" ]] || { echo "FAIL: $((trips - 1)) trips gave $fewer cycles"; exit 1; }
echo PASS
