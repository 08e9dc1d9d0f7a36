// lower-reduce-window (compiler/passes/reduce_window_lowering.h): pooling and windowed sums become
// pad + strided slices folded by the reducer — the rewrite checked on the evaluator (same bits,
// idempotent), and compiled modules on the ISA interpreter against the evaluator's reduce-window.
#include "compiler/passes/reduce_window_lowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

constexpr char kReducers[] = R"(
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
)";

using hlo::HloOpcode;

// ResNet's stem max-pool (NHWC), padding with -inf.
const std::string kMaxPool = std::string("HloModule mp\n") + kReducers + R"(
ENTRY e {
  x = f32[2,9,9,4] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT p = f32[2,5,5,4] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
}
)";

TEST(ReduceWindowLoweringTest, MaxPoolBecomesPadSlicesAndMaxima) {
  ReduceWindowLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kMaxPool);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kReduceWindow), 0);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kPad), 1);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSlice), 9);    // one per window position
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kMaximum), 9);  // folded from the init value
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kMaximum);
  EXPECT_EQ(root->shape().dimensions(), (std::vector<int64_t>{2, 5, 5, 4}));
}

TEST(ReduceWindowLoweringTest, DilatedSumAndCumulativeSumKeepTheEvaluatorsBits) {
  for (const char* body : {
           "  ROOT s = f32[1,2,2,3] reduce-window(x, zero), window={size=1x2x2x1 stride=1x3x3x1 "
           "rhs_dilate=1x2x2x1}, to_apply=add\n",
           "  ROOT s = f32[1,14,14,3] reduce-window(x, zero), window={size=1x2x2x1 "
           "lhs_dilate=1x2x2x1}, to_apply=add\n",
       }) {
    ReduceWindowLowering pass;
    auto m = testing::ExpectRewriteKeepsBits(
        pass, std::string("HloModule ap\n") + kReducers +
                  "ENTRY e {\n  x = f32[1,8,8,3] parameter(0)\n  zero = f32[] constant(0)\n" +
                  body + "}\n");
    ASSERT_NE(m, nullptr) << body;
    EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kReduceWindow), 0) << body;
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kAdd), 4) << body;
  }
  ReduceWindowLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, std::string("HloModule cs\n") + kReducers + R"(
ENTRY e {
  x = f32[4,16] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4,16] reduce-window(x, zero), window={size=1x16 pad=0_0x15_0}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSlice), 16);
}

// jax.lax.cumlogsumexp: a cumulative window whose reducer is log-add-exp, max(a, b) +
// log1p(exp(-|a - b|)), init -inf. By hand, of [0, 0, 0]: [0, ln 2, ln 3]. The reducer is cloned
// per window position over whole slices, padded positions skipped as XLA skips them (folding this
// reducer's -inf padding would give -inf - -inf = NaN): the evaluator's bits, and the device's.
TEST(ReduceWindowLoweringTest, AnElementwiseReducerIsFoldedOverSlices) {
  const std::string text = R"(HloModule r
logaddexp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  d = f32[] subtract(a, b)
  ad = f32[] abs(d)
  nd = f32[] negate(ad)
  e = f32[] exponential(nd)
  l = f32[] log-plus-one(e)
  ROOT s = f32[] add(m, l)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT c = f32[3,4] reduce-window(x, ninf), window={size=3x1 pad=2_0x0_0}, to_apply=logaddexp
}
)";
  ReduceWindowLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kReduceWindow), 0);
  testing::CheckAgainstEvaluator(text, "tpu-v4", 1e-6, 1e-6);
  std::string zeros = text;
  const std::string param = "x = f32[3,4] parameter(0)";
  zeros.replace(zeros.find(param), param.size(),
                "z = f32[] constant(0)\n  x = f32[3,4] broadcast(z), dimensions={}");
  auto z = testing::Parse(zeros);
  ASSERT_NE(z, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*z, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FLOAT_EQ(r->GetAsDouble(0), 0.0);
  EXPECT_FLOAT_EQ(r->GetAsDouble(4), std::log(2.0));
  EXPECT_FLOAT_EQ(r->GetAsDouble(8), std::log(3.0));
}

TEST(ReduceWindowLoweringTest, ReversedAndHugeWindowsAreLeftInPlace) {
  ReduceWindowLowering pass;
  testing::ExpectUnchanged(pass, std::string("HloModule r\n") + kReducers + R"(
ENTRY e {
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4] reduce-window(x, zero), window={size=2 stride=2 rhs_reversal=1}, to_apply=add
}
)");
  testing::ExpectUnchanged(pass, std::string("HloModule r\n") + kReducers + R"(
ENTRY e {
  x = f32[8192] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[1] reduce-window(x, zero), window={size=8192}, to_apply=add
}
)");
}

TEST(ReduceWindowTest, MaxPool3x3Stride2Padded) {
  CheckAgainstEvaluator(kMaxPool, "tiny", 0, 0);
}

TEST(ReduceWindowTest, AveragePoolSumWithDilation) {
  CheckAgainstEvaluator(std::string("HloModule ap\n") + kReducers + R"(
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[1,2,2,3] reduce-window(x, zero), window={size=1x2x2x1 stride=1x3x3x1 rhs_dilate=1x2x2x1}, to_apply=add
}
)",
                        "tpu-v4", 0, 0);
}

TEST(ReduceWindowTest, CumulativeSumAsJaxWritesIt) {
  // jnp.cumsum: a window of the whole axis, padded on the left.
  CheckAgainstEvaluator(std::string("HloModule cs\n") + kReducers + R"(
ENTRY e {
  x = f32[4,16] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4,16] reduce-window(x, zero), window={size=1x16 pad=0_0x15_0}, to_apply=add
}
)",
                        "tiny", 1e-6, 1e-6);
}

// A reducer that is not commutative (b - a) folds as the evaluator does, acc = f(acc, element).
TEST(ReduceWindowTest, ANonCommutativeReducerFoldsInTheEvaluatorsOrder) {
  const std::string text = R"(
HloModule r
sub { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] subtract(b, a) }
ENTRY e {
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4] reduce-window(x, zero), window={size=2 stride=2}, to_apply=sub
}
)";
  ReduceWindowLowering pass;
  ASSERT_NE(testing::ExpectRewriteKeepsBits(pass, text), nullptr);
  CheckAgainstEvaluator(text, "tiny", 0, 0);
}

// A reducer that is not elementwise (a reshape through f32[1]) is left in place; the lowering
// names the reduce-window.
TEST(ReduceWindowTest, UnsupportedReducerIsLeftInPlace) {
  ReduceWindowLowering pass;
  const std::string text = R"(
HloModule r
odd { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  r = f32[1] reshape(s)
      ROOT t = f32[] reshape(r) }
ENTRY e {
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4] reduce-window(x, zero), window={size=2 stride=2}, to_apply=odd
}
)";
  testing::ExpectUnchanged(pass, text);
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, testing::Config("tiny"), {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("reduce-window"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
