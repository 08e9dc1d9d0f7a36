// RunModule: the main job behind `tpusim run` and `tpusim compare` — compile an HLO module for a
// chip, simulate it cycle by cycle with deterministic inputs in HBM, and check every output leaf of
// every replica against the CPU evaluator running the same module on the same inputs.
//
// The check (DESIGN.md §8): the evaluator runs with the MXU's numerics for f32 dots at DEFAULT
// precision (operands rounded to bf16, EvaluatorOptions::tpu_default_precision), so the remaining
// differences come only from summation order (the MXU adds K in array order, Eigen blocks it) and
// from the VPU's transcendental implementations; an output element passes when |sim - ref| <= atol
// + rtol * |ref| (NaN == NaN). The error against a full-f32 evaluation (XLA's CPU semantics) is
// reported beside it, not checked: it is the price of bf16 MXU passes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "compiler/compile.h"
#include "config/chip_config.h"
#include "hlo/module.h"
#include "sim/simulator.h"

namespace tpusim::driver {

/// Where the value check's CPU evaluation is: `pass` 1 of 2 with the TPU's numerics (checked),
/// 2 with full f32 (reported); HLO instructions of the entry computation evaluated (for every
/// device) of `instructions_total`; wall seconds since the pass began.
struct CheckProgress {
  int pass = 1;
  int64_t instructions_done = 0;
  int64_t instructions_total = 0;
  double elapsed_seconds = 0;
  bool done = false;  // the last call of a pass
};

struct RunOptions {
  /// Called while the check's evaluator runs (CheckProgress; may be empty): long checks show
  /// progress like the simulation (driver/logging.h CheckProgressPrinter).
  std::function<void(const CheckProgress&)> check_progress;
  int64_t replicas = 0;      // 0: the module's replica_count (1 if absent)
  bool timing_only = false;  // no values anywhere: cycles only (huge logical shapes)
  bool check = true;         // compare with the evaluator when the values fit
  int64_t max_check_bytes = int64_t{1} << 30;  // estimate of the evaluator's memory (bytes)
  /// Largest HBM<->VMEM DMA traffic (bytes, all cores and loop trips) for which values are computed
  /// and checked: the check's run time grows with it (about 0.4 GB of traffic per second on the
  /// reference machine, benchmarks/RESULTS.md).
  int64_t max_check_traffic = int64_t{64} << 30;
  uint64_t seed = 42;      // inputs: hlo::Evaluator::MakeRandomArguments(seed, replica)
  double atol = 1e-4;      // check tolerance, absolute
  double rtol = 1e-3;      // check tolerance, relative
  std::string dump_after;  // compiler: record the HLO after this pass
  bool megacore = true;    // compiler::CompileOptions::megacore
  int64_t max_unrolled_instructions = 100000;         // CompileOptions::max_unrolled_instructions
  std::map<std::string, int64_t> custom_call_cycles;  // --custom-call-cost TARGET=CYCLES
  std::map<std::string, int64_t> trip_counts;         // --trip-count NAME=N
  sim::SimOptions sim;
};

struct CheckResult {
  bool performed = false;
  bool passed = false;
  std::string reason;               // why it was skipped, or the first mismatch
  double max_abs_error = 0;         // vs the evaluator with TPU DEFAULT-precision semantics
  double max_rel_error = 0;         // |sim - ref| / |ref| over elements with ref != 0
  double max_abs_error_vs_f32 = 0;  // vs the evaluator in full f32 (XLA CPU semantics)
  double max_rel_error_vs_f32 = 0;
  double largest_abs_value_f32 = 0;               // largest finite |value| of the f32 reference
  int64_t elements_outside_tolerance_vs_f32 = 0;  // by the same atol + rtol * |ref| rule
  // Elements inf or NaN on one side only (counted as mismatches, kept out of the max figures).
  int64_t elements_non_finite = 0;
  int64_t elements_non_finite_vs_f32 = 0;
  int64_t dot_layers = 0;  // dot and convolution instructions of the module (MXU passes)
  int64_t elements_compared = 0;
  double atol = 0, rtol = 0;
  // A module tpusim's SPMD partitioner split whose values differ from the unpartitioned module's:
  // what the partitioned program and the f64 comparison showed (driver/partition_check.h).
  std::string partition_note;
  int64_t unpartitioned_mismatches = 0;  // with partition_note: elements beyond the tolerance
};

struct RunModuleResult {
  config::ChipConfig config;  // the chip or slice simulated (config::SliceForCores)
  std::string slice_note;     // set when the slice was sized for the module
  /// The compiled module; its program's data segments (`compiled.program.data`, the constants)
  /// are moved into the simulated memories, so the program here has none.
  compiler::CompiledModule compiled;
  /// The simulation's result; after a value check its `final_state` is empty (the check reads the
  /// outputs, then releases the simulated memories before its own evaluation).
  sim::SimResult sim;
  CheckResult check;
  int64_t replicas = 1;
  /// Data-dependent whiles whose trip count the CPU evaluator counted on this run's inputs (the
  /// run stays checked): name -> trips.
  std::map<std::string, int64_t> counted_trip_counts;
  /// Of those, the whiles whose count differs between their executions (the count above is the
  /// most trips; the device computes the condition every trip): name -> most trips.
  std::map<std::string, int64_t> varying_trip_counts;
  int64_t partitions = 1;  // the module's num_partitions (replicas counts every device)
  bool timing_only = false;
  std::string timing_only_reason;           // set when timing-only was chosen automatically
  std::vector<std::string> hlo_opcodes;     // per Program::hlo_names entry
  std::vector<bool> hlo_compiler_inserted;  // per Program::hlo_names entry
};

/// Compiles, simulates and checks. A single-chip `config` grows into the smallest slice of its
/// generation that holds the module's devices (config::SliceForCores; `slice_note` says so).
/// Errors: config::SliceForCores's; the compiler's (Unimplemented / ResourceExhausted naming
/// the HLO instruction), the simulator's (runtime errors, --max-cycles), the evaluator's. A failed
/// value check is NOT an error here: it is reported in `check` (the CLI exits 1).
StatusOr<RunModuleResult> RunModule(const hlo::HloModule& module, const config::ChipConfig& config,
                                    const RunOptions& options);

}  // namespace tpusim::driver
