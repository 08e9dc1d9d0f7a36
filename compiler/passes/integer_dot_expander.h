// integer-dot-expander: the dots whose operand types the MXU does not take, as XLA's TPU backend
// computes them.
//   * An integer dot with an operand wider than 8 bits (jnp.dot of int32 arrays: s32 x s32 ->
//     s32; s16, u8, u16, u32 operands; s4/u4 beside a wide one) or an 8-, 16- or 32-bit integer
//     result other than s8 x s8 -> s32 runs on the MXU's s8 x s8 -> s32 path, each operand split
//     into signed 8-bit digits:
//       x = sum_i d_i 256^i (mod 2^32), d_i in [-128, 127]: d_i = the low byte of r_i read as
//       signed, r_0 = x (converted to s32), r_{i+1} = (r_i - d_i) >> 8;
//     1 digit for s8, 2 for u8 and s16, 3 for u16, 4 for s32 and u32. The result is
//       sum over digit pairs (i, j), i + j <= 3, of dot(a_i, b_j) << 8 (i + j),
//     in s32 arithmetic that wraps modulo 2^32 — XLA's integer semantics, exactly (pairs with
//     i + j >= 4 only add multiples of 2^32). An s32 x s32 dot is 10 s8 dots; a u32 result is
//     the s32 sum's bits; an 8- or 16-bit result its low bits (sign- or zero-extended, then
//     converted), as that type's wrapping sums leave them. Why the MXU and not the VPU: XLA's TPU matmul emitter shifts partial
//     products by 8-bit multiples for integer operands (its MatrixMultiplyAccumulateFunctor's
//     `shift_amount` check, in the CHECK failure of jax-ml/jax#40581), and the MXU's int8 rate
//     beats a VPU multiply-add per MAC by the MXU's size.
//   * A dot of an integer operand and a floating-point one with a floating-point result: the
//     integer operand is converted to the result type first (XLA's OperandUpcaster; JAX's TPU
//     lowering of jnp.linalg.svd multiplies by an s32 sign matrix).
// Other dots (s8 x s8 -> s32 runs as it is; 64-bit and 4-bit integers) are left to the lowering,
// which names what it does not take.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class IntegerDotExpander : public HloPass {
 public:
  std::string_view name() const override { return "integer-dot-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
