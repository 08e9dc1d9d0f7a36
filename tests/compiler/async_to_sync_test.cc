// async-to-sync (compiler/passes/async_to_sync.h): each start/done pair becomes its synchronous
// op with the start's operands and attributes and the done's result; the pair's instructions go.
#include "compiler/passes/async_to_sync.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

// An all-reduce pair over `groups` feeding a copy pair, in a module of `replicas` replicas.
std::string Pairs(int replicas, const std::string& groups) {
  return "HloModule async, replica_count=" + std::to_string(replicas) + R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16] parameter(0)
  ars = f32[16] all-reduce-start(x), replica_groups=)" + groups + R"(, to_apply=sum
  ard = f32[16] all-reduce-done(ars)
  cs = (f32[16], f32[16], u32[]) copy-start(ard)
  ROOT cd = f32[16] copy-done(cs)
})";
}

TEST(AsyncToSyncTest, PairsBecomeTheirSynchronousOpsKeepingOperandsAndAttributes) {
  auto m = testing::Parse(Pairs(2, "{{0,1}}"));
  AsyncToSync pass;
  ASSERT_TRUE(pass.Run(*m).value());
  const hlo::HloComputation& e = *m->entry_computation();
  EXPECT_EQ(e.instructions().size(), 3u);  // x, all-reduce, copy
  const hlo::HloInstruction* copy = e.root_instruction();
  ASSERT_EQ(copy->opcode(), hlo::HloOpcode::kCopy);
  EXPECT_EQ(copy->shape().dimensions(), std::vector<int64_t>{16});
  const hlo::HloInstruction* ar = copy->operand(0);
  ASSERT_EQ(ar->opcode(), hlo::HloOpcode::kAllReduce);
  EXPECT_EQ(ar->operand(0)->opcode(), hlo::HloOpcode::kParameter);
  ASSERT_NE(ar->to_apply(), nullptr);
  EXPECT_EQ(ar->to_apply()->root_instruction()->opcode(), hlo::HloOpcode::kAdd);
  EXPECT_EQ(ar->replica_groups().ToString(), "{{0,1}}");
  EXPECT_FALSE(pass.Run(*m).value());  // nothing left to rewrite
}

TEST(AsyncToSyncTest, TheModuleRunsWithTheEvaluatorsBits) {
  testing::ExpectSameBits(Pairs(1, "{{0}}"));
}

}  // namespace
}  // namespace tpusim::compiler
