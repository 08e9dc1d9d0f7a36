// lower-convolution (compiler/passes/convolution_lowering.h): a convolution with a direct form is
// kept in canonical dim_labels (transposes around it where needed); a depthwise one is kept for the
// VPU; every other one becomes im2col (slices + concatenate) and a dot; a reversed kernel is folded
// into the window. Values are the evaluator's bits before and after (summing in the MXU's order).
#include "compiler/passes/convolution_lowering.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using V = std::vector<int64_t>;

// PyTorch's NCHW / OIHW layout: a direct-form convolution in non-canonical dim_labels.
constexpr char kNchw[] = R"(
HloModule m
ENTRY e {
  x = f32[2,16,9,9] parameter(0)
  w = f32[32,16,3,3] parameter(1)
  ROOT c = f32[2,32,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";

// Three spatial dimensions: no direct form, im2col + dot.
constexpr char kThreeD[] = R"(
HloModule m
ENTRY e {
  x = f32[1,5,5,5,4] parameter(0)
  w = f32[2,2,2,4,8] parameter(1)
  ROOT c = f32[1,4,4,4,8] convolution(x, w), window={size=2x2x2}, dim_labels=b012f_012io->b012f
})";

// A depthwise convolution (one input feature per group): the VPU form.
constexpr char kDepthwise[] = R"(
HloModule m
ENTRY e {
  x = f32[2,8,8,32] parameter(0)
  w = f32[3,3,1,32] parameter(1)
  ROOT c = f32[2,8,8,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=32
})";

// An input gradient as JAX writes it: the kernel's spatial dimensions reversed first.
constexpr char kReversedKernel[] = R"(
HloModule m
ENTRY e {
  x = f32[2,8,8,16] parameter(0)
  w = f32[3,3,16,16] parameter(1)
  r = f32[3,3,16,16] reverse(w), dimensions={0,1}
  ROOT c = f32[2,8,8,16] convolution(x, r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";

const hlo::HloInstruction* OnlyConvolution(const hlo::HloModule& m) {
  const hlo::HloInstruction* conv = nullptr;
  for (const auto& i : m.entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kConvolution) continue;
    EXPECT_EQ(conv, nullptr) << "more than one convolution";
    conv = i.get();
  }
  return conv;
}

TEST(ConvolutionLoweringTest, DirectFormIsKeptInCanonicalDimLabels) {
  ConvolutionLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kNchw);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* c = OnlyConvolution(*m);
  ASSERT_NE(c, nullptr);
  const hlo::ConvolutionDimensionNumbers& d = c->convolution_dimension_numbers();
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_spatial_dimensions, (V{1, 2}));
  EXPECT_EQ(d.input_feature_dimension, 3);
  EXPECT_EQ(d.kernel_spatial_dimensions, (V{0, 1}));
  EXPECT_EQ(d.output_spatial_dimensions, (V{1, 2}));
  EXPECT_EQ(d.output_feature_dimension, 3);
  EXPECT_EQ(c->operand(0)->opcode(), HloOpcode::kTranspose);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(root->shape().dimensions(), (V{2, 32, 9, 9}));
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kDot), 0);  // no im2col
}

TEST(ConvolutionLoweringTest, ThreeSpatialDimensionsBecomeIm2colAndADot) {
  ConvolutionLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kThreeD);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kConvolution), 0);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kDot), 1);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kSlice), 8);  // one per window position
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kConcatenate), 1);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().dimensions(),
            (V{1, 4, 4, 4, 8}));
}

TEST(ConvolutionLoweringTest, DepthwiseConvolutionIsKeptForTheVpu) {
  ConvolutionLowering pass;
  testing::ExpectUnchanged(pass, kDepthwise);
}

TEST(ConvolutionLoweringTest, AReversedKernelIsFoldedIntoTheWindow) {
  ConvolutionLowering pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kReversedKernel);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* c = OnlyConvolution(*m);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->operand(1)->opcode(), HloOpcode::kParameter);
  for (const hlo::WindowDimension& wd : c->window().dimensions) EXPECT_TRUE(wd.window_reversal);
}

TEST(ConvolutionLoweringTest, BothGroupCountsAreLeftForTheLowering) {
  ConvolutionLowering pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f32[4,5,5,4] parameter(0)
  w = f32[2,2,2,4] parameter(1)
  ROOT c = f32[1,4,4,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=2
})");
}

}  // namespace
}  // namespace tpusim::compiler
