// while-lowering: loops with a compile-time trip count become copies of their body, or loop regions
// lowered to ctrl.loop when unrolling would exceed the budget (checked on the ISA interpreter
// against the evaluator, which runs the while itself); anything else is a located error that says
// why.
#include "compiler/passes/while_lowering.h"

#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "compiler/passes/loop_region.h"
#include "hlo/computation.h"
#include "hlo/while_loop.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::LoopCounts;

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

TEST(WhileLoweringTest, ForiLoopMatchesTheEvaluator) {
  CheckAgainstEvaluator(kForiLoop, "tiny", 1e-4, 1e-3);
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  auto changed = WhileLowering().Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kDot), 5);
}

// The outer loop (3 trips, counting down with GT) calls a computation holding an inner loop
// (LE: 0..2 = 3 trips): 9 multiplies when unrolled.
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

TEST(WhileLoweringTest, NestedLoopsThroughACall) {
  CheckAgainstEvaluator(kNested, "tiny", 1e-5, 1e-5);
  auto m = testing::Parse(kNested);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(WhileLowering().Run(*m).ok());
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kMultiply), 9);
}

TEST(WhileLoweringTest, UnknownTripCountIsALocatedError) {
  std::string text = kForiLoop;
  // The limit comes from a parameter: not known at compile time.
  text.replace(text.find("  five = s32[] constant(5)"), 26, "  five = s32[] parameter(2)");
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto r = WhileLowering().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("test.hlo:29:3: error: %loop (while): cannot lower: the "
                                      "limit is neither a constant nor a constant loop invariant"),
            std::string::npos)
      << r.status().message();
}

// tpusim's one bound on a while's trips (hlo::kMaxWhileTrips) holds for a count known at compile
// time and for one given by --trip-count: past it, a located error with the evaluator's words
// (hlo::TooManyTripsReason) and no advice to give a count; at it, the loop lowers.
TEST(WhileLoweringTest, TripsPastTheBoundAreALocatedError) {
  const std::string bound = std::to_string(hlo::kMaxWhileTrips);
  std::string known = kForiLoop;
  known.replace(known.find("constant(5)"), 11,
                "constant(" + std::to_string(hlo::kMaxWhileTrips + 1) + ")");
  auto m = testing::Parse(known);
  ASSERT_NE(m, nullptr);
  auto r = WhileLowering().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "test.hlo:29:3: error: %loop (while): cannot lower: " +
                                      hlo::TooManyTripsReason(hlo::kMaxWhileTrips));
  std::string data = kForiLoop;
  data.replace(data.find("  five = s32[] constant(5)"), 26, "  five = s32[] parameter(2)");
  m = testing::Parse(data);
  ASSERT_NE(m, nullptr);
  r = WhileLowering(0, {{"loop", hlo::kMaxWhileTrips + 1}}).Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "test.hlo:29:3: error: %loop (while): --trip-count loop=" +
                                      std::to_string(hlo::kMaxWhileTrips + 1) + ": " +
                                      hlo::TooManyTripsReason(hlo::kMaxWhileTrips));
  m = testing::Parse(data);
  ASSERT_NE(m, nullptr);
  r = WhileLowering(0, {{"loop", hlo::kMaxWhileTrips}}).Run(*m);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

// Instructions of core 0 with opcode `op`.
int CountIsa(const isa::Program& p, isa::Opcode op) {
  int n = 0;
  for (const isa::Instruction& i : p.cores[0].instructions) n += i.opcode == op;
  return n;
}

CompileOptions NoUnrolling() {
  CompileOptions o;
  o.max_unrolled_instructions = 0;
  return o;
}

TEST(WhileLoweringTest, OverTheBudgetALoopBecomesARegion) {
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  auto r = WhileLowering(/*max_unrolled_instructions=*/20).Run(*m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, hlo::HloOpcode::kDot), 1);  // the body, once
  auto regions = FindLoopRegions(*m->entry_computation());
  ASSERT_TRUE(regions.ok()) << regions.status().message();
  ASSERT_EQ(regions->end_of.size(), 1u);
  const hlo::HloInstruction* begin = regions->end_of.begin()->first;
  EXPECT_EQ(begin->name(), "loop.loop_begin");
  EXPECT_EQ(LoopTrips(*begin), 5);
  EXPECT_EQ(regions->end_of.begin()->second->name(), "loop.loop_end");
  EXPECT_EQ(m->entry_computation()->root_instruction()->operand(0)->name(), "loop.loop_end");
}

TEST(WhileLoweringTest, ForiLoopAsAnIsaLoopMatchesTheEvaluator) {
  auto run = CheckAgainstEvaluator(kForiLoop, "tiny", 1e-4, 1e-3, NoUnrolling());
  EXPECT_EQ(LoopCounts(run.compiled.program), std::vector<uint64_t>{5});
  EXPECT_EQ(CountIsa(run.compiled.program, isa::Opcode::kCtrlEndLoop), 1);
  // x1 = xw + 0.25 runs as the dot's epilogue while the dot still reads x, so it may not overwrite
  // x's state buffer: loop_end copies it (a load and a store with their waits, then ctrl.endloop).
  // The counter's add writes its state buffer itself.
  EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "loop.loop_end"), 5);
  CompileOptions unfused = NoUnrolling();
  unfused.fuse_elementwise = false;
  auto separate = CheckAgainstEvaluator(kForiLoop, "tiny", 1e-4, 1e-3, unfused);
  // As a kernel of its own after the dot, x1 writes x's state buffer: loop_end is only
  // ctrl.endloop.
  EXPECT_EQ(testing::InstructionsTagged(separate.compiled.program, "loop.loop_end"), 1);
}

// On a megacore chip (tpu-v4) the second core of a loop with no dot wide enough to split would only
// open and close the loop: the device stays one core.
TEST(WhileLoweringTest, IsaLoopWithoutSplitDotsKeepsOneCoreOnAMegacoreChip) {
  auto run = CheckAgainstEvaluator(kForiLoop, "tpu-v4", 1e-4, 1e-3, NoUnrolling());
  EXPECT_EQ(run.compiled.program.num_cores(), 1);
  EXPECT_EQ(run.compiled.cores_per_device, 1);
}

// A scan (jax.lax.scan's while form): ys[i] = acc = acc * 0.5 + xs[i], reading xs and writing ys
// at the induction variable through dynamic-slice / dynamic-update-slice, so every trip runs the
// same instructions with indices read at run time.
constexpr char kScan[] = R"(
HloModule scan
body {
  s = (s32[], f32[1,16], f32[6,16], f32[6,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[1,16] get-tuple-element(s), index=1
  xs = f32[6,16] get-tuple-element(s), index=2
  ys = f32[6,16] get-tuple-element(s), index=3
  zero = s32[] constant(0)
  x = f32[1,16] dynamic-slice(xs, i, zero), dynamic_slice_sizes={1,16}
  h = f32[] constant(0.5)
  hb = f32[1,16] broadcast(h), dimensions={}
  scaled = f32[1,16] multiply(acc, hb)
  acc1 = f32[1,16] add(scaled, x)
  ys1 = f32[6,16] dynamic-update-slice(ys, acc1, i, zero)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[1,16], f32[6,16], f32[6,16]) tuple(i1, acc1, xs, ys1)
}
cond {
  s = (s32[], f32[1,16], f32[6,16], f32[6,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  xs = f32[6,16] parameter(0)
  acc0 = f32[1,16] parameter(1)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  ys0 = f32[6,16] broadcast(z), dimensions={}
  init = (s32[], f32[1,16], f32[6,16], f32[6,16]) tuple(zero, acc0, xs, ys0)
  loop = (s32[], f32[1,16], f32[6,16], f32[6,16]) while(init), condition=cond, body=body
  acc = f32[1,16] get-tuple-element(loop), index=1
  ys = f32[6,16] get-tuple-element(loop), index=3
  ROOT r = (f32[1,16], f32[6,16]) tuple(acc, ys)
}
)";

TEST(WhileLoweringTest, ScanWithDynamicIndicesAsAnIsaLoopMatchesTheEvaluator) {
  auto run = CheckAgainstEvaluator(kScan, "tiny", 1e-5, 1e-5, NoUnrolling());
  EXPECT_EQ(LoopCounts(run.compiled.program), std::vector<uint64_t>{6});
}

// State (i, a, b) -> (i + 1, b, a + b): element 1 takes element 2's buffer, so the copies at the
// end of a trip must run in order (b into a before a + b into b).
constexpr char kFibonacci[] = R"(
HloModule fib
body {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[8] get-tuple-element(s), index=1
  b = f32[8] get-tuple-element(s), index=2
  c = f32[8] add(a, b)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[8], f32[8]) tuple(i1, b, c)
}
cond {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  a0 = f32[8] parameter(0)
  b0 = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(zero, a0, b0)
  loop = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
  ROOT b = f32[8] get-tuple-element(loop), index=2
}
)";

TEST(WhileLoweringTest, StateElementsPassedOnInOrderMatchTheEvaluator) {
  auto run = CheckAgainstEvaluator(kFibonacci, "tiny", 1e-5, 1e-5, NoUnrolling());
  // b's old value is copied into a at the end of a trip, so c must not overwrite b early: loop_end
  // copies a <- b and b <- c (a DMA in and out each, with their waits) besides ctrl.endloop.
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "loop.loop_end"), 1);
}

TEST(WhileLoweringTest, StateElementsSwappedInACycleAreALocatedError) {
  std::string text = kFibonacci;
  text.replace(text.find("tuple(i1, b, c)"), 15, "tuple(i1, b, a)");
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto r = Compile(*m, testing::Config("tiny"), NoUnrolling());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(
      r.status().message().find("test.hlo:24:3: error: %loop.loop_end (custom-call): cannot "
                                "lower: the loop body permutes its state elements in a cycle"),
      std::string::npos)
      << r.status().message();
}

TEST(WhileLoweringTest, NestedIsaLoopsMatchTheEvaluator) {
  auto run = CheckAgainstEvaluator(kNested, "tiny", 1e-5, 1e-5, NoUnrolling());
  EXPECT_EQ(LoopCounts(run.compiled.program), (std::vector<uint64_t>{3, 3}));
}

// An all-reduce inside an ISA loop: both replicas run it once per trip, in step.
constexpr char kAllReduceLoop[] = R"(
HloModule arloop, replica_count=2
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
body {
  s = (s32[], f32[4,32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4,32] get-tuple-element(s), index=1
  h = f32[] constant(0.25)
  hb = f32[4,32] broadcast(h), dimensions={}
  xs = f32[4,32] multiply(x, hb)
  r = f32[4,32] all-reduce(xs), replica_groups={{0,1}}, to_apply=sum
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,32]) tuple(i1, r)
}
cond {
  s = (s32[], f32[4,32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[4,32] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4,32]) tuple(zero, x0)
  loop = (s32[], f32[4,32]) while(init), condition=cond, body=body
  ROOT out = f32[4,32] get-tuple-element(loop), index=1
}
)";

TEST(WhileLoweringTest, AllReduceInsideAnIsaLoopMatchesTheEvaluator) {
  auto module = testing::Parse(kAllReduceLoop);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<hlo::Literal>> args;
  for (int d = 0; d < 2; ++d) {
    auto a = hlo::Evaluator::MakeRandomArguments(*module, 5, d);
    ASSERT_TRUE(a.ok());
    args.push_back(std::move(a).value());
  }
  hlo::Evaluator ev;
  auto want = ev.EvaluateReplicated(*module, 2, 1, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto run = testing::CompileAndRun(*module, testing::Config("tiny-4"), args, NoUnrolling());
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(LoopCounts(run->compiled.program), std::vector<uint64_t>{4});
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_LE(testing::WorstError(run->outputs[0], (*want)[0], 1e-6, 1e-6), 1.0);
}

}  // namespace
}  // namespace tpusim::compiler

namespace tpusim::compiler {
namespace {

// The induction variable starts from a computed value (3 * 2 - 4 = 2, through a tuple element and
// a convert), the limit is a computed expression, and the compare is written limit-first: still a
// known trip count (for i in [2, 10) step 2: 4 trips), checked against the evaluator.
TEST(WhileLoweringTest, ComputedStartLimitAndMirroredCompareGiveTheTripCount) {
  constexpr char kComputed[] = R"(
HloModule computed
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  two = s32[] constant(2)
  n = s32[] add(i, two)
  y = f32[8] add(x, x)
  ROOT t = (s32[], f32[8]) tuple(n, y)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  five = s32[] constant(5)
  lim = s32[] multiply(five, five)
  fifteen = s32[] constant(15)
  limit = s32[] subtract(lim, fifteen)
  ROOT c = pred[] compare(limit, i), direction=GT
}
ENTRY e {
  x = f32[8] parameter(0)
  three = s64[] constant(3)
  two = s64[] constant(2)
  four = s64[] constant(4)
  p = s64[] multiply(three, two)
  q = s64[] subtract(p, four)
  pair = (s64[], f32[8]) tuple(q, x)
  g = s64[] get-tuple-element(pair), index=0
  start = s32[] convert(g)
  init = (s32[], f32[8]) tuple(start, x)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
)";
  auto m = testing::Parse(kComputed);
  ASSERT_NE(m, nullptr);
  const hlo::HloInstruction* w = m->entry_computation()->FindInstruction("w");
  ASSERT_NE(w, nullptr);
  const hlo::TripCount t = hlo::KnownTripCount(*w);
  ASSERT_TRUE(t.trips.has_value()) << t.reason;
  EXPECT_EQ(*t.trips, 4);
  CheckAgainstEvaluator(kComputed, "tiny", 0, 0);
}

}  // namespace
}  // namespace tpusim::compiler
