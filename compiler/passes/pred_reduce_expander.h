// pred-reduce-expander: rewrites a `reduce` of pred values with an and / or reducer (what JAX's
// `jnp.all` / `jnp.any` and the bounds checks of `jnp.take` / gather lower to, e.g. `reduce_and`)
// into an f32 reduce the VPU lowering runs, as XLA's TPU backend computes predicates in 32-bit
// vector lanes.
//
// Contract. reduce(x: pred[...], init: pred[]), dimensions R, reducer f(a, b) = and(a, b) or
// minimum(a, b) (resp. or / maximum) of its two parameters becomes
//   compare(reduce(convert<f32>(x), convert<f32>(init), R, minimum (resp. maximum)), 0, NE)
// with the same shape pred[kept dimensions]: for values in {0, 1}, and = min and or = max, so the
// result is bit-identical to the evaluator's. Other reduces are left unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class PredReduceExpander : public HloPass {
 public:
  std::string_view name() const override { return "pred-reduce-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
