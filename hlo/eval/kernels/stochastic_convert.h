// stochastic-convert: a float rounded to a signed integer up or down at random (XLA's semantics,
// which its StochasticConvertDecomposer spells out in HLO ops, xla/service/
// stochastic_convert_decomposer.cc).
#pragma once

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// stochastic-convert(x, random) -> out: x f16/bf16/f32/f64, random the unsigned integer of x's
/// width (u16, u16, u32, u64) and of x's dimensions, out a signed integer type (s8..s64) of x's
/// dimensions. Per element, with n = bits of random: |x| = t + f (t = floor(|x|)); the result
/// is t + 1 when random < convert(f * 2^n) (f scaled in f32 for f16, else in x's type), else t;
/// negated for x < 0; x <= the type's minimum (as x's type rounds it) gives the minimum and
/// x >= the maximum (so rounded) the maximum; NaN gives 0. Every step is exact, so the result equals the decomposed
/// HLO's bit for bit. Unimplemented for other type combinations, naming them.
StatusOr<Literal> EvaluateStochasticConvert(const Literal& x, const Literal& random,
                                            const Shape& out, const KernelOptions& options);

}  // namespace tpusim::hlo
