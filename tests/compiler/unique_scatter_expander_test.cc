// unique-scatter-expander (compiler/passes/unique_scatter_expander.h): a scatter with
// unique_indices=true whose combiner the DMA lowering does not run becomes assignment scatters of
// the updates and of a hit mask, and the combiner applied element by element where an update
// landed. Values the evaluator's bits before and after (the indices are unique, as promised).
#include "compiler/passes/unique_scatter_expander.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// Unique ids, one out of range (its window skipped by both scatters).
constexpr char kIds[] = "ids = s32[5,1] constant({{0},{9},{3},{12},{6}})";

std::string Multiply(bool unique) {
  return std::string(R"(HloModule m
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  )") + kIds + R"(
  u = f32[5,4] parameter(1)
  ROOT r = f32[10,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=)" +
         (unique ? "true" : "false") + R"(, to_apply=mul
})";
}

TEST(UniqueScatterExpanderTest, AMultiplyScatterBecomesAssignmentsAndASelect) {
  UniqueScatterExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, Multiply(true));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kScatter), 2);  // placed updates, hit mask
  for (const auto& i : m->entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kScatter) continue;
    // Assignment: the combiner returns its update parameter.
    EXPECT_EQ(i->to_apply()->root_instruction()->opcode(), HloOpcode::kParameter) << i->name();
  }
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kSelect);
  EXPECT_EQ(root->operand(0)->shape().element_type(), hlo::PrimitiveType::kPred);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kMultiply), 1);
}

// An argmax-like variadic scatter (keep the value with the larger key) mixes its operands.
TEST(UniqueScatterExpanderTest, AMixingVariadicCombinerIsAppliedElementwise) {
  UniqueScatterExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, std::string(R"(HloModule m
comb {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(c, a), direction=GT
  v = f32[] select(gt, c, a)
  i = s32[] select(gt, d, b)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  y = s32[10,4] parameter(1)
  )") + kIds + R"(
  u = f32[5,4] parameter(2)
  v = s32[5,4] parameter(3)
  ROOT r = (f32[10,4], s32[10,4]) scatter(x, y, ids, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=comb
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kScatter), 3);  // two operands, one hit mask
  EXPECT_EQ(m->entry_computation()->root_instruction()->opcode(), HloOpcode::kTuple);
}

TEST(UniqueScatterExpanderTest, ScattersWithoutUniqueIndicesAreLeft) {
  UniqueScatterExpander pass;
  testing::ExpectUnchanged(pass, Multiply(false));
}

}  // namespace
}  // namespace tpusim::compiler
