// Tiling (spmd_tiling.h), sharding propagation (spmd_propagation.h) and the shard extraction of
// the SPMD check (spmd_check.h).
#include "compiler/passes/spmd_tiling.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/passes/spmd_check.h"
#include "compiler/passes/spmd_propagation.h"
#include "hlo/parser.h"

namespace tpusim::compiler::spmd {
namespace {

// The sharding of a parameter written with `sharding` (parsed by the real parser).
hlo::HloSharding ParseSharding(const std::string& sharding,
                               const std::string& shape = "f32[8,16]") {
  const std::string text = "HloModule m\nENTRY %e (p: " + shape + ") -> " + shape +
                           " {\n  ROOT %p = " + shape + " parameter(0), sharding=" + sharding +
                           "\n}\n";
  auto m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  return *(*m)->entry_computation()->root_instruction()->sharding();
}

Tiling Make(const std::string& sharding, int64_t rank, int64_t n) {
  auto t = TilingFromSharding(ParseSharding(sharding), rank, n);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : Tiling::Replicated(rank, n);
}

TEST(SpmdTilingTest, ExplicitIotaAndReplicatedForms) {
  Tiling a = Make("{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", 2, 4);
  Tiling b = Make("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", 2, 4);
  EXPECT_EQ(a.tiles, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.replication, 2);
  EXPECT_EQ(b.devices, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_TRUE(SameLayout(a, b));
  EXPECT_EQ(a.IndexOf(1), (std::vector<int64_t>{0, 1, 0}));  // column tile 1, first copy
  EXPECT_EQ(a.IndexOf(2), (std::vector<int64_t>{0, 0, 1}));
  Tiling r = Make("{replicated}", 2, 4);
  EXPECT_TRUE(r.IsReplicated());
  EXPECT_EQ(r.replication, 4);
  EXPECT_TRUE(Make("{maximal device=3}", 2, 4).IsReplicated());
  // last_tile_dims={replicated} is last_tile_dim_replicate spelled the new way.
  Tiling c = Make("{devices=[1,2,2]0,2,1,3 last_tile_dims={replicated}}", 2, 4);
  EXPECT_TRUE(SameLayout(a, c));
  EXPECT_EQ(a.ToString(), "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}");
  // The order of devices within a replication group does not matter; across tiles it does.
  EXPECT_TRUE(SameLayout(a, Make("{devices=[1,2,2]2,0,3,1 last_tile_dim_replicate}", 2, 4)));
  EXPECT_FALSE(SameLayout(a, Make("{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}", 2, 4)));
}

TEST(SpmdTilingTest, BadTileAssignments) {
  auto big = TilingFromSharding(ParseSharding("{devices=[2,2]0,1,2,3}"), 2, 2);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("mesh of 4 devices, but the module has num_partitions=2"),
            std::string::npos)
      << big.status().message();
  auto dup = TilingFromSharding(ParseSharding("{devices=[2,1]1,1}"), 2, 2);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("not a permutation"), std::string::npos);
  auto maximal = TilingFromSharding(ParseSharding("{maximal device=5}"), 2, 2);
  EXPECT_FALSE(maximal.ok());
  auto subgroup =
      TilingFromSharding(ParseSharding("{devices=[2,1,1]0,1 last_tile_dims={manual}}"), 2, 2);
  ASSERT_FALSE(subgroup.ok());
  EXPECT_EQ(subgroup.status().code(), StatusCode::kUnimplemented);
}

TEST(SpmdTilingTest, ShardsRemapAndGroups) {
  // 2x2 mesh [[0,1],[2,3]]: rows over the first axis, columns over the second.
  Tiling t = Make("{devices=[2,2]0,1,2,3}", 2, 4);
  EXPECT_EQ(ShardDims({8, 16}, t), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(ShardOffsets({8, 16}, t, 3), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(ShardOffsets({8, 16}, t, 1), (std::vector<int64_t>{0, 8}));
  EXPECT_FALSE(DividesEvenly({6, 5}, t));
  // Transpose: dimension 0 of the result is dimension 1 of t.
  Tiling tr = Remap(t, {1, 0});
  EXPECT_EQ(tr.devices, (std::vector<int64_t>{0, 2, 1, 3}));
  // Dropping dimension 1 (a reduce over it): its partitions now hold the same piece.
  Tiling rows = Remap(t, {0});
  EXPECT_EQ(rows.tiles, (std::vector<int64_t>{2}));
  EXPECT_EQ(rows.replication, 2);
  EXPECT_EQ(rows.IndexOf(1)[0], 0);
  EXPECT_EQ(rows.IndexOf(2)[0], 1);
  // Groups differing only along columns (all-reduce after reducing dimension 1).
  EXPECT_EQ(GroupsAlong(t, {1}), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(GroupsAlong(t, {0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(GroupsAlong(t, {0, 1}), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
}

TEST(SpmdTilingTest, ReshapeKeepsAlignedCuts) {
  Tiling t = Make("{devices=[1,2]0,1}", 2, 2);  // [4,6] cut along 6
  auto split = ReshapeTiling({4, 6}, {4, 2, 3}, t);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->tiles, (std::vector<int64_t>{1, 2, 1}));
  auto merged = ReshapeTiling({4, 6}, {24}, t);  // a column cut is not contiguous in [24]
  EXPECT_FALSE(merged.has_value());
  Tiling rows = Make("{devices=[2,1]0,1}", 2, 2);
  auto flat = ReshapeTiling({4, 6}, {24}, rows);  // a row cut is
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->tiles, (std::vector<int64_t>{2}));
}

TEST(SpmdTilingTest, ExtractShardFollowsTheTileAssignment) {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  hlo::Literal full = hlo::Literal::FromVector<float>({4, 6}, v);
  // Columns split 3 ways, device order 2,0,1: partition 0 holds columns 2..3.
  hlo::HloSharding s = ParseSharding("{devices=[1,3]2,0,1}", "f32[4,6]");
  auto p0 = ExtractShard(full, s, 3, 0);
  ASSERT_TRUE(p0.ok()) << p0.status().message();
  EXPECT_EQ(p0->shape().ToString(false), "f32[4,2]");
  EXPECT_EQ(p0->data<float>()[0], 2.0f);
  EXPECT_EQ(p0->data<float>()[1], 3.0f);
  EXPECT_EQ(p0->data<float>()[2], 8.0f);
  auto rep = ExtractShard(full, ParseSharding("{replicated}", "f32[4,6]"), 3, 2);
  ASSERT_TRUE(rep.ok());
  EXPECT_TRUE(rep->BitwiseEqual(full));
  auto bad = ExtractShard(full, s, 3, 3);
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace tpusim::compiler::spmd

namespace tpusim::compiler::spmd {
namespace {

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

}  // namespace
}  // namespace tpusim::compiler::spmd
