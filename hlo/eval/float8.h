// The evaluator's element types for XLA's 8-bit floats (f8e4m3fn, f8e5m2, f8e4m3, f8e3m4,
// f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz, f8e8m0fnu): one byte holding the format's bits
// (common/float8.h). Like f16 and bf16 they are computed in f32 and rounded back once per HLO op
// (kIsHalfFloat in native_types.h), which is what XLA's evaluator does through ml_dtypes'
// operators.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/float8.h"

namespace tpusim::hlo {

/// One f8 element of format F. Constructed from a number by one rounding (Float8FromDouble);
/// converts to float exactly. Equality and order are those of the values (NaN unordered).
template <Float8Format F>
class Float8 {
 public:
  Float8() = default;
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  explicit Float8(N x) : bits_(Float8FromDouble(F, static_cast<double>(x))) {}

  static Float8 FromBits(uint8_t b) {
    Float8 f;
    f.bits_ = b;
    return f;
  }
  uint8_t bits() const { return bits_; }
  static constexpr Float8Format kFormat = F;

  explicit operator float() const { return Float8ToFloat(F, bits_); }
  explicit operator double() const { return Float8ToFloat(F, bits_); }

  friend bool operator==(Float8 a, Float8 b) { return float(a) == float(b); }
  friend bool operator<(Float8 a, Float8 b) { return float(a) < float(b); }
  friend bool operator>(Float8 a, Float8 b) { return float(a) > float(b); }
  friend bool operator<=(Float8 a, Float8 b) { return float(a) <= float(b); }
  friend bool operator>=(Float8 a, Float8 b) { return float(a) >= float(b); }

 private:
  uint8_t bits_ = 0;
};

using F8E4M3FN = Float8<Float8Format::kE4M3FN>;
using F8E5M2 = Float8<Float8Format::kE5M2>;
using F8E4M3 = Float8<Float8Format::kE4M3>;
using F8E3M4 = Float8<Float8Format::kE3M4>;
using F8E4M3FNUZ = Float8<Float8Format::kE4M3FNUZ>;
using F8E5M2FNUZ = Float8<Float8Format::kE5M2FNUZ>;
using F8E4M3B11FNUZ = Float8<Float8Format::kE4M3B11FNUZ>;
using F8E8M0FNU = Float8<Float8Format::kE8M0FNU>;

/// True for Float8<F> of any format F.
template <typename T>
constexpr bool kIsFloat8Type = false;
template <Float8Format F>
constexpr bool kIsFloat8Type<Float8<F>> = true;

}  // namespace tpusim::hlo
