// custom-call-expander (compiler/passes/custom_call_expander.h): the AwsNeuron composite calls
// become f32 HLO ops (bf16/f16 widened and rounded once), in every computation; the evaluator's
// TPU semantics compute them as the expansion does (same bits before and after). Unknown targets
// and other element types stay for the lowering to name.
#include "compiler/passes/custom_call_expander.h"

#include <gtest/gtest.h>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// The AwsNeuron composite custom calls (pt_gpt2's MLP uses AwsNeuronGeluApprxTanh). The inputs are
// scaled up so tanh/erf see more than their linear range. (Moved from checks2_batch_norm_test.cc.)
constexpr char kCustomCalls[] = R"(
HloModule m
ENTRY e {
  p = f32[8,300] parameter(0)
  dy = f32[8,300] parameter(1)
  w = f32[300] parameter(2)
  eps = f32[] constant(1e-06)
  k = f32[] constant(4)
  kb = f32[8,300] broadcast(k), dimensions={}
  x = f32[8,300] multiply(p, kb)
  tanh_gelu = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGeluApprxTanh"
  gelu = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGelu"
  gelu_bwd = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGeluBackward"
  softmax = f32[8,300] custom-call(x), custom_call_target="AwsNeuronSoftmax"
  softmax_bwd = f32[8,300] custom-call(softmax, dy), custom_call_target="AwsNeuronSoftmaxBackward"
  rms = f32[8,300] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm"
  ROOT t = (f32[8,300], f32[8,300], f32[8,300], f32[8,300], f32[8,300], f32[8,300]) tuple(tanh_gelu, gelu, gelu_bwd, softmax, softmax_bwd, rms)
})";

// The same kernels on bf16 and f16; RmsNorm mixes a bf16 activation with an f32 weight; softmax
// over dimension 1 given by backend_config. (Moved from checks2_batch_norm_test.cc.)
constexpr char kNarrowCustomCalls[] = R"(
HloModule m
ENTRY e {
  p = f32[8,300] parameter(0)
  w = f32[300] parameter(1)
  k = f32[] constant(4)
  kb = f32[8,300] broadcast(k), dimensions={}
  xf = f32[8,300] multiply(p, kb)
  x = bf16[8,300] convert(xf)
  h = f16[8,300] convert(xf)
  eps = bf16[] constant(1e-06)
  gelu = bf16[8,300] custom-call(x), custom_call_target="AwsNeuronGelu"
  tanh_gelu = f16[8,300] custom-call(h), custom_call_target="AwsNeuronGeluApprxTanh"
  softmax = bf16[8,300] custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  rms = bf16[8,300] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm"
  ROOT t = (bf16[8,300], f16[8,300], bf16[8,300], bf16[8,300]) tuple(gelu, tanh_gelu, softmax, rms)
})";

// A kernel call inside a while body (a scanned layer). (Moved from checks2_batch_norm_test.cc.)
constexpr char kCustomCallInLoop[] = R"(
HloModule m
body {
  p = (s32[], bf16[8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = bf16[8,128] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  g = bf16[8,128] custom-call(x), custom_call_target="AwsNeuronGelu"
  ROOT t = (s32[], bf16[8,128]) tuple(i1, g)
}
cond {
  p = (s32[], bf16[8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = bf16[8,128] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], bf16[8,128]) tuple(zero, x)
  w = (s32[], bf16[8,128]) while(init), condition=cond, body=body
  ROOT r = bf16[8,128] get-tuple-element(w), index=1
})";

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
