// custom-call-expander: the compiler's table of known custom-call targets, each rewritten into HLO
// ops the lowering handles, with the semantics of the CPU evaluator's table (hlo/eval/
// custom_call_table.h, which cites the sources):
//
//   AwsNeuronGelu           y = 0.5 x (1 + erf(x / sqrt 2))
//   AwsNeuronGeluApprxTanh  y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   AwsNeuronGeluBackward   y = Phi(x) + x phi(x) = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2/2) /
//   sqrt(2 pi) AwsNeuronSoftmax        y = exp(x - max_d x) / sum_d exp(x - max_d x), d =
//   backend_config (default
//                           the last dimension; negative counts from the end)
//   AwsNeuronSoftmaxBackward(y, dy)  dx = y (dy - sum_d(dy y))
//   AwsNeuronRmsNorm(x, w, eps)      y = x rsqrt(mean_d(x^2) + eps) w   (w [n] along d)
//
// AwsNeuronTransferWithStaticRing (identity) is not rewritten: the lowering aliases its buffer.
// Contract: calls whose operands and result are f32, bf16 or f16 are expanded, in every
// computation (entry, while bodies, branches); bf16/f16 operands are converted to f32, the
// expansion runs in f32 and its result is rounded once to the call's type (the Neuron kernels
// compute in f32; assumption: no wider accumulation). Other element types stay, and the lowering
// names them. Values agree with the evaluator's TPU arithmetic (KernelOptions::tpu_expansions, the
// same widening) exactly and with its f64 reference within f32 rounding; unknown targets are left
// untouched.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class CustomCallExpander : public HloPass {
 public:
  std::string_view name() const override { return "custom-call-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
