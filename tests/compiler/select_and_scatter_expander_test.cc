// select-and-scatter-expander (compiler/passes/select_and_scatter_expander.h): max/min-pooling
// gradients as slices, compares, selects and pads — the rewrite on the evaluator (same bits,
// idempotent), and compiled modules on the ISA interpreter against the evaluator's
// select-and-scatter.
#include "compiler/passes/select_and_scatter_expander.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

// The gradient of max pooling over NHWC `x` (window 1xHxWx1) with `source` of the pooled shape.
std::string MaxPoolGrad(const std::string& x, const std::string& src, const std::string& window,
                        const std::string& direction = "GE") {
  return R"(
HloModule pool_grad
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=)" +
         direction + R"(
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = )" +
         x + R"( parameter(0)
  g = )" +
         src + R"( parameter(1)
  z = f32[] constant(0)
  ROOT r = )" +
         x + R"( select-and-scatter(x, g, z), window={)" + window +
         R"(}, select=ge, scatter=add
}
)";
}

TEST(SelectAndScatterExpanderTest, MaxPool2x2Stride2) {
  const std::string text =
      MaxPoolGrad("f32[2,8,8,3]", "f32[2,4,4,3]", "size=1x2x2x1 stride=1x2x2x1");
  SelectAndScatterExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kSelectAndScatter), 0);
  CheckAgainstEvaluator(text, "tiny", 0, 0);
}

// Windows that tile the operand (NCHW 2x2/2 here) are interleaved by concatenation: no pad, and
// no per-position add; an operand the windows do not cover (7 rows of 2x2/2 windows) takes the
// general expansion. Both bit for bit.
TEST(SelectAndScatterExpanderTest, TilingWindowsAreInterleavedNotPadded) {
  const std::string tiled =
      MaxPoolGrad("f32[2,3,8,6]", "f32[2,3,4,3]", "size=1x1x2x2 stride=1x1x2x2");
  SelectAndScatterExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, tiled);
  ASSERT_NE(m, nullptr);
  int pads = 0, concats = 0;
  for (const auto& i : m->entry_computation()->instructions()) {
    pads += i->opcode() == hlo::HloOpcode::kPad;
    concats += i->opcode() == hlo::HloOpcode::kConcatenate;
  }
  EXPECT_EQ(pads, 0);
  EXPECT_EQ(concats, 3);  // two along the last window dimension, one along the other
  CheckAgainstEvaluator(tiled, "tiny", 0, 0);
  CheckAgainstEvaluator(MaxPoolGrad("f32[1,7,7,2]", "f32[1,3,3,2]", "size=1x2x2x1 stride=1x2x2x1"),
                        "tiny", 0, 0);
}

// Overlapping, padded windows: the evaluator's bits before and after the rewrite.
TEST(SelectAndScatterExpanderTest, OverlappingWindowsKeepTheEvaluatorsBits) {
  for (const std::string& text :
       {MaxPoolGrad("f32[1,9,9,2]", "f32[1,5,5,2]",
                    "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"),
        MaxPoolGrad("f32[1,6,7,2]", "f32[1,6,7,2]",
                    "size=1x3x3x1 stride=1x1x1x1 pad=0_0x1_1x1_1x0_0", "LE")}) {
    SelectAndScatterExpander pass;
    auto m = testing::ExpectRewriteKeepsBits(pass, text);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kSelectAndScatter), 0);
    EXPECT_GE(testing::CountInEntry(*m, hlo::HloOpcode::kPad), 1);
  }
}

// Outside the contract (a window dilation; a scatter that is not add) the op is left in place.
TEST(SelectAndScatterExpanderTest, DilatedWindowsAndOtherScattersAreLeft) {
  SelectAndScatterExpander pass;
  testing::ExpectUnchanged(pass, MaxPoolGrad("f32[1,9,9,2]", "f32[1,3,3,2]",
                                             "size=1x2x2x1 stride=1x3x3x1 rhs_dilate=1x2x2x1"));
  std::string mul = MaxPoolGrad("f32[2,8,8,3]", "f32[2,4,4,3]", "size=1x2x2x1 stride=1x2x2x1");
  mul.replace(mul.find("ROOT s = f32[] add(a, b)"), 24, "ROOT s = f32[] multiply(a, b)");
  testing::ExpectUnchanged(pass, mul);
}

TEST(SelectAndScatterExpanderTest, MaxPool3x3Stride2SamePadding) {
  CheckAgainstEvaluator(MaxPoolGrad("f32[1,9,9,2]", "f32[1,5,5,2]",
                                    "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"),
                        "tiny", 0, 0);
}

// Windows overlapping nine deep: each position's contributions are still summed in window order,
// bit for bit.
TEST(SelectAndScatterExpanderTest, MinPool3x3Stride1Padded) {
  CheckAgainstEvaluator(MaxPoolGrad("f32[1,6,7,2]", "f32[1,6,7,2]",
                                    "size=1x3x3x1 stride=1x1x1x1 pad=0_0x1_1x1_1x0_0", "LE"),
                        "tiny", 0, 0);
}

// A ResNet's max pool (3x3, stride 2, padded at the high edges): positions where four windows
// meet get four contributions, added in window order as the evaluator adds them.
TEST(SelectAndScatterExpanderTest, ResNetMaxPoolFourDeepExact) {
  CheckAgainstEvaluator(MaxPoolGrad("f32[2,17,17,3]", "f32[2,8,8,3]",
                                    "size=1x3x3x1 stride=1x2x2x1"),
                        "tiny", 0, 0);
  CheckAgainstEvaluator(MaxPoolGrad("f32[1,16,15,2]", "f32[1,8,8,2]",
                                    "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_2x0_0"),
                        "tiny", 0, 0);
}

}  // namespace
}  // namespace tpusim::compiler
