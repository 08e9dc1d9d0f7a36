// sort-expander (compiler/passes/sort_expander.h): sorts as bitonic networks of slices, compares
// and selects — the rewrite on the evaluator (same bits, idempotent) and compiled modules on the
// ISA interpreter, bit for bit against the evaluator's stable sort.
#include "compiler/passes/sort_expander.h"

#include <gtest/gtest.h>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

// Descending sort of f32 keys along the last dimension, carrying an s32 payload (a top-k's
// argsort): 50 keys, padded to 64 inside the network.
constexpr char kArgsort[] = R"(
HloModule argsort
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[3,50] parameter(0)
  i = s32[3,50] iota(), iota_dimension=1
  ROOT s = (f32[3,50], s32[3,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=gt
}
)";

TEST(SortExpanderTest, DescendingArgsortWithPadding) {
  SortExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kArgsort);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, hlo::HloOpcode::kSort), 0);
  // 64 = 2^6 positions: 6 * 7 / 2 = 21 compare-exchange stages, each one compare of the keys and
  // one of the positions carried for stability (or more); the result keeps the sort's shape.
  EXPECT_GE(testing::CountInEntry(*m, hlo::HloOpcode::kCompare), 21);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().ToString(false),
            "(f32[3,50], s32[3,50])");
  CheckAgainstEvaluator(kArgsort, "tiny", 0, 0);
}

// Ascending s32 keys with many ties along a middle dimension: equal keys keep their order, as the
// evaluator's stable sort does.
TEST(SortExpanderTest, AscendingIntegerKeysWithTiesAlongAMiddleDimension) {
  CheckAgainstEvaluator(R"(
HloModule ties
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[2,16,3] parameter(0)
  four = f32[] constant(4)
  fb = f32[2,16,3] broadcast(four), dimensions={}
  m = f32[2,16,3] multiply(x, fb)
  k = s32[2,16,3] convert(m)
  ROOT s = (s32[2,16,3], f32[2,16,3]) sort(k, x), dimensions={1}, to_apply=lt
}
)",
                        "tiny", 0, 0);
}

// A comparator of elementwise scalar ops, as JAX writes a sort with a total order over f32
// (bitcast-convert) on two keys: descending by the first, ascending by the second (in [0, 3]) on
// ties; NaNs, infinities and signed zeros included. Applied to whole arrays in each
// compare-exchange.
TEST(SortExpanderTest, ElementwiseComparatorOnTwoKeysKeepsTheEvaluatorsBits) {
  const char* text = R"(
HloModule total_order
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ai = s32[] bitcast-convert(a)
  bi = s32[] bitcast-convert(b)
  z = s32[] constant(0)
  m = s32[] constant(2147483647)
  an = s32[] xor(ai, m)
  bn = s32[] xor(bi, m)
  aneg = pred[] compare(ai, z), direction=LT
  bneg = pred[] compare(bi, z), direction=LT
  ak = s32[] select(aneg, an, ai)
  bk = s32[] select(bneg, bn, bi)
  gt = pred[] compare(ak, bk), direction=GT
  eq = pred[] compare(ak, bk), direction=EQ
  lt2 = pred[] compare(c, d), direction=LT
  tie = pred[] and(eq, lt2)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  p = f32[2,37] parameter(0)
  special = f32[2,3] constant({{nan, -0, inf}, {0, -inf, -nan}})
  x = f32[2,40] concatenate(p, special), dimensions={1}
  y = s32[2,40] parameter(1)
  three = s32[] constant(3)
  tb = s32[2,40] broadcast(three), dimensions={}
  k = s32[2,40] and(y, tb)
  ROOT s = (f32[2,40], s32[2,40]) sort(x, k), dimensions={1}, to_apply=cmp
})";
  SortExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, hlo::HloOpcode::kSort), 0);
  EXPECT_GE(testing::CountInEntry(*m, hlo::HloOpcode::kBitcastConvert), 2);
}

// Past 65536 positions the network is not built: the sort is left for the lowering to name.
TEST(SortExpanderTest, TooLongSortsAreLeft) {
  SortExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule long
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[65537] parameter(0)
  ROOT s = f32[65537] sort(x), dimensions={0}, to_apply=lt
})");
}

}  // namespace
}  // namespace tpusim::compiler
