// batch-norm-expander: rewrites batch-norm-training, batch-norm-inference and batch-norm-grad into
// reduce, broadcast and elementwise ops the VPU lowering handles (XLA's BatchNormExpander does the
// same for TPU), for any rank and any feature_index.
//
// Contract (f = feature dimension, N = elements per feature, sums over every other dimension).
//  * batch-norm-training(x, scale, offset):
//      mean = sum(x) / N;  var = sum((x - mean)^2) / N  (two-pass, like the evaluator);
//      y = (x - mean) * (scale * rsqrt(var + epsilon)) + offset;  result tuple(y, mean, var).
//  * batch-norm-inference(x, scale, offset, mean, var): y = (x - mean) * (scale * rsqrt(var + eps))
//    + offset.
//  * batch-norm-grad(x, scale, mean, var, dy): grad_offset = sum(dy); grad_scale = sum(dy (x -
//    mean)) rsqrt(var + eps); dx = scale rsqrt(var + eps) (dy - grad_offset / N - (x - mean)
//    sum(dy (x - mean)) / (N (var + eps))); result tuple(dx, grad_scale, grad_offset).
//  * f32 operands, or bf16 (computed in f32 and converted back, as XLA's TPU backend does); other
//    types are left for the lowering to reject by name.
//  * Values: equal to the evaluator's (which computes in f64) within f32 rounding.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class BatchNormExpander : public HloPass {
 public:
  std::string_view name() const override { return "batch-norm-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
