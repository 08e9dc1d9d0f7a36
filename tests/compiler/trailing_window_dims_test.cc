// trailing-window-dims (compiler/passes/trailing_window_dims.h): a gather whose offset dimensions
// are not last becomes a gather into [batch..., offset...] and a transpose back; a scatter whose
// update window dimensions are not last gets transposed updates. Values the evaluator's bits
// before and after; the device runs are in gather_lowering_test.cc.
#include "compiler/passes/trailing_window_dims.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using V = std::vector<int64_t>;

TEST(TrailingWindowDimsTest, LeadingOffsetDimsBecomeTrailingWithATransposeBack) {
  TrailingWindowDims pass;
  // x[:, ids] (index_select along dimension 1), out-of-range ids clamped.
  auto m = testing::ExpectRewriteKeepsBits(pass, R"(
HloModule m
ENTRY e {
  x = f32[4,50,8] parameter(0)
  ids = s32[6,1] constant({{0},{49},{-3},{60},{7},{7}})
  ROOT g = f32[4,6,8] gather(x, ids), offset_dims={0,2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={4,1,8}
})");
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(root->shape().dimensions(), (V{4, 6, 8}));
  const hlo::HloInstruction* g = root->operand(0);
  ASSERT_EQ(g->opcode(), HloOpcode::kGather);
  EXPECT_EQ(g->shape().dimensions(), (V{6, 4, 8}));
  EXPECT_EQ(g->gather_dimension_numbers().offset_dims, (V{1, 2}));
}

TEST(TrailingWindowDimsTest, InterleavedOffsetAndBatchDims) {
  TrailingWindowDims pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, R"(
HloModule m
ENTRY e {
  x = bf16[3,9,5] parameter(0)
  ids = s32[2,4,2] parameter(1)
  ROOT g = bf16[2,3,4,2] gather(x, ids), offset_dims={1,3}, collapsed_slice_dims={1}, start_index_map={1,2}, index_vector_dim=2, slice_sizes={3,1,2}
})");
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* g = m->entry_computation()->root_instruction()->operand(0);
  ASSERT_EQ(g->opcode(), HloOpcode::kGather);
  EXPECT_EQ(g->shape().dimensions(), (V{2, 4, 3, 2}));
  EXPECT_EQ(g->gather_dimension_numbers().offset_dims, (V{2, 3}));
}

TEST(TrailingWindowDimsTest, LeadingUpdateWindowDimsAreTransposedLast) {
  TrailingWindowDims pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,50,8] parameter(0)
  ids = s32[6,1] constant({{0},{49},{-3},{60},{7},{7}})
  u = f32[4,6,8] parameter(1)
  ROOT s = f32[4,50,8] scatter(x, ids, u), update_window_dims={0,2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* s = m->entry_computation()->root_instruction();
  ASSERT_EQ(s->opcode(), HloOpcode::kScatter);
  EXPECT_EQ(s->scatter_dimension_numbers().update_window_dims, (V{1, 2}));
  ASSERT_EQ(s->operand(2)->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(s->operand(2)->shape().dimensions(), (V{6, 4, 8}));
}

TEST(TrailingWindowDimsTest, CanonicalGathersAreLeft) {
  TrailingWindowDims pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f32[50,8] parameter(0)
  ids = s32[6,1] parameter(1)
  ROOT g = f32[6,8] gather(x, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
})");
}

}  // namespace
}  // namespace tpusim::compiler
