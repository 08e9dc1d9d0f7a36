#include "compiler/lower/constant_data.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "hlo/eval/convert.h"
#include "isa/numerics.h"

namespace tpusim::compiler {
namespace {

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Round-to-nearest-even of a double to bf16 in one step (as the evaluator's DoubleToBf16), for the
// finite normal values the generator produces.
float DoubleToBf16Value(double x) {
  if (x == 0.0 || !std::isfinite(x)) return static_cast<float>(x);
  int e = 0;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  const double scale = std::ldexp(1.0, 8 - e);
  return static_cast<float>(std::nearbyint(x * scale) / scale);
}

void Put(std::string& out, int64_t i, const void* p, int64_t n) {
  std::memcpy(out.data() + i * n, p, static_cast<size_t>(n));
}

void StoreFloat(std::string& out, int64_t i, isa::DType t, double v, bool bf16_direct) {
  switch (t) {
    case isa::DType::kF32: {
      float f = static_cast<float>(v);
      Put(out, i, &f, 4);
      break;
    }
    case isa::DType::kBF16: {
      uint16_t b = isa::F32ToBf16Bits(bf16_direct ? DoubleToBf16Value(v) : static_cast<float>(v));
      Put(out, i, &b, 2);
      break;
    }
    case isa::DType::kF16: {  // one rounding from the double, as the evaluator's DoubleToF16
      const auto f = static_cast<float>(hlo::RoundToFloatFormat(v, 10, -14, 15));
      uint16_t h = isa::F32ToF16Bits(f);  // exact: f is an f16 value (or inf / NaN)
      Put(out, i, &h, 2);
      break;
    }
    case isa::DType::kF64:
      Put(out, i, &v, 8);  // the evaluator's f64 value
      break;
    case isa::DType::kF8E4M3FN:
    case isa::DType::kF8E5M2:
    case isa::DType::kF8E4M3:
    case isa::DType::kF8E3M4:
    case isa::DType::kF8E4M3FNUZ:
    case isa::DType::kF8E5M2FNUZ:
    case isa::DType::kF8E4M3B11FNUZ:
    case isa::DType::kF8E8M0FNU: {  // one rounding from the double, as hlo/eval/float8.h
      uint8_t b = Float8FromDouble(isa::Float8FormatOf(t), v);
      Put(out, i, &b, 1);
      break;
    }
    default:
      break;
  }
}

// Element i of type t (an integer or pred): v's low bits (two's-complement wrap, as the
// evaluator's convert; pred: v != 0).
void StoreInt(std::string& out, int64_t i, isa::DType t, int64_t v) {
  isa::StoreInt(out.data() + i * isa::DTypeBytes(t), t, v);
}

}  // namespace

StatusOr<std::string> ConstantBytes(const hlo::HloInstruction& inst, isa::DType dtype) {
  const hlo::Shape& shape = inst.shape();
  const int64_t n = shape.ElementCount();
  const int64_t eb = isa::DTypeBytes(dtype);
  std::string out(static_cast<size_t>(n * eb), '\0');
  const hlo::LiteralValues& lit = inst.literal();
  const bool is_float = hlo::IsFloatingPoint(shape.element_type());
  if (lit.elided) {
    uint64_t state = kElidedConstantSeed ^ Fnv1a64(inst.name());
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t bits = SplitMix64(state);
      if (shape.element_type() == hlo::PrimitiveType::kPred) {
        StoreInt(out, i, dtype, (bits >> 63) != 0 ? 1 : 0);
      } else if (is_float) {
        const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
        StoreFloat(out, i, dtype, 2.0 * u - 1.0, /*bf16_direct=*/true);
      } else {
        StoreInt(out, i, dtype, static_cast<int64_t>(bits >> 60) - 8);
      }
    }
    return out;
  }
  const size_t have = is_float ? lit.float_values.size() : lit.int_values.size();
  if (static_cast<int64_t>(have) != n) {
    return InvalidArgument("constant %" + inst.name() + " has " + std::to_string(have) +
                           " values for " + shape.ToString(false));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (is_float) {
      StoreFloat(out, i, dtype, lit.float_values[static_cast<size_t>(i)], /*bf16_direct=*/true);
    } else {
      StoreInt(out, i, dtype, lit.int_values[static_cast<size_t>(i)]);
    }
  }
  return out;
}

}  // namespace tpusim::compiler
