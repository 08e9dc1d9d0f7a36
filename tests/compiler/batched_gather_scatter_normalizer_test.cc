// batched-gather-scatter-normalizer (compiler/passes/batched_gather_scatter_normalizer.h): a gather
// or scatter with batching dimensions becomes the same op without them — one more index component
// per batching pair (an iota), the batching operand dimensions collapsed / inserted — with the
// same result shape and the evaluator's bits.
#include "compiler/passes/batched_gather_scatter_normalizer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using V = std::vector<int64_t>;

// jnp.take_along_axis over the last axis: two batching pairs, an explicit index vector, one
// out-of-range index per row (clamped by gather).
constexpr char kGather[] = R"(
HloModule m
ENTRY e {
  logits = f32[3,4,10] parameter(0)
  labels = s32[3,4,1] constant({{{0},{9},{4},{12}},{{-1},{3},{3},{8}},{{1},{2},{5},{7}}})
  ROOT g = f32[3,4] gather(logits, labels), offset_dims={}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1}, index_vector_dim=2, slice_sizes={1,1,1}
})";

// An implicit index vector (index_vector_dim = rank) and u8 indices.
constexpr char kGatherU8[] = R"(
HloModule m
ENTRY e {
  x = bf16[5,6,4] parameter(0)
  ids = u8[2,5] constant({{0,1,2,3,250},{5,4,3,2,1}})
  ROOT g = bf16[2,5,4] gather(x, ids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1,4}
})";

constexpr char kScatter[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,9,3] parameter(0)
  ids = s32[6,4,1] constant({{{0},{1},{2},{3}},{{8},{8},{8},{8}},{{4},{5},{6},{7}},{{0},{0},{1},{1}},{{2},{3},{2},{3}},{{7},{6},{5},{4}}})
  u = f32[6,4,3] parameter(1)
  ROOT s = f32[4,9,3] scatter(x, ids, u), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={1}, index_vector_dim=2, to_apply=add
})";

TEST(BatchedGatherScatterNormalizerTest, GatherBatchingPairsBecomeIotaIndexComponents) {
  BatchedGatherScatterNormalizer pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kGather);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* g = m->entry_computation()->root_instruction();
  ASSERT_EQ(g->opcode(), HloOpcode::kGather);
  EXPECT_EQ(g->shape().dimensions(), (V{3, 4}));
  const hlo::GatherDimensionNumbers& d = g->gather_dimension_numbers();
  EXPECT_TRUE(d.operand_batching_dims.empty());
  EXPECT_TRUE(d.start_indices_batching_dims.empty());
  EXPECT_EQ(d.start_index_map, (V{2, 0, 1}));
  EXPECT_EQ(d.collapsed_slice_dims, (V{0, 1, 2}));
  ASSERT_EQ(g->operand(1)->opcode(), HloOpcode::kConcatenate);
  EXPECT_EQ(g->operand(1)->shape().dimensions(), (V{3, 4, 3}));
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kIota), 2);
}

TEST(BatchedGatherScatterNormalizerTest, ImplicitIndexVectorAndNarrowIndicesAreWidened) {
  BatchedGatherScatterNormalizer pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kGatherU8);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* g = m->entry_computation()->root_instruction();
  ASSERT_EQ(g->opcode(), HloOpcode::kGather);
  EXPECT_EQ(g->operand(1)->shape().element_type(), hlo::PrimitiveType::kS32);
  EXPECT_EQ(g->operand(1)->shape().dimensions(), (V{2, 5, 2}));
  EXPECT_TRUE(g->gather_dimension_numbers().operand_batching_dims.empty());
  EXPECT_EQ(g->gather_dimension_numbers().collapsed_slice_dims, (V{0, 1}));
}

TEST(BatchedGatherScatterNormalizerTest, ScatterBatchingDimensionBecomesAnInsertedWindowDim) {
  BatchedGatherScatterNormalizer pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kScatter);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* s = m->entry_computation()->root_instruction();
  ASSERT_EQ(s->opcode(), HloOpcode::kScatter);
  const hlo::ScatterDimensionNumbers& d = s->scatter_dimension_numbers();
  EXPECT_TRUE(d.input_batching_dims.empty());
  EXPECT_TRUE(d.scatter_indices_batching_dims.empty());
  EXPECT_EQ(d.inserted_window_dims, (V{0, 1}));
  EXPECT_EQ(d.scatter_dims_to_operand_dims, (V{1, 0}));
  EXPECT_EQ(s->operand(1)->shape().dimensions(), (V{6, 4, 2}));
}

TEST(BatchedGatherScatterNormalizerTest, UnbatchedGatherIsLeft) {
  BatchedGatherScatterNormalizer pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f32[10,4] parameter(0)
  ids = s32[3,1] constant({{0},{9},{4}})
  ROOT g = f32[3,4] gather(x, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})");
}

}  // namespace
}  // namespace tpusim::compiler
