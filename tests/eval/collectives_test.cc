// Collectives on 4 replicas in lockstep, with replica groups; each device's input is its replica
// id.
#include "hlo/eval/collectives.h"

#include <gtest/gtest.h>

#include "hlo/eval/evaluator.h"
#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::Values;

std::vector<Literal> RunDevices(const std::string& text, int64_t replicas, int64_t partitions = 1) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  Evaluator ev;
  std::vector<std::vector<Literal>> args(static_cast<size_t>(replicas * partitions));
  auto r = ev.EvaluateReplicated(**module, replicas, partitions, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : std::vector<Literal>{};
}

TEST(CollectivesTest, GroupsOfTwoOnFourReplicas) {
  // Device r holds x = [r, 10 r]. Groups {0,1},{2,3}.
  //  all-reduce(add):      {0,1}: [1, 10]; {2,3}: [5, 50]
  //  all-gather dim 0:     {0,1}: [0,0,1,10]; {2,3}: [2,20,3,30]
  //  reduce-scatter dim 0: sum then member i keeps chunk i: r0 [1], r1 [10], r2 [5], r3 [50]
  //  all-to-all dim 0:     member i gets chunk i of each member: r0 [0, 1], r1 [0, 10], r2 [2, 3],
  //                        r3 [20, 30]
  //  collective-permute {0->1, 1->2, 2->3}: r0 zeros, r1 [0,0], r2 [1,10], r3 [2,20]
  const char* text = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  id = u32[] replica-id()
  f = f32[] convert(id)
  ten = f32[] constant(10)
  f10 = f32[] multiply(f, ten)
  a = f32[1] reshape(f)
  b = f32[1] reshape(f10)
  x = f32[2] concatenate(a, b), dimensions={0}
  ar = f32[2] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add
  ag = f32[4] all-gather(x), replica_groups={{0,1},{2,3}}, dimensions={0}
  rs = f32[1] reduce-scatter(x), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=add
  aa = f32[2] all-to-all(x), replica_groups={{0,1},{2,3}}, dimensions={0}
  cp = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3}}
  ROOT t = (f32[2], f32[4], f32[1], f32[2], f32[2]) tuple(ar, ag, rs, aa, cp)
})";
  std::vector<Literal> r = RunDevices(text, 4);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(Values(r[0].element(0)), (std::vector<double>{1, 10}));
  EXPECT_EQ(Values(r[3].element(0)), (std::vector<double>{5, 50}));
  EXPECT_EQ(Values(r[1].element(1)), (std::vector<double>{0, 0, 1, 10}));
  EXPECT_EQ(Values(r[2].element(1)), (std::vector<double>{2, 20, 3, 30}));
  EXPECT_EQ(Values(r[0].element(2)), (std::vector<double>{1}));
  EXPECT_EQ(Values(r[1].element(2)), (std::vector<double>{10}));
  EXPECT_EQ(Values(r[3].element(2)), (std::vector<double>{50}));
  EXPECT_EQ(Values(r[0].element(3)), (std::vector<double>{0, 1}));
  EXPECT_EQ(Values(r[1].element(3)), (std::vector<double>{0, 10}));
  EXPECT_EQ(Values(r[3].element(3)), (std::vector<double>{20, 30}));
  EXPECT_EQ(Values(r[0].element(4)), (std::vector<double>{0, 0}));
  EXPECT_EQ(Values(r[2].element(4)), (std::vector<double>{1, 10}));
  EXPECT_EQ(Values(r[3].element(4)), (std::vector<double>{2, 20}));
}

TEST(CollectivesTest, EmptyAndIotaGroups) {
  // replica_groups={} = all 4: sum of ids 0+1+2+3 = 6. Iota [2,2]<=[4] = {{0,1},{2,3}}: r3 gets 5.
  const char* text = R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  id = u32[] replica-id()
  x = s32[] convert(id)
  all = s32[] all-reduce(x), replica_groups={}, to_apply=add
  io = s32[] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=add
  ROOT t = (s32[], s32[]) tuple(all, io)
})";
  std::vector<Literal> r = RunDevices(text, 4);
  ASSERT_EQ(r.size(), 4u);
  for (const Literal& d : r) EXPECT_EQ(d.element(0).GetAsInt64(0), 6);
  EXPECT_EQ(r[0].element(1).GetAsInt64(0), 1);
  EXPECT_EQ(r[3].element(1).GetAsInt64(0), 5);
}

TEST(CollectivesTest, GlobalDeviceIdsAcrossPartitions) {
  // 2 replicas x 2 partitions; device d = 2 r + p holds x = d. use_global_device_ids with groups
  // {{0,3},{1,2}}: devices 0,3 -> 3; devices 1,2 -> 3. Cross-replica (no channel) groups {{0,1}}
  // within each partition: p0 devices {0,2} -> 2, p1 devices {1,3} -> 4.
  const char* text = R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  two = u32[] constant(2)
  r2 = u32[] multiply(r, two)
  d = u32[] add(r2, p)
  x = s32[] convert(d)
  g = s32[] all-reduce(x), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  c = s32[] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT t = (s32[], s32[]) tuple(g, c)
})";
  std::vector<Literal> r = RunDevices(text, 2, 2);
  ASSERT_EQ(r.size(), 4u);
  for (const Literal& d : r) EXPECT_EQ(d.element(0).GetAsInt64(0), 3);
  EXPECT_EQ(r[0].element(1).GetAsInt64(0), 2);
  EXPECT_EQ(r[2].element(1).GetAsInt64(0), 2);
  EXPECT_EQ(r[1].element(1).GetAsInt64(0), 4);
  EXPECT_EQ(r[3].element(1).GetAsInt64(0), 4);
}

// A fully manual jax.shard_map (JAX 0.10's pmap and shard_map print no replica_count or
// num_partitions): the parser runs its body as 4 replicas, and its collectives keep the meaning
// they have on 4 partitions. Device d holds x = [d, 10 d] from partition-id (lax.axis_index).
//  collective-permute, channel_id (cross-partition) {0->1, 1->2, 2->3, 3->0}: d0 [3, 30], d2 [1, 10]
//  all-to-all, channel_id, groups {0,1},{2,3} dim 0: d1 [0, 10], d2 [2, 3]
//  all-reduce, channel_id, no global ids, groups {{0}} (cross-replica-and-partition: the one
//    replica's group spans every partition): [6, 60] everywhere
//  all-gather, global ids {0,2},{1,3}: d1 [1, 10, 3, 30]
TEST(CollectivesTest, AFullyManualShardMapBodyKeepsItsPartitionSemanticsAsReplicas) {
  const char* text = R"(HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>}}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
xla.sdy.manual_computation_body.1 {
  p = f32[2] parameter(0)
  id = u32[] partition-id()
  f = f32[] convert(id)
  ten = f32[] constant(10)
  f10 = f32[] multiply(f, ten)
  a = f32[1] reshape(f)
  b = f32[1] reshape(f10)
  x = f32[2] concatenate(a, b), dimensions={0}
  cp = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  aa = f32[2] all-to-all(x), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={0}
  ar = f32[2] all-reduce(x), channel_id=1, replica_groups={{0}}, to_apply=add
  ag = f32[4] all-gather(x), channel_id=1, replica_groups={{0,2},{1,3}}, dimensions={0}, use_global_device_ids=true
  ROOT t = (f32[2], f32[2], f32[2], f32[4]) tuple(cp, aa, ar, ag)
}
ENTRY main.2 {
  a.1 = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  g = f32[2] custom-call(a.1), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
  c = (f32[2], f32[2], f32[2], f32[4]) call(g), to_apply=xla.sdy.manual_computation_body.1
  ROOT o = (f32[8], f32[8], f32[8], f32[16]) custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
})";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_EQ((*module)->replica_count(), 4);
  ASSERT_EQ((*module)->num_partitions(), 1);
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 4; ++d) {
    auto a = Evaluator::MakeRandomArguments(**module, 1, d);
    ASSERT_TRUE(a.ok()) << a.status().message();
    args.push_back(std::move(a).value());
  }
  Evaluator ev;
  auto r = ev.EvaluateReplicated(**module, 4, 1, args);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  const std::vector<Literal>& v = *r;
  EXPECT_EQ(Values(v[0].element(0)), (std::vector<double>{3, 30}));
  EXPECT_EQ(Values(v[2].element(0)), (std::vector<double>{1, 10}));
  EXPECT_EQ(Values(v[1].element(1)), (std::vector<double>{0, 10}));
  EXPECT_EQ(Values(v[2].element(1)), (std::vector<double>{2, 3}));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values(v[d].element(2)), (std::vector<double>{6, 60}));
  EXPECT_EQ(Values(v[1].element(3)), (std::vector<double>{1, 10, 3, 30}));
}

}  // namespace
}  // namespace tpusim::hlo
