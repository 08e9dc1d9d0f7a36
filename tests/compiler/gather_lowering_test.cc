// gather / scatter / dynamic-slice / dynamic-update-slice lowered onto dma.gather / dma.scatter,
// run on the ISA interpreter and checked against the CPU evaluator (bit-exact data movement, so
// the tolerances are 0 except for the float add combiner, which adds in the same order: also 0).
// Index values are written out as constants where clamping / skipping matters; random s32
// parameters (values in [-8, 7], hlo::FillRandom) exercise both in-range and clamped starts.
#include <gtest/gtest.h>

#include <string>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

class GatherLoweringTest : public ::testing::TestWithParam<std::string> {};

// Instructions of `op` in the compiled program (0 if the run failed: the check has reported it).
int64_t CountOps(const testing::RunResult& r, isa::Opcode op) {
  int64_t n = 0;
  for (const auto& core : r.compiled.program.cores) {
    for (const isa::Instruction& inst : core.instructions) n += inst.opcode == op;
  }
  return n;
}

TEST_P(GatherLoweringTest, EmbeddingLookupClampsOutOfRangeRows) {
  auto r = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  table = f32[50,8] parameter(0)
  ids = s32[7,1] constant({{3},{0},{49},{-2},{60},{7},{3}})
  ROOT g = f32[7,8] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
})",
                                 GetParam(), 0, 0);
  EXPECT_GE(CountOps(r, isa::Opcode::kDmaGather), 1);
}

TEST_P(GatherLoweringTest, GatherWithParameterIndicesAndImplicitIndexVector) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  table = bf16[6,5,3] parameter(0)
  ids = s32[2,4] parameter(1)
  ROOT g = bf16[2,4,2,3] gather(table, ids), offset_dims={2,3}, collapsed_slice_dims={0}, start_index_map={1}, index_vector_dim=2, slice_sizes={1,2,3}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, GatherWithTwoIndexComponentsLinearizedOnTheVpu) {
  auto r = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[7,6,5] parameter(0)
  ids = s32[5,2] constant({{0,0},{6,5},{-3,2},{2,-1},{4,9}})
  ROOT g = f32[5,2,3,5] gather(x, ids), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3,5}
})",
                                 GetParam(), 0, 0);
  EXPECT_GE(CountOps(r, isa::Opcode::kVpuBinary), 4);  // clamp + scale + add per component
}

TEST_P(GatherLoweringTest, GatherWithIndexVectorDimZeroAndSwappedMap) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[4,9] parameter(0)
  ids = s32[2,3] constant({{1,8,-4},{0,3,2}})
  ROOT g = f32[3,2,2] gather(x, ids), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=0, slice_sizes={2,2}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScalarGatherAsInTheWaveEquation) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[] gather(x, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, GatherOfASliceLargerThanVmemIsBlocked) {
  // 290 x 1024 f32 = 1.13 MiB: more than tiny's 1 MiB VMEM, so each slice goes in row blocks.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[300,1024] parameter(0)
  i = s32[1] constant({13})
  ROOT g = f32[290,1024] gather(x, i), offset_dims={0,1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=0, slice_sizes={290,1024}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, KvCacheScatterAssign) {
  for (const char* idx : {"5", "0", "15", "-1", "16"}) {
    auto r = CheckAgainstEvaluator(std::string(R"(
HloModule m
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  cache = f32[16,2,3,8] parameter(0)
  upd = f32[1,2,3,8] parameter(1)
  pos = s32[1] constant({)") + idx + R"(})
  ROOT s = f32[16,2,3,8] scatter(cache, pos, upd), update_window_dims={1,2,3}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
})",
                                   GetParam(), 0, 0);
    EXPECT_EQ(CountOps(r, isa::Opcode::kDmaScatter), 1) << idx;
  }
}

TEST_P(GatherLoweringTest, KvCacheScatterWithParameterPosition) {
  CheckAgainstEvaluator(R"(
HloModule m
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  cache = f32[16,2,3,8] parameter(0)
  pos = s32[1] parameter(1)
  upd = f32[1,2,3,8] parameter(2)
  ROOT s = f32[16,2,3,8] scatter(cache, pos, upd), update_window_dims={1,2,3}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScatterAddCombinesDuplicatesAndSkipsOutOfBounds) {
  CheckAgainstEvaluator(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  ids = s32[6] constant({1,3,1,9,12,-1})
  u = f32[6,4] parameter(1)
  ROOT s = f32[10,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScatterMaxWithTwoComponentsSkipsWholeWindows) {
  CheckAgainstEvaluator(R"(
HloModule m
mx {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] maximum(b, a)
}
ENTRY e {
  x = bf16[6,5,4] parameter(0)
  ids = s64[5,2] constant({{0,0},{5,4},{-1,2},{2,5},{5,4}})
  u = bf16[5,4] parameter(1)
  ROOT s = bf16[6,5,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=mx
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScatterOfAWindowAsInTheWaveEquation) {
  for (const char* idx : {"16", "17", "3"}) {  // window of 4 rows into 20: 17 is skipped
    CheckAgainstEvaluator(std::string(R"(
HloModule m
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[20,16] parameter(0)
  i = s32[1] constant({)") + idx +
                              R"(})
  u = f32[4,16] parameter(1)
  ROOT s = f32[20,16] scatter(x, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, unique_indices=true, to_apply=assign
})",
                          GetParam(), 0, 0);
  }
}

TEST_P(GatherLoweringTest, DynamicSliceClampsEachStart) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[10,12] parameter(0)
  i = s32[] constant(7)
  j = s32[] constant(-3)
  ROOT d = f32[4,5] dynamic-slice(x, i, j), dynamic_slice_sizes={4,5}
})",
                        GetParam(), 0, 0);
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[9,3,12] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  k = s32[] parameter(3)
  ROOT d = f32[2,3,4] dynamic-slice(x, i, j, k), dynamic_slice_sizes={2,3,4}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, DynamicUpdateSliceClampsEachStart) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[10,12] parameter(0)
  u = f32[3,4] parameter(1)
  i = s32[] constant(8)
  j = s32[] constant(2)
  ROOT d = f32[10,12] dynamic-update-slice(x, u, i, j)
})",
                        GetParam(), 0, 0);
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = s32[16,8] parameter(0)
  u = s32[2,8] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = s32[16,8] dynamic-update-slice(x, u, i, j)
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, EmptyIndicesGatherNothingAndScatterCopies) {
  CheckAgainstEvaluator(R"(
HloModule m
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  ids = s32[0] parameter(1)
  u = f32[0,4] parameter(2)
  g = f32[0,4] gather(x, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  s = f32[10,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
  ROOT t = (f32[0,4], f32[10,4]) tuple(g, s)
})",
                        GetParam(), 0, 0);
}

// Batching dimensions (JAX's vmapped indexing: jnp.take_along_axis over a batch) are normalized
// into one more index component per batch dimension (batched-gather-scatter-normalizer).
TEST_P(GatherLoweringTest, GatherWithBatchingDimensionsTakesAlongTheLastAxis) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  logits = f32[3,4,10] parameter(0)
  labels = s32[3,4,1] constant({{{0},{9},{4},{12}},{{-1},{3},{3},{8}},{{1},{2},{5},{7}}})
  ROOT g = f32[3,4] gather(logits, labels), offset_dims={}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1}, index_vector_dim=2, slice_sizes={1,1,1}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, GatherWithABatchingDimensionImplicitIndexVectorAndU8Indices) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = bf16[5,6,4] parameter(0)
  ids = u8[2,5] constant({{0,1,2,3,250},{5,4,3,2,1}})
  ROOT g = bf16[2,5,4] gather(x, ids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1,4}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScatterAddWithBatchingDimensions) {
  CheckAgainstEvaluator(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,9,3] parameter(0)
  ids = s32[6,4,1] parameter(1)
  u = f32[6,4,3] parameter(2)
  ROOT s = f32[4,9,3] scatter(x, ids, u), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={1}, index_vector_dim=2, to_apply=add
})",
                        GetParam(), 1e-6, 1e-6);
}

// Offset / window dimensions before the batch dimensions (x[:, ids], index_select along dim 1) are
// moved last by trailing-window-dims: a gather into the canonical order and a transpose back, or
// transposed updates.
TEST_P(GatherLoweringTest, GatherAlongAMiddleAxisWithLeadingOffsetDims) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[4,50,8] parameter(0)
  ids = s32[6,1] constant({{0},{49},{-3},{60},{7},{7}})
  ROOT g = f32[4,6,8] gather(x, ids), offset_dims={0,2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={4,1,8}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, GatherWithInterleavedOffsetAndBatchDims) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = bf16[3,9,5] parameter(0)
  ids = s32[2,4,2] parameter(1)
  ROOT g = bf16[2,3,4,2] gather(x, ids), offset_dims={1,3}, collapsed_slice_dims={1}, start_index_map={1,2}, index_vector_dim=2, slice_sizes={3,1,2}
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, ScatterWithLeadingUpdateWindowDims) {
  CheckAgainstEvaluator(R"(
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
})",
                        GetParam(), 1e-6, 1e-6);
}

TEST_P(GatherLoweringTest, VariadicScatterWithALeadingWindowDimTransposesEveryUpdate) {
  CheckAgainstEvaluator(R"(
HloModule m
f {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  ROOT t = (f32[], s32[]) tuple(c, d)
}
ENTRY e {
  x = f32[3,10] parameter(0)
  y = s32[3,10] parameter(1)
  ids = s32[5] constant({9, 0, 4, 2, 7})
  u = f32[3,5] parameter(2)
  v = s32[3,5] parameter(3)
  ROOT s = (f32[3,10], s32[3,10]) scatter(x, y, ids, u, v), update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=f
})",
                        GetParam(), 0, 0);
}

// unique_indices=true scatters whose combiner the DMA does not run (unique-scatter-expander):
// assignment scatters place the updates and a hit mask, the combiner runs element by element.
TEST_P(GatherLoweringTest, UniqueVariadicScatterWithAMixingCombinerKeepsTheLargerKey) {
  CheckAgainstEvaluator(R"(
HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[12,4] parameter(0)
  y = s32[12,4] parameter(1)
  ids = s32[5,1] constant({{7},{0},{11},{30},{3}})
  u = f32[5,4] parameter(2)
  w = s32[5,4] parameter(3)
  ROOT s = (f32[12,4], s32[12,4]) scatter(x, y, ids, u, w), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=argmax
})",
                        GetParam(), 0, 0);
}

TEST_P(GatherLoweringTest, UniqueScatterWithAMultiplyCombiner) {
  CheckAgainstEvaluator(R"(
HloModule m
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  ids = s32[3] constant({9, 2, -1})
  u = f32[3,4] parameter(1)
  ROOT s = f32[10,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=mul
})",
                        GetParam(), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Configs, GatherLoweringTest, ::testing::Values("tiny", "tpu-v4"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(GatherLoweringErrors, UnsupportedFormsSayWhatIsSupported) {
  auto try_compile = [](const std::string& text) {
    auto m = testing::Parse(text);
    if (!m) return Status(InvalidArgument("parse"));
    auto c = Compile(*m, testing::Config("tiny"));
    return c.ok() ? OkStatus() : c.status();
  };
  Status st = try_compile(R"(
HloModule m
ENTRY e {
  x = f32[4,9] parameter(0)
  ids = s32[3,1] parameter(1)
  ROOT g = f32[9,3] gather(x, ids), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,9}
})");
  EXPECT_TRUE(st.ok()) << st.message();  // leading offset dims: moved last (trailing-window-dims)
  st = try_compile(R"(
HloModule m
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[10,4] parameter(0)
  ids = s32[2] parameter(1)
  u = f32[2,4] parameter(2)
  ROOT s = f32[10,4] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
})");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("only assignment"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("test.hlo:"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tpusim::compiler
