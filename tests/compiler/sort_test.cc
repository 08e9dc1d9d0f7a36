// sort-expander: sorts as bitonic networks of slices, compares and selects, checked bit for bit on
// the ISA interpreter against the evaluator's stable sort.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "compiler/passes/sort_expander.h"
#include "hlo/computation.h"

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
  auto m = testing::Parse(kArgsort);
  ASSERT_NE(m, nullptr);
  auto changed = SortExpander().Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  for (const auto& i : m->entry_computation()->instructions()) {
    EXPECT_NE(i->opcode(), hlo::HloOpcode::kSort);
  }
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

}  // namespace
}  // namespace tpusim::compiler
