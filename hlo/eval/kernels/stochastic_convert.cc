#include "hlo/eval/kernels/stochastic_convert.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "hlo/eval/convert.h"

namespace tpusim::hlo {
namespace {

// `v` rounded to x's element type (the decomposition compares x with constants of its own type).
double RoundedTo(PrimitiveType t, double v) {
  switch (t) {
    case PrimitiveType::kBF16:
      return static_cast<double>(static_cast<float>(DoubleToBf16(v)));
    case PrimitiveType::kF16:
      return static_cast<double>(static_cast<float>(DoubleToF16(v)));
    case PrimitiveType::kF32:
      return static_cast<double>(static_cast<float>(v));
    default:
      return v;
  }
}

// The random operand's element i as an unsigned value.
uint64_t RandomAt(const Literal& r, int64_t i) {
  switch (BitWidth(r.element_type())) {
    case 16:
      return r.data<uint16_t>()[i];
    case 32:
      return r.data<uint32_t>()[i];
    default:
      return r.data<uint64_t>()[i];
  }
}

// convert(f, random type): saturating truncation.
uint64_t FixedPoint(double f, int bits) {
  switch (bits) {
    case 16:
      return SaturatingFloatToInt<uint16_t>(f);
    case 32:
      return SaturatingFloatToInt<uint32_t>(f);
    default:
      return SaturatingFloatToInt<uint64_t>(f);
  }
}

template <typename To>
void Round(const Literal& x, const Literal& random, Literal& out) {
  using U = std::make_unsigned_t<To>;
  const PrimitiveType xt = x.element_type();
  const int bits = BitWidth(random.element_type());
  const double scale = std::ldexp(1.0, bits);
  const double lo = RoundedTo(xt, static_cast<double>(std::numeric_limits<To>::min()));
  const double hi = RoundedTo(xt, static_cast<double>(std::numeric_limits<To>::max()));
  To* dst = out.mutable_data<To>();
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const double v = x.GetAsDouble(i);
    const double a = std::fabs(v);
    const double t = std::floor(a);
    const bool up = RandomAt(random, i) < FixedPoint((a - t) * scale, bits);
    U r = static_cast<U>(SaturatingFloatToInt<To>(t));
    if (up) r = static_cast<U>(r + 1u);
    if (v < 0) r = static_cast<U>(U{0} - r);
    To result = static_cast<To>(r);
    if (v <= lo) result = std::numeric_limits<To>::min();
    if (v >= hi) result = std::numeric_limits<To>::max();
    dst[i] = result;
  }
}

}  // namespace

StatusOr<Literal> EvaluateStochasticConvert(const Literal& x, const Literal& random,
                                            const Shape& out, const KernelOptions& options) {
  const PrimitiveType xt = x.element_type(), rt = random.element_type();
  const PrimitiveType ot = out.element_type();
  const bool ok_types = IsFloatingPoint(xt) && BitWidth(xt) >= 16 && IsUnsignedInteger(rt) &&
                        BitWidth(rt) == BitWidth(xt) && IsSignedInteger(ot) && BitWidth(ot) >= 8;
  if (!ok_types || x.shape().dimensions() != out.dimensions() ||
      random.shape().dimensions() != out.dimensions()) {
    return Unimplemented(fmt::format(
        "stochastic-convert of {} with random {} to {}: XLA defines it from a float (f16, bf16, "
        "f32, f64) with random bits of its width (u16, u16, u32, u64) to a signed integer (XLA "
        "refuses a float destination too: \"Unsupported stochastic convert\")",
        x.shape().ToString(false), random.shape().ToString(false), out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  switch (ot) {
    case PrimitiveType::kS8:
      Round<int8_t>(x, random, result);
      break;
    case PrimitiveType::kS16:
      Round<int16_t>(x, random, result);
      break;
    case PrimitiveType::kS32:
      Round<int32_t>(x, random, result);
      break;
    default:
      Round<int64_t>(x, random, result);
      break;
  }
  return result;
}

}  // namespace tpusim::hlo
