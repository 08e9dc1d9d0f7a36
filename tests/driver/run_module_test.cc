// RunModule's value check (driver/run_module.h) holds each value once (issue 20 item 3): the
// program's constants move into the simulated memories, the arguments are made again for the
// evaluator after the simulation, and the simulated memories are released once the outputs are
// read. These tests run a small module through it and assert what a caller sees: the check still
// compares every leaf of every replica and passes (so the constants reached HBM and the evaluator
// got the simulation's inputs), and the result holds neither the data segments nor the memories.
#include "driver/run_module.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/config_loader.h"
#include "hlo/parser.h"

namespace tpusim::driver {
namespace {

// Two replicas: a dot with a constant weight, all-reduced across the replicas, and a second
// output from the parameter alone.
constexpr const char* kModule = R"(
HloModule m, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8,4] parameter(0)
  w = f32[4,4] constant({ {1, 2, 3, 4}, {-1, 0.5, 0, 2}, {0.25, -3, 1, 1}, {2, 2, -2, 0} })
  d = f32[8,4] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[8,4] all-reduce(d), replica_groups={{0,1}}, to_apply=add
  n = f32[8,4] negate(p)
  ROOT t = (f32[8,4], f32[8,4]) tuple(r, n)
}
)";

StatusOr<RunModuleResult> RunSmallModule(const RunOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(auto module, hlo::ParseHloModule(kModule, "m.hlo"));
  TPUSIM_ASSIGN_OR_RETURN(auto chip, config::LoadChipConfig("tpu-v4", {}));
  return RunModule(*module, chip, options);
}

TEST(RunModuleCheckTest, ChecksEveryLeafOfEveryReplicaWithTheConstantsMovedIntoTheRun) {
  {  // the compiled program has data segments (the weight constant) for RunModule to move
    auto module = hlo::ParseHloModule(kModule, "m.hlo");
    auto chip = config::LoadChipConfig("tpu-v4", {});
    ASSERT_TRUE(module.ok() && chip.ok());
    compiler::CompileOptions options;
    options.num_replicas = 2;
    auto compiled = compiler::Compile(**module, *chip, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status().message();
    EXPECT_FALSE(compiled->program.data.empty());
  }
  auto r = RunSmallModule(RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->replicas, 2);
  EXPECT_TRUE(r->check.performed);
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  EXPECT_EQ(r->check.elements_compared, 2 * 2 * 8 * 4);  // replicas x leaves x elements
  EXPECT_EQ(r->check.max_abs_error, 0);                  // bf16-exact weights, K = 4
  EXPECT_TRUE(r->compiled.program.data.empty());         // moved into the simulated memories
  EXPECT_TRUE(r->sim.final_state.cores.empty());         // released after the outputs were read
  EXPECT_TRUE(r->sim.final_state.hbm.empty());
  EXPECT_GT(r->sim.cycles.value(), 0);
}

// A bf16 all-reduce over 8 replicas whose reducer reads its parameters swapped, add(b, a), as
// XLA's GPU tests write it: the device sums in f32 and rounds once, and so must the reference (it
// rounded every step when only add(a, b) was recognized: 25,080 of 147,456 elements off).
TEST(RunModuleCheckTest, Bf16AllReduceWithSwappedReducerMatchesBitForBit) {
  constexpr const char* kText = R"(
HloModule m, replica_count=8
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT o = bf16[] add(b, a)
}
ENTRY e {
  y = bf16[4,512] parameter(0)
  ROOT ar = bf16[4,512] all-reduce(y), to_apply=add, replica_groups={}
}
)";
  auto module = hlo::ParseHloModule(kText, "ar.hlo");
  auto chip = config::LoadChipConfig("tpu-v4", {});
  ASSERT_TRUE(module.ok() && chip.ok());
  auto r = RunModule(**module, *chip, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->check.performed);
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  EXPECT_EQ(r->check.max_abs_error, 0);
}

// Arithmetic on pred (XLA's GPU pred_mul test multiplies converted s8 values) runs as logic on the
// device, as the evaluator computes it: add is or, subtract xor, multiply and. The VPU has no
// pred add, subtract or multiply; the run used to stop at the ISA level.
TEST(RunModuleCheckTest, PredArithmeticRunsAsLogic) {
  constexpr const char* kText = R"(
HloModule m
ENTRY e {
  x = s8[1024] parameter(0)
  y = s8[1024] parameter(1)
  p = pred[1024] convert(x)
  q = pred[1024] convert(y)
  a = pred[1024] add(p, q)
  s = pred[1024] subtract(p, q)
  m = pred[1024] multiply(p, q)
  ROOT t = (pred[1024], pred[1024], pred[1024]) tuple(a, s, m)
}
)";
  auto module = hlo::ParseHloModule(kText, "pred.hlo");
  auto chip = config::LoadChipConfig("tpu-v4", {});
  ASSERT_TRUE(module.ok() && chip.ok());
  auto r = RunModule(**module, *chip, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->check.performed);
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  EXPECT_EQ(r->check.elements_compared, 3 * 1024);
}

TEST(RunModuleCheckTest, TimingOnlyAndUncheckedRunsGiveTheSameCycles) {
  auto checked = RunSmallModule(RunOptions{});
  RunOptions unchecked;
  unchecked.check = false;
  auto no_check = RunSmallModule(unchecked);
  RunOptions timing;
  timing.timing_only = true;
  auto timing_only = RunSmallModule(timing);
  ASSERT_TRUE(checked.ok() && no_check.ok() && timing_only.ok());
  EXPECT_EQ(no_check->check.reason, "--no-check");
  EXPECT_FALSE(no_check->check.performed);
  EXPECT_EQ(checked->sim.cycles, no_check->sim.cycles);
  EXPECT_EQ(checked->sim.cycles, timing_only->sim.cycles);
  EXPECT_EQ(checked->sim.instructions_executed, timing_only->sim.instructions_executed);
  // Without a check the simulated memories stay in the result.
  EXPECT_FALSE(no_check->sim.final_state.hbm.empty());
}

// A data-dependent loop in a helper called twice with different counts (3 and 6 trips; as
// jax.random.beta calls gamma's rejection loop): a run that computes values runs both inlined
// copies as branch loops, the device computing their conditions, and its check passes; a
// timing-only run has no single count to assume and asks for --trip-count.
TEST(RunModuleCheckTest, ALoopWhoseCountVariesBetweenCallsRunsWithValues) {
  const char* text = R"(HloModule twice
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  x0 = f32[1] slice(x), slice={[0:1]}
  n = f32[] reshape(x0)
  fi = f32[] convert(i)
  ROOT c = pred[] compare(fi, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(j, x)
}
f {
  k = f32[] parameter(0)
  p = f32[4] parameter(1)
  zero = f32[] constant(0)
  zs = f32[4] broadcast(zero), dimensions={}
  pz = f32[4] multiply(p, zs)
  kb = f32[4] broadcast(k), dimensions={}
  n = f32[4] add(pz, kb)
  i0 = s32[] constant(0)
  init = (s32[], f32[4]) tuple(i0, n)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
ENTRY e {
  p = f32[4] parameter(0)
  three = f32[] constant(3)
  six = f32[] constant(6)
  a = s32[] call(three, p), to_apply=f
  b = s32[] call(six, p), to_apply=f
  ROOT t = (s32[], s32[]) tuple(a, b)
})";
  auto module = hlo::ParseHloModule(text, "m.hlo");
  auto chip = config::LoadChipConfig("tpu-v4", {});
  ASSERT_TRUE(module.ok() && chip.ok());
  auto r = RunModule(**module, *chip, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->check.performed) << r->check.reason;
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  EXPECT_EQ(r->counted_trip_counts, (std::map<std::string, int64_t>{{"w", 6}}));
  RunOptions timing;
  timing.timing_only = true;
  auto t = RunModule(**module, *chip, timing);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("--trip-count w"), std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace tpusim::driver
