// pred-reduce-expander (compiler/passes/pred_reduce_expander.h): reduces of pred values with and /
// or reducers (jnp.all / jnp.any, the bounds checks JAX's gather and take emit) become f32 minimum
// / maximum reduces and a compare, the evaluator's bits before and after, and run on the VPU with
// the evaluator's bits.
#include "compiler/passes/pred_reduce_expander.h"

#include <gtest/gtest.h>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

// and over the last dimension (as JAX writes `reduce_and` for a gather's index bounds), or over
// two dimensions, a minimum reducer on pred, and a pred reduce that is the root of a tuple.
constexpr char kPredReduces[] = R"(
HloModule pred_reduces
and_ {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
or_ {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] or(a, b)
}
min_ {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] minimum(a, b)
}
ENTRY e {
  x = f32[4,8,6] parameter(0)
  lo = f32[] constant(-1.2)
  hi = f32[] constant(1.2)
  lob = f32[4,8,6] broadcast(lo), dimensions={}
  hib = f32[4,8,6] broadcast(hi), dimensions={}
  ge = pred[4,8,6] compare(x, lob), direction=GE
  le = pred[4,8,6] compare(x, hib), direction=LE
  in = pred[4,8,6] and(ge, le)
  t = pred[] constant(true)
  f = pred[] constant(false)
  all = pred[4,8] reduce(in, t), dimensions={2}, to_apply=and_
  gt = pred[4,8,6] compare(x, hib), direction=GT
  any = pred[8] reduce(gt, f), dimensions={0,2}, to_apply=or_
  min = pred[4] reduce(in, t), dimensions={1,2}, to_apply=min_
  ROOT out = (pred[4,8], pred[8], pred[4]) tuple(all, any, min)
}
)";

TEST(PredReduceExpanderTest, AndOrMinimumReducesMatchTheEvaluator) {
  PredReduceExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kPredReduces);
  ASSERT_NE(m, nullptr);
  int f32_reduces = 0;
  for (const auto& i : m->entry_computation()->instructions()) {
    if (i->opcode() != hlo::HloOpcode::kReduce) continue;
    EXPECT_EQ(i->operand(0)->shape().element_type(), hlo::PrimitiveType::kF32) << i->name();
    ++f32_reduces;
  }
  const hlo::HloInstruction* out = m->entry_computation()->root_instruction();
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(out->operand(k)->opcode(), hlo::HloOpcode::kCompare) << k;
    EXPECT_EQ(out->operand(k)->shape().element_type(), hlo::PrimitiveType::kPred) << k;
  }
  EXPECT_EQ(f32_reduces, 3);
  CheckAgainstEvaluator(kPredReduces, "tiny", 0, 0);
}

// A reducer that is not and / or / minimum / maximum (xor) is left to the lowering.
TEST(PredReduceExpanderTest, OtherReducersAreLeftAlone) {
  PredReduceExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule xor_reduce
xor_ {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] xor(a, b)
}
ENTRY e {
  p = pred[4,6] parameter(0)
  f = pred[] constant(false)
  ROOT r = pred[4] reduce(p, f), dimensions={1}, to_apply=xor_
}
)");
}

}  // namespace
}  // namespace tpusim::compiler
