// stochastic-convert-decomposer: rewrites `stochastic-convert(x, random)` from a float to a signed
// integer into the elementwise ops XLA's StochasticConvertDecomposer writes (xla/service/
// stochastic_convert_decomposer.cc), which the VPU runs: with n the bits of `random`,
//   t = floor(|x|), f = |x| - t (in f32 for f16), round_up = random < convert(f * 2^n),
//   r = convert(t) + (round_up ? 1 : 0), negated where sign(x) < 0,
//   then x <= the type's minimum gives the minimum and x >= its maximum the maximum.
// Every step is exact, so the values are the evaluator's bit for bit
// (hlo/eval/kernels/stochastic_convert.h). Other targets (a float result) are left for the lowering
// to report, as XLA's decomposer refuses them.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class StochasticConvertDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "stochastic-convert-decomposer"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
