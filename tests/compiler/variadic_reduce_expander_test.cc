// variadic-reduce-expander (compiler/passes/variadic_reduce_expander.h): a reduce of several
// operands (argmax / argmin) becomes a transpose + reshape to [kept, reduced] and log2(n) rounds of
// the reducer applied element by element, then the init folded in once; for a reducer that picks
// the values are the evaluator's bit for bit.
#include "compiler/passes/variadic_reduce_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// argmax over dimensions `dims` of f32[6,13,4] (13: an odd column is carried), the lower index on
// ties (keys rounded to quarters to make ties), as JAX writes jnp.argmax.
std::string ArgMax(const std::string& dims, const std::string& kept) {
  return R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick_a = pred[] or(gt, tie)
  v = f32[] select(pick_a, av, bv)
  i = s32[] select(pick_a, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[6,13,4] parameter(0)
  four = f32[] constant(4)
  fb = f32[6,13,4] broadcast(four), dimensions={}
  q = f32[6,13,4] multiply(p, fb)
  x = f32[6,13,4] round-nearest-even(q)
  idx = s32[6,13,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32)" + kept + ", s32" + kept + R"() reduce(x, idx, ninf, zero), dimensions=)" + dims +
         R"(, to_apply=argmax
})";
}

TEST(VariadicReduceExpanderTest, ArgMaxBecomesRoundsOfTheReducerWithTheSameBits) {
  VariadicReduceExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, ArgMax("{1}", "[6,4]"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kReduce), 0);
  // 13 -> 7 -> 4 -> 2 -> 1: four rounds and the init, one select pair each.
  EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSelect), 2 * 5);
  EXPECT_GE(testing::CountInEntry(*m, HloOpcode::kTranspose), 1);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().ToString(false),
            "(f32[6,4], s32[6,4])");
}

TEST(VariadicReduceExpanderTest, SeveralReducedDimensionsAndAScalarResult) {
  for (const auto& [dims, kept] : {std::pair<std::string, std::string>{"{0,2}", "[13]"},
                                   {"{0,1,2}", "[]"}}) {
    VariadicReduceExpander pass;
    auto m = testing::ExpectRewriteKeepsBits(pass, ArgMax(dims, kept));
    ASSERT_NE(m, nullptr) << dims;
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kReduce), 0) << dims;
  }
}

TEST(VariadicReduceExpanderTest, OneOperandReducesAreLeft) {
  VariadicReduceExpander pass;
  testing::ExpectUnchanged(pass, R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[6,13] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(x, z), dimensions={1}, to_apply=add
})");
}

}  // namespace
}  // namespace tpusim::compiler
