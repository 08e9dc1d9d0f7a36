#!/usr/bin/env bash
# Host time per work unit of each instruction kind (issue 21 item 5: the work budget,
# isa/work_units.h): for each kind, a ctrl.loop of TRIPS trips around one instruction (plus the
# sync.wait a DMA needs) on tpu-v4, run by `tpusim exec --engine interp` (the interpreter) and by
# `tpusim exec` (the interpreter, then the simulator with values checked against it).
#   benchmarks/work_units.sh [TPUSIM] [TRIPS] [KIND REGEX]
# Prints one Markdown row per kind: the units one trip is charged (interpreter, from the figure
# `exec --max-instructions 1` refuses it with), host ns per trip and ns per unit of the interpreter,
# and of the simulator (exec's time minus the interpreter's; ISA_EXEC_INTERPRETER_RUNS=2 for a
# tpusim whose exec runs the interpreter twice, as before issue 21 item 5). Host time is CPU time (user +
# system: the machine may be shared) and includes start-up
# (about 10 ms): a kind runs TRIPS (default 100) trips, ten times more until the interpreter takes
# half a second.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tpusim="${1:-$here/../build/tpusim}"
trips="${2:-100}"
only="${3:-.}"  # a regular expression: the kinds whose name matches
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# name|setup (before the loop)|body (inside the loop)
cases=(
  "nop||nop"
  "dma 64Ki f32|\
|dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=65536\nsync.wait flag=0"
  "dma 1x64x1024 f32 (n0=1)|\
|dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=1, n1=64, n2=1024, src_s1=1, \
src_s2=64, dst_s1=1, dst_s2=64\nsync.wait flag=0"
  "load_weights 128x128 f32|\
|mxu.load_weights mxu=0, addr=0x0, k=128, n=128, stride=128, dtype=f32, part=hi"
  "load_weights 8x8 f32|\
|mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=f32, part=hi"
  "matmul 128x128x128 f32|\
mxu.load_weights mxu=0, addr=0x0, k=128, n=128, stride=128, dtype=f32\n\
mxu.matmul mxu=0, lhs=0x0, stride=128, m=1, k=128, n=128, dtype=f32, acc=0, latch=1|\
mxu.matmul mxu=0, lhs=0x0, stride=128, m=128, k=128, n=128, dtype=f32, acc=0, latch=0"
  "matmul 1x128x128 f32 latch|\
mxu.load_weights mxu=0, addr=0x0, k=128, n=128, stride=128, dtype=f32|\
mxu.matmul mxu=0, lhs=0x0, stride=128, m=1, k=128, n=128, dtype=f32, acc=0, latch=1"
  "matmul 1024x1x128 f32|\
mxu.load_weights mxu=0, addr=0x0, k=1, n=128, stride=128, dtype=f32\n\
mxu.matmul mxu=0, lhs=0x0, stride=1, m=1, k=1, n=128, dtype=f32, acc=0, latch=1|\
mxu.matmul mxu=0, lhs=0x0, stride=1, m=1024, k=1, n=128, dtype=f32, acc=0, latch=0"
  "matmul 128x8x8 f32|\
mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=f32\n\
mxu.matmul mxu=0, lhs=0x0, stride=8, m=1, k=8, n=8, dtype=f32, acc=0, latch=1|\
mxu.matmul mxu=0, lhs=0x0, stride=8, m=128, k=8, n=8, dtype=f32, acc=0, latch=0"
  "pop 128x128 f32||mxu.pop mxu=0, acc=0, m=128, n=128, acc_dtype=f32, dst=0x0, stride=128, dtype=f32"
  "binary add 128x1024 f32|\
|vpu.binary op=add, dtype=f32, dst=0x0, a=0x80000, b=0x100000, rows=128, cols=1024"
  "binary div 128x1024 f32|\
|vpu.binary op=div, dtype=f32, dst=0x0, a=0x80000, b=0x100000, rows=128, cols=1024"
  "unary tanh 128Ki f32||vpu.unary op=tanh, dtype=f32, dst=0x0, src=0x80000, count=131072"
  "unary neg 128Ki f32||vpu.unary op=neg, dtype=f32, dst=0x0, src=0x80000, count=131072"
  "convert f32->bf16 128Ki|\
|vpu.convert src_dtype=f32, dtype=bf16, dst=0x0, src=0x80000, count=131072"
  "reduce lanes 128x1024 f32|\
|vpu.reduce op=sum, axis=lanes, dtype=f32, dst=0x0, src=0x80000, rows=128, cols=1024"
  "reduce sublanes 128x1024 f32|\
|vpu.reduce op=sum, axis=sublanes, dtype=f32, dst=0x0, src=0x80000, rows=128, cols=1024"
  "transpose 128x1024 f32||xlu.transpose dtype=f32, dst=0x0, src=0x80000, rows=128, cols=1024"
  "copy 128x1024 f32|\
|vpu.copy dtype=f32, dst=0x0, src=0x80000, n0=1024, n1=128, n2=1, src_s0=1, src_s1=1024, src_s2=0, \
dst_s0=1, dst_s1=1024, dst_s2=0"
  "copy 1x128x1024 f32 (n0=1)|\
|vpu.copy dtype=f32, dst=0x0, src=0x80000, n0=1, n1=1024, n2=128, src_s0=1, src_s1=1, src_s2=1024, \
dst_s0=1, dst_s1=1, dst_s2=1024"
  "compare lt 128x1024 f32|\
|vpu.compare op=lt, dtype=f32, dst=0x0, a=0x80000, b=0x100000, rows=128, cols=1024"
  "select 128x1024 f32|\
|vpu.select dtype=f32, dst=0x0, pred=0x180000, a=0x80000, b=0x100000, rows=128, cols=1024"
  "fill 128Ki f32||vpu.fill dtype=f32, dst=0x0, count=131072, value=1.0"
  "iota 128x1024 s32||vpu.iota dtype=s32, dst=0x0, rows=128, cols=1024, axis=lanes"
  "rng_bits 128Ki||vpu.rng_bits state=0, dst=0x0, count=131072"
  "broadcast row 128x1024 f32|\
|vpu.broadcast mode=row, dtype=f32, dst=0x0, src=0x80000, rows=128, cols=1024"
)

seconds() {  # CPU seconds (user + system) of "$@" (stdout and stderr dropped)
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" > /dev/null 2>&1 || true
  tail -1 "$tmp/time" | awk '{print $1 + $2}'
}

echo "| kind | trips | units / trip | interp ns / trip | interp ns / unit | sim ns / trip |" \
  "sim ns / unit |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  IFS='|' read -r name setup body <<<"$c"
  [[ "$name" =~ $only ]] || continue
  n=$trips
  while :; do  # ten times the trips until the interpreter runs at least half a second
    {
      if [ -n "$setup" ]; then printf '%b\n' "$setup"; fi
      echo "ctrl.loop count=$n"
      printf '%b\n' "$body"
      echo "ctrl.endloop"
    } > "$tmp/p.tasm"
    ti=$(seconds "$tpusim" -q exec "$tmp/p.tasm" --config tpu-v4 --engine interp \
      --max-instructions 18446744073709551615)
    if python3 -c "import sys; sys.exit(float(sys.argv[1]) >= 0.5)" "$ti" && ((n < 10000000))
    then n=$((n * 10)); else break; fi
  done
  units=$("$tpusim" -q exec "$tmp/p.tasm" --config tpu-v4 --engine interp --max-instructions 1 \
    2>&1 | grep -o 'at least [0-9]*' | head -1 | cut -d' ' -f3 || true)
  ts=$(seconds "$tpusim" -q exec "$tmp/p.tasm" --config tpu-v4 \
    --max-instructions 18446744073709551615)
  python3 - "$name" "$n" "$units" "$ti" "$ts" <<'PY'
import sys
name, trips, units, ti, ts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *map(float, sys.argv[4:])
per_trip = units / trips
interp = ti / trips * 1e9
import os
runs = int(os.environ.get("ISA_EXEC_INTERPRETER_RUNS", "1"))
sim = max(ts - runs * ti, 0.0) / trips * 1e9
print(f"| {name} | {trips:,} | {per_trip:,.0f} | {interp:,.0f} | {interp / per_trip:.3g} |"
      f" {sim:,.0f} | {sim / per_trip:.3g} |")
PY
done
