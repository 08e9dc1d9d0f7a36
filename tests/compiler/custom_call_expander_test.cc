// custom-call-expander (compiler/passes/custom_call_expander.h): the AwsNeuron composite calls
// become f32 HLO ops (bf16/f16 widened and rounded once), in every computation; the evaluator's
// TPU semantics compute them as the expansion does (same bits before and after). Unknown targets
// and other element types stay for the lowering to name.
#include "compiler/passes/custom_call_expander.h"

#include <gtest/gtest.h>

#include "tests/compiler/pass_test_util.h"
#include "tests/compiler/shared_test_modules.h"

namespace tpusim::compiler {
namespace {

using testing::kCustomCalls;
using testing::kNarrowCustomCalls;
using testing::kCustomCallInLoop;

using hlo::HloOpcode;

TEST(CustomCallExpanderTest, F32NeuronCallsBecomeOpsWithTheEvaluatorsBits) {
  CustomCallExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kCustomCalls, testing::TpuEvaluatorOptions(), 42);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kCustomCall), 0);
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kErf), 1);
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kTanh), 1);
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kExp), 1);
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kRsqrt), 1);
}

TEST(CustomCallExpanderTest, NarrowCallsAreWidenedAndRoundedOnce) {
  CustomCallExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kNarrowCustomCalls,
                                           testing::TpuEvaluatorOptions(), 42);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kCustomCall), 0);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->operand(0)->shape().element_type(), hlo::PrimitiveType::kBF16);
  EXPECT_EQ(root->operand(1)->shape().element_type(), hlo::PrimitiveType::kF16);
}

TEST(CustomCallExpanderTest, CallsInAWhileBodyAreExpanded) {
  CustomCallExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kCustomCallInLoop);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kCustomCall), 0);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kWhile), 1);
}

TEST(CustomCallExpanderTest, UnknownTargetsAndOtherTypesAreLeft) {
  CustomCallExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  i = s32[8] parameter(1)
  a = f32[8] custom-call(x), custom_call_target="SomebodysKernel"
  b = s32[8] custom-call(i), custom_call_target="AwsNeuronGelu"
  c = f32[8] custom-call(x), custom_call_target="AwsNeuronTransferWithStaticRing"
  ROOT t = (f32[8], s32[8], f32[8]) tuple(a, b, c)
})");
}

}  // namespace
}  // namespace tpusim::compiler
