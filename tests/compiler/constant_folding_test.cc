// constant-folding: small data-independent computations on constants become constants with the
// evaluator's values; broadcasts the VPU reads in place, dots and device-dependent ops stay.
#include "compiler/lower/lowerer.h"
#include "compiler/passes/constant_folding.h"

#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

const hlo::HloInstruction* Find(const hlo::HloModule& m, const std::string& name) {
  return m.entry_computation()->FindInstruction(name);
}

// jnp.pad's index arithmetic as JAX dumps it (jax_wave_equation_pmap.hlo's jit__pad): compare and
// select on constants, a concatenate of broadcasts, a gather from a converted broadcast.
constexpr char kPadIndexing[] = R"(
HloModule fold
ENTRY e {
  x = f32[6,4] parameter(0)
  p = s32[] constant(3)
  b = s32[2,2] broadcast(p), dimensions={}
  cv = f32[2,2] convert(b)
  z = s32[] constant(0)
  one = s32[] constant(1)
  lt = pred[] compare(z, one), direction=LT
  two = s32[] constant(2)
  a = s32[] add(one, two)
  sel = s32[] select(lt, a, z)
  s1 = s32[1] broadcast(sel), dimensions={}
  s0 = s32[1] broadcast(one), dimensions={}
  idx = s32[2] concatenate(s1, s0), dimensions={0}
  g = f32[] gather(cv, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}
  ROOT pd = f32[7,4] pad(x, g), padding=0_1x0_0
}
)";

TEST(ConstantFoldingTest, PadIndexArithmeticFoldsToItsValue) {
  testing::CheckAgainstEvaluator(kPadIndexing, "tiny");
  auto m = testing::Parse(kPadIndexing);
  ASSERT_NE(m, nullptr);
  auto changed = ConstantFolding(IsVirtualBroadcast).Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const hlo::HloInstruction* g = Find(*m, "g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->opcode(), hlo::HloOpcode::kConstant);
  EXPECT_EQ(g->literal().float_values, std::vector<double>{3.0});
  // Everything that only fed the gather is gone: parameter, constant g, pad.
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
  EXPECT_EQ(m->entry_computation()->root_instruction()->opcode(), hlo::HloOpcode::kPad);
}

TEST(ConstantFoldingTest, LeavesVirtualBroadcastsDotsAndDeviceIdsAlone) {
  auto m = testing::Parse(R"(
HloModule keep
ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4,4] broadcast(z), dimensions={}
  r = f32[4,4] maximum(x, zb)
  w = f32[4,4] constant({{1,0,0,0},{0,1,0,0},{0,0,1,0},{0,0,0,1}})
  d = f32[4,4] dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  id = u32[] replica-id()
  ROOT t = (f32[4,4], f32[4,4], u32[]) tuple(r, d, id)
}
)");
  ASSERT_NE(m, nullptr);
  auto changed = ConstantFolding(IsVirtualBroadcast).Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(Find(*m, "zb")->opcode(), hlo::HloOpcode::kBroadcast);
  EXPECT_EQ(Find(*m, "d")->opcode(), hlo::HloOpcode::kDot);
}

TEST(ConstantFoldingTest, LargeResultsStay) {
  auto m = testing::Parse(R"(
HloModule big
ENTRY e {
  i = s32[40,40] iota(), iota_dimension=0
  ROOT n = s32[40,40] negate(i)
}
)");
  ASSERT_NE(m, nullptr);
  auto changed = ConstantFolding(IsVirtualBroadcast).Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);  // 1600 elements > kMaxFoldedElements
}

}  // namespace
}  // namespace tpusim::compiler
