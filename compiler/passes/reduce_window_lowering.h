// lower-reduce-window: rewrites a `reduce-window` (max/avg pooling, cumulative sums) into
// elementwise ops the VPU lowering runs: the operand padded with the init value (edges and base
// dilation), one strided `slice` per window position, folded left to right with the reducer's
// binary op starting from the broadcast init value:
//   r = op(...op(op(init, slice_0), slice_1)..., slice_{W-1}),
// window positions in row-major order — the order the evaluator folds a window in (after the init
// value), so the values agree bit for bit, padding aside: a padded element holds the init value,
// which the reducers accepted here leave unchanged (x + 0, max(x, -inf), ...) except for the sign
// of a zero.
//
// Contract: a reduce-window of one array operand whose reducer's root is add, multiply, maximum,
// minimum, and or or of its two parameters — or whose reducer is any computation of elementwise
// ops on two scalars (elementwise_computation.h; jax.lax.cumlogsumexp's log-add-exp), cloned per
// window position over whole slices, padded positions skipped by a mask as XLA skips them — with
// a scalar init, no window reversal and no negative
// padding, is rewritten; any other is left in place (the lowering reports it by name). Windows of
// more than 4096 positions are left in place too (the unrolled fold would be too large), and so is
// an elementwise reducer whose clones would pass 8192 instructions.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ReduceWindowLowering : public HloPass {
 public:
  std::string_view name() const override { return "lower-reduce-window"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
