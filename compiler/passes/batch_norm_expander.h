// batch-norm-expander: rewrites batch-norm-training and batch-norm-inference into reduce, broadcast
// and elementwise ops the VPU lowering handles (XLA's BatchNormExpander does the same for TPU).
//
// Contract.
//  * batch-norm-training(x, scale, offset), feature dimension f, N = elements per feature:
//      mean = sum(x) / N;  var = sum((x - mean)^2) / N  (two-pass, like the evaluator);
//      y = (x - mean) * (scale * rsqrt(var + epsilon)) + offset;  result tuple(y, mean, var).
//  * batch-norm-inference(x, scale, offset, mean, var): y = (x - mean) * (scale * rsqrt(var + eps))
//    + offset.
//  * Only f32 operands are expanded; other types are left for the lowering to reject by name.
//    batch-norm-grad is not expanded (the lowering reports it).
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
