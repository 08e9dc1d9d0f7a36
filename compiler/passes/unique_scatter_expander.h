// unique-scatter-expander: a `scatter` with unique_indices=true whose combiner the DMA lowering
// does not run (a variadic scatter whose combiner mixes its operands, such as an argmax that keeps
// the value with the larger key; a one-operand combiner other than assignment, add, maximum and
// minimum, such as multiply) becomes elementwise code around assignment scatters. With unique
// indices every operand element receives at most one update, so the combiner is applied once per
// element, where an update landed:
//   placed_k = scatter(zeros, indices, updates_k) with assignment,
//   hit      = scatter(false, indices, true) with assignment (pred, updates' shape),
//   result_k = select(hit, f(operands..., placed...)_k, operand_k),
// with f applied element by element (elementwise_computation.h). Out-of-bounds windows are skipped
// by both scatters alike, so those elements keep their value.
//
// Contract: values equal XLA's scatter when the indices are unique (the attribute is the module's
// promise, as in XLA). Requires a combiner made of elementwise scalar ops. Scatters without
// unique_indices, or with a combiner of other ops, are left for the lowering to refuse by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class UniqueScatterExpander : public HloPass {
 public:
  std::string_view name() const override { return "unique-scatter-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
