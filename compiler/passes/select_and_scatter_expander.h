// select-and-scatter-expander: rewrites a `select-and-scatter` (the gradient of max/min pooling)
// into elementwise ops, strided slices and pads, which the VPU lowering runs. With W window
// positions in row-major order and the operand padded (edges) when the window has padding:
//   1. selection, per window (output index o), as the evaluator does it: the first in-bounds
//      position is selected, and position k replaces the selection when select(selected, x_k) is
//      false — one strided slice of the operand per k, compare / not / and / or / select, tracking
//      the selected position's index k in an s32 array;
//   2. scatter: for each k from the last window position to the first, the source values of the
//      windows that selected k, zero elsewhere, are placed at their operand positions
//      (o * stride + k: a pad with interior padding stride - 1, then a slice dropping the window's
//      edge padding) and added to the result, which starts as the broadcast init value.
// Of the windows that hold one operand position, a later one (in row-major window order) holds it
// at an earlier window position, so descending k adds every position's contributions in window
// order — the evaluator's (and XLA's HloEvaluator's) order, bit for bit, however deep the windows
// overlap (a ResNet's 3x3/2 max pool: up to four). Windows that tile the operand (stride ==
// size, no padding: 2x2/2 max pooling) give each position at most one contribution: the W
// contributions are interleaved by concatenation and a reshape and added to init once (about
// twice the result's bytes). On a TPU XLA runs select-and-scatter as one kernel; the general
// expansion moves about 2W times the operand's bytes, so its cycles are an upper bound.
//
// Contract: rewritten when the select computation's root is compare(parameter 0, parameter 1)
// (any direction), the scatter computation's root is add(parameter 0, parameter 1), the init is a
// scalar, every window dimension has stride >= 1, padding >= 0, no dilation and no reversal, and
// the window has at most 4096 positions; any other is left for the lowering to report by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class SelectAndScatterExpander : public HloPass {
 public:
  std::string_view name() const override { return "select-and-scatter-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
