#include "isa/numerics.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace tpusim::isa {
namespace {

TEST(Numerics, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 is exactly half way between bf16 1.0 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(RoundToBf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  // 1 + 3*2^-8 is half way between 1 + 2^-7 (odd) and 1 + 2^-6 (even): rounds up to 1 + 2^-6.
  EXPECT_EQ(RoundToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  // Just above the tie rounds up.
  EXPECT_EQ(RoundToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(F32ToBf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(F32ToBf16Bits(-2.0f), 0xC000);
  // The largest finite f32 rounds up to bf16 infinity.
  EXPECT_EQ(F32ToBf16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_TRUE(std::isnan(RoundToBf16(std::numeric_limits<float>::quiet_NaN())));
  // A signalling-NaN pattern whose payload lives only in the low bits stays a NaN (not inf).
  EXPECT_TRUE(std::isnan(Bf16BitsToF32(F32ToBf16Bits(std::bit_cast<float>(0x7F800001u)))));
}

TEST(Numerics, PrecisionPartsReconstructF32) {
  // x = 1 + 2^-9 + 2^-17 + 2^-20: hi = 1 (the 2^-9 bit is below bf16's 8 bits), lo = bf16(2^-9 +
  // 2^-17 + 2^-20) = 2^-9 + 2^-17 (8 significant bits from 2^-9 reach 2^-16... 2^-17 is bit 8 ->
  // tie analysis below), lolo = the rest. Check the defining identities instead of hand-rounding:
  float x = 1.0f + std::ldexp(1.0f, -9) + std::ldexp(1.0f, -17) + std::ldexp(1.0f, -20);
  float hi = Bf16Part(x, PrecisionPart::kHi), lo = Bf16Part(x, PrecisionPart::kLo),
        lolo = Bf16Part(x, PrecisionPart::kLoLo);
  EXPECT_EQ(hi, 1.0f);
  EXPECT_EQ(lo, RoundToBf16(x - hi));
  EXPECT_EQ(lolo, RoundToBf16(x - hi - lo));
  // Three bf16 parts (24 significant bits) represent any normal f32 exactly.
  EXPECT_EQ(hi + lo + lolo, x);
  // Non-finite: lo parts are 0, so a pass never turns inf into NaN by itself.
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Bf16Part(inf, PrecisionPart::kHi), inf);
  EXPECT_EQ(Bf16Part(inf, PrecisionPart::kLo), 0.0f);
  EXPECT_EQ(Bf16Part(std::numeric_limits<float>::max(), PrecisionPart::kLo), 0.0f);
}

TEST(Numerics, MxuDotRoundsAfterEveryAddInKOrder) {
  // a = [2^24, 1, 1], w = [1, 1, 1]: s = 2^24; 2^24 + 1 rounds to 2^24 (tie to even); again 2^24.
  // A wider accumulator (or a different order: 1 + 1 + 2^24 = 2^24 + 2) would give 16777218.
  float a[3] = {16777216.0f, 1.0f, 1.0f};
  float w[3] = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(MxuDotF32(a, w, 3, 1), 16777216.0f);
  float a2[3] = {1.0f, 1.0f, 16777216.0f};
  EXPECT_EQ(MxuDotF32(a2, w, 3, 1), 16777218.0f);
  // Stride: w is a column of a row-major [3, 2] matrix.
  float wm[6] = {1, 10, 2, 20, 3, 30};
  float a3[3] = {1, 1, 1};
  EXPECT_EQ(MxuDotF32(a3, wm + 1, 3, 2), 60.0f);  // 10 + 20 + 30
}

// The MXU's s32 accumulation wraps (two's complement); the s8 requantization saturates.
TEST(Numerics, MxuIntegerDotWrapsAndS8Saturates) {
  int32_t a[2] = {std::numeric_limits<int32_t>::max(), 1};
  int32_t w[2] = {1, 1};
  EXPECT_EQ(MxuDotS32(a, w, 2, 1), std::numeric_limits<int32_t>::min());  // 2^31 - 1 + 1 wraps
  EXPECT_EQ(SaturateToS8(200), 127);
  EXPECT_EQ(SaturateToS8(-300), -128);
}

// u8/s16/u16: loads widen exactly (zero- or sign-extended), stores wrap to the width.
TEST(Numerics, NarrowIntegersWidenAndWrap) {
  char b[2];
  StoreInt(b, DType::kU16, 70000);  // 70000 mod 65536
  EXPECT_EQ(LoadInt(b, DType::kU16), 4464);
  StoreInt(b, DType::kS16, 40000);
  EXPECT_EQ(LoadInt(b, DType::kS16), 40000 - 65536);
  StoreInt(b, DType::kU8, -1);
  EXPECT_EQ(LoadInt(b, DType::kU8), 255);
  EXPECT_EQ(DTypeBytes(DType::kU8), 1);
  EXPECT_EQ(DTypeBytes(DType::kS16), 2);
  EXPECT_EQ(DTypeBytes(DType::kF16), 2);
  EXPECT_TRUE(IsFloat(DType::kF16));
  EXPECT_TRUE(IsInteger(DType::kU16));
}

// u32 / s64: loads and stores at 4 and 8 bytes.
TEST(Numerics, WideIntegersLoadAndStoreInTheirWidth) {
  char b[8];
  StoreInt(b, DType::kU32, -1);
  EXPECT_EQ(LoadInt(b, DType::kU32), 0xFFFFFFFF);
  StoreInt(b, DType::kS64, -5000000000);
  EXPECT_EQ(LoadInt(b, DType::kS64), -5000000000);
  EXPECT_EQ(DTypeBytes(DType::kS64), 8);
  EXPECT_EQ(DTypeBytes(DType::kU32), 4);
}

// f64 converts as XLA's convert: one rounding to a narrower float (through f32 rounded to odd),
// binary64 values truncated to integers, integers rounded once to f64.
TEST(Numerics, F64ConvertsRoundOnce) {
  const float inf = std::numeric_limits<float>::infinity();
  // 1 + 2^-8 + 2^-40: bf16 rounds up to 1 + 2^-7; an f32 rounded to nearest first (1 + 2^-8, a
  // bf16 tie) would give 1.
  EXPECT_EQ(NarrowF64(1 + 0x1p-8 + 0x1p-40, DType::kBF16), 1.0078125f);
  EXPECT_EQ(NarrowF64(1 + 0x1p-8, DType::kBF16), 1.0f);  // an exact tie: to even
  EXPECT_EQ(NarrowF64(1 + 0x1p-11 + 0x1p-40, DType::kF16), 1.0f + 0x1p-10f);
  EXPECT_EQ(NarrowF64(1 + 0x1p-24 + 0x1p-40, DType::kF32), 1.0f + 0x1p-23f);
  EXPECT_EQ(NarrowF64(1e300, DType::kF32), inf);
  EXPECT_EQ(NarrowF64(-1e300, DType::kBF16), -inf);
  EXPECT_TRUE(std::isnan(NarrowF64(std::nan(""), DType::kF16)));
  EXPECT_EQ(FloatToInt(16777217.0, DType::kS32), 16777217);  // not an f32
  EXPECT_EQ(FloatToInt(2147483648.0, DType::kS32), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(FloatToInt(-2147483648.75, DType::kS32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(FloatToInt(0x1p53 + 2, DType::kS64), (int64_t{1} << 53) + 2);
  EXPECT_EQ(IntToF64(-1, DType::kU64), 0x1p64);  // 2^64 - 1 rounds to 2^64
  EXPECT_EQ(IntToF64((int64_t{1} << 53) + 1, DType::kS64), 0x1p53);  // a tie: to even
  EXPECT_EQ(IntToF64(-7, DType::kS32), -7.0);
}

TEST(Numerics, MaxMinPropagateNaNAndOrderZeros) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(MaxF(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(MinF(1.0f, nan)));
  EXPECT_FALSE(std::signbit(MaxF(-0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(MinF(0.0f, -0.0f)));
  EXPECT_FALSE(CompareF(CompareOp::kEq, nan, nan));
  EXPECT_TRUE(CompareF(CompareOp::kNe, nan, nan));
}

// f16 storage (issue 16): every f16 value converts to f32 and back to itself; f32 -> f16 rounds to
// nearest even like Eigen::half (an independent implementation), subnormals and overflow included.
TEST(Numerics, F16ConversionsMatchIeeeBinary16) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const float f = F16BitsToF32(b);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16BitsToF32(F32ToF16Bits(f))));
    } else {
      ASSERT_EQ(F32ToF16Bits(f), b) << h;
      EXPECT_EQ(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(b)), f) << h;
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(F32ToF16Bits(f), Eigen::numext::bit_cast<uint16_t>(Eigen::half(f))) << f;
  }
  EXPECT_EQ(F32ToF16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(F32ToF16Bits(65519.99f), 0x7BFF);
  EXPECT_EQ(F32ToF16Bits(65520.0f), 0x7C00);                // the tie rounds to even: inf
  EXPECT_EQ(F32ToF16Bits(-std::ldexp(1.0f, -25)), 0x8000);  // half the smallest subnormal: -0
  EXPECT_EQ(F32ToF16Bits(std::ldexp(1.5f, -25)), 0x0001);
}

// f8 storage (issue 16): f8e5m2 is binary16 with 8 fewer mantissa bits, so storing any f16 value
// as f8e5m2 must round its bit pattern's low byte away to nearest even (an independent rule:
// magnitude bits are monotonic in the value, and a carry into the exponent or inf is the right
// result); every f8 byte loads to a value that stores back to itself.
TEST(Numerics, F8E5m2StoreIsF16BitsRoundedToNearestEven) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = F16BitsToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    const uint32_t mag = h & 0x7FFFu, low = mag & 0xFFu;
    uint32_t q = mag >> 8;
    if (low > 0x80u || (low == 0x80u && (q & 1u) != 0)) ++q;
    if (q > 0x7Cu) q = 0x7C;  // cannot happen for f16 finite values; inf stays inf
    uint8_t b = 0;
    StoreFloat(&b, DType::kF8E5M2, f);
    ASSERT_EQ(b, static_cast<uint8_t>(((h & 0x8000u) >> 8) | q)) << h;
  }
}

TEST(Numerics, F8BytesLoadExactlyAndStoreBack) {
  for (DType t : {DType::kF8E4M3FN, DType::kF8E5M2, DType::kF8E4M3, DType::kF8E3M4,
                  DType::kF8E4M3FNUZ, DType::kF8E5M2FNUZ, DType::kF8E4M3B11FNUZ,
                  DType::kF8E8M0FNU}) {
    EXPECT_EQ(DTypeBytes(t), 1);
    EXPECT_TRUE(IsFloat(t));
    for (int i = 0; i < 256; ++i) {
      const auto b = static_cast<uint8_t>(i);
      const float f = LoadFloat(&b, t);
      uint8_t back = 0;
      StoreFloat(&back, t, f);
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(LoadFloat(&back, t)));
      } else {
        EXPECT_EQ(back, b) << Name(t) << " " << i;
      }
    }
  }
  uint8_t b = 0;
  StoreFloat(&b, DType::kF8E4M3FN, 1000.0f);  // beyond 448: NaN, e4m3fn has no infinity
  EXPECT_TRUE(std::isnan(LoadFloat(&b, DType::kF8E4M3FN)));
  StoreFloat(&b, DType::kF8E5M2, 1e6f);
  EXPECT_EQ(LoadFloat(&b, DType::kF8E5M2), INFINITY);
}

}  // namespace
}  // namespace tpusim::isa
