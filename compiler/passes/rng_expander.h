// rng-expander and rng-state-assignment: `rng` and `rng-get-and-update-state` as XLA's TPU
// pipeline runs them (xla/hlo/transforms/expanders/rng_expander.cc), on the generator tpusim has
// (rng-bit-generator, Philox; hlo/eval/kernels/rng.h defines the values bit for bit).
//
// rng-expander (before while-lowering, so each unrolled trip draws its own state): an
// `rng(a, b)` of f32, bf16 or f16 becomes
//   state = rng-get-and-update-state(), delta=W      (W = RngWords: n uniform, 2n normal)
//   bits  = get-tuple-element(rng-bit-generator(state), index=1)   u32[W], algorithm=rng_default
//   u     = bitcast-convert((bits >> 9) | 0x3F800000, f32) - 1       in [0, 1)
//   rng_uniform: u * (b - a) + a;  rng_normal: sqrt(-2 log(1 - u1)) cos(2pi u2) * b + a
// in f32 (a and b converted), then converted to the result type. XLA's normal distribution uses
// an inverse error function instead of Box-Muller (an assumption: same distribution, other
// values). Integer rng is left for the lowering to report.
//
// rng-state-assignment (after while-lowering and constant-folding): each rng-get-and-update-state
// of the entry computation becomes the constant u64[2] {kRngKey, counter}, the counter the sum of
// the deltas of those before it that the result depends on, in instruction order — the state the
// evaluator's generator returns at that point. One left in another computation (a loop region,
// whose every trip would draw the same state) is left for the lowering to report.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class RngExpander : public HloPass {
 public:
  std::string_view name() const override { return "rng-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

class RngStateAssignment : public HloPass {
 public:
  std::string_view name() const override { return "rng-state-assignment"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
