// MXU precision passes (internal to compiler/lower), shared by the dot and convolution kernels.
//
// Precision (DESIGN.md Numerics; XLA's bf16_3x / bf16_6x): an f32 operand enters the array as bf16
// parts (hi, lo, lolo). DEFAULT = 1 pass hi*hi; HIGH = 3 passes lo*hi + hi*lo + hi*hi; HIGHEST = 6
// passes adding lo*lo, hi*lolo, lolo*hi — smallest terms first. A bf16 operand has only `hi`, so
// terms that need its lo/lolo parts are dropped. s8 x s8 -> s32 uses the int8 path (one pass).
#pragma once

#include <vector>

#include "hlo/attributes.h"
#include "isa/types.h"

namespace tpusim::compiler {

/// Which bf16 part of the LHS and of the weights one MXU pass streams.
struct PassParts {
  isa::PrecisionPart lhs, rhs;
};

/// The passes of a dot or convolution at precision `p` with f32 (true) or bf16 operands.
inline std::vector<PassParts> PrecisionPasses(hlo::Precision p, bool lhs_f32, bool rhs_f32) {
  using P = isa::PrecisionPart;
  std::vector<PassParts> all;
  switch (p) {
    case hlo::Precision::kDefault:
      all = {{P::kHi, P::kHi}};
      break;
    case hlo::Precision::kHigh:
      all = {{P::kLo, P::kHi}, {P::kHi, P::kLo}, {P::kHi, P::kHi}};
      break;
    case hlo::Precision::kHighest:
      all = {{P::kLo, P::kLo}, {P::kHi, P::kLoLo}, {P::kLoLo, P::kHi},
             {P::kLo, P::kHi}, {P::kHi, P::kLo},   {P::kHi, P::kHi}};
      break;
  }
  std::vector<PassParts> out;
  for (const PassParts& pp : all) {
    if ((!lhs_f32 && pp.lhs != P::kHi) || (!rhs_f32 && pp.rhs != P::kHi)) continue;
    out.push_back(pp);
  }
  return out;
}

}  // namespace tpusim::compiler
