// The evaluator's f8 types (hlo/eval/float8.h): XLA's convert rounding and overflow,
// arithmetic computed in f32 and rounded once per op, constants, total-order compare.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/float8.h"

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

// Each of XLA's eight f8 types parses, converts from and to f32 with common/float8.h's one
// rounding (checked there against ml_dtypes), and refuses a constant past its largest finite value.
TEST(EvalFloat8Test, EveryF8TypeConvertsAsTheMinifloatCodec) {
  const std::vector<float> xs = {1.0f, 1.0625f, -2.75f, 0.1f, 15.75f, 29.0f, 250.0f,
                                 1e5f, -0.0f, 0x1p-12f, 0x1p-130f, INFINITY, NAN};
  for (int f = 0; f <= static_cast<int>(Float8Format::kE8M0FNU); ++f) {
    const auto format = static_cast<Float8Format>(f);
    const std::string t = Float8Name(format);
    const std::string text = "HloModule m\nENTRY e {\n  x = f32[13] parameter(0)\n  a = " + t +
                             "[13] convert(x)\n  ROOT b = f32[13] convert(a)\n}\n";
    const std::vector<double> got = Values(EvalHlo(text, {F32Vector(xs)}));
    ASSERT_EQ(got.size(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = Float8ToFloat(format, Float8FromDouble(format, xs[i]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << t << " x=" << xs[i];
      } else {
        EXPECT_EQ(got[i], want) << t << " x=" << xs[i];
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << t << " x=" << xs[i];
      }
    }
    const double over = Float8MaxFinite(format) + Float8HalfUlpOfMax(format);
    auto bad = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = " + t + "[] constant(" +
                                  fmt::format("{}", over) + ")\n}\n",
                              "bad.hlo");
    ASSERT_FALSE(bad.ok()) << t;
    EXPECT_NE(bad.status().message().find("out of range for " + t), std::string::npos)
        << bad.status().message();
  }
}

// convert f64 -> f8 rounds once from the f64 value, as XLA:CPU's convert does (jax.jit of
// x.astype(jnp.float8_e4m3fn / float8_e8m0fnu) on an f64 array, jaxlib 0.10.2, gave the bytes
// below); ml_dtypes and XLA's HloEvaluator round through f32 first and get 0x38, 0x3A, 0x81, 0x82.
TEST(EvalFloat8Test, ConvertFromF64RoundsOnceAsXlaCpu) {
  const std::vector<double> xs = {1.0625 + 1e-12, 1.1875 - 1e-12, 2.9999999999999996, 6 - 1e-13,
                                  3.0, 6e-39};
  auto x = Literal::Create(Shape(PrimitiveType::kF64, {static_cast<int64_t>(xs.size())}));
  ASSERT_TRUE(x.ok());
  for (size_t i = 0; i < xs.size(); ++i) x->mutable_data<double>()[i] = xs[i];
  const Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f64[6] parameter(0)
  a = f8e4m3fn[6] convert(x)
  b = f8e8m0fnu[6] convert(x)
  ua = u8[6] bitcast-convert(a)
  ub = u8[6] bitcast-convert(b)
  ROOT t = (u8[6], u8[6]) tuple(ua, ub)
})",
                            {*x});
  const uint8_t* a = r.element(0).data<uint8_t>();
  const uint8_t* b = r.element(1).data<uint8_t>();
  EXPECT_EQ(std::vector<int>(a, a + 2), (std::vector<int>{0x39, 0x39}));
  // f8e8m0fnu: 2, 4, 4 (3 is a tie: away from zero), 2^-126 (6e-39 is between 2^-127 and 2^-126).
  EXPECT_EQ(std::vector<int>(b + 2, b + 6), (std::vector<int>{0x80, 0x81, 0x81, 0x01}));
}

}  // namespace
}  // namespace tpusim::hlo
