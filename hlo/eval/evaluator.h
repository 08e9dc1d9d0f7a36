// The CPU evaluator: runs an HloModule's entry computation on host Literals — the reference values
// every simulated result is checked against (DESIGN.md §8) and the measured CPU time of `tpusim
// cpu`.
//
// Devices. A module runs on num_replicas x num_partitions devices; device d has replica d / P and
// partition d % P (XLA's flattened id: replica * num_partitions + partition). All devices are
// evaluated in one process in lockstep: every computation is walked once in its def-before-use
// order and each instruction is evaluated for every device before the next one, so a collective
// finds all devices' operands ready and computes the exact cross-device result (collectives.h has
// the group rules). While loops step all devices together (devices whose conditions disagree are an
// error); a conditional runs each branch for the devices that chose it.
//
// Values. Instructions unreachable from the root are not evaluated; a value is released after its
// last use. Elided constants (`constant({...})`) are filled with FillRandom(kElidedConstantSeed,
// "<instruction name>"), so every device, every run and every --seed sees the same values. Any
// single value over EvaluatorOptions::max_bytes is a ResourceExhausted error naming the
// instruction.
//
// Errors carry the instruction: "model.hlo:41:3: in 'dot.3': <message>". Unsupported opcodes and
// custom-call targets are Unimplemented; a while loop past max_while_iterations is
// ResourceExhausted.
//
// Threads. Dot, convolution, elementwise and reduce kernels split their output into fixed blocks
// over `threads` threads; results are bit-identical for every thread count (kernels/parallel.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "common/status.h"
#include "hlo/eval/literal.h"
#include "hlo/module.h"
#include "hlo/while_loop.h"

namespace tpusim::hlo {

struct EvaluatorOptions {
  /// Seed for MakeRandomArguments (rng ops draw from the module's generator state instead:
  /// hlo/eval/kernels/rng.h, RngFromState). Elided constants do not use it: they are the
  /// module's own data (its weights), filled with FillRandom(kElidedConstantSeed, name) whatever
  /// the seed, so the inputs a seed picks always meet the same weights and the compiler's copy of
  /// the constants (compiler/lower/constant_data.h) needs no seed.
  uint64_t seed = 0;
  /// Worker threads for the big kernels; results never depend on it.
  int threads = 1;
  /// Largest single value (bytes) any instruction may produce.
  int64_t max_bytes = Literal::kDefaultMaxBytes;
  /// A while loop that runs more iterations than this is an error (ResourceExhausted), at once
  /// when its trip count is known at compile time (hlo::KnownTripCount), otherwise at the trip
  /// past it. The default is tpusim's one bound on a while (hlo::kMaxWhileTrips), which the
  /// compiler applies too: every loop the compiler accepts the evaluator can check, and a loop
  /// past it is refused alike by both.
  int64_t max_while_iterations = kMaxWhileTrips;
  /// When set, the trips each `while` ran are recorded by instruction name; a while that ran
  /// several times with different counts records -1. How a data-dependent loop's count is found
  /// for a run on these inputs (hlo/eval/while_trips.h).
  std::map<std::string, int64_t>* while_trips = nullptr;
  /// When set, the most trips any execution of each `while` ran, by instruction name.
  std::map<std::string, int64_t>* while_most_trips = nullptr;
  /// Records one execution of the loop `name` that ran `trips` trips in while_trips and
  /// while_most_trips (when set): a `while`, or a custom-call whose expansion is one
  /// (CustomCallInfo::loop_trips: Eigh's sweeps).
  void RecordLoopTrips(const std::string& name, int64_t trips) const;
  /// Round f32 dot/convolution operands to bf16 when operand_precision is DEFAULT (TPU's one-pass
  /// MXU, DESIGN.md Numerics). Off: exact f32 products as XLA's CPU backend computes them.
  /// On, the composite ops the compiler expands before lowering — f32 batch-norm-training and
  /// batch-norm-inference (compiler/passes/batch_norm_expander.cc) and the AwsNeuron Gelu,
  /// GeluApprxTanh, GeluBackward, Softmax, SoftmaxBackward and RmsNorm custom calls
  /// (custom_call_expander.cc) — are also computed as the TPU computes them: in f32, op by op, in
  /// the expansion's order (sums folded from +0 in row-major order, as reduce does). Off: in f64,
  /// rounded once. A 1-ulp f32 difference there is harmless by itself but flips bf16 roundings in
  /// the next DEFAULT-precision dot, which a deep network amplifies past any tolerance.
  bool tpu_default_precision = false;
  /// Sums of bf16/f16/f8 values — reduce / reduce-window with an `add(p0, p1)` reducer, all-reduce
  /// and reduce-scatter with one — accumulate in f32 in the fold order (row-major over the reduced
  /// elements after the init value; group order for collectives) and round once to the element
  /// type. This is what a TPU does (the VPU and the ICI reductions compute in f32, isa/opcodes.def
  /// vpu.reduce and ici.all_reduce) and what XLA's CPU/GPU backends do (bf16 arithmetic is
  /// normalized to f32). Off: the reducer's HLO types are taken literally and the accumulator is
  /// rounded after every step, as XLA's HloEvaluator does — a bf16 sum of 256000 squares in [0, 1)
  /// then stops growing at 256, where the bf16 spacing (2) swamps each term.
  bool f32_accumulation = true;
  /// With tpu_default_precision: the MXU's rows R (config core.mxu.rows). A dot or convolution that
  /// takes one MXU pass (bf16 operands, or f32 ones at DEFAULT precision) then sums its products in
  /// the MXU's order — K in R-row weight tiles, each tile summed from +0 in k order, tile sums
  /// added in order (sim/core/mxu_model.h "Numerics") — instead of Eigen's, whose k blocking
  /// depends on the host's cache sizes. The simulated values are then the reference's bit for bit
  /// (no f32 rounding-order differences that bf16 storage turns into 1-ulp flips and a deep
  /// network amplifies). 0: Eigen's order. Drivers checking a simulation must set it to the
  /// simulated chip's core.mxu.rows.
  int64_t mxu_rows = 0;
  /// Optional per-instruction timing hook (`tpusim compare`'s per-op CPU time). When set, it is
  /// called after each instruction of the entry computation — and of the computations run as
  /// control flow or fusion bodies (while, conditional, call, fusion, async) — has been evaluated
  /// for all devices, with the wall seconds (steady clock) that took, inclusive of the computations
  /// it calls. Instructions of applied computations (reduce/sort/map/scatter `to_apply`) are not
  /// reported: their time is in the caller's. Parameters are not reported. Never changes a value;
  /// costs two clock reads per reported instruction.
  std::function<void(const HloInstruction& inst, double seconds)> on_instruction;
};

class EvaluatorImpl;

class Evaluator {
 public:
  explicit Evaluator(EvaluatorOptions options = {});
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  const EvaluatorOptions& options() const { return options_; }

  /// Single device (replica 0, partition 0): the entry computation on `args` (one per ENTRY
  /// parameter, shapes compatible with the parameters). InvalidArgument on a wrong count/shape.
  StatusOr<Literal> Evaluate(const HloModule& module, const std::vector<Literal>& args);

  /// All num_replicas x num_partitions devices in lockstep; args[d] are device d's ENTRY arguments.
  /// Returns each device's root value, indexed by device.
  StatusOr<std::vector<Literal>> EvaluateReplicated(const HloModule& module, int64_t num_replicas,
                                                    int64_t num_partitions,
                                                    const std::vector<std::vector<Literal>>& args);

  /// Deterministic arguments for device `device`: FillRandom(seed, "param_<i>[/device_<d>]") per
  /// ENTRY parameter (device 0 uses "param_<i>", so a 1-device run and device 0 of a replicated run
  /// agree).
  static StatusOr<std::vector<Literal>> MakeRandomArguments(
      const HloModule& module, uint64_t seed, int64_t device = 0,
      int64_t max_bytes = Literal::kDefaultMaxBytes);

 private:
  EvaluatorOptions options_;
};

/// Total bytes of the ENTRY parameters and of the largest instruction result in the module
/// (computed from shapes only; nothing is allocated). Used to skip modules too big to evaluate.
struct ModuleFootprint {
  int64_t parameter_bytes = 0;
  int64_t largest_value_bytes = 0;
  std::string largest_value_name;
};
ModuleFootprint ComputeFootprint(const HloModule& module);

/// Estimated memory (bytes) of checking `devices` devices' outputs against the evaluator: per
/// device its arguments plus twice its largest value (two reference runs are never alive at once,
/// but the simulated outputs are), from shapes only. Saturates at INT64_MAX: absurd shapes read as
/// "too big", never wrap (issue 8).
int64_t EstimateCheckBytes(const HloModule& module, int64_t devices);

}  // namespace tpusim::hlo
