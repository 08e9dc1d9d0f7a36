// sharding propagation (compiler/passes/spmd_propagation.h): annotations spread forward and
// backward through the ENTRY computation; the per-opcode rules it and the partitioner share
// (MakeDotAxes, GatherBatchAxes, ReduceCanAllReduce, KeepsTiling, OperandTilingFor); located
// errors for annotations the partitioner cannot take.
#include "compiler/passes/spmd_propagation.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hlo/parser.h"

namespace tpusim::compiler::spmd {
namespace {

using V = std::vector<int64_t>;

// (Moved from spmd_tiling_test.cc.)
std::map<std::string, std::string> Propagate(const std::string& text) {
  std::map<std::string, std::string> out;
  auto m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return out;
  auto a = PropagateShardings(**m);
  EXPECT_TRUE(a.ok()) << a.status().message();
  if (!a.ok()) return out;
  for (const auto& [inst, t] : a->array) out[inst->name()] = t.ToString();
  return out;
}

// A split spreads backward through a dot (to the operand whose free dimension it cuts) and
// elementwise ops, forward through reduce, and {replicated} values stay whole.
TEST(SpmdPropagationTest, BackwardThroughDotForwardThroughReduce) {
  auto t = Propagate(R"(HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,4]{1,0} parameter(1)
  %nx = f32[8,16]{1,0} negate(f32[8,16]{1,0} %x)
  %d = f32[8,4]{1,0} dot(f32[8,16]{1,0} %nx, f32[16,4]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1]1,0}
  %zero = f32[] constant(0)
  ROOT %r = f32[8]{0} reduce(f32[8,4]{1,0} %d, f32[] %zero), dimensions={1}, to_apply=%add
}
)");
  EXPECT_EQ(t["nx"], "{devices=[2,1]1,0}");
  EXPECT_EQ(t["x"], "{devices=[2,1]1,0}");
  EXPECT_EQ(t["w"], "{replicated}");
  EXPECT_EQ(t["r"], "{devices=[2]1,0}");
  EXPECT_EQ(t["zero"], "{replicated}");
}


std::unique_ptr<hlo::HloModule> ParseOk(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

const hlo::HloInstruction* Named(const hlo::HloModule& m, const std::string& name) {
  for (const auto& i : m.entry_computation()->instructions()) {
    if (i->name() == name) return i.get();
  }
  ADD_FAILURE() << "no " << name;
  return nullptr;
}

constexpr char kRules[] = R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[2,8,16] parameter(0)
  w = f32[2,16,4] parameter(1)
  d = f32[2,8,4] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  zero = f32[] constant(0)
  one = f32[] constant(1)
  r0 = f32[2,8] reduce(d, zero), dimensions={2}, to_apply=add
  r1 = f32[2,8] reduce(d, one), dimensions={2}, to_apply=add
  r2 = f32[2,8] reduce(d, zero), dimensions={2}, to_apply=sub
  n = f32[2,8] negate(r0)
  t = f32[8,2] transpose(n), dimensions={1,0}
  table = f32[100,32] parameter(2)
  ids = s32[4,6,1] parameter(3)
  g = f32[4,6,32] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}
  ROOT out = (f32[2,8], f32[2,8], f32[8,2], f32[4,6,32]) tuple(r1, r2, t, g)
})";

TEST(SpmdPropagationTest, DotAxesNumberBatchFreeThenContracting) {
  auto m = ParseOk(kRules);
  ASSERT_NE(m, nullptr);
  const DotAxes a = MakeDotAxes(*Named(*m, "d"));
  // D = [batch, lhs free (8), rhs free (4), contracting (16)].
  EXPECT_EQ(a.rank, 4);
  EXPECT_EQ(a.lhs, (V{0, 1, 3}));
  EXPECT_EQ(a.rhs, (V{0, 3, 2}));
  EXPECT_EQ(a.out, (V{0, 1, 2}));
  EXPECT_EQ(a.contracting, (V{3}));
}

TEST(SpmdPropagationTest, ReducesAllReduceOnlyWithAnIdentityInitAndAKnownReducer) {
  auto m = ParseOk(kRules);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(ReduceCanAllReduce(*Named(*m, "r0")));
  EXPECT_FALSE(ReduceCanAllReduce(*Named(*m, "r1")));  // 1 is not add's identity
  EXPECT_FALSE(ReduceCanAllReduce(*Named(*m, "r2")));  // subtract
  EXPECT_TRUE(KeepsTiling(*Named(*m, "n")));
  EXPECT_FALSE(KeepsTiling(*Named(*m, "t")));
  EXPECT_FALSE(KeepsTiling(*Named(*m, "d")));
}

TEST(SpmdPropagationTest, GatherRunsOverItsIndicesBatchDimensions) {
  auto m = ParseOk(kRules);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* g = Named(*m, "g");
  auto axes = GatherBatchAxes(*g);
  ASSERT_TRUE(axes.has_value());
  EXPECT_EQ(*axes, (V{0, 1, -1}));
  // The result cut along its first dimension wants the indices cut the same way, the table whole.
  Tiling cut{{2, 1, 1}, 1, {0, 1}};
  auto ids = OperandTilingFor(*g, 1, cut);
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->tiles, (V{2, 1, 1}));
  auto table = OperandTilingFor(*g, 0, cut);
  ASSERT_TRUE(table.has_value());
  EXPECT_TRUE(table->IsReplicated());
  // A transpose maps the cut to the permuted dimension.
  auto n = OperandTilingFor(*Named(*m, "t"), 0, Tiling{{2, 1}, 1, {1, 0}});
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->tiles, (V{1, 2}));
  EXPECT_EQ(n->devices, (V{1, 0}));
}

// An uneven cut (3 rows over 2 partitions) is a located Unimplemented error naming the value.
TEST(SpmdPropagationTest, AnUnevenCutIsALocatedError) {
  auto m = ParseOk(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[3,4] parameter(0), sharding={devices=[2,1]0,1}
  ROOT n = f32[3,4] negate(x)
})");
  ASSERT_NE(m, nullptr);
  auto a = PropagateShardings(*m);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("test.hlo:3:"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("%x"), std::string::npos) << a.status().message();
}

}  // namespace
}  // namespace tpusim::compiler::spmd
