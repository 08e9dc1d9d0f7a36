// Tiling (spmd_tiling.h): sharding forms, bad tile assignments, shards and groups, reshapes.
// Propagation and the SPMD check have their own files (spmd_propagation_test.cc,
// spmd_check_test.cc).
#include "compiler/passes/spmd_tiling.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/spmd_test_util.h"

namespace tpusim::compiler::spmd {
namespace {

using testing::ParseSharding;

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

}  // namespace
}  // namespace tpusim::compiler::spmd
