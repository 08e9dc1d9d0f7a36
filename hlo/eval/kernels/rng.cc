#include "hlo/eval/kernels/rng.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "common/philox.h"
#include "hlo/eval/kernels/rng_xla.h"

namespace tpusim::hlo {

StatusOr<Literal> RngBitGenerator(const Literal& state, const Shape& out,
                                  RandomAlgorithm algorithm, const KernelOptions& options) {
  if (algorithm != RandomAlgorithm::kDefault) {
    return XlaRngBitGenerator(state, out, algorithm, options);
  }
  if (!out.IsTuple() || out.tuple_shapes_size() != 2 ||
      state.element_type() != PrimitiveType::kU64 || state.element_count() < 2 ||
      !out.tuple_shapes(0).Compatible(state.shape())) {
    return InvalidArgument(
        fmt::format("rng-bit-generator: state {} / result {} are not (u64[n>=2], "
                    "(u64[n], bits))",
                    state.shape().ToString(false), out.ToString(false)));
  }
  const Shape& vs = out.tuple_shapes(1);
  const int bits = BitWidth(vs.element_type());
  if (!IsInteger(vs.element_type()) || (bits != 32 && bits != 64)) {
    return Unimplemented(fmt::format("rng-bit-generator producing {} (32/64-bit integers only)",
                                     vs.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal values, Literal::Create(vs, options.max_bytes));
  const uint64_t* st = state.data<uint64_t>();
  std::array<uint32_t, 2> key{static_cast<uint32_t>(st[0]), static_cast<uint32_t>(st[0] >> 32)};
  const int64_t n = values.element_count();
  const int64_t per_block = bits == 32 ? 4 : 2;
  const int64_t blocks = (n + per_block - 1) / per_block;
  uint8_t* dst = values.mutable_raw();
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t c = st[1] + static_cast<uint64_t>(b);
    std::array<uint32_t, 4> r =
        Philox4x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
                    static_cast<uint32_t>(b >> 32), 0u},
                   key);
    for (int64_t j = 0; j < per_block; ++j) {
      int64_t i = b * per_block + j;
      if (i >= n) break;
      if (bits == 32) {
        std::memcpy(dst + i * 4, &r[static_cast<size_t>(j)], 4);
      } else {
        uint64_t v = static_cast<uint64_t>(r[static_cast<size_t>(2 * j)]) |
                     (static_cast<uint64_t>(r[static_cast<size_t>(2 * j + 1)]) << 32);
        std::memcpy(dst + i * 8, &v, 8);
      }
    }
  }
  Literal new_state = state;
  new_state.mutable_data<uint64_t>()[1] = st[1] + static_cast<uint64_t>(blocks);
  new_state.ReshapeInPlace(out.tuple_shapes(0));
  return Literal::MakeTuple({std::move(new_state), std::move(values)});
}

int64_t RngWords(RandomDistribution distribution, const Shape& shape) {
  const int64_t n = shape.IsArray() ? shape.ElementCount() : 0;
  return distribution == RandomDistribution::kNormal ? 2 * n : n;
}

namespace {

// A float in [0, 1) from 23 random bits: [1, 2) by its bits, minus 1 (exact).
float UnitFloat(uint32_t w) { return std::bit_cast<float>((w >> 9) | 0x3F800000u) - 1.0f; }

}  // namespace

StatusOr<Literal> RngFromState(RandomDistribution distribution, const Literal& a, const Literal& b,
                               const Literal& state, const Shape& out,
                               const KernelOptions& options) {
  const PrimitiveType t = out.IsArray() ? out.element_type() : PrimitiveType::kInvalid;
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kBF16 && t != PrimitiveType::kF16) {
    return Unimplemented(fmt::format("rng producing {} (f32, bf16 and f16 only)",
                                     out.ToString(false)));
  }
  if (a.element_count() != 1 || b.element_count() != 1) {
    return InvalidArgument("rng takes scalar a and b");
  }
  const int64_t n = out.ElementCount();
  const Shape words(PrimitiveType::kU32, {RngWords(distribution, out)});
  TPUSIM_ASSIGN_OR_RETURN(Literal drawn,
                          RngBitGenerator(state, Shape::Tuple({state.shape(), words}),
                                          RandomAlgorithm::kDefault, options));
  const uint32_t* w = drawn.element(1).data<uint32_t>();
  const auto fa = static_cast<float>(a.GetAsDouble(0));
  const auto fb = static_cast<float>(b.GetAsDouble(0));
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const auto two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int64_t i = 0; i < n; ++i) {
    float r = 0.0f;
    if (distribution == RandomDistribution::kUniform) {
      const float range = fb - fa;
      const float scaled = UnitFloat(w[i]) * range;
      r = scaled + fa;
    } else {
      const float one_minus = 1.0f - UnitFloat(w[i]);
      const float radius = std::sqrt(-2.0f * std::log(one_minus));
      const float angle = two_pi * UnitFloat(w[n + i]);
      const float z = radius * std::cos(angle);
      const float scaled = z * fb;
      r = scaled + fa;
    }
    result.SetFromDouble(i, static_cast<double>(r));
  }
  return result;
}

}  // namespace tpusim::hlo
