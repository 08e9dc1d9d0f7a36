// lower-convolution: rewrites `convolution` into im2col + dot (DESIGN.md §5), so a convolution runs
// as strided DMA gathers feeding the MXU's weight-stationary dot kernel.
//
// For input dims (any dim_labels) [N, S1..Sk, C] (after a transpose to that order), window W1..Wk
// with stride, padding, lhs (base) dilation and rhs (window) dilation, and kernel [W1..Wk, C/G, O]:
//   1. pad (edge padding lo/hi, interior padding = lhs_dilation - 1) when needed;
//   2. one strided `slice` per window position (start = w * rhs_dilation, step = stride) giving
//      [N, O1..Ok, C] each; `concatenate` them along C -> [N, O1..Ok, Wn*C] (the im2col matrix);
//   3. reshape to [M = N*O1*..*Ok, Wn*C] and dot with the kernel reshaped to [Wn*C, O];
//      feature_group_count G > 1 (grouped / depthwise) becomes a batched dot over the G groups:
//      [G, M, Wn*C/G] x [G, Wn*C/G, O/G]; batch_group_count B > 1 (weight gradients) becomes a
//      dot batched over the B groups, batch group g (input batches g*N/B ..) with output feature
//      group g: [B, M/B, Wn*C] x [B, Wn*C, O/B];
//   4. reshape/transpose the [M, O] result to the output's dim_labels.
// Contract: values equal the evaluator's convolution (same products; the sums run over the patch in
// (window position, feature) order, the evaluator's im2col order, so with the evaluator summing in
// the MXU's order — EvaluatorOptions::mxu_rows — the results agree bit for bit). Convolutions with
// both feature_group_count and batch_group_count > 1, window reversal or negative padding are left
// in place, and the lowering reports them by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ConvolutionLowering : public HloPass {
 public:
  std::string_view name() const override { return "lower-convolution"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
