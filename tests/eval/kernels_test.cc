// Known-answer tests of elementwise semantics per type (elementwise_ops.h) through HLO text.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hlo/eval/kernels/elementwise_ops.h"
#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::Values;

TEST(ElementwiseTest, IntegerDivisionEdgeCases) {
  // XLA: x / 0 = -1 (signed), INT_MIN / -1 = INT_MIN; x % 0 = x, INT_MIN % -1 = 0.
  EXPECT_EQ(ew::Div<int32_t>(7, 0), -1);
  EXPECT_EQ(ew::Div<int32_t>(INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(ew::Div<uint32_t>(7, 0), UINT32_MAX);
  EXPECT_EQ(ew::Rem<int32_t>(7, 0), 7);
  EXPECT_EQ(ew::Rem<int32_t>(INT32_MIN, -1), 0);
  EXPECT_EQ(ew::Rem<int32_t>(-7, 2), -1);  // sign of the dividend
  EXPECT_EQ(ew::Rem<float>(-7.5f, 2.0f), -1.5f);
  EXPECT_EQ(ew::Div<int32_t>(-7, 2), -3);  // truncation toward zero
}

TEST(ElementwiseTest, ShiftsPastBitWidth) {
  EXPECT_EQ(ew::ShiftLeft<int32_t>(1, 32), 0);
  EXPECT_EQ(ew::ShiftRightLogical<int32_t>(-1, 32), 0);
  EXPECT_EQ(ew::ShiftRightArithmetic<int32_t>(-8, 40), -1);
  EXPECT_EQ(ew::ShiftRightArithmetic<int32_t>(-8, 1), -4);
  EXPECT_EQ(ew::ShiftRightLogical<int32_t>(-8, 28), 15);  // 0xFFFFFFF8 >> 28
  EXPECT_EQ(ew::ShiftLeft<int32_t>(1, -1), 0);            // negative amount = huge unsigned
}

TEST(ElementwiseTest, MaxMinPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(ew::Max(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(ew::Max(1.0f, nan)));
  EXPECT_TRUE(std::isnan(ew::Min(nan, 1.0f)));
  EXPECT_EQ(ew::Max(2.0f, 1.0f), 2.0f);
}

TEST(ElementwiseTest, IntegerPower) {
  EXPECT_EQ(ew::Pow<int32_t>(3, 4), 81);
  EXPECT_EQ(ew::Pow<int32_t>(2, -1), 0);
  EXPECT_EQ(ew::Pow<int32_t>(-1, -3), -1);
  EXPECT_EQ(ew::Pow<int32_t>(1, -3), 1);
}

TEST(ElementwiseTest, TotalOrderCompare) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // -NaN < -inf < -0 < +0 < +inf < +NaN.
  EXPECT_LT(ew::TotalOrderKey(-0.0f), ew::TotalOrderKey(0.0f));
  EXPECT_LT(ew::TotalOrderKey(-INFINITY), ew::TotalOrderKey(-0.0f));
  EXPECT_LT(ew::TotalOrderKey(INFINITY), ew::TotalOrderKey(nan));
  EXPECT_LT(ew::TotalOrderKey(-nan), ew::TotalOrderKey(-INFINITY));
  EXPECT_FALSE(ew::Compare(ComparisonDirection::kLt, false, nan, 1.0f));  // IEEE: NaN unordered
}

TEST(ElementwiseTest, UnaryOpsThroughHlo) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[4] constant({-2.5, -0.5, 0.5, 2.5})
  afz = f32[4] round-nearest-afz(x)
  even = f32[4] round-nearest-even(x)
  sg = f32[4] sign(x)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(afz, even, sg)
})");
  ASSERT_TRUE(r.IsTuple());
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{-3, -1, 1, 3}));    // half away from zero
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{-2, -0.0, 0, 2}));  // half to even
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{-1, -1, 1, 1}));
}

// reduce-precision as XLA defines it: the mantissa rounds at the value's own exponent, then a
// reduced exponent flushes what lies below the format's smallest normal (no subnormals) and
// saturates what lies above its largest finite. e4m2: smallest normal 2^-6, largest 1.75 * 2^7.
TEST(ElementwiseTest, ReducePrecisionFlushesBelowTheReducedFormatsSmallestNormal) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[8] constant({0.0078125, 0.0147, -0.0117, 0.0155, 200, 240, -1000, 3.3})
  n = f32[2] constant({nan, -nan})
  h = f16[2] constant({6e-07, 3e-05})
  a = f32[8] reduce-precision(x), exponent_bits=4, mantissa_bits=2
  b = f32[2] reduce-precision(n), exponent_bits=4, mantissa_bits=0
  c = f16[2] reduce-precision(h), exponent_bits=5, mantissa_bits=10
  ROOT t = (f32[8], f32[2], f16[2]) tuple(a, b, c)
})");
  ASSERT_TRUE(r.IsTuple());
  const std::vector<double> a = Values(r.element(0));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(a, (std::vector<double>{0, 0.015625, 0, 0.015625, 192, inf, -inf, 3.5}));
  EXPECT_TRUE(std::signbit(a[2]));  // -0.0117 -> 1.5 * 2^-7 -> -0
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{inf, inf}));  // NaN without mantissa
  // f16 keeps its own subnormals when the exponent is not reduced (5 bits = f16's).
  const std::vector<double> c = Values(r.element(2));
  EXPECT_NE(c[0], 0.0);
  EXPECT_NEAR(c[0], 6e-07, 3e-08);
  EXPECT_NEAR(c[1], 3e-05, 3e-08);
}

TEST(ElementwiseTest, TranscendentalsAndPopcnt) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[3] constant({0, 1, -8})
  i = s32[3] constant({0, 7, -1})
  l = f32[3] logistic(x)
  c = f32[3] cbrt(x)
  p = s32[3] popcnt(i)
  f = pred[3] is-finite(x)
  ROOT t = (f32[3], f32[3], s32[3], pred[3]) tuple(l, c, p, f)
})");
  ASSERT_TRUE(r.IsTuple());
  EXPECT_FLOAT_EQ(r.element(0).GetAsDouble(0), 0.5);
  EXPECT_FLOAT_EQ(r.element(0).GetAsDouble(1), 1.0 / (1.0 + std::exp(-1.0)));
  EXPECT_FLOAT_EQ(r.element(1).GetAsDouble(2), -2.0);
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{0, 3, 32}));
  EXPECT_EQ(Values(r.element(3)), (std::vector<double>{1, 1, 1}));
}

TEST(ElementwiseTest, InverseTrigonometricAndHyperbolicFunctions) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[3] constant({0, 0.5, -1})
  y = f32[3] constant({1, 2, 10})
  ac = f32[3] acos(x)
  as = f32[3] asin(x)
  at = f32[3] atan(x)
  ath = f32[3] atanh(x)
  ach = f32[3] acosh(y)
  ash = f32[3] asinh(x)
  ch = f32[3] cosh(x)
  sh = f32[3] sinh(x)
  ROOT t = (f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], f32[3]) tuple(ac, as, at, ath, ach, ash, ch, sh)
})");
  ASSERT_TRUE(r.IsTuple());
  const double pi = std::acos(-1.0);
  EXPECT_FLOAT_EQ(r.element(0).GetAsDouble(0), pi / 2);
  EXPECT_FLOAT_EQ(r.element(0).GetAsDouble(1), pi / 3);
  EXPECT_FLOAT_EQ(r.element(0).GetAsDouble(2), pi);
  EXPECT_FLOAT_EQ(r.element(1).GetAsDouble(1), pi / 6);
  EXPECT_FLOAT_EQ(r.element(2).GetAsDouble(2), -pi / 4);
  EXPECT_FLOAT_EQ(r.element(3).GetAsDouble(1), 0.5 * std::log(3.0));
  EXPECT_TRUE(std::isinf(r.element(3).GetAsDouble(2)));  // atanh(-1) = -inf
  EXPECT_EQ(r.element(4).GetAsDouble(0), 0.0);             // acosh(1)
  EXPECT_FLOAT_EQ(r.element(4).GetAsDouble(2), std::log(10.0 + std::sqrt(99.0)));
  EXPECT_FLOAT_EQ(r.element(5).GetAsDouble(2), -std::log(1.0 + std::sqrt(2.0)));
  EXPECT_FLOAT_EQ(r.element(6).GetAsDouble(2), (std::exp(1.0) + std::exp(-1.0)) / 2);
  EXPECT_FLOAT_EQ(r.element(7).GetAsDouble(2), -(std::exp(1.0) - std::exp(-1.0)) / 2);
}

TEST(ElementwiseTest, MulhiIsTheHighHalfOfTheDoubleWidthProduct) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  a = s32[3] constant({65536, -1, 2147483647})
  b = s32[3] constant({65536, 1, 2147483647})
  ua = u32[2] constant({4294967295, 65536})
  ub = u32[2] constant({4294967295, 65536})
  la = s64[2] constant({-1, 4294967296})
  lb = s64[2] constant({5, 4294967296})
  qa = u64[1] constant({18446744073709551615})
  qb = u64[1] constant({18446744073709551615})
  s8a = s8[2] constant({-128, 100})
  s8b = s8[2] constant({-128, 100})
  m = s32[3] mulhi(a, b)
  u = u32[2] mulhi(ua, ub)
  l = s64[2] mulhi(la, lb)
  q = u64[1] mulhi(qa, qb)
  n = s8[2] mulhi(s8a, s8b)
  ROOT t = (s32[3], u32[2], s64[2], u64[1], s8[2]) tuple(m, u, l, q, n)
})");
  ASSERT_TRUE(r.IsTuple());
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{1, -1, 1073741823}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{4294967294.0, 1}));
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{-1, 1}));
  EXPECT_EQ(r.element(3).data<uint64_t>()[0], uint64_t{18446744073709551614u});
  EXPECT_EQ(Values(r.element(4)), (std::vector<double>{64, 39}));
}

TEST(ElementwiseTest, Bf16AddRoundsOnce) {
  // bf16 1 + bf16 2^-8: exact sum 1.00390625 is a tie -> 1.0 (even). Computed in f32, rounded once.
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  a = bf16[] constant(1)
  b = bf16[] constant(0.00390625)
  ROOT s = bf16[] add(a, b)
})");
  EXPECT_EQ(r.GetAsDouble(0), 1.0);
}

TEST(ElementwiseTest, ClampAndSelectWithScalars) {
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(6)
  x = f32[4] constant({-1, 3, 7, 6})
  c = f32[4] clamp(lo, x, hi)
  p = pred[4] constant({true, false, true, false})
  y = f32[4] constant({10, 20, 30, 40})
  s = f32[4] select(p, c, y)
  ROOT t = (f32[4], f32[4]) tuple(c, s)
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{0, 3, 6, 6}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{0, 20, 6, 40}));
}

}  // namespace
}  // namespace tpusim::hlo
