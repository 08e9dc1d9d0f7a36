// map-expander (compiler/passes/map_expander.h): a map whose to_apply is made of elementwise scalar
// ops becomes those ops on whole arrays (no map left, values the evaluator's bit for bit).
#include "compiler/passes/map_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

constexpr char kMap[] = R"(HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] multiply(a, b)
  ROOT t = f32[] add(s, a)
}
ENTRY e {
  x = f32[8,128] parameter(0)
  y = f32[8,128] parameter(1)
  ROOT m = f32[8,128] map(x, y), dimensions={0,1}, to_apply=f
})";

TEST(MapExpanderTest, AnElementwiseMapBecomesItsOpsOnWholeArrays) {
  auto m = testing::Parse(kMap);
  MapExpander pass;
  ASSERT_TRUE(pass.Run(*m).value());
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), hlo::HloOpcode::kAdd);
  EXPECT_EQ(root->shape().dimensions(), (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(root->operand(0)->opcode(), hlo::HloOpcode::kMultiply);
  EXPECT_EQ(root->operand(1)->opcode(), hlo::HloOpcode::kParameter);
  for (const auto& i : m->entry_computation()->instructions()) {
    EXPECT_NE(i->opcode(), hlo::HloOpcode::kMap);
  }
  EXPECT_FALSE(pass.Run(*m).value());
}

TEST(MapExpanderTest, TheExpandedMapHasTheEvaluatorsBits) { testing::ExpectSameBits(kMap); }

}  // namespace
}  // namespace tpusim::compiler
