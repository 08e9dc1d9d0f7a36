// EvaluatorOptions::on_instruction (hlo/eval/evaluator.h) and
// CpuRunOptions::time_instructions: which instructions are reported, how often, and that values do
// not change.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/eval/cpu_run.h"
#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

// A reduce whose reducer is two instructions (not the evaluator's fast path, so the reducer runs
// through the evaluator once per element) and a fusion whose body is evaluated as a computation.
constexpr const char* kModule = R"(
HloModule m
sum_abs {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  nb = f32[] abs(b)
  ROOT s = f32[] add(a, nb)
}
fused {
  p = f32[64] parameter(0)
  ROOT n = f32[64] negate(p)
}
ENTRY e {
  x = f32[64] parameter(0)
  f = f32[64] fusion(x), kind=kLoop, calls=fused
  z = f32[] constant(0)
  ROOT r = f32[] reduce(f, z), dimensions={0}, to_apply=sum_abs
})";

TEST(TimingHookTest, ReportsEntryAndFusionBodyButNotAppliedComputations) {
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto args = Evaluator::MakeRandomArguments(**module, 7);
  ASSERT_TRUE(args.ok());

  Evaluator plain;
  auto want = plain.Evaluate(**module, *args);
  ASSERT_TRUE(want.ok()) << want.status().message();

  EvaluatorOptions o;
  std::vector<std::string> seen;
  double total = 0;
  o.on_instruction = [&](const HloInstruction& inst, double seconds) {
    seen.push_back(inst.name());
    EXPECT_GE(seconds, 0.0);
    total += seconds;
  };
  Evaluator timed(o);
  auto got = timed.Evaluate(**module, *args);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->Checksum(), want->Checksum());  // the hook never changes a value
  // Def-before-use order; the fusion body's `negate` is reported before the fusion itself
  // completes; parameters and the reducer's instructions (64 applications) are not reported.
  EXPECT_EQ(seen, (std::vector<std::string>{"n", "f", "z", "r"}));
}

TEST(TimingHookTest, CpuRunMediansPerInstruction) {
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok());
  CpuRunOptions o;
  o.repeat = 3;
  o.threads = 1;
  o.time_instructions = true;
  auto r = RunModuleOnCpu(**module, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->instructions.size(), 4u);
  EXPECT_EQ(r->instructions[0].name, "n");
  EXPECT_FALSE(r->instructions[0].in_entry);
  EXPECT_EQ(r->instructions[0].computation, "fused");
  EXPECT_EQ(r->instructions[1].name, "f");
  EXPECT_EQ(r->instructions[1].opcode, "fusion");
  EXPECT_TRUE(r->instructions[1].in_entry);
  EXPECT_EQ(r->instructions[3].opcode, "reduce");
  // Entry instructions are timed inside their run: per run, their sum is at most the run.
  ASSERT_EQ(r->run_entry_seconds.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(r->run_entry_seconds[i], r->run_seconds[i]);
  for (const CpuInstructionTime& t : r->instructions) {
    EXPECT_EQ(t.evaluations, 1) << t.name;  // once per run (the warm-up is not counted)
    EXPECT_GE(t.median_seconds, 0.0) << t.name;
  }
  // Without the option nothing is collected.
  o.time_instructions = false;
  auto plain = RunModuleOnCpu(**module, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->instructions.empty());
}

}  // namespace
}  // namespace tpusim::hlo
