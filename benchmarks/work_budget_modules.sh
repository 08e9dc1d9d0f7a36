#!/usr/bin/env bash
# Does the default work budget (`--max-instructions`, 10^11 units) bound `tpusim exec`'s host time?
# For each compiled module (PROGRAM.tasm in DIR, e.g. `tpusim compile M.hlo -o M.tasm` of every
# module of an HLO corpus), on tpu-v4:
#   - units: the work the interpreter charges it (the figure `exec --max-instructions 1` refuses it
#     with: exact for programs without data-dependent loops);
#   - exec with the default budget: CPU seconds (user + system) and the outcome (ok, refused by the
#     budget before it runs, stopped by it, other error).
#   benchmarks/work_budget_modules.sh DIR [TPUSIM]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="$1"
tpusim="${2:-$here/../build/tpusim}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| module | units | exec CPU s | outcome |"
echo "|---|---:|---:|---|"
for p in "$dir"/*.tasm; do
  name="$(basename "$p" .tasm)"
  units=$("$tpusim" -q exec "$p" --config tpu-v4 --engine interp --max-instructions 1 2>&1 |
    grep -o 'at least [0-9]*' | head -1 | cut -d' ' -f3 || true)
  rc=0
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$tpusim" -q exec "$p" --config tpu-v4 \
    > /dev/null 2> "$tmp/err" || rc=$?
  secs=$(tail -1 "$tmp/time" | awk '{print $1 + $2}')
  if [ "$rc" = 0 ]; then
    outcome=ok
  elif grep -q 'units of work' "$tmp/err"; then
    outcome="refused before it runs (exit $rc)"
  elif grep -q 'budget of .* exhausted\|exceeded the instruction budget' "$tmp/err"; then
    outcome="stopped by the budget (exit $rc)"
  else
    outcome="exit $rc: $(grep -v '^ *$' "$tmp/err" | tail -1 | cut -c1-80)"
  fi
  printf '| %s | %.3g | %s | %s |\n' "$name" "${units:-0}" "$secs" "$outcome"
done
