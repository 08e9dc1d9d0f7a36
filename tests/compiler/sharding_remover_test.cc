// sharding-remover (compiler/passes/sharding_remover.h): `Sharding` annotations of an unpartitioned
// module and Shardy's `xla.sdy.FuncResultSharding` are identities — the module runs and its values
// are the evaluator's bit for bit — while a partitioned module keeps `Sharding` for the partitioner.
#include "compiler/passes/sharding_remover.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

std::string Annotated(const std::string& header) {
  return "HloModule m" + header + R"(
ENTRY e {
  a = f32[16,64] parameter(0)
  w = f32[64,32] parameter(1)
  d = f32[16,32] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[16,32] custom-call(d), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  t = f32[16,32] tanh(c)
  r = f32[16,32] custom-call(t), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
  ROOT g = (f32[16,32]) tuple(r)
})";
}

int CountTarget(const hlo::HloModule& m, const std::string& target) {
  int n = 0;
  for (const auto& i : m.entry_computation()->instructions()) {
    n += i->opcode() == hlo::HloOpcode::kCustomCall && i->custom_call_target() == target;
  }
  return n;
}

TEST(ShardingRemoverTest, AnnotationsOfAnUnpartitionedModuleRunAsIdentities) {
  testing::ExpectSameBits(Annotated(""));
}

TEST(ShardingRemoverTest, APartitionedModuleKeepsShardingForThePartitioner) {
  auto m = testing::Parse(Annotated(", num_partitions=2"));
  ShardingRemover pass;
  ASSERT_TRUE(pass.Run(*m).value());
  EXPECT_EQ(CountTarget(*m, "Sharding"), 1);
  EXPECT_EQ(CountTarget(*m, "xla.sdy.FuncResultSharding"), 0);
  auto single = testing::Parse(Annotated(""));
  ASSERT_TRUE(pass.Run(*single).value());
  EXPECT_EQ(CountTarget(*single, "Sharding"), 0);
  EXPECT_EQ(single->entry_computation()->root_instruction()->operand(0)->opcode(),
            hlo::HloOpcode::kTanh);
}

}  // namespace
}  // namespace tpusim::compiler
