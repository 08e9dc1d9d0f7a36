// The VPU's integer arithmetic (isa/numerics_int.cc): XLA's rules for division by zero, MIN / -1,
// shifts past the width, wrap-around in each type's own width, and the int <-> float conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

// XLA's integer division: x / 0 = -1 and x % 0 = x, truncation toward zero; pow by squaring;
// a value normalized to s8 wraps.
TEST(NumericsInt, DivisionRemainderAndPowFollowXla) {
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, 7, 0, DType::kS32), -1);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, -7, 2, DType::kS32), -3);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kRem, -7, 2, DType::kS32), -1);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kRem, 5, 0, DType::kS32), 5);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kPow, 3, 4, DType::kS32), 81);
  EXPECT_EQ(NormalizeInt(200, DType::kS8), -56);  // 200 - 256
}

TEST(NumericsInt, FloatToIntRoundsTowardZeroAndSaturates) {
  EXPECT_EQ(FloatToInt(std::nanf(""), DType::kS32), 0);
  EXPECT_EQ(FloatToInt(-2.9f, DType::kS32), -2);  // toward zero
  EXPECT_EQ(FloatToInt(3e9f, DType::kS32), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(FloatToInt(-3e9f, DType::kS32), std::numeric_limits<int32_t>::min());
}

// float -> narrow int saturates to the type's range; shifts act on the type's own width.
TEST(NumericsInt, NarrowIntegersSaturateAndShiftInTheirWidth) {
  EXPECT_EQ(FloatToInt(-5.0f, DType::kU8), 0);
  EXPECT_EQ(FloatToInt(300.0f, DType::kU8), 255);
  EXPECT_EQ(FloatToInt(-40000.0f, DType::kS16), -32768);
  EXPECT_EQ(FloatToInt(70000.0f, DType::kU16), 65535);
  EXPECT_EQ(FloatToInt(70000.0f, DType::kS32), 70000);
  // s16 -1 shrl 1 = 0x7FFF; u16 0x8000 shra 1 = 0xC000 (XLA shifts on the type's width).
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, -1, 1, DType::kS16), 0x7FFF);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, 0x8000, 1, DType::kU16), 0xC000);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, -1, 1, DType::kS16), -2);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, -1, 1, DType::kS32), 0x7FFFFFFF);
}

// u32 / s64 / u64 compute in their own width (no narrowing to s32): unsigned compares, divides
// and shifts, 64-bit wrap-around, saturating float -> int, one rounding int -> float.
TEST(NumericsInt, WideIntegersComputeInTheirOwnWidth) {
  constexpr int64_t k3e9 = 3000000000;
  // u32: values >= 2^31 are large, not negative.
  EXPECT_TRUE(CompareI(CompareOp::kGt, k3e9, 5, DType::kU32));
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, k3e9, 2, DType::kU32), 1500000000);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kAdd, k3e9, k3e9, DType::kU32), 6000000000 - (int64_t{1} << 32));
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, k3e9, 1, DType::kU32), 1500000000);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, 0x80000000, 4, DType::kU32), 0xF8000000);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, 7, 0, DType::kU32), 0xFFFFFFFF);  // all ones
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kMax, k3e9, 1, DType::kU32), k3e9);
  // s64: no wrap at 32 bits; MIN / -1 = MIN; shifts up to 63.
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kAdd, k3e9, k3e9, DType::kS64), 6000000000);
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, kMin64, -1, DType::kS64), kMin64);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kRem, kMin64, -1, DType::kS64), 0);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kMul, kMin64, 2, DType::kS64), 0);  // wraps
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, 1, 40, DType::kS64), int64_t{1} << 40);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, 1, 64, DType::kS64), 0);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, -256, 70, DType::kS64), -1);
  EXPECT_TRUE(CompareI(CompareOp::kLt, -1, 0, DType::kS64));
  // u64: the top bit is a value bit.
  const int64_t top = kMin64;  // u64 2^63
  EXPECT_TRUE(CompareI(CompareOp::kGt, top, 1, DType::kU64));
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, top, 63, DType::kU64), 1);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kDiv, -1, 2, DType::kU64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ApplyUnaryI(UnaryOp::kAbs, top, DType::kU64), top);
  EXPECT_EQ(ApplyUnaryI(UnaryOp::kSign, top, DType::kU64), 1);
  EXPECT_EQ(ReduceI(ReduceOp::kMax, 1, top, DType::kU64), top);
  // float -> int saturates to the type's range; int -> float rounds once.
  EXPECT_EQ(FloatToInt(5e9f, DType::kU32), 0xFFFFFFFF);
  EXPECT_EQ(FloatToInt(-1.0f, DType::kU64), 0);
  EXPECT_EQ(FloatToInt(1e19f, DType::kS64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(FloatToInt(-1e19f, DType::kS64), kMin64);
  EXPECT_EQ(FloatToInt(1e19f, DType::kU64), static_cast<int64_t>(static_cast<uint64_t>(1e19f)));
  EXPECT_EQ(FloatToInt(2e19f, DType::kU64), -1);  // all ones
  EXPECT_EQ(IntToFloat(k3e9, DType::kU32, DType::kF32), 3e9f);
  EXPECT_EQ(IntToFloat(-1, DType::kU64, DType::kF32), 18446744073709551616.0f);
  // 2^24 + 2^16 + 1 -> bf16: one rounding up to 2^24 + 2^17 (through f32, 2^24 + 2^16 is a tie
  // that rounds to even, 2^24).
  EXPECT_EQ(IntToFloat((1 << 24) + (1 << 16) + 1, DType::kS32, DType::kBF16),
            static_cast<float>((1 << 24) + (1 << 17)));
}

}  // namespace
}  // namespace tpusim::isa
