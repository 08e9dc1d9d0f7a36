#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS — builds (if needed) and runs one libFuzzer target for SECONDS.
#   TARGET: hlo (HLO parser + verifier), asm (assembler), decode (program-file decoder + verifier),
#           config (YAML chip-config loader), pipeline (parse -> verify -> compile -> timing-only
#           simulation of structurally mutated modules), outputs (the CLI's output-path handling on
#           a sandbox of hostile paths), or all (each in turn, SECONDS each).
# Without clang++-14 (FUZZ_STANDALONE=1, or the compiler missing), pipeline and outputs run through
# the uninstrumented standalone driver in build/ (tests/fuzz/fuzz_standalone.cc): executions and
# distinct outcomes, no coverage.
# Build: build-fuzz/ with clang++-14 and -DTPUSIM_FUZZ=ON (libFuzzer + ASan + UBSan on every layer).
# Seeds (rebuilt every run from the real inputs): tests/data/hlo, tests/golden/*/model.hlo (hlo);
# examples/*.tasm, tests/golden/*/expected.tasm (asm); those assembled to .tbin (decode); configs/
# and tests/data/configs (config); tests/data/hlo, its ops/, the golden models and tests/data/hostile
# (pipeline); plus everything kept in tests/data/fuzz_regressions/TARGET/ and the committed
# minimized corpus tests/fuzz/corpus/TARGET/ (a -merge=1 of an earlier campaign's, docs/fuzzing.md).
# The growing corpus stays in build-fuzz/corpus/TARGET/; crashes, timeouts and leaks are written to
# build-fuzz/findings/TARGET/ — reduce each, fix it, and keep it in tests/data/fuzz_regressions/TARGET/
# (fuzz_regression_test replays them in the normal build). Results: docs/fuzzing.md.
# Env: FUZZ_JOBS (parallel fuzzing processes, default 1), FUZZ_BUILD_DIR (default build-fuzz),
# FUZZ_SEED (the standalone driver's mutation seed: a new one per run of a campaign),
# FUZZ_TIMEOUT (seconds after which one input is a hang, default 10), FUZZ_KEEP_GOING=1 (libFuzzer's
# fork mode: a crash, hang or out-of-memory is written to findings/ and the campaign goes on, so a
# long unattended run is not ended by its first finding).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
  echo "usage: scripts/fuzz.sh hlo|asm|decode|config|pipeline|outputs|all SECONDS" >&2
  exit 2
fi
target=$1
seconds=$2
if [ "$target" = all ]; then
  for t in hlo asm decode config pipeline outputs; do "$0" "$t" "$seconds"; done
  exit 0
fi
case "$target" in
  hlo | asm | decode | config | pipeline | outputs) ;;
  *) echo "fuzz.sh: unknown target '$target' (hlo, asm, decode, config, pipeline, outputs, all)" >&2; exit 2 ;;
esac

if [ "$target" = pipeline ] || [ "$target" = outputs ]; then
  if [ "${FUZZ_STANDALONE:-0}" = 1 ] || ! command -v "${CXX_FUZZ:-clang++-14}" >/dev/null; then
    cmake --build build --target fuzz_standalone -j 2
    seeds=()
    if [ "$target" = pipeline ]; then
      seeds=(tests/data/hlo/*.hlo tests/golden/*/model.hlo tests/data/hostile/*.hlo
             tests/data/fuzz_regressions/pipeline/*)
    fi
    echo "fuzz.sh: standalone $target for ${seconds}s (no clang: no coverage)"
    exec build/tests/fuzz/fuzz_standalone "$target" "$seconds" "${seeds[@]}"
  fi
fi

BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
CXX_FUZZ=${CXX_FUZZ:-clang++-14}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPUSIM_FUZZ=ON -DTPUSIM_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target "fuzz_$target" -j "$(nproc)"

corpus=$BUILD_DIR/corpus/$target
seeds=$BUILD_DIR/seeds/$target
findings=$BUILD_DIR/findings/$target
rm -rf "$seeds"
mkdir -p "$corpus" "$seeds" "$findings"
dict=$BUILD_DIR/seeds/$target.dict
: >"$dict"
max_len=65536
# A seed longer than -max_len would be cut at max_len bytes by libFuzzer (a truncated module): left out.
copy_seeds() {
  for f in "$@"; do
    if [ -f "$f" ] && [ "$(stat -c %s "$f")" -le "$max_len" ]; then
      cp "$f" "$seeds/$(echo "$f" | tr / _)"
    fi
  done
  return 0
}
copy_seeds tests/data/fuzz_regressions/"$target"/* tests/fuzz/corpus/"$target"/*

case "$target" in
  hlo)
    copy_seeds tests/data/hlo/*.hlo tests/golden/*/model.hlo tests/data/bad/*.hlo
    # Opcode spellings and the text format's keywords (libFuzzer dictionary syntax: "token").
    grep -o 'HLO_OPCODE([^,]*, *"[^"]*"' hlo/opcode.def | sed 's/.*\("[^"]*"\)$/\1/' >>"$dict"
    printf '"%s"\n' HloModule ENTRY ROOT parameter constant f32 bf16 s32 pred "{...}" \
      "metadata={" "sharding={" "replica_groups={" "dimensions={" "to_apply=" "calls=" \
      "lhs_contracting_dims={" "rhs_contracting_dims={" "window={size=" "dim_labels=" \
      "direction=" "condition=" "body=" "->" "{1,0}" "[1,2]" >>"$dict"
    ;;
  asm | decode)
    copy_seeds examples/*.tasm tests/golden/*/expected.tasm
    grep -o 'TPU_OP([^,]*, *"[^"]*"' isa/opcodes.def | sed 's/.*\("[^"]*"\)$/\1/' >>"$dict"
    grep -o 'TPU_F([a-z_0-9]*' isa/opcodes.def | sed 's/TPU_F(\(.*\)/"\1="/' | sort -u >>"$dict"
    printf '"%s"\n' .core .data .replica_groups .permutation .hlo_name .hlo .source hbm vmem smem \
      acc host f32 bf16 s8 s32 pred 0x >>"$dict"
    if [ "$target" = decode ]; then
      # Assemble every asm seed into a program file: with $TPUSIM_BIN, else the Release build's
      # tpusim (scripts/setup.sh), else this build's (built on first use).
      tpusim_bin=${TPUSIM_BIN:-build/tpusim}
      if [ ! -x "$tpusim_bin" ]; then
        cmake --build "$BUILD_DIR" --target tpusim -j "$(nproc)"
        tpusim_bin=$BUILD_DIR/tpusim
      fi
      for f in "$seeds"/*.tasm; do
        "$tpusim_bin" asm "$f" -o "${f%.tasm}.tbin" 2>/dev/null || true
        rm -f "$f"
      done
      : >"$dict"
      printf '"%s"\n' TPUS SUPT >>"$dict"
    fi
    ;;
  pipeline)
    copy_seeds tests/data/hlo/*.hlo tests/data/hlo/ops/*.hlo tests/golden/*/model.hlo \
      tests/data/hostile/*.hlo
    grep -o 'HLO_OPCODE([^,]*, *"[^"]*"' hlo/opcode.def | sed 's/.*\("[^"]*"\)$/\1/' >>"$dict"
    printf '"%s"\n' 2147483647 4611686018427387904 9223372036854775807 1e400 "replica_groups={" \
      "source_target_pairs={" "channel_id=" "replica_count=" "sharding={maximal device=" >>"$dict"
    ;;
  outputs)
    printf '\x03\x00\x00\x01\x01\x02\x02\x20\x10' >"$seeds/two_outputs_one_link"
    ;;
  config)
    copy_seeds configs/*.yaml tests/data/configs/*.yaml
    printf '"%s"\n' "base: " "chip:" "core:" "system:" "mxu:" "vpu:" "vmem:" "hbm:" "ici:" \
      "rows: " "cols: " "count: " "clock_hz: " "tensorcores: " "capacity_bytes: " "1e30" "-1" \
      ".inf" ".nan" "0x7fffffffffffffff" "tpu-v4" >>"$dict"
    ;;
esac

echo "fuzz.sh: fuzz_$target for ${seconds}s, $(ls "$seeds" | wc -l) seeds, corpus $corpus"
jobs=()
if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi
if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
  jobs=(-fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
log=$BUILD_DIR/findings/$target.log
# -timeout: an input taking longer is a hang; -rss_limit_mb: one allocating more is a finding.
# Exit code: 0 when the time ran out with no finding, non-zero (and an artifact in $findings) else.
rc=0
dict_flag=()
if [ -s "$dict" ]; then dict_flag=(-dict="$dict"); fi  # libFuzzer refuses an empty dictionary
"$BUILD_DIR/fuzz/fuzz_$target" "$corpus" "$seeds" "${dict_flag[@]}" -max_total_time="$seconds" \
  -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
  -artifact_prefix="$findings/" "${jobs[@]}" >"$log" 2>&1 || rc=$?
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|#[0-9]+: cov:|INFO: Loaded|==[0-9]+==|SUMMARY|stat::|fuzz:|artifact_prefix|Test unit written|INFO: fuzzing)' \
  "$log" || true
echo "fuzz.sh: fuzz_$target exit $rc (full log: $log)"
exit "$rc"
