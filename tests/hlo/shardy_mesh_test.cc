// A JAX module sharded on a Mesh (Shardy's `xla.sdy.meshes` in the header, HLO shardings on its
// values) runs on the mesh's devices: the parser sets num_partitions to the mesh size, as jax.jit
// compiles it; nothing changes for a module that says its own device counts or shards nothing.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

std::string Module(const std::string& header, const std::string& sharding) {
  return "HloModule jit_f" + header + "\n\nENTRY main {\n  a = f32[16,64]{1,0} parameter(0)" +
         sharding + "\n  ROOT t = f32[16,64]{1,0} tanh(a)\n}\n";
}

const char* kMesh =
    ", frontend_attributes={xla.sdy.meshes={empty_mesh = #sdy.mesh<[]>, mesh = "
    "#sdy.mesh<[\"x\"=2, \"y\"=4]>}}";

int64_t Partitions(const std::string& text) {
  auto m = ParseHloModule(text, "m.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? (*m)->num_partitions() : -1;
}

TEST(ShardyMeshTest, AShardedModuleRunsOnItsLargestMesh) {
  EXPECT_EQ(Partitions(Module(kMesh, ", sharding={devices=[2,4]<=[8]}")), 8);
  EXPECT_EQ(Partitions(Module(kMesh, ", sharding={devices=[4,1,2]<=[2,4]T(1,0) "
                                     "last_tile_dim_replicate}")),
            8);
}

TEST(ShardyMeshTest, StatedCountsAndUnshardedModulesAreKept) {
  EXPECT_EQ(Partitions(Module(kMesh, "")), 1);
  EXPECT_EQ(Partitions(Module(kMesh, ", sharding={replicated}")), 1);
  EXPECT_EQ(Partitions(Module(std::string(kMesh) + ", num_partitions=2",
                              ", sharding={devices=[2,1]<=[2]}")),
            2);
  EXPECT_EQ(Partitions(Module(std::string(kMesh) + ", replica_count=2",
                              ", sharding={devices=[2,1]<=[2]}")),
            1);
  EXPECT_EQ(Partitions(Module("", ", sharding={devices=[2,4]<=[8]}")), 1);
}

TEST(ShardyMeshTest, AMeshOverTheDeviceLimitIsALocatedError) {
  auto m = ParseHloModule(
      Module(", frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=99999999999]>}}",
             ", sharding={devices=[2,1]<=[2]}"),
      "m.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("m.hlo:1:1"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("Shardy mesh"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::hlo
