// Scalar semantics of HLO's elementwise operations, per element type, as XLA defines them. Shared
// by the array kernels (elementwise.cc) and the reducer fast paths (reduce.cc).
//
// Sources: XLA operation semantics (openxla.org/xla/operation_semantics, "Element-wise binary
// arithmetic operations", "Element-wise unary functions") and the CPU/GPU elemental IR emitter
// (xla/service/elemental_ir_emitter.cc), whose choices for the "implementation-defined" cases are:
//   - integer x / 0 = -1 for signed, all ones (UINT_MAX) for unsigned; INT_MIN / -1 = INT_MIN;
//     x % 0 = x; INT_MIN % -1 = 0. Integer add/sub/mul/negate/abs wrap (two's complement).
//   - float remainder: fmod (result has the sign of the dividend).
//   - maximum/minimum propagate NaN (EmitFloatMax: `rhs is NaN ? rhs : (lhs >=u rhs ? lhs : rhs)`).
//   - shifts: a shift amount >= the bit width (as unsigned) gives 0 for shift-left and
//     shift-right-logical and the sign fill for shift-right-arithmetic.
//   - mulhi (integers only): the high half of the double-width product, signed or unsigned as the
//     type is (common/mulhi.h).
//   - integer power: exponent < 0 gives 0 except base 1 (-> 1) and base -1 (-> +-1); otherwise
//   exact
//     repeated squaring with wrap.
//   - f16/bf16 operations compute in f32 and round once to the type (round to nearest even), as
//   XLA's
//     CPU backend does after its float-normalization pass upcasts them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/mulhi.h"
#include "hlo/attributes.h"
#include "hlo/eval/native_types.h"

namespace tpusim::hlo {
namespace ew {

template <typename T>
using U = std::make_unsigned_t<T>;

template <typename T>
T Add(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<U<T>>(a) + static_cast<U<T>>(b));
  else if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return static_cast<T>(static_cast<ComputeType<T>>(a) + static_cast<ComputeType<T>>(b));
}
template <typename T>
T Sub(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<U<T>>(a) - static_cast<U<T>>(b));
  else if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else
    return static_cast<T>(static_cast<ComputeType<T>>(a) - static_cast<ComputeType<T>>(b));
}
template <typename T>
T Mul(T a, T b) {
  if constexpr (kIsInt<T>) {
    // Multiply in the unsigned type of at least int width so uint16*uint16 does not promote to int.
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U<T>>;
    return static_cast<T>(static_cast<W>(static_cast<U<T>>(a)) *
                          static_cast<W>(static_cast<U<T>>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return static_cast<T>(static_cast<ComputeType<T>>(a) * static_cast<ComputeType<T>>(b));
  }
}
template <typename T>
T Div(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return std::is_signed_v<T> ? T(-1) : std::numeric_limits<T>::max();
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return b ? a : true;  // pred divide: not produced by frameworks; follows unsigned rule
  } else {
    return static_cast<T>(static_cast<ComputeType<T>>(a) / static_cast<ComputeType<T>>(b));
  }
}
template <typename T>
T Rem(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    }
    return static_cast<T>(a % b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return b ? false : a;
  } else {
    return static_cast<T>(
        std::fmod(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  }
}
template <typename T>
T Max(T a, T b) {
  if constexpr (kIsFloat<T>) {
    auto x = static_cast<ComputeType<T>>(a), y = static_cast<ComputeType<T>>(b);
    if (std::isnan(y)) return b;
    return (std::isnan(x) || x >= y) ? a : b;
  } else {
    return a >= b ? a : b;
  }
}
template <typename T>
T Min(T a, T b) {
  if constexpr (kIsFloat<T>) {
    auto x = static_cast<ComputeType<T>>(a), y = static_cast<ComputeType<T>>(b);
    if (std::isnan(y)) return b;
    return (std::isnan(x) || x <= y) ? a : b;
  } else {
    return a <= b ? a : b;
  }
}
template <typename T>
T Pow(T a, T b) {
  if constexpr (kIsInt<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
        return 0;
      }
    }
    T result = 1, base = a;
    for (U<T> e = static_cast<U<T>>(b); e != 0; e >>= 1) {
      if (e & 1) result = Mul(result, base);
      base = Mul(base, base);
    }
    return result;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    return static_cast<T>(std::pow(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  }
}
/// mulhi: the high half of the double-width product, signed or unsigned as T is (integers only).
template <typename T>
T Mulhi(T a, T b) {
  static_assert(kIsInt<T>);
  return static_cast<T>(MulHi(static_cast<int64_t>(a), static_cast<int64_t>(b),
                              static_cast<int>(sizeof(T) * 8), std::is_unsigned_v<T>));
}
template <typename T>
T Atan2(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(
        std::atan2(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  } else {
    return static_cast<T>(std::atan2(static_cast<double>(a), static_cast<double>(b)));
  }
}
template <typename T>
T ShiftLeft(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (static_cast<U<T>>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U<T>>(a) << static_cast<U<T>>(b));
  } else {
    return a;
  }
}
template <typename T>
T ShiftRightLogical(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (static_cast<U<T>>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U<T>>(a) >> static_cast<U<T>>(b));
  } else {
    return a;
  }
}
template <typename T>
T ShiftRightArithmetic(T a, T b) {
  if constexpr (kIsInt<T>) {
    using S = std::make_signed_t<T>;
    S sa = static_cast<S>(a);
    if (static_cast<U<T>>(b) >= sizeof(T) * 8) return static_cast<T>(sa < 0 ? S(-1) : S(0));
    return static_cast<T>(sa >> static_cast<U<T>>(b));  // arithmetic for signed in C++20
  } else {
    return a;
  }
}
template <typename T>
T And(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a & b);
  else
    return a;
}
template <typename T>
T Or(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a | b);
  else
    return a;
}
template <typename T>
T Xor(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a ^ b);
  else
    return a;
}

/// Total order key of a float (XLA's TOTALORDER comparison: -NaN < -inf < ... < -0 < +0 < ... <
/// +inf < +NaN): the bits as a signed integer, with the magnitude bits flipped for negative values.
template <typename T>
int64_t TotalOrderKey(T x) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t i;
    std::memcpy(&i, &x, 8);
    return i < 0 ? (i ^ std::numeric_limits<int64_t>::max()) : i;
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t i;
    std::memcpy(&i, &x, 4);
    return i < 0 ? (i ^ std::numeric_limits<int32_t>::max()) : i;
  } else if constexpr (kIsFloat8<T>) {  // sign-magnitude bits, as the wider formats
    if constexpr (T::kFormat == Float8Format::kE8M0FNU) return x.bits();  // no sign bit
    const auto i = static_cast<int8_t>(x.bits());
    return i < 0 ? (i ^ std::numeric_limits<int8_t>::max()) : i;
  } else {  // f16 / bf16: 16 bits
    int16_t i;
    std::memcpy(&i, &x, 2);
    return i < 0 ? (i ^ std::numeric_limits<int16_t>::max()) : i;
  }
}

/// `x d y` for a comparison direction `d`, with the operators of the values' own type (IEEE
/// order for floats: NaN compares false except under NE).
template <typename X>
bool CompareBy(ComparisonDirection d, X x, X y) {
  switch (d) {
    case ComparisonDirection::kEq:
      return x == y;
    case ComparisonDirection::kNe:
      return x != y;
    case ComparisonDirection::kGe:
      return x >= y;
    case ComparisonDirection::kGt:
      return x > y;
    case ComparisonDirection::kLe:
      return x <= y;
    case ComparisonDirection::kLt:
      return x < y;
  }
  return false;
}

/// compare(a, b) with `d`; floats in IEEE order (NaN: false except NE) or total order.
template <typename T>
bool Compare(ComparisonDirection d, bool total_order, T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (total_order) return CompareBy<int64_t>(d, TotalOrderKey(a), TotalOrderKey(b));
  }
  return CompareBy(d, static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b));
}

}  // namespace ew
}  // namespace tpusim::hlo
