#include "common/float8.h"

#include <cmath>

namespace tpusim {
namespace {

struct Spec {
  int mantissa_bits;
  int bias;
  bool has_inf;   // IEEE-style all-ones exponent for inf/NaN; else only S.1..1.1..1 is NaN
  double max_finite;
};

Spec SpecOf(Float8Format f) {
  return f == Float8Format::kE5M2 ? Spec{2, 15, true, 57344.0} : Spec{3, 7, false, 448.0};
}

}  // namespace

uint8_t Float8FromDouble(Float8Format format, double x) {
  const Spec s = SpecOf(format);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t nan = s.has_inf ? 0x7E : 0x7F;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | nan);
  const uint8_t overflow = s.has_inf ? 0x7C : 0x7F;  // inf, or NaN where there is no inf
  if (std::isinf(x)) return static_cast<uint8_t>(sign | overflow);
  const double a = std::fabs(x);
  const int min_exp = 1 - s.bias;  // of the smallest normal, 1.0 * 2^min_exp
  int e = a == 0.0 ? min_exp : std::ilogb(a);
  if (e < min_exp) e = min_exp;  // subnormal range: fixed quantum 2^(min_exp - m)
  // Scaling by a power of two is exact, so nearbyint (ties to even) does the one rounding.
  const double q = std::nearbyint(std::ldexp(a, s.mantissa_bits - e));
  const double r = std::ldexp(q, e - s.mantissa_bits);
  if (r > s.max_finite) return static_cast<uint8_t>(sign | overflow);
  if (r == 0.0) return sign;
  int re = std::ilogb(r);  // rounding may carry into the next binade
  if (re < min_exp) {      // subnormal: exponent field 0, mantissa = r / 2^(min_exp - m)
    const auto m = static_cast<uint8_t>(std::ldexp(r, s.mantissa_bits - min_exp));
    return static_cast<uint8_t>(sign | m);
  }
  const auto frac = static_cast<unsigned>(std::ldexp(r, s.mantissa_bits - re)) -
                    (1u << s.mantissa_bits);
  const unsigned field = static_cast<unsigned>(re + s.bias);
  return static_cast<uint8_t>(sign | (field << s.mantissa_bits) | frac);
}

float Float8ToFloat(Float8Format format, uint8_t bits) {
  const Spec s = SpecOf(format);
  const bool negative = (bits & 0x80) != 0;
  const unsigned mag = bits & 0x7Fu;
  const unsigned field = mag >> s.mantissa_bits;
  const unsigned frac = mag & ((1u << s.mantissa_bits) - 1);
  float v;
  if (!s.has_inf && mag == 0x7F) {
    v = NAN;
  } else if (s.has_inf && field == (0x7Fu >> s.mantissa_bits)) {
    v = frac == 0 ? INFINITY : NAN;
  } else if (field == 0) {
    v = std::ldexp(static_cast<float>(frac), 1 - s.bias - s.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<float>(frac + (1u << s.mantissa_bits)),
                   static_cast<int>(field) - s.bias - s.mantissa_bits);
  }
  return negative ? -v : v;
}

}  // namespace tpusim
