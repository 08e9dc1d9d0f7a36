// stochastic-convert-decomposer (compiler/passes/stochastic_convert_decomposer.h): a
// stochastic-convert from a float to a signed integer becomes floor / compare-with-the-random-bits
// / add / negate / clamp ops, exactly the evaluator's values; a float target is left for the
// lowering to refuse (stochastic_convert_test.cc has that error and the device runs).
#include "compiler/passes/stochastic_convert_decomposer.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// Round up / down by the random bits, negative values, both clamps and the exact maximum.
constexpr char kKnown[] = R"(HloModule m
ENTRY e {
  x = f32[7] constant({2.25, 2.25, -2.25, -2.25, 1e10, -1e10, 127.5})
  r = u32[7] constant({0, 2147483648, 0, 2147483648, 0, 0, 0})
  ROOT o = s8[7] stochastic-convert(x, r)
})";

TEST(StochasticConvertDecomposerTest, KnownValuesBecomeElementwiseOpsWithTheSameBits) {
  StochasticConvertDecomposer pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kKnown);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kStochasticConvert), 0);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kFloor), 1);
  EXPECT_GE(testing::CountInEntry(*m, HloOpcode::kSelect), 3);  // round up, sign, two clamps
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().ToString(false), "s8[7]");
}

// (float type, random type, target type) on values scaled past the target's range.
class StochasticConvertDecomposerTypesTest
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(StochasticConvertDecomposerTypesTest, EveryTypeKeepsTheEvaluatorsBits) {
  const auto [f, u, s] = GetParam();
  const std::string F = f, U = u, S = s;
  StochasticConvertDecomposer pass;
  auto m = testing::ExpectRewriteKeepsBits(
      pass, "HloModule m\nENTRY e {\n  x = " + F + "[8,128] parameter(0)\n  r = " + U +
                "[8,128] parameter(1)\n  c = " + F + "[] constant(300.3)\n  b = " + F +
                "[8,128] broadcast(c), dimensions={}\n  y = " + F +
                "[8,128] multiply(x, b)\n  ROOT o = " + S +
                "[8,128] stochastic-convert(y, r)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kStochasticConvert), 0);
}

INSTANTIATE_TEST_SUITE_P(F32, StochasticConvertDecomposerTypesTest,
                         ::testing::Combine(::testing::Values("f32"), ::testing::Values("u32"),
                                            ::testing::Values("s8", "s16", "s32", "s64")));
INSTANTIATE_TEST_SUITE_P(Half, StochasticConvertDecomposerTypesTest,
                         ::testing::Combine(::testing::Values("bf16", "f16"),
                                            ::testing::Values("u16"),
                                            ::testing::Values("s8", "s16", "s32")));

TEST(StochasticConvertDecomposerTest, AFloatTargetIsLeftForTheLowering) {
  StochasticConvertDecomposer pass;
  testing::ExpectUnchanged(pass, R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  r = u32[8] parameter(1)
  ROOT o = bf16[8] stochastic-convert(x, r)
})");
}

}  // namespace
}  // namespace tpusim::compiler
