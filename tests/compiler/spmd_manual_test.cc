// spmd-partitioner on manual regions (compiler/passes/spmd_manual.h): hand-written modules of the
// forms jax.shard_map lowers to with the GSPMD partitioner (SPMDFullToShardShape, a body written
// per device with sharding={manual} and its own collectives, SPMDShardToFullShape), each
// partitioned and checked on the evaluator against a hand-written module of its one-device meaning:
// every partition's output must equal its shard of the meaning's output.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/passes/spmd_check.h"
#include "compiler/passes/spmd_manual.h"
#include "compiler/passes/spmd_partitioner.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

using hlo::HloModule;
using hlo::HloOpcode;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "manual.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

// Partitions `manual`, verifies it, checks that no SPMD custom-call is left and that every
// partition matches its shard of `meaning` (same parameters, no manual region). Returns the
// partitioned module.
std::unique_ptr<HloModule> PartitionAndCheck(const std::string& manual,
                                             const std::string& meaning) {
  auto m = Parse(manual);
  auto ref = Parse(meaning);
  if (!m || !ref) return nullptr;
  auto changed = SpmdPartitioner().Run(*m);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  if (!changed.ok()) return nullptr;
  EXPECT_TRUE(*changed);
  Status v = hlo::VerifyModule(*m);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << m->ToString();
  for (const auto& comp : m->computations()) {
    for (const auto& inst : comp->instructions()) {
      EXPECT_NE(inst->opcode(), HloOpcode::kCustomCall) << inst->name() << "\n" << m->ToString();
    }
  }
  auto c = CheckPartitionedModule(*ref, *m);
  EXPECT_TRUE(c.ok()) << c.status().message() << "\n" << m->ToString();
  if (c.ok()) {
    EXPECT_TRUE(c->passed()) << c->first_mismatch << "\n" << m->ToString();
    EXPECT_GT(c->elements_compared, 0);
  }
  return m;
}

int Count(const HloModule& m, HloOpcode op) {
  int n = 0;
  for (const auto& inst : m.entry_computation()->instructions()) n += inst->opcode() == op;
  return n;
}

TEST(SpmdManualTest, FullyManualElementwiseBodyRunsOnEachShard) {
  auto m = PartitionAndCheck(R"(
HloModule shard_map_exp, num_partitions=4
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  s = f32[8,16] custom-call(x), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  m = f32[2,16] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  e = f32[2,16] exponential(m), sharding={manual}
  c = f32[] constant(2)
  b = f32[2,16] broadcast(c), dimensions={}
  y = f32[2,16] multiply(e, b)
  s2 = f32[2,16] custom-call(y), custom_call_target="Sharding", sharding={manual}
  ROOT r = f32[8,16] custom-call(s2), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
})",
                             R"(
HloModule meaning
ENTRY main {
  x = f32[8,16] parameter(0)
  e = f32[8,16] exponential(x)
  c = f32[] constant(2)
  b = f32[8,16] broadcast(c), dimensions={}
  ROOT y = f32[8,16] multiply(e, b)
})");
  ASSERT_NE(m, nullptr);
  // Each partition receives its [2,16] piece and computes on it with no collective.
  EXPECT_EQ(m->entry_computation()->parameter_instructions()[0]->shape().dimensions(),
            (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(Count(*m, HloOpcode::kAllGather) + Count(*m, HloOpcode::kAllReduce), 0);
}

TEST(SpmdManualTest, BodyCollectivesKeepTheirWrittenGroups) {
  // psum over the shard_map's axis: a per-shard row sum, then the all-reduce the body wrote; the
  // replicated result (out_specs=P()) is every partition's value.
  auto m = PartitionAndCheck(R"(
HloModule shard_map_psum, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  s = f32[8,16] custom-call(x), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  m = f32[2,16] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  z = f32[] constant(0)
  r = f32[16] reduce(m, z), dimensions={0}, to_apply=add, sharding={manual}
  ar = f32[16] all-reduce(r), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add, sharding={manual}
  ROOT o = f32[16] custom-call(ar), custom_call_target="SPMDShardToFullShape", sharding={replicated}
})",
                             R"(
HloModule meaning
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(x, z), dimensions={0}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Count(*m, HloOpcode::kAllReduce), 1);  // the body's own, no inserted one
}

TEST(SpmdManualTest, RegionBetweenAutomaticallyPartitionedOps) {
  // A column-parallel dot partitioned automatically, a manual region on its cut result that reads
  // partition-id-free constants whole, and an automatic op on the region's full-size result that
  // wants another cut (an all-gather the partitioner inserts).
  auto m = PartitionAndCheck(R"(
HloModule mixed, num_partitions=2
ENTRY main {
  x = f32[4,8] parameter(0), sharding={replicated}
  w = f32[8,6] parameter(1), sharding={devices=[1,2]<=[2]}
  d = f32[4,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,2]<=[2]}
  s = f32[4,6] custom-call(d), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  m = f32[4,3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  t = f32[4,3] tanh(m)
  n = f32[4,3] negate(t)
  o = f32[4,6] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,2]<=[2]}
  ROOT a = f32[4,6] add(o, o), sharding={replicated}
})",
                             R"(
HloModule meaning
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,6] parameter(1)
  d = f32[4,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,6] tanh(d)
  n = f32[4,6] negate(t)
  ROOT a = f32[4,6] add(n, n)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Count(*m, HloOpcode::kAllGather), 1);  // the replicated root from the cut region
}

TEST(SpmdManualTest, ReshardsTheOperandBeforeEnteringTheRegion) {
  // The value is replicated, the region wants it cut along dimension 1: each partition takes its
  // piece locally (no collective).
  auto m = PartitionAndCheck(R"(
HloModule enter_cut, num_partitions=2
ENTRY main {
  x = f32[4,8] parameter(0), sharding={replicated}
  s = f32[4,8] custom-call(x), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  m = f32[4,4] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[4,4] sqrt(m), sharding={manual}
  ROOT o = f32[4,8] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,2]<=[2]}
})",
                             R"(
HloModule meaning
ENTRY main {
  x = f32[4,8] parameter(0)
  ROOT n = f32[4,8] sqrt(x)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Count(*m, HloOpcode::kAllGather) + Count(*m, HloOpcode::kAllReduce), 0);
}

TEST(SpmdManualTest, PartiallyManualRegionWholeOnEachManualGroup) {
  // A 2x2 mesh (a, b), manual over a only: the body's values are whole on both devices of each
  // group of a ({manual, replicated} subgroups), and its psum over a uses groups {0,2},{1,3}.
  auto m = PartitionAndCheck(R"(
HloModule partial_manual, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  s = f32[8,16] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  m = f32[4,16] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  z = f32[] constant(0)
  r = f32[16] reduce(m, z), dimensions={0}, to_apply=add, sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}
  ar = f32[16] all-reduce(r), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add, sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}
  ROOT o = f32[16] custom-call(ar), custom_call_target="SPMDShardToFullShape", sharding={replicated}
})",
                             R"(
HloModule meaning
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(x, z), dimensions={0}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
}

TEST(SpmdManualTest, ManualShardingsAreRecognised) {
  auto m = Parse(R"(
HloModule q, num_partitions=2
ENTRY main {
  x = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  m = f32[2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2] negate(m)
  ROOT o = f32[4] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2]<=[2]}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(spmd::HasManualSharding(*m));
  EXPECT_TRUE(NeedsSpmdPartitioning(*m));
  auto region = spmd::ManualRegion(*m);
  ASSERT_TRUE(region.ok()) << region.status().message();
  // m (entered), n (computed from it); not the parameter, not the ShardToFull.
  EXPECT_EQ(region->size(), 2u);
}

// Each refused form: Unimplemented (or InvalidArgument), located at the instruction, naming what
// is wrong; the module is left unchanged.
void ExpectRefused(const std::string& text, StatusCode code, const std::string& what) {
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  const std::string before = m->ToString();
  auto changed = SpmdPartitioner().Run(*m);
  ASSERT_FALSE(changed.ok()) << text;
  EXPECT_EQ(changed.status().code(), code) << changed.status().message();
  EXPECT_NE(changed.status().message().find(what), std::string::npos)
      << changed.status().message();
  EXPECT_NE(changed.status().message().find("manual.hlo:"), std::string::npos)
      << changed.status().message();
  EXPECT_EQ(m->ToString(), before);
}

TEST(SpmdManualTest, UnsupportedManualFormsAreLocatedErrors) {
  // Manual over one subgroup and also cut over the other devices.
  ExpectRefused(R"(
HloModule q, num_partitions=4
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[2,2]<=[4]}
  m = f32[4,16] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  n = f32[4,16] negate(m), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  ROOT o = f32[8,16] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})",
                StatusCode::kUnimplemented, "%m (custom-call): sharding={devices=[1,2,2]");
  // The root left in the region.
  ExpectRefused(R"(
HloModule q, num_partitions=2
ENTRY main {
  x = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  m = f32[2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT n = f32[2] negate(m), sharding={manual}
})",
                StatusCode::kUnimplemented, "%n (negate): the result of the ENTRY computation");
  // A manual parameter.
  ExpectRefused(R"(
HloModule q, num_partitions=2
ENTRY main {
  x = f32[2] parameter(0), sharding={manual}
  n = f32[2] negate(x)
  ROOT o = f32[4] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2]<=[2]}
})",
                StatusCode::kUnimplemented, "%x (parameter): the parameter");
  // The operand's cut does not give pieces of the result's shape.
  ExpectRefused(R"(
HloModule q, num_partitions=2
ENTRY main {
  x = f32[4,6] parameter(0), sharding={devices=[1,2]<=[2]}
  m = f32[2,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2,6] negate(m)
  ROOT o = f32[4,6] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
})",
                StatusCode::kUnimplemented, "%m (custom-call): the result f32[2,6] is not the piece");
  // The full-size result cut by its sharding is not the region's piece.
  ExpectRefused(R"(
HloModule q, num_partitions=2
ENTRY main {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  m = f32[2,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2,6] negate(m)
  ROOT o = f32[4,6] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,2]<=[2]}
})",
                StatusCode::kUnimplemented, "%o (custom-call): its operand %n f32[2,6]");
}

}  // namespace
}  // namespace tpusim::compiler
