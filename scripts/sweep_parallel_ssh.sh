#!/usr/bin/env bash
# A `tpusim sweep` spread over several machines with GNU parallel --sshlogin: the points run on the
# hosts listed in HOSTS (one `[N/]user@host` a line, parallel's --sshloginfile format; ":" is this
# machine), then the reports are collected into the CSV here. The hosts need the same paths (a
# shared file system, or the same checkout and build at the same place) and ssh without a password.
#
# usage (from the repository root, after scripts/setup.sh on every host):
#   scripts/sweep_parallel_ssh.sh HOSTS MODEL.hlo --config tpu-v4 \
#       --grid core.mxu.rows=128,256 --grid chip.hbm.bandwidth_bytes_per_s=8e11,1.2e12 \
#       --out sweep.csv [-- RUN OPTIONS]
set -euo pipefail
tpusim=${TPUSIM:-$(cd "$(dirname "$0")/.." && pwd)/build/tpusim}
hosts=$1
shift
args=("$@")
out=""
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[i]} == --out || ${args[i]} == -o ]] && out=${args[i + 1]}
done
[[ -n "$out" ]] || { echo "sweep_parallel_ssh.sh: error: give --out SWEEP.csv" >&2; exit 2; }
"$tpusim" sweep "${args[@]}" --plan-only
jobs="${out%.*}.points/jobs.txt"
# Each line is a whole command; --halt never: a failed point is a row without results.
parallel --will-cite --halt never --sshloginfile "$hosts" --workdir "$PWD" <"$jobs" || true
"$tpusim" sweep "${args[@]}" --collect
