// `tpusim cpu MODEL.hlo`: evaluate a module on the host CPU, time it, and write/describe its
// outputs. The logic lives here (unit-testable); tools/tpusim/cmd_cpu.cc only parses flags and
// prints.
//
// Inputs: deterministic pseudo-random from the seed (Evaluator::MakeRandomArguments), or, with an
// inputs folder, `param_<i>.npy` for ENTRY parameter i — per device `replica_<d>/param_<i>.npy`
// when that file exists (d = replica * partitions + partition, = the replica for one partition).
// With an inputs folder a missing file is an error naming it. Outputs: one .npy per leaf of the
// root in flattened tuple order, `output_<k>.npy` (one device) or `replica_<d>/output_<k>.npy`
// (several). Timing: one warm-up run, then `repeat` timed runs of all devices; wall seconds per run
// (steady clock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "hlo/eval/evaluator.h"
#include "hlo/module.h"

namespace tpusim::hlo {

struct CpuRunOptions {
  // The devices are replicas x partitions, each factor given as XLA's replica_count and
  // num_partitions are (unlike `tpusim run --replicas`, which counts devices: the evaluator takes
  // the two factors separately, and --partitions may override the module's).
  int64_t replicas = 0;    // 0: the devices hlo::DevicesToRun counts / partitions
  int64_t partitions = 0;  // 0: the module's num_partitions
  std::string inputs_dir;   // empty: random inputs from `seed`
  std::string outputs_dir;  // empty: write nothing
  int repeat = 3;           // timed runs after one warm-up
  uint64_t seed = 0;
  int threads = 0;  // 0: hardware concurrency
  int64_t max_bytes = Literal::kDefaultMaxBytes;
  /// Also time each instruction (EvaluatorOptions::on_instruction) and fill
  /// CpuRunResult::instructions; the hook costs two clock reads per instruction.
  bool time_instructions = false;
};

/// Per-instruction CPU time (with CpuRunOptions::time_instructions): seconds are wall time of
/// evaluating the instruction for all devices, inclusive of the computations it calls (a fusion,
/// while or call includes its body's instructions, which are listed too with in_entry = false).
struct CpuInstructionTime {
  std::string name;           // HLO instruction name ("dot.30")
  std::string opcode;         // as XLA spells it ("dot")
  std::string computation;    // the computation it belongs to
  bool in_entry = false;      // an instruction of the entry computation (entries never overlap)
  int64_t evaluations = 0;    // times evaluated per run (loop bodies: once per iteration)
  double median_seconds = 0;  // median over the timed runs of its per-run total
};

struct CpuOutputInfo {
  int64_t device = 0;
  int64_t index = 0;  // leaf index in flattened tuple order
  std::string shape;  // "f32[2,3]"
  std::string dtype;  // "f32"
  uint64_t checksum = 0;
  std::string file;  // written .npy path ("" if not written)
};

struct CpuRunResult {
  std::vector<double> run_seconds;  // timed runs, in order
  double median_seconds = 0, min_seconds = 0, max_seconds = 0;
  int threads = 1;
  int64_t replicas = 1, partitions = 1;
  std::vector<CpuOutputInfo> outputs;
  /// With time_instructions: every timed instruction in order of first evaluation.
  std::vector<CpuInstructionTime> instructions;
  /// With time_instructions: per timed run, the sum of its entry instructions' times (the rest of
  /// run_seconds is the evaluator's own bookkeeping).
  std::vector<double> run_entry_seconds;
  /// {"seconds_per_run": median, "min_seconds", "max_seconds", "runs", "threads", "replicas",
  ///  "partitions", "outputs": [{"device", "index", "shape", "dtype", "checksum": "0x..."}]}.
  Json ToJson() const;
  /// A short human-readable summary.
  std::string ToText() const;
};

/// Evaluates `module` as described above. Errors: bad options (InvalidArgument), unreadable or
/// mismatching .npy inputs (naming the file), evaluation errors (naming the instruction), output
/// write failures.
StatusOr<CpuRunResult> RunModuleOnCpu(const HloModule& module, const CpuRunOptions& options);

/// Parses `path` and runs it.
StatusOr<CpuRunResult> RunOnCpu(const std::string& path, const CpuRunOptions& options);

}  // namespace tpusim::hlo
