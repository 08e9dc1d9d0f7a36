// One device's evaluation of a "local" instruction — everything except control flow (while,
// conditional, call, fusion, async) and collectives, which the lockstep evaluator (evaluator.cc)
// handles. Maps each opcode's typed attributes onto the kernels in kernels/ and the custom-call
// table.
#pragma once

#include <functional>
#include <vector>

#include "common/status.h"
#include "hlo/eval/evaluator.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

struct LocalContext {
  const EvaluatorOptions* options = nullptr;
  const KernelOptions* kernel_options = nullptr;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  /// The recognized form of a called computation (reducers, comparators, ...).
  std::function<const CalledComputation&(const HloComputation*)> called;
  /// For an rng: the generator state it draws from (u64[2], as rng-get-and-update-state returns
  /// it), taken once for all devices (EvaluatorImpl::TakeRngState).
  const Literal* rng_state = nullptr;
};

/// Evaluates `inst` on this device's operand values. Unimplemented for opcodes the CPU evaluator
/// does not support (naming the opcode); errors are not yet annotated with the instruction (the
/// caller does).
StatusOr<Literal> EvaluateLocalInstruction(const HloInstruction& inst,
                                           const std::vector<const Literal*>& operands,
                                           const LocalContext& ctx);

/// A constant's value: parsed values, or FillRandom(seed, name) when elided.
StatusOr<Literal> MakeConstant(const Shape& shape, const LiteralValues& values, uint64_t seed,
                               std::string_view name, int64_t max_bytes);

}  // namespace tpusim::hlo
