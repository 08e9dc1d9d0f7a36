#include "hlo/eval/convert.h"

#include <cmath>

namespace tpusim::hlo {

double RoundToFloatFormat(double x, int mantissa_bits, int min_exp, int max_exp) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
  int e = std::ilogb(x);         // |x| = 1.f * 2^e
  if (e < min_exp) e = min_exp;  // subnormal range: fixed quantum 2^(min_exp - mantissa_bits)
  // The quantum (spacing of representable values) at this exponent. Scaling by a power of two is
  // exact, so nearbyint (round-half-even in the default FP environment) does the one rounding.
  double scaled = std::ldexp(x, mantissa_bits - e);
  double r = std::ldexp(std::nearbyint(scaled), e - mantissa_bits);
  // Largest finite: (2 - 2^-m) * 2^max_exp. Anything rounding above it overflows to inf.
  double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exp);
  if (std::fabs(r) > max_finite) return std::copysign(HUGE_VAL, x);
  return r;
}

}  // namespace tpusim::hlo
