// data-formatting: marks the copies and reshapes that move data in a dump taken after XLA's layout
// assignment — the ops TPU profiles list as "data formatting" (in the TPU v3 calibration profiles
// every top-level copy and reshape takes time: 4.6 %, 2.5 % and 0.1 % of the three steps for
// copies, 3.7 %, 3.4 % and 1.7 % for reshapes).
//
// Why they are real there: after layout assignment XLA's algebraic simplifier (layout-sensitive
// from then on) replaces every reshape that is a bitcast of its operand's physical layout by a
// `bitcast` and removes every copy that changes nothing, and copy insertion adds the copies buffer
// aliasing needs (a while loop's state, an output that must not alias a parameter). So a `reshape`
// or `copy` left outside fused computations is a relayout or a copy the program needs, even
// between equal layouts (NMT's bf16[64,5,32316] copy, 213 us).
//
// The pass gives such an op — outside fused computations, with a tiled layout (`T(...)`) stated on
// both its operand and its result, which only a dump taken after TPU layout assignment has — the
// frontend attribute `_tpusim_data_formatting="true"`, visible in --dump-after. Marked ops are
// kernels (Lowerer::LowerCopy: each side's DMAs move its tile-padded bytes). Elsewhere a reshape
// is a view of its operand and a copy is one only between equal layouts (hlo::CopyChangesLayout).
// The pass runs first, while a fused computation's instructions can still be told apart (a
// reshape inside a fusion is part of that fusion's kernel).
//
// Values are unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"
#include "hlo/instruction.h"

namespace tpusim::compiler {

/// Whether `inst` is a copy or reshape that moves data (a kernel of its own, Lowerer::LowerCopy):
/// one this pass marked, or a copy between two different stated layouts (hlo::CopyChangesLayout).
/// Every other copy and reshape is a view of its operand. The one rule canonicalize, the HBM plan
/// and output-fusion-scheduling apply.
bool MovesData(const hlo::HloInstruction& inst);

class DataFormatting : public HloPass {
 public:
  std::string_view name() const override { return "data-formatting"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
