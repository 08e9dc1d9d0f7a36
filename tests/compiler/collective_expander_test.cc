// collective-expander (compiler/passes/collective_expander.h): all-gather / reduce-scatter along an
// inner dimension run along dimension 0 between transposes; all-to-all becomes N-1 rounds of
// collective-permute; collective-broadcast becomes an all-gather keeping row 0. Every device's
// values are the evaluator's bits before and after.
#include "compiler/passes/collective_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using V = std::vector<int64_t>;

constexpr char kInnerDims[] = R"(
HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3,8,5] parameter(0)
  ag = f32[3,16,5] all-gather(x), replica_groups={{0,1},{2,3}}, dimensions={1}
  rs = f32[3,8,5] reduce-scatter(ag), replica_groups={{0,1},{2,3}}, dimensions={1}, to_apply=add
  ROOT t = (f32[3,16,5], f32[3,8,5]) tuple(ag, rs)
})";

constexpr char kAllToAll[] = R"(
HloModule m, replica_count=4
ENTRY e {
  x = f32[8,6] parameter(0)
  a = f32[8,6] all-to-all(x), replica_groups={{0,1,2,3}}, dimensions={0}
  y = f32[2,3] parameter(1)
  z = f32[2,3] parameter(2)
  b = (f32[2,3], f32[2,3]) all-to-all(y, z), replica_groups={{1,0},{3,2}}
  b0 = f32[2,3] get-tuple-element(b), index=0
  b1 = f32[2,3] get-tuple-element(b), index=1
  ROOT t = (f32[8,6], f32[2,3], f32[2,3]) tuple(a, b0, b1)
})";

constexpr char kBroadcast[] = R"(
HloModule m, replica_count=4
ENTRY e {
  x = f32[4,3] parameter(0)
  ROOT b = f32[4,3] collective-broadcast(x), replica_groups={{2,0},{1,3}}
})";

TEST(CollectiveExpanderTest, InnerDimensionGatherAndScatterRunAlongDimensionZero) {
  CollectiveExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kInnerDims);
  ASSERT_NE(m, nullptr);
  for (const auto& i : m->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kAllGather || i->opcode() == HloOpcode::kReduceScatter) {
      EXPECT_EQ(i->dimensions(), V{0}) << i->name();
      EXPECT_EQ(i->operand(0)->opcode(), HloOpcode::kTranspose) << i->name();
    }
  }
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kTranspose), 4);
}

TEST(CollectiveExpanderTest, AllToAllBecomesRoundsOfCollectivePermute) {
  CollectiveExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kAllToAll);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kAllToAll), 0);
  // Groups of 4: 3 rounds; groups of 2 with two operands: 1 round per operand at most.
  EXPECT_GE(testing::CountOpcode(*m, HloOpcode::kCollectivePermute), 4);
}

TEST(CollectiveExpanderTest, CollectiveBroadcastBecomesAnAllGatherKeepingTheSource) {
  CollectiveExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kBroadcast);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kCollectiveBroadcast), 0);
  EXPECT_EQ(testing::CountOpcode(*m, HloOpcode::kAllGather), 1);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().dimensions(), (V{4, 3}));
}

TEST(CollectiveExpanderTest, OutermostCollectivesAreLeft) {
  CollectiveExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m, replica_count=2
ENTRY e {
  x = f32[1,8,5] parameter(0)
  ROOT ag = f32[1,16,5] all-gather(x), replica_groups={{0,1}}, dimensions={1}
})");
}

}  // namespace
}  // namespace tpusim::compiler
