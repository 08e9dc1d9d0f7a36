// Slices that are one contiguous run of their operand (x[1:], a row block) are views of its buffer:
// no kernel, no allocation. gather / dynamic-slice with constant starts become static slices
// (canonicalize). Checked against the evaluator, and by the code: a view emits no instructions.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "compiler/passes/canonicalize.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::InstructionsTagged;

TEST(SliceViewTest, ContiguousSlicesAreViewsForEveryKindOfReader) {
  auto run = CheckAgainstEvaluator(R"(
HloModule views
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[9,16] parameter(0)
  w = f32[16,8] parameter(1)
  y = f32[4,5,6] parameter(2)
  tail = f32[8,16] slice(x), slice={[1:9], [0:16]}
  head = f32[8,16] slice(x), slice={[0:8], [0:16]}
  diff = f32[8,16] subtract(tail, head)
  d = f32[8,8] dot(tail, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  block = f32[1,3,6] slice(y), slice={[2:3], [1:4], [0:6]}
  z = f32[] constant(0)
  r = f32[1] reduce(block, z), dimensions={1,2}, to_apply=add
  ROOT t = (f32[8,16], f32[8,8], f32[1], f32[8,16]) tuple(diff, d, r, tail)
}
)",
                                   "tiny", 1e-4, 1e-4);
  for (const char* view : {"tail", "head", "block"}) {
    EXPECT_EQ(InstructionsTagged(run.compiled.program, view), 0) << view;
  }
}

// A strided slice and one cutting a middle dimension under a partial leading one are copies.
TEST(SliceViewTest, NonContiguousSlicesAreCopied) {
  auto run = CheckAgainstEvaluator(R"(
HloModule copies
ENTRY e {
  y = f32[4,5,6] parameter(0)
  a = f32[2,3,6] slice(y), slice={[1:3], [1:4], [0:6]}
  b = f32[4,5,3] slice(y), slice={[0:4], [0:5], [0:6:2]}
  ROOT t = (f32[2,3,6], f32[4,5,3]) tuple(a, b)
}
)",
                                   "tiny", 0, 0);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "a"), 0);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "b"), 0);
}

// The old value of x is read through a view after x is updated: the update may not happen in place.
TEST(SliceViewTest, AViewReadAfterAnUpdateKeepsTheUpdateOutOfPlace) {
  CheckAgainstEvaluator(R"(
HloModule update
ENTRY e {
  x = f32[6,4] parameter(0)
  u = f32[1,4] parameter(1)
  tail = f32[5,4] slice(x), slice={[1:6], [0:4]}
  i = s32[] constant(3)
  j = s32[] constant(0)
  x1 = f32[6,4] dynamic-update-slice(x, u, i, j)
  n = f32[5,4] negate(tail)
  ROOT t = (f32[6,4], f32[5,4]) tuple(x1, n)
}
)",
                        "tiny", 0, 0);
}

// jax_wave_equation_pmap.hlo's shifts: gathers with constant starts (one clamped) are static
// slices.
constexpr char kStaticGathers[] = R"(
HloModule shifts
ENTRY e {
  x = f32[8,6] parameter(0)
  one = s32[1] constant({1})
  rows = f32[7,6] gather(x, one), offset_dims={0,1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=0, slice_sizes={7,6}
  cols = f32[8,5] gather(x, one), offset_dims={0,1}, collapsed_slice_dims={}, start_index_map={1}, index_vector_dim=0, slice_sizes={8,5}
  big = s32[] constant(100)
  zero = s32[] constant(0)
  clamped = f32[3,6] dynamic-slice(x, big, zero), dynamic_slice_sizes={3,6}
  ROOT t = (f32[7,6], f32[8,5], f32[3,6]) tuple(rows, cols, clamped)
}
)";

TEST(SliceViewTest, GathersAndDynamicSlicesWithConstantStartsBecomeSlices) {
  auto m = testing::Parse(kStaticGathers);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Canonicalize().Run(*m).ok());
  int slices = 0;
  for (const auto& i : m->entry_computation()->instructions()) {
    EXPECT_NE(i->opcode(), hlo::HloOpcode::kGather);
    EXPECT_NE(i->opcode(), hlo::HloOpcode::kDynamicSlice);
    if (i->opcode() == hlo::HloOpcode::kSlice) {
      ++slices;
      if (i->shape().dimensions() == std::vector<int64_t>{3, 6}) {
        EXPECT_EQ(i->slice_starts(), (std::vector<int64_t>{5, 0}));  // 100 clamped to 8 - 3
      }
    }
  }
  EXPECT_EQ(slices, 3);
  auto run = CheckAgainstEvaluator(kStaticGathers, "tiny", 0, 0);
  // Rows 1..8 and rows 5..8 are contiguous: views; columns 1..6 of every row are a copy.
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "rows.static"), 0);
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "clamped.static"), 0);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "cols.static"), 0);
}

}  // namespace
}  // namespace tpusim::compiler
