// while-unroller: loops with a compile-time trip count become copies of their body (checked on the
// ISA interpreter against the evaluator, which runs the while itself); anything else is a located
// error that says why.
#include "compiler/passes/while_unroller.h"

#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "compiler/hlo/computation.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

int CountOpcode(const hlo::HloModule& m, hlo::HloOpcode op) {
  int n = 0;
  for (const auto& i : m.entry_computation()->instructions()) n += i->opcode() == op;
  return n;
}

// A fori_loop: for i in [0, 5): x = x * w + 1, with the limit a loop invariant of the state.
constexpr char kForiLoop[] = R"(
HloModule fori
body {
  s = (s32[], s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[8,16] get-tuple-element(s), index=2
  w = f32[16,16] get-tuple-element(s), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  xw = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(0.25)
  cb = f32[8,16] broadcast(c), dimensions={}
  x1 = f32[8,16] add(xw, cb)
  ROOT t = (s32[], s32[], f32[8,16], f32[16,16]) tuple(i1, n, x1, w)
}
cond {
  s = (s32[], s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[8,16] parameter(0)
  w0 = f32[16,16] parameter(1)
  zero = s32[] constant(0)
  five = s32[] constant(5)
  init = (s32[], s32[], f32[8,16], f32[16,16]) tuple(zero, five, x0, w0)
  loop = (s32[], s32[], f32[8,16], f32[16,16]) while(init), condition=cond, body=body
  ROOT out = f32[8,16] get-tuple-element(loop), index=2
}
)";

TEST(WhileUnrollerTest, ForiLoopMatchesTheEvaluator) {
  CheckAgainstEvaluator(kForiLoop, "tiny", 1e-4, 1e-3);
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  auto changed = WhileUnroller().Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kDot), 5);
}

TEST(WhileUnrollerTest, NestedLoopsThroughACall) {
  // The outer loop (3 trips, counting down with GT) calls a computation holding an inner loop
  // (LE: 0..2 = 3 trips): 9 multiplies.
  constexpr char kNested[] = R"(
HloModule nested
ibody {
  s = (s32[], f32[4]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  y = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j1 = s32[] add(one, j)
  h = f32[] constant(1.5)
  hb = f32[4] broadcast(h), dimensions={}
  y1 = f32[4] multiply(y, hb)
  ROOT t = (s32[], f32[4]) tuple(j1, y1)
}
icond {
  s = (s32[], f32[4]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  two = s32[] constant(2)
  ROOT le = pred[] compare(j, two), direction=LE
}
inner {
  y = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, y)
  l = (s32[], f32[4]) while(t), condition=icond, body=ibody
  ROOT r = f32[4] get-tuple-element(l), index=1
}
obody {
  s = (s32[], f32[4]) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  y = f32[4] get-tuple-element(s), index=1
  m1 = s32[] constant(-1)
  k1 = s32[] add(k, m1)
  y1 = f32[4] call(y), to_apply=inner
  ROOT t = (s32[], f32[4]) tuple(k1, y1)
}
ocond {
  s = (s32[], f32[4]) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  z = s32[] constant(0)
  ROOT gt = pred[] compare(k, z), direction=GT
}
ENTRY e {
  y0 = f32[4] parameter(0)
  three = s32[] constant(3)
  t = (s32[], f32[4]) tuple(three, y0)
  l = (s32[], f32[4]) while(t), condition=ocond, body=obody
  ROOT r = f32[4] get-tuple-element(l), index=1
}
)";
  CheckAgainstEvaluator(kNested, "tiny", 1e-5, 1e-5);
  auto m = testing::Parse(kNested);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(WhileUnroller().Run(*m).ok());
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kMultiply), 9);
}

TEST(WhileUnrollerTest, UnknownTripCountIsALocatedError) {
  std::string text = kForiLoop;
  // The limit comes from a parameter: not known at compile time.
  text.replace(text.find("  five = s32[] constant(5)"), 26, "  five = s32[] parameter(2)");
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto r = WhileUnroller().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("test.hlo:29:3: %loop (while): cannot unroll: the limit is "
                                      "neither a constant nor a constant loop invariant"),
            std::string::npos)
      << r.status().message();
}

TEST(WhileUnrollerTest, BudgetIsALocatedError) {
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  auto r = WhileUnroller(/*max_instructions=*/20).Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("5 trips of a 12-instruction body would add 60 "
                                      "instructions, over the unrolling budget of 20"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
