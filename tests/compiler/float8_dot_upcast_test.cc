// float8-dot-upcast (compiler/passes/float8_dot_upcast.h): a dot or convolution with f8 operands or
// result takes bf16 operands (exact converts) and an f32 result converted once to the f8 type; the
// evaluator's bits before and after. The device runs of f8 ops are in float8_test.cc. f16 and
// int4 operands likewise (f32 at HIGHEST precision; s8).
#include "compiler/passes/float8_dot_upcast.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using hlo::PrimitiveType;

class Float8DotUpcastTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Float8DotUpcastTest, F8DotTakesBf16OperandsAndRoundsItsF32ResultOnce) {
  const std::string t = GetParam();
  Float8DotUpcast pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, R"(
HloModule m
ENTRY e {
  a = )" + t + R"([16,64] parameter(0)
  b = )" + t + R"([64,32] parameter(1)
  ROOT d = )" + t + R"([16,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  const hlo::HloInstruction* dot = root->operand(0);
  ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dot->shape().element_type(), PrimitiveType::kF32);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(dot->operand(i)->opcode(), HloOpcode::kConvert) << i;
    EXPECT_EQ(dot->operand(i)->shape().element_type(), PrimitiveType::kBF16) << i;
  }
}

TEST_P(Float8DotUpcastTest, F8ConvolutionWithAnF32ResultOnlyConvertsItsOperands) {
  const std::string t = GetParam();
  Float8DotUpcast pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, R"(
HloModule m
ENTRY e {
  x = )" + t + R"([2,6,6,8] parameter(0)
  w = )" + t + R"([3,3,8,16] parameter(1)
  ROOT c = f32[2,4,4,16] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f
})");
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvolution);
  EXPECT_EQ(root->operand(0)->shape().element_type(), PrimitiveType::kBF16);
  EXPECT_EQ(root->operand(1)->shape().element_type(), PrimitiveType::kBF16);
}

INSTANTIATE_TEST_SUITE_P(Types, Float8DotUpcastTest, ::testing::Values("f8e4m3fn", "f8e5m2"));

// f16 (a TPU computes it in f32): f32 operands at HIGHEST precision, so each f16 product is exact
// and the sums are f32's — the evaluator's bits — and one rounding to f16; on the device too.
TEST(Float8DotUpcastOtherTypesTest, F16DotRunsInF32AtHighestPrecision) {
  const std::string text = R"(
HloModule m
ENTRY e {
  a = f16[16,64] parameter(0)
  b = f16[64,32] parameter(1)
  ROOT d = f16[16,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  Float8DotUpcast pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->shape().element_type(), PrimitiveType::kF16);
  const hlo::HloInstruction* dot = root->operand(0);
  ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dot->shape().element_type(), PrimitiveType::kF32);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(dot->operand(i)->shape().element_type(), PrimitiveType::kF32) << i;
    EXPECT_EQ(dot->operand_precision(i), hlo::Precision::kHighest) << i;
  }
  testing::CheckAgainstEvaluator(text, "tpu-v4", 1e-3, 1e-3);
}

// int4 weights (jnp.int4 x int8 -> int32, JAX's TPU lowering): the s4 operand converted to s8,
// exact, on the MXU's s8 x s8 -> s32 path.
TEST(Float8DotUpcastOtherTypesTest, Int4DotTakesS8Operands) {
  const std::string text = R"(
HloModule m
ENTRY e {
  a = s4[32,16] parameter(0)
  b = s8[16,8] parameter(1)
  ROOT d = s32[32,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  Float8DotUpcast pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kDot);
  EXPECT_EQ(root->operand(0)->shape().element_type(), PrimitiveType::kS8);
  EXPECT_EQ(root->operand(1)->shape().element_type(), PrimitiveType::kS8);
  testing::CheckAgainstEvaluator(text, "tpu-v4", 0, 0);
}

TEST(Float8DotUpcastOtherTypesTest, Bf16AndF32DotsAreLeft) {
  Float8DotUpcast pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  a = bf16[16,64] parameter(0)
  b = bf16[64,32] parameter(1)
  d = f32[16,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[16,64] parameter(2)
  ROOT e = f32[16,16] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})");
}

}  // namespace
}  // namespace tpusim::compiler
