#!/usr/bin/env bash
# CTest: `--trace` end to end (issue 18). Every trace written here passes `tpusim trace-check`
# (the Chrome trace-event rules); --trace-max-events cuts the trace with a loud warning and says so
# in the report; --trace-window keeps a part; bad windows are usage errors (exit 2).
# usage: trace_test.sh TPUSIM OUTDIR (from the repository root).
set -uo pipefail
tpusim=$1
out=$2
model=tests/golden/tiny_dot_bias_relu/model.hlo
mkdir -p "$out"
rm -f "$out"/*.json
status=0
fail() { echo "FAIL: $*"; status=1; }
check() { "$tpusim" trace-check "$1" || fail "$1 is not a valid trace"; }

"$tpusim" run "$model" --config tiny --trace "$out/t.json" --report "$out/r.json" >/dev/null || fail "traced run failed"
check "$out/t.json"
grep -q '"truncated": false' "$out/r.json" || fail "report has no trace.truncated false"
for thread in '"HLO ops"' '"mxu0 matmuls"' '"VMEM in use"' 'hbm bandwidth'; do
  grep -q "$thread" "$out/t.json" || fail "trace has no $thread"
done

err=$("$tpusim" run "$model" --config tiny --trace "$out/cut.json" --trace-max-events 10 \
      --report "$out/cut_report.json" 2>&1 >/dev/null) || fail "capped run failed"
grep -q "warning: THE TRACE IS INCOMPLETE: --trace-max-events 10 was reached" <<<"$err" \
  || fail "no warning on stderr for a truncated trace: $err"
grep -q '"truncated": true' "$out/cut_report.json" || fail "report does not say the trace was truncated"
grep -q '"truncated":true' "$out/cut.json" || fail "trace metadata does not say truncated"
check "$out/cut.json"

"$tpusim" run "$model" --config tiny --trace "$out/w.json" --trace-window 100:300 >/dev/null || fail "windowed run failed"
check "$out/w.json"
"$tpusim" exec examples/matmul_relu.tasm --config tiny --trace "$out/exec.json" >/dev/null || fail "exec --trace failed"
check "$out/exec.json"

for bad in 5:2 x:9 9 ; do
  err=$("$tpusim" run "$model" --config tiny --trace "$out/bad.json" --trace-window "$bad" 2>&1)
  rc=$?
  [[ $rc == 2 ]] || fail "--trace-window $bad exited $rc, expected 2"
  grep -q -- "--trace-window $bad: expected START:END" <<<"$err" || fail "--trace-window $bad: $err"
  [[ ! -e "$out/bad.json" ]] || fail "a failed run left $out/bad.json"
done
ls "$out" | grep -q '\.tmp\.' && fail "temporary files left: $(ls "$out")"
[[ $status == 0 ]] && echo ok
exit $status
