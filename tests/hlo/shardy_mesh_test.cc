// A JAX module sharded on a Mesh (Shardy's `xla.sdy.meshes` in the header, HLO shardings on its
// values) runs on the mesh's devices: the parser sets num_partitions to the mesh size, as jax.jit
// compiles it; nothing changes for a module that says its own device counts or shards nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// jax.shard_map over every axis of the mesh (as JAX lowers it, Shardy round-trip custom calls around
// a call of the manual body): the body runs on every device as replicas, each on its own shard.
std::string ShardMap(const std::string& manual_axes) {
  return R"(HloModule jit_f, entry_computation_layout={(f32[16,64]{1,0}, f32[64,32]{1,0})->f32[16,32]{1,0}}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=4]>}}

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add.1 = f32[] add(a, b)
}

xla.sdy.manual_computation_body.2 {
  l = f32[8,16]{1,0} parameter(0)
  r = f32[16,32]{1,0} parameter(1)
  d = f32[8,32]{1,0} dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[8,32]{1,0} all-reduce(d), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=region_0.1
}

ENTRY main.3 {
  a.1 = f32[16,64]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  w.1 = f32[64,32]{1,0} parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  g = (f32[8,16]{1,0}, f32[16,32]{1,0}) custom-call(a.1, w.1), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\")" + manual_axes + R"(\"}>"}
  g0 = f32[8,16]{1,0} get-tuple-element(g), index=0
  g1 = f32[16,32]{1,0} get-tuple-element(g), index=1
  c = f32[8,32]{1,0} call(g0, g1), to_apply=xla.sdy.manual_computation_body.2
  o = f32[16,32]{1,0} custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\")" + manual_axes + R"(\"}>"}
  ROOT f = f32[16,32]{1,0} custom-call(o), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
})";
}

// As jax.pmap lowers (JAX 0.7): each result also goes through a reshape to its own shape, with
// a sharding annotation — an identity, which leaves the shard_map fully manual.
TEST(ShardyMeshTest, IdentityReshapesOfTheResultsKeepTheShardMapFullyManual) {
  std::string text = ShardMap(R"(x\", \"y)");
  const std::string root = "  ROOT f = f32[16,32]{1,0} custom-call(o)";
  const size_t at = text.find(root);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "  r = f32[16,32]{1,0} reshape(o), sharding={devices=[2,4]<=[8]}\n");
  auto m = ParseHloModule(text, "m.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->replica_count(), 8);
  EXPECT_EQ((*m)->entry_computation()->name(), "xla.sdy.manual_computation_body.2");
}

TEST(ShardyMeshTest, AFullyManualShardMapRunsItsBodyOnEveryDevice) {
  auto m = ParseHloModule(ShardMap(R"(x\", \"y)"), "m.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->replica_count(), 8);
  EXPECT_EQ((*m)->num_partitions(), 1);
  EXPECT_EQ((*m)->entry_computation()->name(), "xla.sdy.manual_computation_body.2");
  EXPECT_EQ((*m)->entry_computation()->parameter_instruction(0)->shape().dimensions(),
            (std::vector<int64_t>{8, 16}));
  EXPECT_EQ((*m)->FindComputation("main.3"), nullptr);
}

// Any other shard_map is refused where it starts, naming its manual axes and the mesh's (before,
// it stayed an SPMD program and failed later on an unknown custom-call target, whose message
// suggested giving it a cost).
TEST(ShardyMeshTest, APartiallyManualShardMapIsALocatedError) {
  auto m = ParseHloModule(ShardMap("x"), "m.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  const std::string& msg = m.status().message();
  EXPECT_EQ(msg.rfind("m.hlo:19:", 0), 0u) << msg;  // the GlobalToLocalShape line
  EXPECT_NE(msg.find("manual over {x} of the mesh's axes {x, y}"), std::string::npos) << msg;
}

TEST(ShardyMeshTest, AShardMapInsideALargerProgramIsALocatedError) {
  std::string text = ShardMap(R"(x\", \"y)");
  const std::string root = "  ROOT f = f32[16,32]{1,0} custom-call(o)";
  const size_t at = text.find(root);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "  n = f32[16,32]{1,0} negate(o)\n");
  text.replace(text.find("custom-call(o)", at + 40), 14, "custom-call(n)");
  auto m = ParseHloModule(text, "m.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("a shard_map inside a larger SPMD program"),
            std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace tpusim::hlo
