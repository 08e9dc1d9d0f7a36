// lower-convolution: prepares every `convolution` for the MXUs and the VPU.
//
// A convolution with a direct form (hlo/convolution_form.h: one or two spatial dimensions,
// non-negative padding, not a filter-gradient shape, no batch groups, feature groups — if any — of
// at least mxu_rows / 8 input features each) is kept and only brought into canonical dim_labels —
// input [N, S.., C], kernel [S.., C, O] or [S.., O, C], output [N, S.., O], transposing operands
// and result where their dim_labels differ — for the direct kernel
// (compiler/lower/lower_convolution.cc), which streams input bands through VMEM and accumulates the
// taps in the MXUs, one feature group after another: no im2col array anywhere.
//
// A grouped convolution with fewer input features per group (a depthwise convolution, its
// multiplier, its input gradient: hlo::VpuConvolution) is kept too, in the same dim_labels with an
// [S.., C/G, O] kernel, for the VPU kernel (compiler/lower/lower_vpu_convolution.cc): output
// features on the lanes, a multiply-accumulate of the shifted band per tap. No im2col either.
//
// Every other convolution is rewritten into im2col + dot (below). For input dims (any dim_labels)
// [N, S1..Sk, C] (after a transpose to that order), window W1..Wk with stride, padding, lhs (base)
// dilation and rhs (window) dilation, and kernel [W1..Wk, C/G, O]:
//   1. pad (edge padding lo/hi, interior padding = lhs_dilation - 1) when needed;
//   2. one strided `slice` per window position (start = w * rhs_dilation, step = stride) giving
//      [N, O1..Ok, C] each; `concatenate` them along C -> [N, O1..Ok, Wn*C] (the im2col matrix);
//   3. reshape to [M = N*O1*..*Ok, Wn*C] and dot with the kernel reshaped to [Wn*C, O];
//      feature_group_count G > 1 (only where neither grouped form applies: more than two spatial
//      dimensions, a filter-gradient shape) becomes a batched dot over the G groups:
//      [G, M, Wn*C/G] x [G, Wn*C/G, O/G]; batch_group_count B > 1 (weight gradients) becomes a
//      dot batched over the B groups, batch group g (input batches g*N/B ..) with output feature
//      group g: [B, M/B, Wn*C] x [B, Wn*C, O/B];
//   4. reshape/transpose the [M, O] result to the output's dim_labels.
// Contract: values equal the evaluator's convolution (same products; the sums run over the patch in
// (window position, feature) order, the evaluator's im2col order, so with the evaluator summing in
// the MXU's order — EvaluatorOptions::mxu_rows — the results agree bit for bit). Convolutions with
// both feature_group_count and batch_group_count > 1 or negative padding are left in place, and
// the lowering reports them by name.
//
// A `reverse` of the kernel's spatial dimensions (how JAX and PyTorch write an input gradient) is
// folded into the window reversal first; the direct form reads the reversed kernel as it loads it.
// A reversed window without a direct form (a depthwise layer's input gradient; a feature map
// smaller than the window) is unfolded again: the kernel is reversed by one `reverse`, and the
// convolution takes the VPU form, the filter-gradient form or im2col + dot.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ConvolutionLowering : public HloPass {
 public:
  /// `mxu_rows`: core.mxu.rows of the target chip (the direct form's K tiles depend on it).
  explicit ConvolutionLowering(int64_t mxu_rows = 128) : mxu_rows_(mxu_rows) {}
  std::string_view name() const override { return "lower-convolution"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  int64_t mxu_rows_;
};

}  // namespace tpusim::compiler
