// Helpers for the MXU model tests: random bf16-representable values (with specials), random op
// sequences, and a reference that computes the results with a plain triple loop in program order.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "sim/core/mxu_model.h"

namespace tpusim::sim::testing {

/// A bf16-representable float: mostly moderate normals, sometimes a special (0, -0, inf, NaN, huge,
/// tiny/subnormal) when `specials` is set.
inline float RandomBf16(std::mt19937_64& rng, bool specials) {
  std::uniform_int_distribution<int> pick(0, 99);
  const int p = pick(rng);
  if (specials && p < 6) {
    static const float kSpecial[] = {0.0f,
                                     -0.0f,
                                     std::bit_cast<float>(0x7f800000u),   // +inf
                                     std::bit_cast<float>(0xff800000u),   // -inf
                                     std::bit_cast<float>(0x7fc00000u),   // NaN
                                     std::bit_cast<float>(0x7f000000u),   // 2^127
                                     std::bit_cast<float>(0x00010000u),   // bf16 subnormal
                                     std::bit_cast<float>(0x1f800000u)};  // 2^-64
    return kSpecial[std::uniform_int_distribution<int>(0, 7)(rng)];
  }
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  // Truncating to the top 16 bits gives a bf16 value.
  return std::bit_cast<float>(std::bit_cast<uint32_t>(u(rng)) & 0xffff0000u);
}

inline std::vector<float> RandomBf16s(std::mt19937_64& rng, int64_t count, bool specials) {
  std::vector<float> v(count);
  for (float& x : v) x = RandomBf16(rng, specials);
  return v;
}

inline std::vector<int8_t> RandomInt8s(std::mt19937_64& rng, int64_t count) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(count);
  for (int8_t& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

/// The reference: what the ops compute, as a plain triple loop in program order (the numerics
/// contract of mxu_model.h, written independently of both models). Accumulators are [rows, cols]
/// 32-bit words.
class MxuReference {
 public:
  MxuReference(const MxuArrayConfig& config, int64_t acc_rows)
      : config_(config), acc_(acc_rows * config.cols, 0), f32_(acc_rows * config.cols, false) {}

  void Apply(const MxuOp& op) {
    if (op.kind == MxuOp::Kind::kLoadWeights) {
      auto tile = std::make_shared<MxuOp>(op);
      if (config_.weight_buffers == 2) {
        shadow_ = tile;
      } else {
        active_ = tile;
      }
      return;
    }
    if (config_.weight_buffers == 2 && op.swap_weights) active_ = shadow_;
    const MxuOp& w = *active_;
    for (int64_t m = 0; m < op.m; ++m) {
      for (int64_t n = 0; n < w.n; ++n) {
        uint32_t& word = acc_[(op.acc_row + m) * config_.cols + n];
        f32_[(op.acc_row + m) * config_.cols + n] = op.numerics == MxuNumerics::kBf16;
        if (op.numerics == MxuNumerics::kBf16) {
          float s = 0.0f;
          for (int64_t k = 0; k < op.k; ++k) {
            // Weight rows beyond the tile's K are the zero padding.
            const float wk = k < w.k ? w.f32[k * w.n + n] : 0.0f;
            const float product = op.f32[m * op.k + k] * wk;
            s = s + product;
          }
          word = op.accumulate ? std::bit_cast<uint32_t>(std::bit_cast<float>(word) + s)
                               : std::bit_cast<uint32_t>(s);
        } else {
          uint32_t s = 0;
          for (int64_t k = 0; k < op.k; ++k) {
            const int32_t wk = k < w.k ? w.s8[k * w.n + n] : 0;
            s += static_cast<uint32_t>(static_cast<int32_t>(op.s8[m * op.k + k]) * wk);
          }
          word = op.accumulate ? word + s : s;
        }
      }
    }
  }
  uint32_t word(int64_t row, int64_t col) const { return acc_[row * config_.cols + col]; }
  /// Whether the word was last written in bf16 mode (an f32 result).
  bool is_f32(int64_t row, int64_t col) const { return f32_[row * config_.cols + col]; }

 private:
  MxuArrayConfig config_;
  std::shared_ptr<const MxuOp> shadow_, active_;
  std::vector<uint32_t> acc_;
  std::vector<bool> f32_;
};

/// Equal bits, or (for f32 words) both NaN: IEEE 754 does not say which NaN an operation returns
/// (x86 gives 0xffc00000 for inf * 0 and otherwise the first NaN operand, and the compiler may swap
/// the operands of a commutative + or *), so NaN payload and sign are not part of the numerics
/// contract.
inline bool SameResult(uint32_t a, uint32_t b, bool is_f32) {
  if (a == b) return true;
  auto is_nan = [](uint32_t w) {
    return (w & 0x7f800000u) == 0x7f800000u && (w & 0x007fffffu) != 0;
  };
  return is_f32 && is_nan(a) && is_nan(b);
}

}  // namespace tpusim::sim::testing
