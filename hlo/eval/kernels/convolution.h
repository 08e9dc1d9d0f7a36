// convolution on the CPU: any dim_labels, window stride, low/high padding (negative allowed), lhs
// (base) dilation, rhs (window) dilation, window reversal, feature_group_count and
// batch_group_count.
//
// Semantics (XLA operation semantics, "Conv (convolution)"): for output position (n, o, y):
//   out[n, o, y] = sum_{i, k} lhs[n', g_f * Ig + i, x] * rhs[k', i, o]
// where, per spatial dim d, the padded and base-dilated input coordinate is
//   p = y_d * stride_d + k_d * window_dilation_d - padding_low_d, read from the input only if
//   p % base_dilation_d == 0 and 0 <= p / base_dilation_d < in_d (else it is a zero hole /
//   padding);
// k'_d = size_d - 1 - k_d when window_reversal_d, else k_d. Feature groups: Ig = C /
// feature_group_count input features per group, output feature o belongs to group g_f = o / (O /
// feature_group_count). Batch groups: output feature o belongs to batch group g_b = o / (O /
// batch_group_count) and reads input batch n' = g_b * (N / batch_group_count) + n (XLA's
// HloEvaluator; used for depthwise filter gradients).
//
// Implementation: im2col + GEMM. The input is transposed to [N, spatial..., C] and the kernel to
// [spatial..., I, O] in the accumulation type (f32 for f16/bf16/f32, f64 for f64, as for dot: XLA
// CPU upcasts bf16 convolutions to f32); for each group, fixed blocks of kConvRowBlock output
// positions build their patch matrix [rows, window * Ig] and multiply it by the group's [window *
// Ig, Og] kernel slice (Eigen), so results do not depend on the thread count. Integer convolutions:
// Unimplemented.
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

inline constexpr int64_t kConvRowBlock = 256;

struct ConvolutionParams {
  Window window;
  ConvolutionDimensionNumbers dnums;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  /// The kernel's layout folds the window columns into N (hlo::KernelFoldsWindowColumnsIntoN):
  /// the MXU order (KernelOptions::mxu_k_tile > 0) sums column by column.
  bool columns_in_n = false;
};

/// out = convolution(lhs, rhs). InvalidArgument (naming the shapes) if dims are inconsistent with
/// the window/groups or `out` has the wrong dims; Unimplemented for integer element types or both
/// group counts > 1; ResourceExhausted over max_bytes.
StatusOr<Literal> Convolution(const Literal& lhs, const Literal& rhs,
                              const ConvolutionParams& params, const Shape& out,
                              const KernelOptions& options);

}  // namespace tpusim::hlo
