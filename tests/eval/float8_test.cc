// The evaluator's f8e4m3fn and f8e5m2 (hlo/eval/float8.h): XLA's convert rounding and overflow,
// arithmetic computed in f32 and rounded once per op, constants, total-order compare.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::Values;

Literal F32Vector(const std::vector<float>& v) {
  auto lit = Literal::Create(Shape(PrimitiveType::kF32, {static_cast<int64_t>(v.size())}));
  EXPECT_TRUE(lit.ok());
  for (size_t i = 0; i < v.size(); ++i) lit->mutable_data<float>()[i] = v[i];
  return std::move(lit).value();
}

TEST(EvalFloat8Test, ConvertRoundsToNearestEvenAndOverflowsAsXla) {
  const char* kText = R"(
HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  a = f8e4m3fn[6] convert(x)
  b = f8e5m2[6] convert(x)
  fa = f32[6] convert(a)
  fb = f32[6] convert(b)
  ROOT t = (f32[6], f32[6]) tuple(fa, fb)
})";
  Literal r = EvalHlo(kText, {F32Vector({1.0625f, 1.375f, 464.0f, 465.0f, 61440.0f, -0x1p-10f})});
  const std::vector<double> a = Values(r.element(0));
  const std::vector<double> b = Values(r.element(1));
  EXPECT_EQ(a[0], 1.0);    // tie to even
  EXPECT_EQ(a[1], 1.375);  // exact in e4m3fn
  EXPECT_EQ(a[2], 448.0);  // a tie to the even largest finite
  EXPECT_TRUE(std::isnan(a[3]));  // overflow: NaN, e4m3fn has no infinity
  EXPECT_TRUE(std::isnan(a[4]));
  EXPECT_EQ(a[5], 0.0);    // half the smallest subnormal: a tie to zero
  EXPECT_TRUE(std::signbit(a[5]));
  EXPECT_EQ(b[0], 1.0);
  EXPECT_EQ(b[1], 1.5);    // tie to even
  EXPECT_EQ(b[2], 448.0);
  EXPECT_EQ(b[4], INFINITY);  // e5m2 overflows to inf
  EXPECT_EQ(b[5], -0x1p-10);  // a normal e5m2 value
}

TEST(EvalFloat8Test, ArithmeticRoundsOncePerOp) {
  // 1.125 * 1.125 = 1.265625 -> e4m3fn 1.25; (1.25 + 0.0625) = 1.3125 -> tie to even 1.25.
  const char* kText = R"(
HloModule m
ENTRY e {
  c = f8e4m3fn[] constant(1.125)
  s = f8e4m3fn[] constant(0.0625)
  m = f8e4m3fn[] multiply(c, c)
  ROOT a = f8e4m3fn[] add(m, s)
})";
  Literal r = EvalHlo(kText);
  EXPECT_EQ(r.element_type(), PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(r.GetAsDouble(0), 1.25);
}

TEST(EvalFloat8Test, TotalOrderCompareOrdersSignedZerosAndNan) {
  const char* kText = R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  a = f8e5m2[3] convert(x)
  b = f8e5m2[3] convert(y)
  ROOT c = pred[3] compare(a, b), direction=LT, type=TOTALORDER
})";
  Literal r = EvalHlo(kText, {F32Vector({-0.0f, 1.0f, -NAN}), F32Vector({0.0f, NAN, -INFINITY})});
  EXPECT_EQ(Values(r), (std::vector<double>{1, 1, 1}));
}

}  // namespace
}  // namespace tpusim::hlo
