// rng and rng-get-and-update-state through rng-expander and rng-state-assignment: bit for bit the
// evaluator's generator (hlo/eval/kernels/rng.h) for every float type and both distributions, in
// loops whose trips each draw a new state; the values have the distribution asked for; the states
// follow the deltas in order.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

class RngExpanderTest
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

// Two rngs in one module (the second draws after the first) and one fed by a computed bound.
TEST_P(RngExpanderTest, ValuesAreTheEvaluatorsBitForBit) {
  const auto [t, dims, dist] = GetParam();
  const std::string T = t, D = dims, R = dist;
  ExpectSameBits("HloModule m\nENTRY e {\n  p = " + T + "[] parameter(0)\n  a = " + T +
                     "[] constant(-1.5)\n  b = " + T + "[] constant(3)\n  c = " + T +
                     "[] add(b, p)\n  r1 = " + T + "[" + D + "] rng(a, b), distribution=" + R +
                     "\n  r2 = " + T + "[" + D + "] rng(a, c), distribution=" + R +
                     "\n  ROOT t = (" + T + "[" + D + "], " + T + "[" + D + "]) tuple(r1, r2)\n}\n",
                 "tpu-v4");
}

INSTANTIATE_TEST_SUITE_P(
    Types, RngExpanderTest,
    ::testing::Combine(::testing::Values("f32", "bf16", "f16"), ::testing::Values("8,128", "3,5,7"),
                       ::testing::Values("rng_uniform", "rng_normal")));

// A while loop unrolled by while-lowering: every trip draws its own state, in the evaluator's
// order.
TEST(RngExpanderLoopTest, EachUnrolledTripDrawsANewState) {
  ExpectSameBits(R"(HloModule m
c {
  s = (s32[], f32[8,128]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
b {
  s = (s32[], f32[8,128]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,128] get-tuple-element(s), index=1
  o = s32[] constant(1)
  i1 = s32[] add(i, o)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[8,128] rng(lo, hi), distribution=rng_uniform
  n = f32[8,128] add(x, u)
  ROOT t = (s32[], f32[8,128]) tuple(i1, n)
}
ENTRY e {
  p = f32[8,128] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8,128]) tuple(z, p)
  w = (s32[], f32[8,128]) while(t), condition=c, body=b
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  after = f32[8,128] rng(lo, hi), distribution=rng_uniform
  r = f32[8,128] get-tuple-element(w), index=1
  ROOT s = f32[8,128] subtract(r, after)
})",
                 "tpu-v4");
}

hlo::Literal Evaluate(const std::string& text) {
  auto m = testing::Parse(text);
  EXPECT_NE(m, nullptr);
  if (m == nullptr) return {};
  hlo::Evaluator ev;
  auto out = ev.Evaluate(*m, {});
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(out).value() : hlo::Literal();
}

TEST(RngDistributionTest, UniformStaysInItsRangeAndNormalHasItsMoments) {
  const hlo::Literal u = Evaluate(R"(HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(5)
  ROOT r = f32[65536] rng(a, b), distribution=rng_uniform
})");
  ASSERT_EQ(u.element_count(), 65536);
  double sum = 0, lo = 1e9, hi = -1e9;
  for (int64_t i = 0; i < u.element_count(); ++i) {
    const double v = u.GetAsDouble(i);
    sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
  }
  EXPECT_GE(lo, 2.0);
  EXPECT_LT(hi, 5.0);
  EXPECT_NEAR(sum / 65536, 3.5, 0.02);  // sigma of the mean: 0.87 / 256 = 0.0034
  const hlo::Literal n = Evaluate(R"(HloModule m
ENTRY e {
  mu = f32[] constant(1)
  sigma = f32[] constant(2)
  ROOT r = f32[65536] rng(mu, sigma), distribution=rng_normal
})");
  double s1 = 0, s2 = 0;
  int64_t beyond_3_sigma = 0;
  for (int64_t i = 0; i < n.element_count(); ++i) {
    const double v = n.GetAsDouble(i);
    s1 += v, s2 += v * v;
    if (std::fabs(v - 1) > 6) ++beyond_3_sigma;
  }
  const double mean = s1 / 65536, var = s2 / 65536 - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.05);  // sigma of the mean: 2 / 256 = 0.008
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.05);
  EXPECT_NEAR(static_cast<double>(beyond_3_sigma) / 65536, 0.0027, 0.0015);
}

TEST(RngStateTest, StatesAdvanceByTheDeltasInOrder) {
  const std::string text = R"(HloModule m
ENTRY e {
  s0 = u64[2] rng-get-and-update-state(), delta=4
  s1 = u64[2] rng-get-and-update-state(), delta=6
  s2 = u64[2] rng-get-and-update-state(), delta=1
  ROOT t = (u64[2], u64[2], u64[2]) tuple(s0, s1, s2)
})";
  const hlo::Literal v = Evaluate(text);
  ASSERT_TRUE(v.IsTuple());
  EXPECT_EQ(v.element(0).data<uint64_t>()[1], 0u);
  EXPECT_EQ(v.element(1).data<uint64_t>()[1], 4u);
  EXPECT_EQ(v.element(2).data<uint64_t>()[1], 10u);
  ExpectSameBits(text, "tiny");
}

TEST(RngErrorTest, IntegerRngIsALocatedErrorSayingWhatIsSupported) {
  auto m = testing::Parse(R"(HloModule m
ENTRY e {
  a = s32[] constant(0)
  b = s32[] constant(10)
  ROOT r = s32[8,128] rng(a, b), distribution=rng_uniform
})");
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, testing::Config("tiny"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("test.hlo:5:"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("f32, bf16 or f16"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
