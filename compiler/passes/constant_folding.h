// constant-folding: an instruction whose operands are all constants, that computes a small array
// (at most kMaxFoldedElements elements) with a data-independent, device-independent opcode, is
// replaced by a constant holding its value, computed by the CPU evaluator — as XLA's
// HloConstantFolding does before a TPU program runs. JAX and PyTorch/XLA dumps taken before
// optimization are full of such index arithmetic (jnp.pad's compare/select/concatenate/gather on
// constants, a loop's constant start offsets); on the chip each would be a DMA in, a VPU op and a
// DMA out.
//
// Contract.
//  * Folded: elementwise ops (incl. compare, select, clamp, convert), broadcast, reshape, bitcast,
//    copy, transpose, reverse, slice, concatenate, pad, iota, gather, dynamic-slice, with array
//    operands and result, no elided (`{...}`) operand and no called computation; not what the
//    caller's `keep` names (the pipeline: a broadcast the VPU reads in place, the lowering's
//    IsVirtualBroadcast — it costs nothing, as a constant it would be loaded element by element;
//    the pass itself knows nothing of the lowering). Never folded:
//    dot, convolution and reductions (their chip numerics are the lowering's, not the host's),
//    rng, collectives, replica-id / partition-id, custom-calls, control flow, parameters.
//  * The constant keeps the instruction's name, location and metadata; operands left without users
//    are removed (unless they are the root). Instructions are visited in order, so chains fold in
//    one run.
//  * Values are unchanged (the evaluator is the check's reference too).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

/// Largest result folded (elements): index and padding arithmetic, not tensors.
inline constexpr int64_t kMaxFoldedElements = 1024;

class ConstantFolding : public HloPass {
 public:
  /// `keep(inst)`: instructions to leave unfolded besides the contract's (nullptr: none).
  explicit ConstantFolding(std::function<bool(const hlo::HloInstruction&)> keep = nullptr)
      : keep_(std::move(keep)) {}
  std::string_view name() const override { return "constant-folding"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  std::function<bool(const hlo::HloInstruction&)> keep_;
};

}  // namespace tpusim::compiler
