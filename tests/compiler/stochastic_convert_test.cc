// stochastic-convert from every float type the device holds to every signed integer type, through
// stochastic-convert-decomposer and the VPU, bit for bit the evaluator's; the evaluator's rounding
// rule on known values; a float target (which XLA's decomposer refuses) a located error.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

// (float type, its random type, target type); the operand is scaled past the target's range and
// given fractions, so rounding up, down, negation and both clamps all occur.
class StochasticConvertTest
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(StochasticConvertTest, DecomposedOpsMatchTheEvaluatorBitForBit) {
  const auto [f, u, s] = GetParam();
  const std::string F = f, U = u, S = s;
  ExpectSameBits("HloModule m\nENTRY e {\n  x = " + F + "[8,128] parameter(0)\n  r = " + U +
                 "[8,128] parameter(1)\n  c = " + F + "[] constant(300.3)\n  b = " + F +
                 "[8,128] broadcast(c), dimensions={}\n  y = " + F +
                 "[8,128] multiply(x, b)\n  ROOT o = " + S +
                 "[8,128] stochastic-convert(y, r)\n}\n");
}

INSTANTIATE_TEST_SUITE_P(Types, StochasticConvertTest,
                         ::testing::Combine(::testing::Values("f32"), ::testing::Values("u32"),
                                            ::testing::Values("s8", "s16", "s32", "s64")));
INSTANTIATE_TEST_SUITE_P(HalfTypes, StochasticConvertTest,
                         ::testing::Combine(::testing::Values("bf16", "f16"),
                                            ::testing::Values("u16"),
                                            ::testing::Values("s8", "s16", "s32")));

TEST(StochasticConvertEvaluatorTest, RoundsUpWhenTheRandomBitsAreBelowTheFraction) {
  auto m = testing::Parse(R"(HloModule m
ENTRY e {
  x = f32[7] constant({2.25, 2.25, -2.25, -2.25, 1e10, -1e10, 127.5})
  r = u32[7] constant({0, 2147483648, 0, 2147483648, 0, 0, 0})
  ROOT o = s8[7] stochastic-convert(x, r)
})");
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto out = ev.Evaluate(*m, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  // 0.25 * 2^32 = 2^30: 0 < 2^30 rounds up, 2^31 does not; 1e10 and -1e10 clamp; 127.5 >= 127.
  const int8_t* v = out->data<int8_t>();
  EXPECT_EQ(std::vector<int>(v, v + 7), (std::vector<int>{3, 2, -3, -2, 127, -128, 127}));
}

TEST(StochasticConvertErrorTest, AFloatTargetIsALocatedErrorSayingWhatIsSupported) {
  auto m = testing::Parse(R"(HloModule m
ENTRY e {
  x = f32[8,128] parameter(0)
  r = u32[8,128] parameter(1)
  ROOT o = bf16[8,128] stochastic-convert(x, r)
})");
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, testing::Config("tiny"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("test.hlo:5:"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("%o (stochastic-convert)"), std::string::npos);
  EXPECT_NE(c.status().message().find("to a signed integer"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
