// The SPMD value check (compiler/passes/spmd_check.h): shards of a full value follow the tile
// assignment; a hand-partitioned module (as XLA leaves one: sharding on the parameters and root)
// passes the check and a wrong one is reported with its first mismatch; shape mismatches between
// the two modules are errors naming the parameter.
#include "compiler/passes/spmd_check.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "tests/compiler/spmd_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ParseSharding;

// (Moved from spmd_tiling_test.cc.)
TEST(SpmdCheckTest, ExtractShardFollowsTheTileAssignment) {
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

std::unique_ptr<hlo::HloModule> ParseOk(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

// y = x @ w with x's rows split over 2 partitions, w replicated.
constexpr char kFull[] = R"(HloModule full
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,4] negate(d)
})";

std::string Partitioned(const std::string& op) {
  return R"(HloModule part, num_partitions=2
ENTRY e {
  x = f32[4,16] parameter(0), sharding={devices=[2,1]1,0}
  w = f32[16,4] parameter(1), sharding={replicated}
  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[4,4] )" + op + R"((d), sharding={devices=[2,1]1,0}
})";
}

TEST(SpmdCheckTest, AHandPartitionedModulePassesAndAWrongOneIsReported) {
  auto full = ParseOk(kFull);
  auto good = ParseOk(Partitioned("negate"));
  auto bad = ParseOk(Partitioned("abs"));
  ASSERT_TRUE(full && good && bad);
  auto ok = CheckPartitionedModule(*full, *good);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(ok->passed()) << ok->first_mismatch;
  EXPECT_EQ(ok->partitions, 2);
  EXPECT_EQ(ok->elements_compared, 32);
  auto wrong = CheckPartitionedModule(*full, *bad);
  ASSERT_TRUE(wrong.ok()) << wrong.status().message();
  EXPECT_FALSE(wrong->passed());
  EXPECT_GT(wrong->mismatches, 0);
  EXPECT_NE(wrong->first_mismatch.find("partition"), std::string::npos) << wrong->first_mismatch;
}

// Partition 0 holds tile 1 (device order 1,0): rows 4..7 of x and of the result.
TEST(SpmdCheckTest, ArgumentsAndExpectedOutputsAreThePartitionsTiles) {
  auto full = ParseOk(kFull);
  auto part = ParseOk(Partitioned("negate"));
  ASSERT_TRUE(full && part);
  auto args = hlo::Evaluator::MakeRandomArguments(*full, 3);
  ASSERT_TRUE(args.ok());
  auto out = hlo::Evaluator().Evaluate(*full, *args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto p0 = ShardArguments(*part, *args, 0);
  ASSERT_TRUE(p0.ok()) << p0.status().message();
  ASSERT_EQ(p0->size(), 2u);
  EXPECT_EQ((*p0)[0].shape().ToString(false), "f32[4,16]");
  EXPECT_EQ((*p0)[0].data<float>()[0], (*args)[0].data<float>()[4 * 16]);
  EXPECT_TRUE((*p0)[1].BitwiseEqual((*args)[1]));
  auto want = ExpectedPartitionOutput(*part, *out, 0);
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_EQ(want->data<float>()[0], out->data<float>()[4 * 4]);
}

TEST(SpmdCheckTest, AShapeMismatchNamesTheParameter) {
  auto full = ParseOk(kFull);
  auto part = ParseOk(R"(HloModule part, num_partitions=2
ENTRY e {
  x = f32[2,16] parameter(0), sharding={devices=[2,1]0,1}
  w = f32[16,4] parameter(1)
  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[2,4] negate(d)
})");
  ASSERT_TRUE(full && part);
  auto args = hlo::Evaluator::MakeRandomArguments(*full, 3);
  ASSERT_TRUE(args.ok());
  auto p = ShardArguments(*part, *args, 0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("x"), std::string::npos) << p.status().message();
  EXPECT_FALSE(ShardArguments(*part, {(*args)[0]}, 0).ok());  // one argument short
}

}  // namespace
}  // namespace tpusim::compiler
