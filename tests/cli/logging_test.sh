#!/usr/bin/env bash
# CTest: logs, progress and quiet mode of `tpusim` (issue 18): -q silences everything but errors
# before or after the subcommand; -v logs per-pass timings and the kernel count, -vv each kernel;
# --progress always shows the simulation's and the check's progress on stderr (a pipe: whole
# lines); errors still
# show under -q. usage: logging_test.sh TPUSIM (from the repository root).
set -uo pipefail
tpusim=$1
model=tests/golden/tiny_dot_bias_relu/model.hlo
status=0
fail() { echo "FAIL: $*"; status=1; }

for args in "-q run $model --config tiny" "run $model --config tiny -q" "run -q $model --config tiny"; do
  # shellcheck disable=SC2086
  out=$("$tpusim" $args 2>&1) || fail "tpusim $args exited $?"
  [[ -z "$out" ]] || fail "tpusim $args printed: $out"
done

out=$("$tpusim" run "$model" --config tiny -v 2>&1 >/dev/null)
grep -Eq "^tpusim: info: pass [a-z_-]+ +[0-9.]+ ms" <<<"$out" || fail "-v: no per-pass timing: $out"
grep -Eq "^tpusim: info: compiled: [0-9]+ passes .* to [0-9]+ kernels" <<<"$out" || fail "-v: no kernel count: $out"
grep -q "tpusim: debug: kernel" <<<"$out" && fail "-v printed debug lines"
out=$("$tpusim" -vv run "$model" --config tiny 2>&1 >/dev/null)
grep -Eq "^tpusim: debug: kernel [^ ]+ \([a-z-]*\): [0-9]+ instructions on core 0" <<<"$out" || fail "-vv: no per-kernel line: $out"

out=$("$tpusim" run "$model" --config tiny --progress always 2>&1 >/dev/null)
grep -Eq "^tpusim: simulating .*model.hlo done: cycle [0-9]+ · 100.0% of [0-9]+ instructions retired" <<<"$out" \
  || fail "--progress always: no final progress line: $out"
# The value check's evaluator shows its progress too: both passes, each with its last line.
for pass in "1/2 (TPU numerics)" "2/2 (full f32)"; do
  grep -Eq "^tpusim: checking .*model.hlo done: evaluator pass ${pass//[()]/.} · 100.0% of [0-9]+ HLO instructions" <<<"$out" \
    || fail "--progress always: no final check progress line for pass $pass: $out"
done
out=$("$tpusim" run "$model" --config tiny 2>&1 >/dev/null)
[[ -z "$out" ]] || fail "a short run printed on stderr: $out"

out=$("$tpusim" -q run "$model" --config tiny --set core.mxu.rows=0 2>&1)
rc=$?
[[ $rc == 2 ]] || fail "-q with a bad --set exited $rc, expected 2"
grep -q "^tpusim: error: --set core.mxu.rows=0: core.mxu.rows: expected a positive integer" <<<"$out" \
  || fail "-q hid the error or it does not name the --set: $out"
# --help shows --check and --no-check each with its own text, no misleading "{false}" default.
help=$("$tpusim" run --help)
grep -q -- "--no-check" <<<"$help" || fail "run --help has no --no-check"
grep -q "{false}" <<<"$help" && fail "run --help shows {false}: $(grep "{false}" <<<"$help")"
[[ $status == 0 ]] && echo "ok"
exit $status
