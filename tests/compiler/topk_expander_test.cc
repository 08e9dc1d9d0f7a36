// topk-expander (compiler/passes/topk_expander.h): topk becomes a stable sort of (x, iota) along
// the last dimension — descending for largest=true, ascending otherwise — and slices of the first K
// columns; values and indices (ties: the lower index first) the evaluator's bits before and after.
#include "compiler/passes/topk_expander.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// Keys x * 4 converted to s32 then back: many ties.
std::string TopK(bool largest) {
  return std::string(R"(HloModule m
ENTRY e {
  p = f32[3,20] parameter(0)
  four = f32[] constant(4)
  fb = f32[3,20] broadcast(four), dimensions={}
  q = f32[3,20] multiply(p, fb)
  i = s32[3,20] convert(q)
  x = f32[3,20] convert(i)
  ROOT t = (f32[3,5], s32[3,5]) topk(x), k=5, largest=)") +
         (largest ? "true" : "false") + "\n}";
}

TEST(TopKExpanderTest, TopKBecomesAStableSortAndSlicesWithTiesByIndex) {
  for (bool largest : {true, false}) {
    TopKExpander pass;
    auto m = testing::ExpectRewriteKeepsBits(pass, TopK(largest));
    ASSERT_NE(m, nullptr) << largest;
    EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kTopK), 0);
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSort), 1);
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSlice), 2);
    for (const auto& i : m->entry_computation()->instructions()) {
      if (i->opcode() != HloOpcode::kSort) continue;
      EXPECT_TRUE(i->is_stable());
      EXPECT_EQ(i->dimensions(), std::vector<int64_t>{1});
      EXPECT_EQ(i->operand(1)->opcode(), HloOpcode::kIota);
      const hlo::HloInstruction* cmp = i->to_apply()->root_instruction();
      ASSERT_EQ(cmp->opcode(), HloOpcode::kCompare);
      EXPECT_EQ(cmp->comparison_direction(),
                largest ? hlo::ComparisonDirection::kGt : hlo::ComparisonDirection::kLt);
    }
    EXPECT_EQ(m->entry_computation()->root_instruction()->shape().ToString(false),
              "(f32[3,5], s32[3,5])");
  }
}

TEST(TopKExpanderTest, AModuleWithoutTopKIsUnchanged) {
  TopKExpander pass;
  testing::ExpectUnchanged(pass, R"(HloModule m
ENTRY e {
  x = f32[3,20] parameter(0)
  ROOT n = f32[3,20] negate(x)
})");
}

}  // namespace
}  // namespace tpusim::compiler
