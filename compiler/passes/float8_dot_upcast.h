// float8-dot-upcast: a dot or convolution with f8e4m3fn / f8e5m2 operands or result runs on the
// MXU as bf16 x bf16 -> f32, as XLA's TPU backend upcasts 8-bit floats for MXUs without an FP8
// path (FloatNormalization: the op computed in a type the hardware takes, converts around it).
//   * each f8 operand becomes convert(operand) to bf16 — exact: every f8e4m3fn and f8e5m2 value
//     (their 3 / 2 mantissa bits, exponents within bf16's range) is a bf16 value;
//   * an f8 result becomes the op with an f32 result followed by convert to the f8 type: one
//     rounding of the f32 sum, as the evaluator computes an f8 dot (in f32, rounded once).
// f16 (which TPUs compute in f32, as XLA's FloatNormalization upcasts it) and int4 likewise:
//   * an f16 operand becomes convert(operand) to f32 and the op runs at HIGHEST precision, so each
//     f16 product is exact in f32 (an f16 is the sum of two bf16s) and sums are f32's, as the
//     evaluator computes an f16 dot; an f16 result is the f32 result converted once;
//   * an s4 / u4 operand of an integer dot with 8-bit-or-narrower operands becomes convert to s8
//     (exact), the MXU's s8 x s8 -> s32 path (XLA's TPU backend packs int4 for MXUs that take it;
//     the values are the same).
// Every other dot and convolution is left as it is.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class Float8DotUpcast : public HloPass {
 public:
  std::string_view name() const override { return "float8-dot-upcast"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
