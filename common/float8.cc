#include "common/float8.h"

#include <array>
#include <cmath>

namespace tpusim {
namespace {

constexpr int kNumFormats = static_cast<int>(Float8Format::kE8M0FNU) + 1;

// The bits of NaN with sign bit `sign` (0 or 0x80; ignored where the format has one NaN).
uint8_t NanBits(const Float8Spec& s, uint8_t sign) {
  switch (s.nan) {
    case Float8Nan::kIeee: {  // the quiet NaN: exponent all ones, top mantissa bit
      const unsigned exp_all = (1u << s.exponent_bits) - 1;
      return static_cast<uint8_t>(sign | (exp_all << s.mantissa_bits) |
                                  (1u << (s.mantissa_bits - 1)));
    }
    case Float8Nan::kAllOnes:
      return static_cast<uint8_t>(sign | 0x7F);
    case Float8Nan::kNegativeZero:
      return 0x80;
    case Float8Nan::kAllOnesByte:
      return 0xFF;
  }
  return 0xFF;
}

bool IsNanBits(const Float8Spec& s, uint8_t bits) {
  switch (s.nan) {
    case Float8Nan::kIeee: {
      const unsigned mag = bits & 0x7Fu;
      const unsigned exp_all = (1u << s.exponent_bits) - 1;
      return (mag >> s.mantissa_bits) == exp_all && (mag & ((1u << s.mantissa_bits) - 1)) != 0;
    }
    case Float8Nan::kAllOnes:
      return (bits & 0x7F) == 0x7F;
    case Float8Nan::kNegativeZero:
      return bits == 0x80;
    case Float8Nan::kAllOnesByte:
      return bits == 0xFF;
  }
  return false;
}

}  // namespace

Float8Spec SpecOf(Float8Format format) {
  //                   sign exp man bias  inf    nan                          subn   ties_away
  switch (format) {
    case Float8Format::kE4M3FN:
      return {1, 4, 3, 7, false, Float8Nan::kAllOnes, true, false};
    case Float8Format::kE5M2:
      return {1, 5, 2, 15, true, Float8Nan::kIeee, true, false};
    case Float8Format::kE4M3:
      return {1, 4, 3, 7, true, Float8Nan::kIeee, true, false};
    case Float8Format::kE3M4:
      return {1, 3, 4, 3, true, Float8Nan::kIeee, true, false};
    case Float8Format::kE4M3FNUZ:
      return {1, 4, 3, 8, false, Float8Nan::kNegativeZero, true, false};
    case Float8Format::kE5M2FNUZ:
      return {1, 5, 2, 16, false, Float8Nan::kNegativeZero, true, false};
    case Float8Format::kE4M3B11FNUZ:
      return {1, 4, 3, 11, false, Float8Nan::kNegativeZero, true, false};
    case Float8Format::kE8M0FNU:
      return {0, 8, 0, 127, false, Float8Nan::kAllOnesByte, false, true};
  }
  return {1, 4, 3, 7, false, Float8Nan::kAllOnes, true, false};
}

const char* Float8Name(Float8Format format) {
  switch (format) {
    case Float8Format::kE4M3FN:
      return "f8e4m3fn";
    case Float8Format::kE5M2:
      return "f8e5m2";
    case Float8Format::kE4M3:
      return "f8e4m3";
    case Float8Format::kE3M4:
      return "f8e3m4";
    case Float8Format::kE4M3FNUZ:
      return "f8e4m3fnuz";
    case Float8Format::kE5M2FNUZ:
      return "f8e5m2fnuz";
    case Float8Format::kE4M3B11FNUZ:
      return "f8e4m3b11fnuz";
    case Float8Format::kE8M0FNU:
      return "f8e8m0fnu";
  }
  return "f8?";
}

double Float8MaxFinite(Float8Format format) {
  // The largest finite value of the 256 patterns, found once per format.
  static const std::array<double, kNumFormats> kMax = [] {
    std::array<double, kNumFormats> out{};
    for (int f = 0; f < kNumFormats; ++f) {
      for (int b = 0; b < 256; ++b) {
        const double v = Float8ToFloat(static_cast<Float8Format>(f), static_cast<uint8_t>(b));
        if (std::isfinite(v) && v > out[f]) out[f] = v;
      }
    }
    return out;
  }();
  return kMax[static_cast<int>(format)];
}

double Float8HalfUlpOfMax(Float8Format format) {
  const double max = Float8MaxFinite(format);
  return std::ldexp(1.0, std::ilogb(max) - SpecOf(format).mantissa_bits - 1);
}

uint8_t Float8FromDouble(Float8Format format, double x) {
  const Float8Spec s = SpecOf(format);
  const int m = s.mantissa_bits;
  const uint8_t sign = s.sign_bits == 1 && std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return NanBits(s, sign);
  if (s.sign_bits == 0 && (x <= 0.0 || std::signbit(x))) return NanBits(s, 0);  // no sign, no 0
  const unsigned exp_all = (1u << s.exponent_bits) - 1;
  const uint8_t overflow =
      s.has_inf ? static_cast<uint8_t>(sign | (exp_all << m)) : NanBits(s, sign);
  if (std::isinf(x)) return overflow;
  const double a = std::fabs(x);
  if (format == Float8Format::kE8M0FNU && a < 0x1p-126) {
    // As XLA's convert (XLA:CPU, and ml_dtypes for f32 inputs) narrows to f8e8m0fnu: an input
    // between 2^-127 and 2^-126 becomes 2^-126 (field 1), not the nearer 2^-127; below, 2^-127.
    return a > 0x1p-127 ? 0x01 : 0x00;
  }
  // Exponent of the smallest normal (1.0 * 2^min_exp); below it the quantum is fixed.
  const int min_exp = s.has_subnormals ? 1 - s.bias : -s.bias;
  int e = a == 0.0 ? min_exp : std::ilogb(a);
  if (e < min_exp) e = min_exp;
  // Scaling by a power of two is exact, so the one rounding is nearbyint (ties to even) or round.
  const double scaled = std::ldexp(a, m - e);
  double q = s.ties_away ? std::round(scaled) : std::nearbyint(scaled);
  if (!s.has_subnormals && q == 0.0) q = 1.0;  // no zero: the smallest value is nearest
  const double r = std::ldexp(q, e - m);
  if (r > Float8MaxFinite(format)) return overflow;
  if (r == 0.0) return s.nan == Float8Nan::kNegativeZero ? 0x00 : sign;  // fnuz: one zero
  const int re = std::ilogb(r);  // rounding may carry into the next binade
  if (re < min_exp) {            // subnormal: exponent field 0, mantissa = r / 2^(min_exp - m)
    const auto mant = static_cast<unsigned>(std::ldexp(r, m - min_exp));
    return static_cast<uint8_t>(sign | mant);
  }
  const auto frac = static_cast<unsigned>(std::ldexp(r, m - re)) - (1u << m);
  const auto field = static_cast<unsigned>(re + s.bias);
  return static_cast<uint8_t>(sign | (field << m) | frac);
}

float Float8ToFloat(Float8Format format, uint8_t bits) {
  const Float8Spec s = SpecOf(format);
  if (IsNanBits(s, bits)) return NAN;
  const int m = s.mantissa_bits;
  const bool negative = s.sign_bits == 1 && (bits & 0x80) != 0;
  const unsigned mag = s.sign_bits == 1 ? bits & 0x7Fu : bits;
  const unsigned field = mag >> m;
  const unsigned frac = mag & ((1u << m) - 1);
  float v;
  if (s.has_inf && field == (1u << s.exponent_bits) - 1) {
    v = INFINITY;  // frac == 0: NaN was handled above
  } else if (field == 0 && s.has_subnormals) {
    v = std::ldexp(static_cast<float>(frac), 1 - s.bias - m);
  } else {
    v = std::ldexp(static_cast<float>(frac + (1u << m)), static_cast<int>(field) - s.bias - m);
  }
  return negative ? -v : v;
}

}  // namespace tpusim
