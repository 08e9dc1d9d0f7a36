// variadic-scatter-splitter (compiler/passes/variadic_scatter_splitter.h): a scatter of N operands
// whose combiner treats each operand separately becomes N one-operand scatters sharing the indices,
// each with its own two-parameter combiner; one whose combiner mixes operands is left. Values the
// evaluator's bits before and after.
#include "compiler/passes/variadic_scatter_splitter.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// Element 0 adds, element 1 keeps the maximum; repeated indices so updates combine.
constexpr char kSeparate[] = R"(HloModule m
comb {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  y = s32[10,4] parameter(1)
  ids = s32[6,1] constant({{0},{9},{3},{3},{12},{0}})
  u = f32[6,4] parameter(2)
  v = s32[6,4] parameter(3)
  ROOT r = (f32[10,4], s32[10,4]) scatter(x, y, ids, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
})";

TEST(VariadicScatterSplitterTest, SeparateCombinersBecomeOneScatterPerOperand) {
  VariadicScatterSplitter pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kSeparate);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kScatter), 2);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  for (int k = 0; k < 2; ++k) {
    const hlo::HloInstruction* s = root->operand(k);
    ASSERT_EQ(s->opcode(), HloOpcode::kScatter) << k;
    EXPECT_EQ(s->operand_count(), 3) << k;
    EXPECT_EQ(s->operand(1)->name(), "ids") << k;  // the indices are shared
    EXPECT_EQ(s->to_apply()->num_parameters(), 2) << k;
  }
  EXPECT_EQ(root->operand(0)->to_apply()->root_instruction()->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(root->operand(1)->to_apply()->root_instruction()->opcode(), HloOpcode::kMaximum);
}

// Keep the value with the larger key: element 1 reads operand 0's parameters.
TEST(VariadicScatterSplitterTest, MixingCombinersAreLeft) {
  VariadicScatterSplitter pass;
  testing::ExpectUnchanged(pass, R"(HloModule m
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
  ids = s32[6,1] parameter(2)
  u = f32[6,4] parameter(3)
  v = s32[6,4] parameter(4)
  ROOT r = (f32[10,4], s32[10,4]) scatter(x, y, ids, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
})");
}

}  // namespace
}  // namespace tpusim::compiler
