// batch-norm-expander (compiler/passes/batch_norm_expander.h): batch-norm-training, -inference and
// -grad become reduce, broadcast and elementwise ops, for any rank and feature_index, f32 and bf16;
// the evaluator's TPU semantics compute them as the expansion does (same bits before and after).
#include "compiler/passes/batch_norm_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/pass_test_util.h"
#include "tests/compiler/shared_test_modules.h"

namespace tpusim::compiler {
namespace {

using testing::kLayerNormDot;
using testing::kInference;

using hlo::HloOpcode;

// batch-norm-grad in bf16 with the feature dimension in the middle (NCHW-like).
constexpr char kGradBf16[] = R"(
HloModule m
ENTRY e {
  x = bf16[2,8,3,5] parameter(0)
  scale = bf16[8] parameter(1)
  mean = bf16[8] parameter(2)
  v = bf16[8] parameter(3)
  var = bf16[8] abs(v)
  dy = bf16[2,8,3,5] parameter(4)
  ROOT g = (bf16[2,8,3,5], bf16[8], bf16[8]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1
})";

bool HasBatchNorm(const hlo::HloModule& m) {
  return testing::CountOpcode(m, HloOpcode::kBatchNormTraining) +
             testing::CountOpcode(m, HloOpcode::kBatchNormInference) +
             testing::CountOpcode(m, HloOpcode::kBatchNormGrad) >
         0;
}

TEST(BatchNormExpanderTest, TrainingBecomesReducesWithTheEvaluatorsBits) {
  BatchNormExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kLayerNormDot);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(HasBatchNorm(*m));
  // Two passes over x (mean, then variance) and the dot stays.
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kReduce), 2);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kRsqrt), 1);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kDot), 1);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(root->operand(1)->shape().dimensions(), std::vector<int64_t>{4});
}

TEST(BatchNormExpanderTest, InferenceOnTheLastDimensionHasNoReduce) {
  BatchNormExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kInference);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(HasBatchNorm(*m));
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kReduce), 0);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().dimensions(),
            (std::vector<int64_t>{2, 6, 6, 16}));
}

TEST(BatchNormExpanderTest, Bf16GradIsComputedInF32AndConvertedBack) {
  BatchNormExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kGradBf16);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(HasBatchNorm(*m));
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kConvert), 1);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(root->operand(i)->shape().element_type(), hlo::PrimitiveType::kBF16) << i;
  }
}

// Types other than f32/bf16 are left for the lowering to refuse by name.
TEST(BatchNormExpanderTest, F16IsLeftAlone) {
  BatchNormExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f16[4,8] parameter(0)
  s = f16[8] parameter(1)
  o = f16[8] parameter(2)
  ROOT bn = (f16[4,8], f16[8], f16[8]) batch-norm-training(x, s, o), epsilon=1e-05, feature_index=1
})");
}

}  // namespace
}  // namespace tpusim::compiler
