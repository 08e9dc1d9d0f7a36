// Strong unit types: a cycle count and a byte count are different things, and the type system says
// so (as gem5's Cycles and Tick). Arithmetic within a unit is allowed; mixing units needs an
// explicit .value().
#pragma once

#include <compare>
#include <cstdint>

namespace tpusim {

template <typename Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(uint64_t v) : v_(v) {}
  constexpr uint64_t value() const { return v_; }
  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator*(uint64_t k) const { return Quantity(v_ * k); }
  constexpr Quantity& operator+=(Quantity o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  uint64_t v_ = 0;
};

struct CyclesTag {};
struct BytesTag {};
/// A number of core-clock cycles.
using Cycles = Quantity<CyclesTag>;
/// A number of bytes.
using Bytes = Quantity<BytesTag>;

/// ceil(a / b) for positive integers.
constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace tpusim
