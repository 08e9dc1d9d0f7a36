// convolution-negative-padding: negative edge padding becomes a slice of the input, and the
// convolution then runs in an MXU form, equal to the evaluator's.
#include "compiler/passes/convolution_negative_padding.h"

#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

// The kernel gradient of a 1x1 stride-2 convolution on an even-sized input ([2,6,6,4] ->
// [2,3,3,8]), as JAX writes it: the input's last row and column reach no output (pad=0_-1).
constexpr char kStridedKernelGradient[] = R"(
HloModule kernel_gradient
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  g = f32[2,3,3,8] parameter(1)
  ROOT k = f32[1,1,4,8] convolution(x, g), window={size=3x3 pad=0_-1x0_-1 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf
}
)";

TEST(ConvolutionNegativePaddingTest, StridedKernelGradientSlicesItsInput) {
  auto m = testing::Parse(kStridedKernelGradient);
  ASSERT_NE(m, nullptr);
  auto changed = ConvolutionNegativePadding().Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  const hlo::HloInstruction* k = m->entry_computation()->root_instruction();
  ASSERT_EQ(k->opcode(), hlo::HloOpcode::kConvolution);
  EXPECT_EQ(k->operand(0)->opcode(), hlo::HloOpcode::kSlice);
  EXPECT_EQ(k->operand(0)->shape().dimensions(), (std::vector<int64_t>{2, 5, 5, 4}));
  for (const auto& w : k->window().dimensions) {
    EXPECT_EQ(w.padding_low, 0);
    EXPECT_EQ(w.padding_high, 0);
  }
  CheckAgainstEvaluator(kStridedKernelGradient, "tiny", 1e-5, 1e-5, {}, true);
}

// Negative low padding on one dimension and positive high padding on the other, in a forward
// convolution.
TEST(ConvolutionNegativePaddingTest, MixedPaddingForwardConvolution) {
  CheckAgainstEvaluator(R"(
HloModule mixed
ENTRY e {
  x = f32[1,9,7,3] parameter(0)
  w = f32[3,3,3,5] parameter(1)
  ROOT y = f32[1,5,7,5] convolution(x, w), window={size=3x3 pad=-2_0x1_1}, dim_labels=b01f_01io->b01f
}
)",
                        "tiny", 1e-5, 1e-5, {}, true);
}

// Base dilation with negative padding is left alone (the lowering reports it by name).
TEST(ConvolutionNegativePaddingTest, BaseDilationIsLeftAlone) {
  auto m = testing::Parse(R"(
HloModule dilated
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,2] parameter(1)
  ROOT y = f32[1,5,5,2] convolution(x, w), window={size=2x2 pad=-1_0x-1_0 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
}
)");
  ASSERT_NE(m, nullptr);
  auto changed = ConvolutionNegativePadding().Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace tpusim::compiler
