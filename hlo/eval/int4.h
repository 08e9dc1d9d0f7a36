// The evaluator's element types for s4 and u4: one byte per element holding the value (XLA's
// Literal and ml_dtypes' int4/uint4 also hold one element per byte in host memory; only device
// buffers are packed). s4 holds [-8, 7], u4 [0, 15]. Constructing one from an integer keeps the low
// 4 bits (two's-complement wrap, as XLA's convert between integers does); converting from a float
// is ConvertElement's job (convert.h, saturating). Elementwise arithmetic widens to 32 bits and
// wraps back once (elementwise.cc, EvaluateInt4Widened), which is what LLVM's i4 arithmetic in
// XLA's emitters computes.
#pragma once

#include <cstdint>
#include <type_traits>

namespace tpusim::hlo {

/// One 4-bit integer element, signed (s4) or unsigned (u4). Equality and order are the values'.
template <bool kSigned>
class Int4 {
 public:
  static constexpr int kMin = kSigned ? -8 : 0;
  static constexpr int kMax = kSigned ? 7 : 15;

  Int4() = default;
  /// The low 4 bits of `x` (wrap), sign-extended for s4.
  template <typename N, typename = std::enable_if_t<std::is_integral_v<N>>>
  explicit Int4(N x) : v_(Wrap(static_cast<int64_t>(x))) {}

  int value() const { return v_; }
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  explicit operator N() const {
    return static_cast<N>(v_);
  }

  friend bool operator==(Int4 a, Int4 b) { return a.v_ == b.v_; }
  friend bool operator!=(Int4 a, Int4 b) { return a.v_ != b.v_; }
  friend bool operator<(Int4 a, Int4 b) { return a.v_ < b.v_; }
  friend bool operator>(Int4 a, Int4 b) { return a.v_ > b.v_; }
  friend bool operator<=(Int4 a, Int4 b) { return a.v_ <= b.v_; }
  friend bool operator>=(Int4 a, Int4 b) { return a.v_ >= b.v_; }

 private:
  static int8_t Wrap(int64_t x) {
    const int low = static_cast<int>(static_cast<uint64_t>(x) & 0xF);
    return static_cast<int8_t>(kSigned && low >= 8 ? low - 16 : low);
  }
  int8_t v_ = 0;
};

using S4 = Int4<true>;
using U4 = Int4<false>;

}  // namespace tpusim::hlo
