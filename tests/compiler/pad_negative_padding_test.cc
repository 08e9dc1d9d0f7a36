// pad with negative edge padding (a pad that trims): rewritten into a non-negative pad and a slice
// (compiler/passes/pad_negative_padding.h), run on the ISA interpreter and checked against the CPU
// evaluator bit for bit (data movement only).
#include <gtest/gtest.h>

#include <string>

#include "compile_test_util.h"
#include "compiler/passes/pad_negative_padding.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

TEST(PadNegativePaddingTest, NegativeEdgesTrimAndPositiveEdgesPad) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[10,9] pad(x, z), padding=1_1x-2_-5
})",
                          config, 0, 0);
  }
}

TEST(PadNegativePaddingTest, NegativeEdgesCutIntoInteriorPadding) {
  // [6] with interior 2 is 16 long; -3 / -4 keep elements 3..11 of it: values and pad values mixed.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = bf16[4,6] parameter(0)
  v = bf16[] constant(7)
  ROOT p = bf16[5,9] pad(x, v), padding=0_1x-3_-4_2
})",
                        "tiny", 0, 0);
}

TEST(PadNegativePaddingTest, PassLeavesNoNegativeAmount) {
  auto module = testing::Parse(R"(
HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[6,16] pad(x, z), padding=-1_-1x0_0
})");
  ASSERT_NE(module, nullptr);
  auto changed = PadNegativePadding().Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const hlo::HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), hlo::HloOpcode::kSlice);
  EXPECT_EQ(root->shape().dimensions(), (std::vector<int64_t>{6, 16}));
  for (const auto& p : root->operand(0)->padding_config().dimensions) {
    EXPECT_GE(p.edge_padding_low, 0);
    EXPECT_GE(p.edge_padding_high, 0);
  }
}

}  // namespace
}  // namespace tpusim::compiler
