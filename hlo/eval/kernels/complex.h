// Elementwise HLO operations and dot on complex values (c64 = std::complex<float>, c128 =
// std::complex<double>; XLA's layout: real part, then imaginary part). Semantics are std::complex's
// (the C++ library's complex functions, as XLA's HloEvaluator uses), computed in the element's
// precision:
//   - abs, real, imag give the component type; sign(z) = z / |z| (0 for 0); rsqrt = 1 / sqrt.
//   - logistic(z) = 1 / (1 + exp(-z)); expm1 = exp(z) - 1; log1p = log(1 + z).
//   - complex(re, im) builds c64 from f32 pairs and c128 from f64 pairs.
//   - compare: EQ and NE only (both parts equal); complex values have no order.
//   - maximum, minimum, remainder, clamp, floor and the other ops XLA does not define on complex
//     are Unimplemented naming the op and the type.
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/opcode.h"

namespace tpusim::hlo {

/// A unary op on a complex operand (result complex, or the component type for abs/real/imag).
StatusOr<Literal> ComplexUnary(HloOpcode op, const Literal& x, const Shape& out,
                               const KernelOptions& options);

/// add, subtract, multiply, divide, power on two complex operands of out's type; `complex` on two
/// f32 (f64) operands giving c64 (c128).
StatusOr<Literal> ComplexBinary(HloOpcode op, const Literal& a, const Literal& b, const Shape& out,
                                const KernelOptions& options);

/// compare EQ/NE of two complex operands -> pred.
StatusOr<Literal> ComplexCompare(ComparisonDirection direction, const Literal& a,
                                 const Literal& b, const Shape& out, const KernelOptions& options);

/// select(pred, on_true, on_false) on complex values; pred a scalar or of the result's dims.
StatusOr<Literal> ComplexSelect(const Literal& pred, const Literal& on_true,
                                const Literal& on_false, const Shape& out,
                                const KernelOptions& options);

/// c[b] = a[b] ([m,k]) * w[b] ([k,n]), row-major, with Eigen's complex GEMM (Eigen's order; the
/// MXU-order option applies to real f32 only). `a` and `w` are complex of out's type.
Status ComplexBatchedGemm(const Literal& a, const Literal& w, Literal& c, int64_t batch, int64_t m,
                          int64_t k, int64_t n);

}  // namespace tpusim::hlo
