// Cost analysis numbers on small modules, computed by hand in the comments.
#include "hlo/cost_analysis.h"

#include <gtest/gtest.h>

#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

TEST(CostAnalysisTest, DotElementwiseTranscendentalAndReduce) {
  auto m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  l = f32[2,3,4] parameter(0)
  r = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  x = f32[2,3,5] exponential(d)
  y = f32[2,3,5] multiply(d, x)
  z = f32[] constant(0)
  ROOT s = f32[2,3] reduce(y, z), dimensions={2}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleCost cost = AnalyzeCost(*m);
  // dot: 2 * (2*3*5 = 30 outputs) * (K = 4) = 240 FLOP; bytes 24*4 + 40*4 + 30*4 = 376.
  // exponential: 30 transcendentals, 0 FLOP; bytes 120 + 120 = 240.
  // multiply: 30 FLOP; bytes 3 * 120 = 360.
  // constant / parameters: 0 bytes.
  // reduce: (30 inputs - 6 outputs) * 1 FLOP (add) = 24; bytes 120 + 4 + 24 = 148.
  EXPECT_DOUBLE_EQ(cost.total.flops, 240 + 30 + 24);
  EXPECT_DOUBLE_EQ(cost.total.transcendentals, 30);
  EXPECT_DOUBLE_EQ(cost.total.bytes_accessed, 376 + 240 + 360 + 148);
  ASSERT_EQ(cost.per_instruction.size(), 7u);
  EXPECT_EQ(cost.per_instruction[2].first->name(), "d");
  EXPECT_DOUBLE_EQ(cost.per_instruction[2].second.flops, 240);
  EXPECT_DOUBLE_EQ(cost.per_instruction[2].second.bytes_accessed, 376);
  EXPECT_TRUE(cost.unknown_flops.empty());
}

TEST(CostAnalysisTest, ConvolutionWithFeatureGroups) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  g = f32[3,3,1,4] parameter(2)
  c = f32[1,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT d = f32[1,5,5,4] convolution(x, g), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleCost cost = AnalyzeCost(*m);
  // c: 2 * (1*5*5*4 = 100 outputs) * (3*3 taps) * (2 input features) = 3600 FLOP.
  // d: 2 * 100 * 9 * (2 / feature_group_count 2 = 1) = 1800 FLOP.
  EXPECT_DOUBLE_EQ(cost.per_instruction[3].second.flops, 3600);
  EXPECT_DOUBLE_EQ(cost.per_instruction[4].second.flops, 1800);
  // c bytes: input 50*4 + kernel 72*4 + output 100*4 = 888.
  EXPECT_DOUBLE_EQ(cost.per_instruction[3].second.bytes_accessed, 888);
  EXPECT_DOUBLE_EQ(cost.total.flops, 5400);
}

TEST(CostAnalysisTest, FusionWhileAndCustomCall) {
  auto m = Parse(R"(HloModule m
fused {
  a = f32[4] parameter(0)
  e = f32[4] exponential(a)
  ROOT s = f32[4] add(a, e)
}
cond {
  s = f32[4] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = f32[4] parameter(0)
  ROOT n = f32[4] multiply(s, s)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  w = f32[4] while(f), condition=cond, body=body
  ROOT c = f32[4] custom-call(w), custom_call_target="Foo"
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleCost cost = AnalyzeCost(*m);
  // fusion: 4 FLOP (add) + 4 transcendentals (exp); bytes only at its boundary: 16 in + 16 out
  // = 32.
  EXPECT_DOUBLE_EQ(cost.per_instruction[1].second.flops, 4);
  EXPECT_DOUBLE_EQ(cost.per_instruction[1].second.transcendentals, 4);
  EXPECT_DOUBLE_EQ(cost.per_instruction[1].second.bytes_accessed, 32);
  // while: the body's multiply once: 4 FLOP, 48 bytes; the condition's constant 0.
  EXPECT_DOUBLE_EQ(cost.per_instruction[2].second.flops, 4);
  EXPECT_DOUBLE_EQ(cost.per_instruction[2].second.bytes_accessed, 48);
  ASSERT_EQ(cost.notes.size(), 1u);
  EXPECT_NE(cost.notes[0].find("counted once"), std::string::npos);
  // custom-call: unknown FLOP, 32 bytes.
  ASSERT_EQ(cost.unknown_flops.size(), 1u);
  EXPECT_EQ(cost.unknown_flops[0]->name(), "c");
  EXPECT_DOUBLE_EQ(cost.per_instruction[3].second.bytes_accessed, 32);
  EXPECT_DOUBLE_EQ(cost.total.flops, 8);
  EXPECT_DOUBLE_EQ(cost.total.bytes_accessed, 32 + 48 + 32);
}

// A fori loop of 10 trips (limit a constant, counter stepped by 1): the body counts 10 times and
// the condition (one compare) 11 times.
TEST(CostAnalysisTest, WhileWithAKnownTripCountCountsEveryTrip) {
  auto m = Parse(R"(HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4]) tuple(i1, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleCost cost = AnalyzeCost(*m);
  // Body: add 1 + multiply 4 = 5 FLOP per trip; condition: compare 1 FLOP per evaluation.
  EXPECT_DOUBLE_EQ(cost.total.flops, 10 * 5 + 11 * 1);
  ASSERT_EQ(cost.notes.size(), 1u);
  EXPECT_EQ(cost.notes[0], "while '%w': 10 trips (known trip count)");
}

TEST(CostAnalysisTest, HugeShapesAreCountedSymbolically) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[1024,32,4096,4096] parameter(0)
  ROOT n = f32[1024,32,4096,4096] negate(a)
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleCost cost = AnalyzeCost(*m);
  const double elements = 1024.0 * 32 * 4096 * 4096;  // 2^39
  EXPECT_DOUBLE_EQ(cost.total.flops, elements);
  EXPECT_DOUBLE_EQ(cost.total.bytes_accessed, 2 * 4 * elements);
}

}  // namespace
}  // namespace tpusim::hlo
