#!/usr/bin/env bash
# CTest: the plot scripts on a real report, trace and compare JSON of the bundled MNIST training
# step (tests/data/hlo/pt_mlp_train_dp8_sep.hlo) and a 1/2-replica sweep of a data-parallel module;
# each PNG must exist, be non-empty and start with the PNG signature.
# usage: plots_test.sh TPUSIM OUTDIR   (run from the repository root). Exit 77 = skipped.
set -euo pipefail
tpusim=$1
out=$2
py=/usr/bin/python3
if ! "$py" -c "import matplotlib" 2>/dev/null; then
  echo "SKIP: $py cannot import matplotlib (Debian: apt-get install python3-matplotlib)"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.png
model=tests/data/hlo/pt_mlp_train_dp8_sep.hlo
dp=tests/data/hlo/pt_mini_mlp_train_dp.hlo
"$tpusim" run "$model" --config tpu-v4 --report "$out/report.json" --trace "$out/trace.json" >/dev/null
"$tpusim" trace-check "$out/trace.json"
"$tpusim" compare "$model" --config tpu-v4 --repeat 2 --threads 1 --no-anchor \
  --out "$out/compare.json" >/dev/null
for n in 1 2; do
  "$tpusim" run "$dp" --config tpu-v4 --replicas "$n" --no-check --report "$out/dp$n.json" >/dev/null
done

"$py" scripts/plot_roofline.py "$out/report.json" -o "$out/roofline.png"
"$py" scripts/plot_timeline.py "$out/trace.json" -o "$out/timeline.png"
"$py" scripts/plot_compare.py "$out/compare.json" -o "$out/compare.png"
"$py" scripts/plot_scaling.py "$out/dp1.json" "$out/dp2.json" -o "$out/scaling.png"
"$py" scripts/plot_scaling.py "$out/compare.json" -o "$out/scaling_compare.png"
# A --scaling report: one point per core count of its `scaling` array.
"$tpusim" run "$dp" --config tpu-v4 --scaling 1,2,4 --no-check --report "$out/scaling_report.json" >/dev/null
"$py" scripts/plot_scaling.py "$out/scaling_report.json" -o "$out/scaling_array.png" | tee "$out/scaling_array.txt"

status=0
if ! grep -q "(3 points: cores 1, 2, 4)" "$out/scaling_array.txt"; then
  echo "FAIL: plot_scaling.py did not plot the 3 core counts of the --scaling report"
  status=1
fi
for png in roofline timeline compare scaling scaling_compare scaling_array; do
  f="$out/$png.png"
  if [[ ! -s "$f" ]]; then
    echo "FAIL: $f is missing or empty"
    status=1
  elif [[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
    echo "FAIL: $f is not a PNG"
    status=1
  else
    echo "ok: $f ($(stat -c %s "$f") bytes)"
  fi
done
# A wrong input is a clear error, not a traceback.
if "$py" scripts/plot_roofline.py "$out/trace.json" -o "$out/bad.png" 2>"$out/bad.txt"; then
  echo "FAIL: plot_roofline.py accepted a trace as a report"
  status=1
elif ! grep -q "is not a tpusim report" "$out/bad.txt"; then
  echo "FAIL: unexpected error text: $(cat "$out/bad.txt")"
  status=1
fi
# Without matplotlib (python3 -S: no site packages) each script says so in one line, no traceback.
for script in plot_roofline plot_timeline plot_compare plot_scaling plot_sweep; do
  if "$py" -S scripts/$script.py "$out/report.json" -o "$out/none.png" 2>"$out/nompl.txt"; then
    echo "FAIL: $script.py ran without matplotlib"
    status=1
  elif [[ $(wc -l <"$out/nompl.txt") != 1 ]] || ! grep -q "^$script.py: error: matplotlib is not installed" "$out/nompl.txt"; then
    echo "FAIL: $script.py without matplotlib: $(cat "$out/nompl.txt")"
    status=1
  fi
done
exit $status
