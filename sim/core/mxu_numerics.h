// The MXU's arithmetic, one multiply-accumulate at a time: the contract both MXU models (and
// isa::Interpreter) follow bit for bit (mxu_model.h, DESIGN.md §4 "Numerics"). Files that include
// this header are compiled with -ffp-contract=off (sim/core/CMakeLists.txt), so `s + a * w` is a
// rounded f32 product (exact for bf16 operands) followed by a rounded f32 addition, never a fused
// multiply-add.
#pragma once

#include <bit>
#include <cstdint>

namespace tpusim::sim {

/// bf16 mode: fl32(s + a * w). The product of two bf16 values is exact in f32 (8 + 8 significand
/// bits), except where it underflows or overflows, which rounds as IEEE f32 multiplication does.
inline float MxuMacF32(float s, float a, float w) {
  const float product = a * w;
  return s + product;
}

/// int8 mode: s + a * w in int32 two's complement wrap-around (computed in uint32: no undefined
/// behaviour on overflow). The int8 x int8 product itself always fits in int32.
inline uint32_t MxuMacS32(uint32_t s, int32_t a, int32_t w) {
  return s + static_cast<uint32_t>(a * w);
}

/// The accumulator update for one result word: acc = accumulate ? fl32(acc + s) : s (f32 bits).
inline uint32_t MxuAccumulateF32(uint32_t acc, uint32_t s, bool accumulate) {
  if (!accumulate) return s;
  return std::bit_cast<uint32_t>(std::bit_cast<float>(acc) + std::bit_cast<float>(s));
}

/// The accumulator update in int8 mode: acc = accumulate ? acc + s (wrap-around) : s.
inline uint32_t MxuAccumulateS32(uint32_t acc, uint32_t s, bool accumulate) {
  return accumulate ? acc + s : s;
}

}  // namespace tpusim::sim
