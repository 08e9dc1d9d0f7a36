// Elementwise HLO operations on Literals (semantics per type in elementwise_ops.h).
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/opcode.h"

namespace tpusim::hlo {

/// abs, negate, sign, not, floor, ceil, round-nearest-afz, round-nearest-even, exponential,
/// exponential-minus-one, log, log-plus-one, logistic, sqrt, rsqrt, cbrt, sine, cosine, tan, tanh,
/// acos, acosh, asin, asinh, atan, atanh, cosh, sinh, erf, is-finite (-> pred), popcnt, count-leading-zeros, copy. `out` is the result shape (element
/// type of the result, e.g. pred for is-finite). Unimplemented for an opcode/type pair XLA does not
/// define (e.g. sqrt on s32), naming both.
StatusOr<Literal> EvaluateUnary(HloOpcode opcode, const Literal& x, const Shape& out,
                                const KernelOptions& options);

/// add, subtract, multiply, mulhi (integers), divide, remainder, maximum, minimum, power, atan2,
/// and, or, xor, shift-left, shift-right-arithmetic, shift-right-logical. Operands have the result's dims and
/// type.
StatusOr<Literal> EvaluateBinary(HloOpcode opcode, const Literal& a, const Literal& b,
                                 const Shape& out, const KernelOptions& options);

/// compare: `direction` with `type` (kDefault: FLOAT for floats, SIGNED/UNSIGNED for ints;
/// TOTALORDER orders floats as ew::TotalOrderKey). Result pred[dims]. FLOAT: any comparison with
/// NaN is false except NE.
StatusOr<Literal> EvaluateCompare(ComparisonDirection direction, ComparisonType type,
                                  const Literal& a, const Literal& b, const Shape& out,
                                  const KernelOptions& options);

/// select(pred, on_true, on_false); pred may be a scalar (old XLA) or have the result's dims.
StatusOr<Literal> EvaluateSelect(const Literal& pred, const Literal& on_true,
                                 const Literal& on_false, const Shape& out,
                                 const KernelOptions& options);

/// clamp(min, x, max) = min(max(x, lo), hi) with NaN-propagating max/min; lo/hi may be scalars.
StatusOr<Literal> EvaluateClamp(const Literal& lo, const Literal& x, const Literal& hi,
                                const Shape& out, const KernelOptions& options);

/// convert with XLA's rules (convert.h).
StatusOr<Literal> EvaluateConvert(const Literal& x, const Shape& out, const KernelOptions& options);

/// bitcast-convert: reinterpret the bits; same bit width keeps dims; a narrower output type adds a
/// minor dimension of width ratio, a wider one removes it (XLA semantics). Little-endian element
/// order.
StatusOr<Literal> EvaluateBitcastConvert(const Literal& x, const Shape& out,
                                         const KernelOptions& options);

/// reduce-precision with XLA's semantics (its HloEvaluator and elemental IR emitter): the mantissa is
/// rounded to `mantissa_bits` at the value's own exponent (RNE); then, when `exponent_bits` is
/// narrower than the element type's, a rounded value above the reduced format's largest finite
/// becomes +-inf and one below its smallest normal 2^(2 - 2^(exponent_bits-1)) becomes a zero of
/// its sign (the reduced format has no subnormals). NaN stays NaN, or becomes +inf when
/// mantissa_bits == 0.
StatusOr<Literal> EvaluateReducePrecision(const Literal& x, int64_t exponent_bits,
                                          int64_t mantissa_bits, const KernelOptions& options);

}  // namespace tpusim::hlo
