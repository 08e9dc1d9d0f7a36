// reduce-precision-expander: rewrites `reduce-precision(x), exponent_bits=E, mantissa_bits=M` on
// f32 (bf16 and f16 operands through f32) into integer ops on the value's bits, which the VPU runs
// — XLA's own expansion (the elemental IR emitter's EmitReducePrecisionIR):
//  * M < 23: round the mantissa to M bits, to nearest even: bits += ((bits >> (23 - M)) & 1) +
//    (2^(22 - M) - 1), then clear the low 23 - M bits;
//  * E below the element type's exponent width (8; f16: 5): exponents above the reduced format's
//    maximum become infinity (sign kept), exponents at or below its minimum become zero (sign kept;
//    XLA flushes the reduced format's denormals);
//  * NaN inputs stay NaN (M > 0) or become infinity (M = 0), as XLA.
//  * f16 subnormal inputs with M < 10 and E >= 5 (not flushed) are rounded at f16's subnormal
//    quantum 2^-24, as XLA rounds the f16 bits: round-nearest-even(x 2^(14+M)) 2^-(14+M).
// Values: bit for bit XLA's and the evaluator's (EvaluateReducePrecision has the same semantics).
// Other element types are left for the lowering to report by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ReducePrecisionExpander : public HloPass {
 public:
  std::string_view name() const override { return "reduce-precision-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
