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
// last use. Elided constants (`constant({...})`) are filled with FillRandom(seed, "<instruction
// name>"), so every device and every run sees the same values. Any single value over
// EvaluatorOptions::max_bytes is a ResourceExhausted error naming the instruction.
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
#include <memory>
#include <vector>

#include "common/status.h"
#include "compiler/eval/literal.h"
#include "compiler/hlo/module.h"

namespace tpusim::hlo {

struct EvaluatorOptions {
  /// Seed for elided constants and rng ops (and for MakeRandomArguments).
  uint64_t seed = 0;
  /// Worker threads for the big kernels; results never depend on it.
  int threads = 1;
  /// Largest single value (bytes) any instruction may produce.
  int64_t max_bytes = Literal::kDefaultMaxBytes;
  /// A while loop that runs more iterations than this is an error (ResourceExhausted).
  int64_t max_while_iterations = 10'000'000;
  /// Round f32 dot/convolution operands to bf16 when operand_precision is DEFAULT (TPU's one-pass
  /// MXU, DESIGN.md Numerics). Off: exact f32 products as XLA's CPU backend computes them.
  bool tpu_default_precision = false;
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

}  // namespace tpusim::hlo
