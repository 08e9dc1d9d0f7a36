// Unsigned 64-bit arithmetic that stops at UINT64_MAX instead of wrapping: for sizes computed from
// untrusted fields (instruction descriptors, shapes), where a wrapped product would look small and
// pass a range check. A saturated result is larger than any memory, so it fails every such check.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>

namespace tpusim {

inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

/// a * b, or kSaturated when the product does not fit in 64 bits.
constexpr uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return (a != 0 && b > kSaturated / a) ? kSaturated : a * b;
}

/// The product of `factors` (1 for none), or kSaturated once it does not fit in 64 bits.
constexpr uint64_t SaturatingProduct(std::initializer_list<uint64_t> factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) p = SaturatingMul(p, f);
  return p;
}

/// a + b, or kSaturated when the sum does not fit in 64 bits.
constexpr uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return b > kSaturated - a ? kSaturated : a + b;
}

}  // namespace tpusim
