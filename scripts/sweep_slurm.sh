#!/usr/bin/env bash
# A `tpusim sweep` as a Slurm job array: one array task per grid point, then one job that collects
# the reports into the CSV. Needs a file system shared by the login node and the compute nodes
# (the jobs file names the tpusim binary, the model and each report by absolute path).
#
# usage (on the login node, from the repository root, after scripts/setup.sh):
#   scripts/sweep_slurm.sh MODEL.hlo --config tpu-v4 --grid core.mxu.rows=128,256 \
#       --grid chip.hbm.bandwidth_bytes_per_s=8e11,1.2e12 --out sweep.csv [-- RUN OPTIONS]
# The arguments are those of `tpusim sweep` (no --jobs: Slurm schedules the points). Extra
# sbatch options go in $SBATCH_OPTS (e.g. "--partition=cpu --time=01:00:00 --mem=8G").
set -euo pipefail
tpusim=${TPUSIM:-$(cd "$(dirname "$0")/.." && pwd)/build/tpusim}
args=("$@")
out=""
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[i]} == --out || ${args[i]} == -o ]] && out=${args[i + 1]}
done
[[ -n "$out" ]] || { echo "sweep_slurm.sh: error: give --out SWEEP.csv" >&2; exit 2; }
# 1. The plan: WORK_DIR/jobs.txt, one shell line per point (validated here: a bad grid stops now).
"$tpusim" sweep "${args[@]}" --plan-only
jobs="${out%.*}.points/jobs.txt"
n=$(wc -l <"$jobs")
# 2. One array task per line; 3. the collect job once every task has ended (afterany: a failed
#    point is a row without results, not a lost sweep).
array=$(sbatch --parsable ${SBATCH_OPTS:-} --array=1-"$n" --job-name=tpusim-sweep \
  --wrap "bash -c \"\$(sed -n \${SLURM_ARRAY_TASK_ID}p '$jobs')\"")
sbatch ${SBATCH_OPTS:-} --dependency=afterany:"$array" --job-name=tpusim-sweep-collect \
  --wrap "'$tpusim' sweep $(printf '%q ' "${args[@]}") --collect"
echo "submitted array job $array ($n points); the CSV appears in $out when it has run"
