// Conditionals are if-converted by call-inliner: every branch runs and selects keep the result of
// the branch XLA would take (checked on the ISA interpreter against the evaluator, which runs only
// that branch).
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "tests/compiler/shared_test_modules.h"

namespace tpusim::compiler {
namespace {

using testing::kPredConditional;

using testing::CheckAgainstEvaluator;

// The rewrite itself is checked in call_inliner_test.cc.
TEST(ConditionalTest, PredConditionalRunsEitherBranch) {
  CheckAgainstEvaluator(kPredConditional, "tiny", 1e-5, 1e-5);
  // The other branch: flip the comparison.
  std::string flipped = kPredConditional;
  flipped.replace(flipped.find("direction=GT"), 12, "direction=LE");
  CheckAgainstEvaluator(flipped, "tiny", 1e-5, 1e-5);
}

// An s32 branch index that changes every trip of a loop: i - 1 for i in [0, 7) takes the
// out-of-range default (the last branch) at i = 0, then branches 0, 1, 2, then out of range again.
constexpr char kIndexInLoop[] = R"(
HloModule cond_index
b0 {
  x = f32[16] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[16] broadcast(h), dimensions={}
  ROOT r = f32[16] multiply(x, hb)
}
b1 {
  x = f32[16] parameter(0)
  ROOT r = f32[16] negate(x)
}
b2 {
  x = f32[16] parameter(0)
  o = f32[] constant(1)
  ob = f32[16] broadcast(o), dimensions={}
  ROOT r = f32[16] add(x, ob)
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  k = s32[] subtract(i, one)
  y = f32[16] conditional(k, x, x, x), branch_computations={b0, b1, b2}
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[16]) tuple(i1, y)
}
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[16]) tuple(zero, x0)
  loop = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT out = f32[16] get-tuple-element(loop), index=1
}
)";

TEST(ConditionalTest, BranchIndexInsideAnIsaLoop) {
  CompileOptions isa_loops;
  isa_loops.max_unrolled_instructions = 0;
  CheckAgainstEvaluator(kIndexInLoop, "tiny", 1e-6, 1e-6, isa_loops);
  CheckAgainstEvaluator(kIndexInLoop, "tiny", 1e-6, 1e-6);  // unrolled: the indices fold
}

}  // namespace
}  // namespace tpusim::compiler
