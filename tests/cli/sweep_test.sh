#!/usr/bin/env bash
# CTest: `tpusim sweep` on a 2x3 grid (issue 18): 6 independent runs under GNU parallel, one CSV row
# each with the point's values and results, provenance of each report naming its overrides; a grid
# value the config rejects is a usage error before anything runs; failed points are rows without
# results and exit 1; --plan-only / --collect and the recipes built on them
# (scripts/sweep_parallel_ssh.sh with this machine as the sshlogin, scripts/sweep_slurm.sh with a
# stand-in sbatch) give the same CSV; scripts/plot_sweep.py draws it. usage: sweep_test.sh TPUSIM OUTDIR. Exit 77 = skipped.
set -uo pipefail
tpusim=$1
# The recipes run the binary under test (they default to build/tpusim).
export TPUSIM="$tpusim"
out=$2
if ! command -v parallel >/dev/null; then
  echo "SKIP: GNU parallel is not installed (Debian: apt-get install parallel)"
  exit 77
fi
model=tests/golden/tiny_dot_bias_relu/model.hlo
rm -rf "$out"
mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
grid=(--grid core.mxu.rows=8,16 --grid chip.hbm.bandwidth_bytes_per_s=16e9,32e9,64e9)

"$tpusim" sweep "$model" --config tiny "${grid[@]}" --jobs 2 --out "$out/sweep.csv" || fail "sweep exited $?"
cat "$out/sweep.csv"
[[ $(wc -l <"$out/sweep.csv") == 7 ]] || fail "expected a header and 6 rows"
head -1 "$out/sweep.csv" | grep -q "^point,core.mxu.rows,chip.hbm.bandwidth_bytes_per_s,exit_code,cycles," \
  || fail "unexpected header"
grep -q "^6,16,64e9,0,[0-9]\+," "$out/sweep.csv" || fail "point 6 (rows 16, 64e9 B/s) missing or failed"
# Less HBM bandwidth never makes the run faster (same MXU): point 1 (16e9) >= point 3 (64e9).
c1=$(awk -F, 'NR==2 {print $5}' "$out/sweep.csv"); c3=$(awk -F, 'NR==4 {print $5}' "$out/sweep.csv")
[[ -n "$c1" && -n "$c3" && $c1 -ge $c3 ]] || fail "cycles at 16e9 B/s ($c1) < at 64e9 B/s ($c3)"
grep -q '"key": "chip.hbm.bandwidth_bytes_per_s"' "$out/sweep.points/point_0002.json" \
  || fail "point 2's report does not record its override"

err=$("$tpusim" sweep "$model" --config tiny --grid core.mxu.rows=8,0 --out "$out/bad.csv" 2>&1)
rc=$?
[[ $rc == 2 ]] || fail "a rejected grid value exited $rc, expected 2"
grep -q -- "--grid, point 2: --set core.mxu.rows=0: core.mxu.rows: expected a positive" <<<"$err" || fail "bad grid: $err"
[[ ! -e "$out/bad.csv" ]] || fail "a rejected sweep wrote a CSV"

"$tpusim" sweep "$model" --config tiny --grid core.mxu.rows=8,16 --out "$out/fail.csv" -- --max-cycles 10 2>"$out/fail.err"
rc=$?
[[ $rc == 1 ]] || fail "failed points exited $rc, expected 1"
grep -q "cycle limit of 10" "$out/fail.err" || fail "failed point's reason not shown: $(cat "$out/fail.err")"
grep -q "^1,8,2,," "$out/fail.csv" || fail "failed point row: $(cat "$out/fail.csv")"

# The recipe path: plan, run the lines elsewhere (here: bash), collect.
"$tpusim" sweep "$model" --config tiny "${grid[@]}" --out "$out/planned.csv" --plan-only >/dev/null || fail "--plan-only"
[[ $(wc -l <"$out/planned.points/jobs.txt") == 6 ]] || fail "jobs.txt should have 6 lines"
bash "$out/planned.points/jobs.txt" || fail "running jobs.txt"
"$tpusim" sweep "$model" --config tiny "${grid[@]}" --out "$out/planned.csv" --collect >/dev/null || fail "--collect"
diff <(cut -d, -f1-16 "$out/sweep.csv") <(cut -d, -f1-16 "$out/planned.csv") || fail "planned sweep differs"

# The recipes themselves. GNU parallel over "machines": the sshlogin ":" is this machine (no ssh),
# so the --sshloginfile path runs here as it would over several hosts.
echo ":" >"$out/hosts"
scripts/sweep_parallel_ssh.sh "$out/hosts" "$model" --config tiny "${grid[@]}" --out "$out/ssh.csv" \
  >/dev/null 2>"$out/ssh.err" || fail "sweep_parallel_ssh.sh exited $?: $(cat "$out/ssh.err")"
diff <(cut -d, -f1-16 "$out/sweep.csv") <(cut -d, -f1-16 "$out/ssh.csv") || fail "--sshlogin sweep differs"
# The Slurm job array, with a stand-in `sbatch` that runs what it is given at once (array tasks in
# order with SLURM_ARRAY_TASK_ID set, then the dependent collect job): the recipe's quoting and
# its plan / array / collect steps, without a cluster.
mkdir -p "$out/fake-slurm"
cat >"$out/fake-slurm/sbatch" <<'SBATCH'
#!/usr/bin/env bash
array="" wrap=""
while (($#)); do
  case $1 in
    --array=*) array=${1#--array=} ;;
    --wrap) wrap=$2; shift ;;
  esac
  shift
done
if [[ -n $array ]]; then
  for ((i = ${array%-*}; i <= ${array#*-}; ++i)); do SLURM_ARRAY_TASK_ID=$i bash -c "$wrap"; done
  echo 4242
else
  bash -c "$wrap"
fi
SBATCH
chmod +x "$out/fake-slurm/sbatch"
PATH="$out/fake-slurm:$PATH" scripts/sweep_slurm.sh "$model" --config tiny "${grid[@]}" \
  --out "$out/slurm.csv" >"$out/slurm.log" 2>&1 || fail "sweep_slurm.sh exited $?: $(cat "$out/slurm.log")"
grep -q "submitted array job 4242 (6 points)" "$out/slurm.log" || fail "sweep_slurm.sh: $(cat "$out/slurm.log")"
diff <(cut -d, -f1-16 "$out/sweep.csv") <(cut -d, -f1-16 "$out/slurm.csv") || fail "Slurm sweep differs"

if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot_sweep.py "$out/sweep.csv" -o "$out/sweep.png" || fail "plot_sweep.py"
  [[ "$(head -c 8 "$out/sweep.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] || fail "not a PNG"
fi
[[ $status == 0 ]] && echo ok
exit $status
