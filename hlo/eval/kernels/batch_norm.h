// batch-norm-training / -inference / -grad (XLA operation semantics, "BatchNormTraining",
// "BatchNormInference", "BatchNormGrad"). Statistics are over every dimension except feature_index,
// computed in f64 and rounded once to the element type; the variance is the biased (population)
// one. With KernelOptions::tpu_expansions, f32 training and inference instead compute in f32 op by
// op in the order of the compiler's expansion (compiler/passes/batch_norm_expander.cc), as the TPU
// does: mean = sum(x) / N, var = sum((x - mean)^2) / N, y = (x - mean) * (scale * rsqrt(var + eps))
// + offset, sums folded from +0 in row-major order.
//   training:  mean_f = E[x], var_f = E[(x - mean_f)^2],
//              y = (x - mean_f) * scale_f / sqrt(var_f + eps) + offset_f        -> (y, mean, var)
//   inference: y = (x - mean_f) * scale_f / sqrt(var_f + eps) + offset_f
//   grad:      with r = 1/sqrt(var_f + eps), N elements per feature, d = grad_output:
//              grad_offset_f = sum d;  grad_scale_f = r * sum d * (x - mean_f);
//              grad_x = scale_f * r * (d - grad_offset_f / N - (x - mean_f) * r * grad_scale_f / N)
//                                                                         -> (grad_x, grad_scale,
//                                                                         grad_offset)
#pragma once

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

StatusOr<Literal> BatchNormTraining(const Literal& x, const Literal& scale, const Literal& offset,
                                    double epsilon, int64_t feature_index, const Shape& out,
                                    const KernelOptions& options);
StatusOr<Literal> BatchNormInference(const Literal& x, const Literal& scale, const Literal& offset,
                                     const Literal& mean, const Literal& variance, double epsilon,
                                     int64_t feature_index, const Shape& out,
                                     const KernelOptions& options);
StatusOr<Literal> BatchNormGrad(const Literal& x, const Literal& scale, const Literal& mean,
                                const Literal& variance, const Literal& grad_output, double epsilon,
                                int64_t feature_index, const Shape& out,
                                const KernelOptions& options);

}  // namespace tpusim::hlo
