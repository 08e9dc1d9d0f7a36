// Element conversion with XLA's `convert` semantics, and rounding of doubles to narrower float
// formats.
//
// Rules (XLA's elemental IR emitter, xla/service/elemental_ir_emitter.cc, EmitIntegralToFloating /
// EmitFloatingToIntegral, which since 2022 uses LLVM's saturating `fptosi.sat`/`fptoui.sat`; the
// operation-semantics doc, "ConvertElementType"):
//   float -> int : truncate toward zero; NaN -> 0; values beyond the integer range saturate to
//   min/max. int   -> float: round to nearest, ties to even (a single rounding for every target,
//   including bf16 and
//                   f16, except |x| > 2^53 where int -> double already rounds once).
//   float -> float: round to nearest, ties to even; overflow -> +-inf; NaN stays NaN (quiet).
//   int   -> int  : two's-complement wrap (keep the low bits), as LLVM trunc/sext/zext do; s4/u4
//                   too (LLVM i4), so s32 -> s4 keeps the low 4 bits and s4 -> u8 sign-extends.
//   x -> pred     : x != 0 (so NaN -> true); pred -> x: 0 or 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hlo/eval/native_types.h"

namespace tpusim::hlo {

/// Rounds `x` to the nearest value of a binary float format with `mantissa_bits` explicit fraction
/// bits, normal exponents in [min_exp, max_exp] (value = 1.m * 2^e), with gradual underflow; ties
/// to even. Values whose rounded magnitude exceeds the format's largest finite number become +-inf;
/// NaN stays NaN. bf16: (7, -126, 127); f16: (10, -14, 15); f32: (23, -126, 127). Also the
/// semantics of reduce-precision (which XLA defines with exponent_bits/mantissa_bits; see
/// ReducePrecisionParams).
double RoundToFloatFormat(double x, int mantissa_bits, int min_exp, int max_exp);

/// bf16 nearest to `x` (one rounding, ties to even).
inline Eigen::bfloat16 DoubleToBf16(double x) {
  return Eigen::bfloat16(static_cast<float>(RoundToFloatFormat(x, 7, -126, 127)));
}
/// f16 nearest to `x` (one rounding, ties to even).
inline Eigen::half DoubleToF16(double x) {
  return Eigen::half(static_cast<float>(RoundToFloatFormat(x, 10, -14, 15)));
}

/// `x` as a double (exact for every supported type except |s64|,|u64| > 2^53).
template <typename T>
inline double ToDouble(T x) {
  if constexpr (kIsHalfFloat<T>) {
    return static_cast<double>(static_cast<float>(x));
  } else {
    return static_cast<double>(x);
  }
}

/// Float (as double) -> integer To with XLA's saturating semantics (see file comment).
template <typename To>
To SaturatingFloatToInt(double x) {
  if (std::isnan(x)) return To{0};
  constexpr double kMin =
      static_cast<double>(std::numeric_limits<To>::min());  // exact: 0 or -2^(n-1)
  // 2^(bits) for unsigned, 2^(bits-1) for signed: the first value that does not fit.
  constexpr double kLimit = std::is_signed_v<To>
                                ? -kMin
                                : 2.0 * static_cast<double>(std::numeric_limits<To>::max() / 2 + 1);
  double t = std::trunc(x);
  if (t <= kMin) return std::numeric_limits<To>::min();
  if (t >= kLimit) return std::numeric_limits<To>::max();
  return static_cast<To>(t);
}

/// Converts one element From -> To with XLA's rules (see file comment).
template <typename To, typename From>
To ConvertElement(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsHalfFloat<From>) return static_cast<float>(x) != 0.0f;
    return x != From{0};
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (kIsHalfFloat<To>) {
      return To(x ? 1.0f : 0.0f);
    } else {
      return x ? To{1} : To{0};
    }
  } else if constexpr (kIsInt4<To>) {
    if constexpr (kIsFloat<From>) {  // saturate to [kMin, kMax], as fptosi.sat to i4 does
      return To(SaturatingFloatToInt<int8_t>(
          std::clamp(ToDouble(x), double{To::kMin}, double{To::kMax})));
    } else {
      return To(static_cast<int64_t>(x));  // wrap (int4.h)
    }
  } else if constexpr (kIsInt<To> && kIsInt4<From>) {  // sign- or zero-extend, then wrap
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(static_cast<int64_t>(x)));
  } else if constexpr (kIsInt<To> && kIsInt<From>) {
    // Two's-complement wrap: go through the unsigned type of To's width.
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(x));
  } else if constexpr (kIsInt<To>) {  // float -> int
    return SaturatingFloatToInt<To>(ToDouble(x));
  } else if constexpr (std::is_same_v<To, Eigen::bfloat16>) {
    if constexpr (std::is_same_v<From, float>) {
      return Eigen::bfloat16(x);  // Eigen: round-to-nearest-even (float_to_bfloat16_rtne).
    }
    return DoubleToBf16(ToDouble(x));
  } else if constexpr (std::is_same_v<To, Eigen::half>) {
    if constexpr (std::is_same_v<From, float>) return Eigen::half(x);  // Eigen: RNE
    return DoubleToF16(ToDouble(x));
  } else if constexpr (kIsFloat8<To>) {
    return To(ToDouble(x));  // one rounding (float8.h)
  } else if constexpr (std::is_same_v<To, float>) {
    if constexpr (kIsHalfFloat<From>) return static_cast<float>(x);  // exact widening
    return static_cast<float>(
        x);  // int/double -> float: the default FP mode rounds to nearest even
  } else {   // To == double
    return ToDouble(x);
  }
}

}  // namespace tpusim::hlo
